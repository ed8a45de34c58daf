// The batching chart, drawn with uPlot (vendored): total output (blue, left axis) and speed per user
// (amber, right axis) against batch size, with the memory and compute limits and the current batch.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { compact, int } from "./format.js";

function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  return { total: v("--c-total"), user: v("--c-user"), nofit: v("--c-nofit"), compute: v("--c-compute"),
    ink: v("--ink-soft"), rule: v("--rule"), bg: v("--bg-raised"), font: v("--font") };
}

export function createBatchChart(container) {
  let plot = null;
  let marks = { memory: 0, knee: null, batch: 1, total: 0, user: 0 };
  let data = [[1], [0], [0]];
  let colors = palette();

  function drawMarks(u) {
    const { ctx } = u;
    const { left, top, width, height } = u.bbox;
    const dpr = devicePixelRatio || 1;
    const [xMin, xMax] = [u.scales.x.min, u.scales.x.max];
    const xAt = (x) => u.valToPos(x, "x", true);
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    ctx.font = `${12 * dpr}px ${colors.font}`;
    ctx.textBaseline = "top";
    const label = (text, x, color, row) => {
      const w = ctx.measureText(text).width;
      const right = x + 4 * dpr + w > left + width;
      const tx = right ? x - 4 * dpr : x + 4 * dpr;
      const ty = top + (4 + row * 18) * dpr;
      ctx.fillStyle = colors.bg;
      ctx.globalAlpha = 0.85;
      ctx.fillRect(right ? tx - w - 2 * dpr : tx - 2 * dpr, ty - 1 * dpr, w + 4 * dpr, 16 * dpr);
      ctx.globalAlpha = 1;
      ctx.fillStyle = color;
      ctx.textAlign = right ? "right" : "left";
      ctx.fillText(text, tx, ty);
    };
    if (marks.memory >= 1 && marks.memory < xMax) {
      const x = xAt(Math.max(marks.memory, xMin));
      ctx.fillStyle = colors.nofit;
      ctx.globalAlpha = 0.08;
      ctx.fillRect(x, top, left + width - x, height);
      ctx.globalAlpha = 1;
    }
    const line = (value, color, text, row) => {
      if (value === null || value < xMin || value > xMax) return;
      const x = xAt(value);
      ctx.strokeStyle = color;
      ctx.lineWidth = 2 * dpr;
      ctx.setLineDash([6 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      ctx.setLineDash([]);
      label(text, x, color, row);
    };
    if (marks.memory >= 1) line(marks.memory, colors.nofit, `memory full: ${int(marks.memory)}`, 0);
    if (marks.knee !== null) line(marks.knee, colors.compute, `compute limit: ${int(marks.knee)}`, 1);
    // the current batch: a solid line and a dot on each curve
    const x = xAt(marks.batch);
    ctx.strokeStyle = colors.ink;
    ctx.globalAlpha = 0.5;
    ctx.lineWidth = 1 * dpr;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.globalAlpha = 1;
    const dot = (y, scale, color) => {
      ctx.beginPath();
      ctx.arc(x, u.valToPos(y, scale, true), 6 * dpr, 0, 2 * Math.PI);
      ctx.fillStyle = color;
      ctx.fill();
      ctx.lineWidth = 2.5 * dpr;
      ctx.strokeStyle = colors.bg;
      ctx.stroke();
    };
    dot(marks.total, "tot", colors.total);
    dot(marks.user, "usr", colors.user);
    ctx.restore();
  }

  function size() {
    return { width: Math.max(240, container.clientWidth), height: Math.max(200, container.clientHeight) };
  }

  function build() {
    colors = palette();
    const axis = (scale, side, stroke, label) => ({
      scale, side, stroke, label, labelSize: 22, size: 56, gap: 4,
      font: `12px ${colors.font}`, labelFont: `600 12px ${colors.font}`,
      grid: { show: side === 3, stroke: colors.rule, width: 1 }, ticks: { show: false },
      values: (u, values) => values.map(compact),
    });
    const opts = {
      ...size(),
      legend: { show: false },
      cursor: { show: true, x: true, y: false, points: { show: false }, drag: { x: false, y: false } },
      scales: {
        x: { time: false, distr: 3, log: 2 },
        tot: { range: (u, min, max) => [0, Math.max(1, max) * 1.08] },
        usr: { range: (u, min, max) => [0, Math.max(1, max) * 1.08] },
      },
      axes: [
        { scale: "x", stroke: colors.ink, label: "batch size (users written for at once)", labelSize: 18, size: 34,
          font: `12px ${colors.font}`, labelFont: `600 12px ${colors.font}`, grid: { stroke: colors.rule, width: 1 },
          ticks: { show: false }, values: (u, values) => values.map((v) => (v >= 1 ? compact(v) : "")) },
        axis("tot", 3, colors.total, "total output, tokens/s"),
        axis("usr", 1, colors.user, "per user, tokens/s"),
      ],
      series: [
        {},
        { label: "total output", scale: "tot", stroke: colors.total, width: 2.5, points: { show: false } },
        { label: "per user", scale: "usr", stroke: colors.user, width: 2.5, points: { show: false } },
      ],
      hooks: { draw: [drawMarks] },
    };
    if (plot) plot.destroy();
    plot = new uPlot(opts, data, container);
  }

  new ResizeObserver(() => {
    if (plot) {
      const next = size();
      if (next.width !== plot.width || next.height !== plot.height) plot.setSize(next);
    }
  }).observe(container);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", build);

  return {
    update(curve, next) {
      marks = next;
      const fresh = [curve.map((p) => p.batch), curve.map((p) => p.total_tokens_per_s), curve.map((p) => p.per_user_tokens_per_s)];
      const same = plot && fresh[0].length === data[0].length && fresh.every((col, i) => col.every((v, j) => v === data[i][j]));
      data = fresh;
      if (!plot) build();
      else if (same) plot.redraw(false);
      else plot.setData(data);
    },
  };
}
