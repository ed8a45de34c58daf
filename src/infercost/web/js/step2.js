// Step 2: the KV cache. 100 squares, each 1% of all the GPUs' memory, drawn from the estimate's grid.

import { radios, valueSlider } from "./controls.js";
import { $, el, setText, toggleClass } from "./dom.js";
import { bytes, bytesText, int, kib, percent, tokens } from "./format.js";
import * as state from "./state.js";

const CONVERSATION_TOKENS = [256, 512, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 24000, 32000, 48000, 64000,
  96000, 128000];
const CONVERSATIONS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384,
  512, 768, 1024];
const HUES = 6;
const MAX_OVERFLOW_SHOWN = 20;

let ui = null;

function lengths(limit) {
  const list = CONVERSATION_TOKENS.filter((v) => v <= limit);
  if (!list.length || list[list.length - 1] < limit) list.push(limit);
  return list;
}

export function init() {
  ui = {
    length: valueSlider($("s2-length"), document.querySelector("output[for=s2-length]"), { field: "conversation_tokens",
      values: CONVERSATION_TOKENS, format: tokens, onInput: (v) => state.set({ conversation_tokens: v }),
    }),
    count: valueSlider($("s2-count"), document.querySelector("output[for=s2-count]"), { field: "conversations",
      values: CONVERSATIONS, format: (n) => int(n),
      onInput: (v) => state.set({ conversations: v }),
    }),
    kv: radios($("s2-kv"), (v) => state.set({ kv_precision: v })),
    grid: $("s2-grid"), overflow: $("s2-overflow"), overflowBox: $("s2-overflow-box"),
    overflowText: $("s2-overflow-text"), total: $("s2-total"), summary: $("s2-grid-summary"),
    perToken: $("s2-per-token"), perTokenUnit: $("s2-per-token-unit"), perTokenBytes: $("s2-per-token-bytes"),
    conv: $("s2-conv"), convUnit: $("s2-conv-unit"), convMeaning: $("s2-conv-meaning"),
    fit: $("s2-fit"), fitMeaning: $("s2-fit-meaning"), paged: $("s2-paged"),
  };
  ui.cells = [];
  for (let i = 0; i < 100; i += 1) {
    const cell = el("div", { class: "cell" });
    ui.cells.push(cell);
  }
  ui.grid.replaceChildren(...ui.cells);
  ui.overflowCells = [];
  for (let i = 0; i < MAX_OVERFLOW_SHOWN; i += 1) ui.overflowCells.push(el("div", { class: "cell cell--nofit", hidden: true }));
  ui.overflow.replaceChildren(...ui.overflowCells);
}

export function sync(s) {
  ui.length.setValues(lengths(state.maxContext(s)));
  ui.length.set(s.conversation_tokens);
  ui.count.set(s.conversations);
  ui.kv.set(s.kv_precision);
}

function cellClass(cell, previous) {
  if (cell.kind === "kv") {
    const starts = previous && previous.kind === "kv" && previous.conversation !== cell.conversation;
    return `cell cell--kv k${cell.conversation % HUES}${starts ? " starts" : ""}`;
  }
  return `cell cell--${cell.kind}`;
}

const TITLES = { weights: "model weights", reserve: "runtime reserve and workspace", free: "free" };

export function render(est) {
  const kv = est.kv;
  const counts = { weights: 0, reserve: 0, kv: 0, free: 0 };
  kv.grid.forEach((cell, i) => {
    const node = ui.cells[i];
    const name = cellClass(cell, kv.grid[i - 1]);
    if (node.className !== name) {
      node.className = name;
      node.title = cell.kind === "kv" ? `conversation ${cell.conversation + 1}'s KV cache` : TITLES[cell.kind] || cell.kind;
    }
    counts[cell.kind] = (counts[cell.kind] || 0) + 1;
  });
  const over = kv.overflow_cells;
  ui.overflowCells.forEach((node, i) => {
    const hide = i >= over;
    if (node.hidden !== hide) node.hidden = hide;
  });
  toggleClass(ui.overflowBox, "has-overflow", over > 0);
  const missing = Math.max(0, kv.conversations - kv.conversations_fit);
  if (!est.fit.fits) {
    setText(ui.overflowText, `The weights alone are larger than the memory left after the reserve: ${over} more square${over === 1 ? "" : "s"} would be needed${over > MAX_OVERFLOW_SHOWN ? ` (${MAX_OVERFLOW_SHOWN} drawn)` : ""}.`);
  } else if (over > 0 || missing > 0) {
    setText(ui.overflowText, `${int(missing)} of the ${int(kv.conversations)} conversations do not fit${over > 0 ? `: they need ${over}% more memory than the GPUs have${over > MAX_OVERFLOW_SHOWN ? ` (${MAX_OVERFLOW_SHOWN} squares drawn)` : ""}` : ""}.`);
  } else {
    setText(ui.overflowText, "Nothing: every conversation's cache has room.");
  }
  setText(ui.total, bytesText(kv.total_memory_bytes));
  const parts = [`Weights take ${counts.weights} squares`, `the runtime reserve ${counts.reserve}`,
    `${int(kv.conversations)} conversation cache${kv.conversations === 1 ? "" : "s"} ${counts.kv}`, `and ${counts.free} are free`];
  setText(ui.summary, `${parts.join(", ")}.${over > 0 ? ` ${over} more squares' worth does not fit.` : ""}`);

  const [pt, ptUnit] = kib(kv.kv_bytes_per_token);
  setText(ui.perToken, pt);
  setText(ui.perTokenUnit, ptUnit);
  setText(ui.perTokenBytes, `${int(kv.kv_bytes_per_token)} bytes for every token of every conversation, at ${est.precision.kv_precision.replace("bit", "-bit")}`);
  const [cv, cvUnit] = bytes(kv.conversation_kv_bytes);
  setText(ui.conv, cv);
  setText(ui.convUnit, cvUnit);
  setText(ui.convMeaning, `this conversation's memory: ${percent(kv.conversation_kv_bytes / kv.total_memory_bytes)} of all ${est.hardware.gpus} GPU${est.hardware.gpus === 1 ? "" : "s"}`);
  setText(ui.fit, int(kv.conversations_fit));
  const fitsAll = kv.all_fit;
  toggleClass(ui.fit.closest(".readout"), "is-nofit", !fitsAll);
  setText(ui.fitMeaning, fitsAll
    ? `of ${tokens(kv.conversation_tokens)} each, in the ${bytesText(Math.max(0, kv.usable_kv_bytes))} the weights leave free`
    : est.fit.fits ? `you asked for ${int(kv.conversations)}: ${int(missing)} do not fit` : "the weights do not fit, so no conversation does");
  const maxCtx = est.model.max_context_tokens;
  setText(ui.paged, `Handing out memory in blocks of ${kv.kv_block_tokens} tokens as each conversation grows (paged), `
    + `${int(kv.conversations_fit)} conversations of ${tokens(kv.conversation_tokens)} fit. Setting aside room for the `
    + `model's full context of ${int(maxCtx)} tokens for everyone would fit only ${int(kv.conversations_fit_reserved)}.`);
  toggleClass(ui.paged, "is-nofit", !est.fit.fits);
}
