// Step 3: batching. One read of the weights writes the next token for every conversation in the batch.

import { createBatchChart } from "./chart.js";
import { valueSlider } from "./controls.js";
import { $, el, setText, toggleClass } from "./dom.js";
import { int, num, timeText, tokens, usd } from "./format.js";
import * as state from "./state.js";

const BATCHES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
const BOUND = { memory: "memory speed", compute: "arithmetic" };

let ui = null;
let lastTableKey = "";

export function init() {
  ui = {
    batch: valueSlider($("s3-batch"), document.querySelector("output[for=s3-batch]"), { field: "batch",
      values: BATCHES, format: (n) => `${int(n)} user${n === 1 ? "" : "s"}`, onInput: (v) => state.set({ batch: v }),
    }),
    chart: createBatchChart($("s3-chart")), total: $("s3-total"), user: $("s3-user"), limit: $("s3-limit"),
    limitMeaning: $("s3-limit-meaning"), status: $("s3-status"), summary: $("s3-summary"), context: $("s3-context"),
    table: $("s3-table"), servingBox: $("s3-serving-box"), serving: $("s3-serving"),
  };
}

export function sync(s) {
  ui.batch.set(s.batch);
}

function renderTable(b) {
  const key = JSON.stringify([b.curve.map((p) => p.batch), b.curve[0]?.total_tokens_per_s, b.batch, b.context_tokens]);
  if (key === lastTableKey) return;
  lastTableKey = key;
  const rows = b.curve.map((p) => el("tr", { class: p.batch === b.batch ? "is-current" : null },
    el("td", { text: int(p.batch) }), el("td", { text: num(p.total_tokens_per_s) }),
    el("td", { text: num(p.per_user_tokens_per_s) }), el("td", { text: BOUND[p.bound] || p.bound })));
  ui.table.replaceChildren(...rows);
}

export function render(est) {
  const b = est.batching;
  const cur = b.current;
  ui.chart.update(b.curve, { memory: b.memory_limit_batch, knee: b.compute_knee_batch, batch: b.batch,
    total: cur.total_tokens_per_s, user: cur.per_user_tokens_per_s });
  setText(ui.total, num(cur.total_tokens_per_s));
  setText(ui.user, num(cur.per_user_tokens_per_s));
  setText(ui.limit, int(b.memory_limit_batch));
  setText(ui.context, int(b.context_tokens));
  toggleClass(ui.limit.closest(".readout"), "is-nofit", !b.batch_fits);
  setText(ui.limitMeaning, `conversations of ${tokens(b.context_tokens)} that the memory holds`);
  const first = b.curve[0];
  const gain = first ? cur.total_tokens_per_s / first.total_tokens_per_s : 1;
  const slower = first ? 1 - cur.per_user_tokens_per_s / first.per_user_tokens_per_s : 0;
  let text;
  if (!est.fit.fits) {
    text = "The weights do not fit on these GPUs, so no batch fits at all: add GPUs or lower the precision in the top bar.";
  } else if (!b.batch_fits) {
    text = `A batch of ${int(b.batch)} does not fit: the memory holds the caches of only ${int(b.memory_limit_batch)} `
      + `conversations of ${tokens(b.context_tokens)}. Shorter conversations (step 2) or more GPUs make room.`;
  } else {
    text = `At a batch of ${int(b.batch)} the server writes ${num(gain, 2)} times as many tokens as for one user, `
      + `while each user's speed drops by ${Math.round(slower * 100)}%. Each step is limited by ${BOUND[cur.bound] || cur.bound}.`;
  }
  toggleClass(ui.status, "is-nofit", !b.batch_fits || !est.fit.fits);
  setText(ui.status, text);
  const knee = b.compute_knee_batch === null
    ? "Arithmetic never becomes the limit before memory does at this length"
    : `Arithmetic becomes the limit from a batch of ${int(b.compute_knee_batch)}`;
  setText(ui.summary, `Total output rises from ${num(first?.total_tokens_per_s)} tokens/s at batch 1 to `
    + `${num(b.curve[b.curve.length - 1]?.total_tokens_per_s)} at batch ${int(b.curve[b.curve.length - 1]?.batch)}, while the `
    + `speed per user falls from ${num(first?.per_user_tokens_per_s)} to ${num(b.curve[b.curve.length - 1]?.per_user_tokens_per_s)}. `
    + `Memory is full at a batch of ${int(b.memory_limit_batch)}. ${knee}. The current batch, ${int(b.batch)}, `
    + `gives ${num(cur.total_tokens_per_s)} tokens/s in total and ${num(cur.per_user_tokens_per_s)} per user.`);
  renderTable(b);
  renderServing(est);
}

/** The core's serving-engine view (max load and the step-3 batch), when the estimate carries it. */
function renderServing(est) {
  const sv = est.serving;
  const max = sv && sv.max_load;
  if (!max || typeof sv.message !== "string") {
    ui.servingBox.hidden = true;
    return;
  }
  const lengths = `For requests of step 1's lengths (${int(est.reading.question_tokens)} + ${int(est.reading.answer_tokens)} tokens): `;
  let line = `${lengths}${sv.message} It then writes ${num(max.output_tokens_per_s)} tokens/s in total and `
    + `${num(max.per_user_tokens_per_s)} per user`;
  if (max.usd_per_million_output !== null && max.usd_per_million_output !== undefined) {
    line += `, at ${usd(max.usd_per_million_output)} per million tokens written`;
  }
  line += ".";
  const at = sv.at_batch;
  if (at && Number.isFinite(at.output_tokens_per_s)) {
    line += ` Holding ${int(at.batch)} conversations at once (step 3's batch) it writes ${num(at.output_tokens_per_s)} tokens/s, `
      + `${num(at.per_user_tokens_per_s)} per user, each answer starting after ${timeText(at.ttft_s)}.`;
  }
  setText(ui.serving, line);
  ui.servingBox.hidden = false;
}
