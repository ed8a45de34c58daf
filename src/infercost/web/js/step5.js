// Step 5: cost per million tokens and per answer, and how model size, precision and batch move it.

import { range, valueSlider } from "./controls.js";
import { $, el, setText, toggleClass } from "./dom.js";
import { int, num, precisionLabel, usd } from "./format.js";
import * as state from "./state.js";

const GROUPS = [["model", "Model size"], ["precision", "Precision"], ["batch", "Batch size"]];

let ui = null;
let leverKey = "";

export function init() {
  ui = {
    price: $("s5-price"), priceSource: $("s5-price-source"), reset: $("s5-price-reset"),
    busy: valueSlider($("s5-busy"), document.querySelector("output[for=s5-busy]"), { field: "busy_share",
      values: range(0.05, 1, 0.05), format: (x) => `${Math.round(x * 100)}% of the hour`,
      onInput: (v) => state.set({ busy_share: v }),
    }),
    out: $("s5-out"), in: $("s5-in"), answer: $("s5-answer"), answerMeaning: $("s5-answer-meaning"),
    basis: $("s5-basis"), levers: $("s5-levers"),
  };
  const readPrice = (commit) => {
    const text = ui.price.value.trim();
    const value = Number(text);
    const valid = text !== "" && Number.isFinite(value) && value > 0 && value <= 10000;
    ui.price.setAttribute("aria-invalid", valid ? "false" : "true");
    if (valid) state.set({ price_per_gpu_hour_usd: Math.round(value * 10000) / 10000 });
    else if (commit) ui.price.value = priceShown(state.get(), null);
  };
  ui.price.addEventListener("input", () => readPrice(false));
  ui.price.addEventListener("change", () => readPrice(true));
  ui.reset.addEventListener("click", () => state.set({ price_per_gpu_hour_usd: null }));
}

let catalogPrice = null;

function priceShown(s) {
  const price = s.price_per_gpu_hour_usd ?? catalogPrice;
  return price === null || price === undefined ? "" : String(price);
}

export function sync(s) {
  ui.busy.set(s.busy_share);
  if (document.activeElement !== ui.price) ui.price.value = priceShown(s);
  ui.reset.disabled = s.price_per_gpu_hour_usd === null;
}

let leverRows = []; // [{ fill, value, row }] in the order of `levers`

function leverWidths(levers) {
  const values = levers.map((l) => l.usd_per_million_output).filter((v) => v !== null && v > 0);
  const lo = Math.log10(Math.min(...values));
  const hi = Math.log10(Math.max(...values));
  return (v) => (hi - lo < 1e-9 ? 100 : 8 + (92 * (Math.log10(v) - lo)) / (hi - lo));
}

function spreadText(rows) {
  const known = rows.map((r) => r.usd_per_million_output).filter((v) => v !== null && v > 0);
  const spread = known.length > 1 ? Math.max(...known) / Math.min(...known) : 1;
  return spread > 1.005 ? `· ${num(spread, 2)}× from cheapest to dearest` : "";
}

/** Bars on a log scale; rebuilt when the rows change, otherwise only their values and widths move. */
function renderLevers(levers) {
  const shape = JSON.stringify(levers.map((l) => [l.kind, l.label, l.current, l.usd_per_million_output === null]));
  const width = leverWidths(levers);
  if (shape !== leverKey) {
    leverKey = shape;
    leverRows = [];
    const groups = GROUPS.map(([kind, title]) => {
      const rows = levers.filter((l) => l.kind === kind);
      const range = el("span", { class: "lever-range", text: spreadText(rows) });
      const list = rows.map((r) => {
        const fill = el("div", { class: "lever-fill" });
        const value = el("span", { class: "lever-value" });
        const label = kind === "precision" ? precisionLabel(r.label) : r.label;
        const row = el("div", { class: `lever-row${r.current ? " is-current" : ""}${r.usd_per_million_output === null ? " is-none" : ""}` },
          el("span", { class: "lever-name" }, label, r.current ? el("span", { class: "visually-hidden", text: " (as set now)" }) : null),
          el("div", { class: "lever-bar", "aria-hidden": "true" }, fill), value);
        leverRows.push({ fill, value, row, range, kind });
        return row;
      });
      return el("div", { class: "lever-group", role: "group", "aria-label": title }, el("h4", {}, title, " ", range), ...list);
    });
    ui.levers.replaceChildren(...groups);
  }
  levers.forEach((l, i) => {
    const { fill, value, row } = leverRows[i];
    const v = l.usd_per_million_output;
    fill.style.width = v !== null && v > 0 ? `${width(v).toFixed(1)}%` : "0";
    setText(value, v === null ? "no fit" : usd(v));
    if (row.title !== l.note) row.title = l.note;
  });
  for (const [kind] of GROUPS) {
    const first = leverRows.find((r) => r.kind === kind);
    if (first) setText(first.range, spreadText(levers.filter((l) => l.kind === kind)));
  }
}

export function render(est) {
  const c = est.cost;
  const hw = est.hardware;
  catalogPrice = est.scenario.custom_gpu ? hw.price_per_gpu_hour_usd : (state.gpuEntry(hw.id)?.price_per_gpu_hour_usd ?? null);
  const s = state.get();
  if (document.activeElement !== ui.price) ui.price.value = priceShown(s);
  const brief = (hw.price_source || "").split(/ \(| via /)[0].replace(/[\s,;:]+$/, "");
  const source = brief ? `${brief}${hw.price_as_of ? `, as of ${hw.price_as_of}` : ""}` : "no source given";
  ui.priceSource.title = hw.price_source || "";
  setText(ui.priceSource, catalogPrice === null
    ? "This machine has no catalog price: enter what an hour of it costs you."
    : `Catalog: ${usd(catalogPrice)} per GPU-hour for ${hw.name}, from ${source}.`);
  setText(ui.out, usd(c.usd_per_million_output));
  setText(ui.in, usd(c.usd_per_million_input));
  setText(ui.answer, usd(c.usd_per_answer));
  setText(ui.answerMeaning, `a ${int(est.reading.question_tokens)}-token question and a ${int(est.reading.answer_tokens)}-token answer, as in step 1`);
  toggleClass(ui.out.closest(".readout"), "is-nofit", !est.fit.fits);
  let basis;
  if (c.price_per_gpu_hour_usd === null) {
    basis = "Enter a price per GPU-hour to see the cost.";
  } else {
    basis = `${hw.gpus} GPU${hw.gpus === 1 ? "" : "s"} × ${usd(c.price_per_gpu_hour_usd)} = ${usd(hw.gpus * c.price_per_gpu_hour_usd)} per hour. `
      + `At a batch of ${int(c.batch)} they write ${num(c.output_tokens_per_s)} tokens/s; busy ${Math.round(c.busy_share * 100)}% of the hour, `
      + `that is ${num(c.tokens_per_hour / 1e6)} million tokens per hour.`;
    if (c.batch !== est.batching.batch) basis += ` (Step 3's batch of ${int(est.batching.batch)} does not fit, so the cost uses ${int(c.batch)}.)`;
    if (!est.fit.fits) basis += " The weights do not fit on these GPUs: these figures are what it would cost if they did.";
    else if (est.kv.conversations_fit === 0) basis += ` Not one conversation of ${int(est.kv.conversation_tokens)} tokens fits beside the weights: these figures assume one would.`;
  }
  setText(ui.basis, basis);
  renderLevers(c.levers);
}
