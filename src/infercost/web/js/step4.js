// Step 4: speculative decoding (with a seeded simulation from the server), quantization and prompt caching.

import * as api from "./api.js";
import { range, valueSlider } from "./controls.js";
import { $, el, reducedMotion, setText, toggleClass } from "./dom.js";
import { bytes, bytesText, int, num, precisionLabel, time, tokens, usd } from "./format.js";
import * as state from "./state.js";

const SIM_TOKENS = 35; // one pass through the big model's sentence
const STEP_MS = 90;

let ui = null;
let seed = 0;
let simRun = 0;
let shownDrafts = "";
let autoName = null; // the draft the estimate picks when none is chosen

function prefixValues(question) {
  const list = [];
  for (let i = 0; i <= 20; i += 1) {
    const v = Math.round((question * i) / 20);
    if (!list.includes(v)) list.push(v);
  }
  return list;
}

export function init({ addNote }) {
  ui = {
    draft: $("s4-draft"),
    k: valueSlider($("s4-k"), document.querySelector("output[for=s4-k]"), { field: "draft_tokens",
      values: range(1, 16, 1), format: (n) => `${n} guess${n === 1 ? "" : "es"}`, onInput: (v) => state.set({ draft_tokens: v }),
    }),
    alpha: valueSlider($("s4-alpha"), document.querySelector("output[for=s4-alpha]"), { field: "acceptance_rate",
      values: range(0, 1, 0.05), format: (a) => `${Math.round(a * 100)}%`, onInput: (v) => state.set({ acceptance_rate: v }),
    }),
    prefix: valueSlider($("s4-prefix"), document.querySelector("output[for=s4-prefix]"), { field: "shared_prefix_tokens",
      values: prefixValues(state.get().question_tokens),
      format: (n) => `${tokens(n)} · ${Math.round((100 * n) / Math.max(1, state.get().question_tokens))}%`,
      onInput: (v) => state.set({ shared_prefix_tokens: v }),
    }),
    tokens: $("s4-tokens"), check: $("s4-check"), out: $("s4-out"), alone: $("s4-alone"), verdict: $("s4-verdict"),
    simulate: $("s4-simulate"), speedup: $("s4-speedup"), speedupMeaning: $("s4-speedup-meaning"),
    perPass: $("s4-per-pass"), withDraft: $("s4-with"), without: $("s4-without"), quant: $("s4-quant"),
    savedTime: $("s4-saved-time"), savedTimeUnit: $("s4-saved-time-unit"), savedMem: $("s4-saved-mem"),
    savedMemUnit: $("s4-saved-mem-unit"), savedMemMeaning: $("s4-saved-mem-meaning"),
  };
  ui.draft.addEventListener("change", () => state.set({ draft_model: ui.draft.value || null }));
  ui.simulate.addEventListener("click", () => runSimulation(addNote));
}

function fillDrafts(s) {
  const target = s.custom_model ? null : state.modelEntry(s.model);
  const drafts = target ? target.drafts : [];
  const key = JSON.stringify([drafts, autoName]);
  if (key !== shownDrafts) {
    shownDrafts = key;
    const auto = autoName ? `Automatic: ${autoName}` : drafts.length ? "Automatic" : "None available";
    ui.draft.replaceChildren(el("option", { value: "", text: auto }),
      ...drafts.map((id) => el("option", { value: id, text: state.modelEntry(id)?.name ?? id })));
    ui.draft.disabled = drafts.length === 0;
  }
  ui.draft.value = s.draft_model ?? "";
}

export function sync(s) {
  fillDrafts(s);
  ui.k.set(s.draft_tokens);
  ui.alpha.set(s.acceptance_rate);
  ui.prefix.setValues(prefixValues(s.question_tokens));
  ui.prefix.set(s.shared_prefix_tokens);
}

export function render(est) {
  const sp = est.speculative;
  const s = state.get();
  if (!s.draft_model) autoName = sp.draft_model_name;
  fillDrafts(s);
  if (sp.speedup === null) {
    setText(ui.speedup, "–");
    setText(ui.speedupMeaning, "no smaller model of the same family to draft with");
    setText(ui.withDraft, "–");
  } else {
    setText(ui.speedup, num(sp.speedup, 2));
    setText(ui.speedupMeaning, sp.speedup >= 1
      ? `with ${sp.draft_model_name} drafting, for one user`
      : `slower: ${sp.draft_model_name}'s guesses cost more than they save`);
    setText(ui.withDraft, num(sp.tokens_per_s_with));
  }
  setText(ui.perPass, num(sp.expected_tokens_per_pass, 3));
  setText(ui.without, `instead of ${num(sp.tokens_per_s_without)} tokens/s without a draft`);

  const levers = est.cost.levers.filter((l) => l.kind === "precision");
  const costs = levers.map((l) => `${precisionLabel(l.label)} ${usd(l.usd_per_million_output)}`).join(", ");
  setText(ui.quant, `At ${precisionLabel(est.precision.precision)}, the weights of ${est.model.name} take `
    + `${bytesText(est.fit.weights_bytes)} (${est.precision.note}). Cost per million tokens written: ${costs}.`);

  const [tv, tu] = time(sp.prefill_saved_s);
  setText(ui.savedTime, sp.shared_prefix_tokens ? tv : "0");
  setText(ui.savedTimeUnit, sp.shared_prefix_tokens ? tu : "s");
  const [mv, mu] = bytes(sp.memory_saved_bytes);
  setText(ui.savedMem, sp.memory_saved_bytes ? mv : "0");
  setText(ui.savedMemUnit, sp.memory_saved_bytes ? mu : "GB");
  const users = Number.isInteger(sp.prefix_sharing_users) ? sp.prefix_sharing_users : null;
  setText(ui.savedMemMeaning, sp.shared_prefix_tokens
    ? `one copy of the ${tokens(sp.shared_prefix_tokens)} opening instead of ${users ? `${int(users)}, one per conversation held at once` : "one per conversation"}`
    : "move the slider to share an opening between requests");
}

async function runSimulation(addNote) {
  const s = state.get();
  const id = ++simRun;
  seed += 1;
  ui.simulate.disabled = true;
  let trace;
  try {
    trace = await api.simulate({ acceptance_rate: s.acceptance_rate, draft_tokens: s.draft_tokens,
      output_tokens: SIM_TOKENS, seed });
  } catch (error) {
    addNote({ key: "simulate", text: `The simulation could not run: ${error.message}`, error: true });
    ui.simulate.disabled = false;
    return;
  }
  ui.check.hidden = true;
  ui.tokens.replaceChildren();
  const animate = !reducedMotion();
  let pass = 0;
  const nodes = trace.events.map((event) => {
    const parts = [];
    if (pass && event.target_pass !== pass) parts.push(el("span", { class: "pass-break", "aria-hidden": "true" }));
    pass = event.target_pass;
    const label = { accepted: "accepted guess", rejected: "rejected guess", target: "written by the big model" }[event.kind];
    parts.push(el("span", { class: `tok tok--${event.kind}${animate ? " is-new" : ""}`, title: label, "data-kind": event.kind },
      event.token, el("span", { class: "visually-hidden", text: ` (${label})` })));
    return parts;
  });
  const finish = () => {
    if (id !== simRun) return;
    setText(ui.out, trace.output.join(" "));
    setText(ui.alone, trace.target_output.join(" "));
    toggleClass(ui.verdict, "is-identical", trace.identical);
    toggleClass(ui.verdict, "is-different", !trace.identical);
    setText(ui.verdict, trace.identical
      ? `✓ Identical, word for word. ${int(trace.output.length)} words took ${int(trace.target_passes)} passes of the big model instead of ${int(trace.output.length)}; ${int(trace.accepted)} of ${int(trace.proposed)} guesses were kept.`
      : "✗ The texts differ.");
    ui.check.hidden = false;
    ui.simulate.disabled = false;
  };
  if (!animate) {
    ui.tokens.append(...nodes.flat());
    finish();
    return;
  }
  let i = 0;
  const tick = () => {
    if (id !== simRun) return;
    if (i >= nodes.length) {
      finish();
      return;
    }
    ui.tokens.append(...nodes[i]);
    i += 1;
    setTimeout(tick, STEP_MS);
  };
  tick();
}
