// Step 1: reading the question (prefill) vs writing the answer (decode), for one user.

import { valueSlider } from "./controls.js";
import { $, el, reducedMotion, setText, toggleClass } from "./dom.js";
import { int, num, ratio, time, timeText, tokens } from "./format.js";
import * as state from "./state.js";

const QUESTION_TOKENS = [10, 20, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 8000, 10000, 15000,
  20000, 30000, 50000, 80000, 100000, 120000];
const ANSWER_TOKENS = [10, 20, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 8000, 10000, 16000, 32000];
const MAX_SHOWN_S = 12; // longer answers are played faster, and the page says so
const RESTART_AFTER_MS = 450;
const KEEP_CHARS = 1600;

const ANSWER_TEXT = ("Sunlight holds every colour. On its way through the air it meets molecules far smaller than its "
  + "wavelength, and these scatter short blue waves much more strongly than long red ones. So blue light reaches "
  + "your eyes from every part of the sky, and the sky looks blue. At sunset the light crosses far more air "
  + "before it reaches you. Most of the blue has been scattered away by then, and what is left is the orange and "
  + "red that travel furthest. Dust and smoke add to the effect, which is why some evenings glow deeper than "
  + "others. ").split(" ").filter(Boolean);

let ui = null;
let current = null; // the reading section last drawn
let run = 0;
let restartTimer = 0;
let visible = false;

function fits(values, limit) {
  const list = values.filter((v) => v < limit);
  return list.length ? list : [Math.max(1, limit - 1)];
}

export function init() {
  ui = {
    question: valueSlider($("s1-question"), document.querySelector("output[for=s1-question]"), { field: "question_tokens",
      values: QUESTION_TOKENS, format: tokens, onInput: (v) => state.set({ question_tokens: v }, { field: "question_tokens" }),
    }),
    answer: valueSlider($("s1-answer"), document.querySelector("output[for=s1-answer]"), { field: "answer_tokens",
      values: ANSWER_TOKENS, format: tokens, onInput: (v) => state.set({ answer_tokens: v }, { field: "answer_tokens" }),
    }),
    stream: $("s1-stream"), status: $("s1-stream-status"), speedNote: $("s1-speed-note"),
    ttft: $("s1-ttft"), ttftUnit: $("s1-ttft-unit"), write: $("s1-write"), writeUnit: $("s1-write-unit"),
    tps: $("s1-tps"), readTps: $("s1-read-tps"), ratio: $("s1-ratio"), bounds: $("s1-bounds"),
    barRead: $("s1-bar-read"), barWrite: $("s1-bar-write"), summary: $("s1-summary"),
    effC: $("s1-eff-c"), effM: $("s1-eff-m"),
  };
  ui.streamText = document.createTextNode("");
  ui.caret = el("span", { class: "stream-caret" });
  ui.stream.replaceChildren(el("span", { class: "stream-inner" }, ui.streamText, ui.caret));
  $("s1-replay").addEventListener("click", () => play());
  const observer = new IntersectionObserver((entries) => {
    const wasVisible = visible;
    visible = entries.some((e) => e.isIntersecting);
    if (visible && !wasVisible && current && !reducedMotion()) play();
  }, { threshold: 0.2 });
  observer.observe($("step-1"));
}

export function sync(s) {
  const ctx = state.maxContext(s);
  ui.question.setValues(fits(QUESTION_TOKENS, ctx));
  ui.answer.setValues(fits(ANSWER_TOKENS, ctx));
  ui.question.set(s.question_tokens);
  ui.answer.set(s.answer_tokens);
  setText(ui.effC, `${Math.round(s.compute_efficiency * 100)}%`);
  setText(ui.effM, `${Math.round(s.memory_efficiency * 100)}%`);
}

function showTime(valueNode, unitNode, seconds) {
  const [v, u] = time(seconds);
  setText(valueNode, v);
  setText(unitNode, u);
}

export function render(est) {
  const r = est.reading;
  showTime(ui.ttft, ui.ttftUnit, r.ttft_s);
  showTime(ui.write, ui.writeUnit, r.write_s);
  setText(ui.tps, num(r.decode_tokens_per_s));
  setText(ui.readTps, num(r.prefill_tokens_per_s));
  setText(ui.ratio, ratio(r.prefill_tokens_per_s / r.decode_tokens_per_s));
  const readShare = Math.max(0.004, r.ttft_s / r.answer_s);
  ui.barRead.style.width = `${(readShare * 100).toFixed(2)}%`;
  const boundText = { memory: "memory speed", compute: "arithmetic" };
  let line = `Reading ${tokens(r.question_tokens)} is limited by ${boundText[r.prefill_bound] || r.prefill_bound}; `
    + `each written token is limited by ${boundText[r.decode_bound] || r.decode_bound}.`;
  if (r.comm_per_step_s > 0) line += ` Of each writing step, ${timeText(r.comm_per_step_s)} is the GPUs exchanging results over their link.`;
  setText(ui.bounds, line);
  setText(ui.summary, `The first word appears after ${timeText(r.ttft_s)}; the ${tokens(r.answer_tokens)} answer then takes `
    + `${timeText(r.write_s)} at ${num(r.decode_tokens_per_s)} tokens per second.`);
  const changed = !current || ["ttft_s", "decode_tokens_per_s", "answer_tokens"].some((k) => current[k] !== r[k]);
  const first = !current;
  current = r;
  setText(ui.speedNote, speedNote(Math.max(1, r.answer_s / MAX_SHOWN_S)));
  if (first && !visible) setText(ui.status, "The answer streams here when this part of the page is in view.");
  if (changed) {
    clearTimeout(restartTimer);
    if (reducedMotion()) showWhole();
    else if (visible) restartTimer = setTimeout(play, RESTART_AFTER_MS);
  }
}

function word(i) {
  return ANSWER_TEXT[i % ANSWER_TEXT.length];
}

function textOf(count) {
  const words = [];
  const start = Math.max(0, count - 260);
  for (let i = start; i < count; i += 1) words.push(word(i));
  return words.join(" ");
}

function showWhole() {
  run += 1;
  if (!current) return;
  ui.streamText.data = textOf(current.answer_tokens);
  toggleClass(ui.stream, "is-waiting", false);
  setText(ui.status, `All ${tokens(current.answer_tokens)}, shown at once (reduced motion). Press Play to watch them arrive.`);
  setText(ui.speedNote, speedNote(1));
}

function speedNote(factor) {
  if (factor <= 1) return "Shown in real time.";
  return `Shown ${num(factor, 2)}× faster than estimated, so that you do not wait ${timeText(current.answer_s)}.`;
}

/** Stream the answer: nothing until the time to first token, then words at the writing speed. */
export function play() {
  if (!current) return;
  const id = ++run;
  const r = current;
  const factor = Math.max(1, r.answer_s / MAX_SHOWN_S);
  setText(ui.speedNote, speedNote(factor));
  ui.streamText.data = "";
  let shownCount = -1;
  const t0 = performance.now();
  const frame = (now) => {
    if (id !== run) return;
    const elapsed = ((now - t0) / 1000) * factor; // estimated seconds since the question was sent
    if (elapsed < r.ttft_s) {
      toggleClass(ui.stream, "is-waiting", true);
      setText(ui.status, `Reading the question… ${timeText(elapsed)}${factor > 1 ? ` (shown ${num(factor, 2)}× faster)` : ""}`);
      requestAnimationFrame(frame);
      return;
    }
    toggleClass(ui.stream, "is-waiting", false);
    const count = Math.min(r.answer_tokens, 1 + Math.floor((elapsed - r.ttft_s) * r.decode_tokens_per_s));
    if (count !== shownCount) {
      if (count - shownCount === 1 && shownCount > 0 && ui.streamText.data.length < KEEP_CHARS) {
        ui.streamText.appendData(` ${word(count - 1)}`);
      } else {
        ui.streamText.data = textOf(count);
      }
      shownCount = count;
    }
    if (count >= r.answer_tokens) {
      setText(ui.status, `Done: ${tokens(r.answer_tokens)} in ${timeText(r.answer_s)} (first word after ${timeText(r.ttft_s)}).`);
      return;
    }
    setText(ui.status, `Writing token ${int(count)} of ${int(r.answer_tokens)} · ${timeText(elapsed)}${factor > 1 ? ` (shown ${num(factor, 2)}× faster)` : ""}`);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}
