// "Measure it yourself": load an `infercost bench --json` result; its devices become hardware choices
// in the top bar and each run's measurement is shown beside the estimate the file carries.

import * as api from "./api.js";
import { $, el, setText, toggleClass } from "./dom.js";
import { num, timeText } from "./format.js";
import * as state from "./state.js";
import * as topbar from "./topbar.js";

let ui = null;

export function init({ addNote }) {
  const catalog = state.getCatalog();
  if (!catalog.features || !catalog.features.bench_load) return;
  ui = { box: $("bench-load"), file: $("bench-file"), status: $("bench-status"), result: $("bench-result"),
    rows: $("bench-rows"), use: $("bench-use"), note: $("bench-note") };
  ui.box.hidden = false;
  $("bench-open").addEventListener("click", () => ui.file.click());
  ui.file.addEventListener("change", async () => {
    const file = ui.file.files && ui.file.files[0];
    ui.file.value = "";
    if (!file) return;
    setText(ui.status, `Reading ${file.name}…`);
    toggleClass(ui.status, "is-error", false);
    try {
      show(await api.upload("api/bench/load", file), file.name);
    } catch (error) {
      toggleClass(ui.status, "is-error", true);
      setText(ui.status, `${file.name} is not a benchmark result this page can use: ${error.message}`);
      addNote({ key: "bench", text: `The benchmark file was refused: ${error.message}`, error: true });
    }
  });
}

function cell(text, off = false) {
  return el("td", { class: off ? "is-off" : null, text });
}

function tokensPerS(x) {
  return x === null || x === undefined ? "–" : num(x);
}

function seconds(x) {
  return x === null || x === undefined ? "–" : timeText(x);
}

function off(measured, estimated) {
  return measured && estimated ? Math.abs(estimated / measured - 1) > 0.5 : false;
}

function show(result, fileName) {
  const machines = result.machines.map((m) => m.gpu);
  topbar.addMachines(machines);
  const when = result.created_utc ? ` from ${result.created_utc.replace("T", " ").slice(0, 16)} UTC` : "";
  setText(ui.status, `Loaded ${fileName}${when}${result.status === "interrupted" ? " (interrupted run)" : ""}: `
    + `${machines.map((m) => m.name).join(", ")}. ${result.model.name}${result.model.random_weights ? ", random weights" : ""}.`);

  const buttons = machines.map((spec) => {
    const button = el("button", { type: "button", text: `Use ${spec.name} in the top bar` });
    button.addEventListener("click", () => state.set({ custom_gpu: spec, gpus: 1, price_per_gpu_hour_usd: null }));
    return button;
  });
  if (result.model.spec && machines.length) {
    const both = el("button", { type: "button", text: `Use it with the benchmarked model (${result.model.name})` });
    both.addEventListener("click", () => state.set({ custom_gpu: machines[0], custom_model: result.model.spec, gpus: 1,
      price_per_gpu_hour_usd: null, draft_model: null }));
    buttons.push(both);
  }
  ui.use.replaceChildren(...buttons);

  ui.rows.replaceChildren(...result.runs.map((run) => {
    const m = run.measured;
    const e = run.estimate || {};
    const last = run.batches.length ? run.batches[run.batches.length - 1] : null;
    return el("tr", {},
      el("th", { scope: "row", text: `${run.device} · ${run.precision}` }),
      cell(seconds(m.ttft_s)), cell(seconds(e.ttft_s), off(m.ttft_s, e.ttft_s)),
      cell(tokensPerS(m.decode_tokens_per_s)), cell(tokensPerS(e.decode_tokens_per_s), off(m.decode_tokens_per_s, e.decode_tokens_per_s)),
      cell(last ? `${tokensPerS(last.measured_tokens_per_s)} at ${last.batch}` : "–"),
      cell(last ? tokensPerS(last.estimate_tokens_per_s) : "–", last && off(last.measured_tokens_per_s, last.estimate_tokens_per_s)));
  }));
  const notes = [];
  const estimateNote = result.runs.map((r) => r.estimate_note).find(Boolean);
  if (estimateNote) notes.push(`Estimates in the file: ${estimateNote.replace(/\.$/, "")}.`);
  if (result.speculative && Number.isFinite(result.speculative.speedup)) {
    const s = result.speculative;
    notes.push(`Speculative decoding on this machine: ${num(s.speedup, 2)}× measured${Number.isFinite(s.predicted_speedup) ? ` (${num(s.predicted_speedup, 2)}× predicted)` : ""}, `
      + `${s.output_matches_target ? "and the output matched the big model's own" : "but the output differed from the big model's own"}.`);
  }
  if (result.skipped.length) notes.push(`Not run: ${result.skipped.map((k) => `${k.device} ${k.precision} (${k.reason})`).join("; ")}.`);
  notes.push("Estimates more than 50% away from the measurement are shown in red.");
  setText(ui.note, notes.join(" "));
  ui.result.hidden = false;
}

export function sync() {}
