// The assumptions panel: the two efficiency shares (editable) and the runtime's other assumptions with sources.

import { range, valueSlider } from "./controls.js";
import { $, el, setText } from "./dom.js";
import { int } from "./format.js";
import * as state from "./state.js";

let ui = null;

export function init() {
  const shares = range(0.05, 1, 0.05);
  ui = {
    compute: valueSlider($("as-compute"), document.querySelector("output[for=as-compute]"), { field: "compute_efficiency",
      values: shares, format: (x) => `${Math.round(x * 100)}%`, onInput: (v) => state.set({ compute_efficiency: v }),
    }),
    memory: valueSlider($("as-memory"), document.querySelector("output[for=as-memory]"), { field: "memory_efficiency",
      values: shares, format: (x) => `${Math.round(x * 100)}%`, onInput: (v) => state.set({ memory_efficiency: v }),
    }),
    reset: $("as-reset"),
  };
  const d = state.getDefaults();
  ui.reset.addEventListener("click", () => state.set({ compute_efficiency: d.compute_efficiency, memory_efficiency: d.memory_efficiency }));
  const a = state.getCatalog().assumptions;
  const src = a.sources || {};
  const items = [
    ["Arithmetic and memory shares", `${Math.round(a.compute_efficiency * 100)}% and ${Math.round(a.memory_efficiency * 100)}% by default`, src.efficiency],
    ["Runtime reserve", `${Math.round(a.memory_reserve_share * 100)}% of each GPU's memory is left to the serving software`, src.memory_reserve],
    ["KV cache blocks", `memory is handed out ${int(a.kv_block_tokens)} tokens at a time (paged)`, src.kv_block],
    ["Reading in chunks", `questions are read ${int(a.prefill_chunk_tokens)} tokens per pass when many arrive together`, src.prefill_chunk],
    ["GPU link", "several GPUs split each layer and exchange results twice per layer and step", src.allreduce_latency],
  ];
  $("as-list").replaceChildren(...items.map(([title, text, source]) => el("li", {},
    el("strong", { text: `${title}: ` }), text, source ? el("span", { text: ` Source: ${source}.` }) : null)));
}

/** The core's note on how far its estimates are from published measurements, when present. */
export function render(est) {
  const f = est.fidelity;
  const box = $("as-fidelity-box");
  if (!f || !Number.isFinite(f.typical_error_share)) {
    box.hidden = true;
    return;
  }
  const pct = (x) => `${Math.round(x * 100)}%`;
  let text = `Against ${int(f.points)} published measurements, the serving estimates are typically within ${pct(f.typical_error_share)}`
    + (Number.isFinite(f.within_25_share) ? `, and ${pct(f.within_25_share)} of them are within 25%` : "") + ".";
  if (f.basis) text += ` Method: ${f.basis}.`;
  if (Array.isArray(f.caveats) && f.caveats.length) text += ` ${f.caveats.join(" ")}`;
  setText($("as-fidelity"), text);
  box.hidden = false;
}

export function sync(s) {
  ui.compute.set(s.compute_efficiency);
  ui.memory.set(s.memory_efficiency);
  const d = state.getDefaults();
  ui.reset.disabled = s.compute_efficiency === d.compute_efficiency && s.memory_efficiency === d.memory_efficiency;
}
