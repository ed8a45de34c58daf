// Boot: read the catalog, restore the state from the URL, wire every step, and draw each estimate.

import * as api from "./api.js";
import * as assumptions from "./assumptions.js";
import { onNeighbours } from "./controls.js";
import { $, el, setText } from "./dom.js";
import * as measure from "./measure.js";
import * as state from "./state.js";
import * as step1 from "./step1.js";
import * as step2 from "./step2.js";
import * as step3 from "./step3.js";
import * as step4 from "./step4.js";
import * as step5 from "./step5.js";
import * as topbar from "./topbar.js";

const steps = [topbar, step1, step2, step3, step4, step5, assumptions, measure];
let lastGood = null; // the last scenario the server answered
let lastEstimate = null;
let retries = 0;
let renderedVersion = 0;
const renderTimes = []; // ms per drawing of an estimate, for the page-latency benchmark

// ---- notes under the top bar (fallbacks, adjustments, refused inputs) ----------------------------

const shownNotes = new Map();

const TOAST_MS = 9000;

/** Notes about the link stay at the top until dismissed; the others appear in a corner for a while. */
export function addNote({ key, text, error = false }) {
  const lasting = key.startsWith("url-") || key.startsWith("refused-") || key === "server";
  const box = $(lasting ? "notes" : "toasts");
  const old = shownNotes.get(key);
  if (old) old.remove();
  const close = el("button", { type: "button", "aria-label": "Dismiss this note", text: "OK" });
  const note = el("p", { class: `note${error ? " note--error" : ""}`, "data-key": key }, el("span", { text }), close);
  close.addEventListener("click", () => {
    note.remove();
    shownNotes.delete(key);
  });
  shownNotes.set(key, note);
  box.append(note);
  if (!lasting) {
    setTimeout(() => {
      if (shownNotes.get(key) === note) {
        note.remove();
        shownNotes.delete(key);
      }
    }, TOAST_MS);
  }
}

function safeHref(href) {
  return typeof href === "string" && (/^https?:\/\//i.test(href) || (href.startsWith("/") && !href.startsWith("//")));
}

function courseLinks(course) {
  const byNumber = new Map((course.modules || []).map((m) => [m.number, m]));
  for (const link of document.querySelectorAll(".module-link")) {
    const module = byNumber.get(link.dataset.module);
    if (module && safeHref(module.href)) link.href = module.href;
  }
}

// ---- drawing -------------------------------------------------------------------------------------

function syncControls(s) {
  for (const step of steps) step.sync(s);
}

function draw(estimate, version) {
  const start = performance.now();
  lastEstimate = estimate;
  lastGood = estimate.scenario;
  retries = 0;
  document.body.classList.remove("is-loading");
  for (const step of steps) if (step.render) step.render(estimate);
  renderedVersion = version;
  renderTimes.push(performance.now() - start);
  if (renderTimes.length > 1000) renderTimes.shift();
  document.dispatchEvent(new CustomEvent("infercost:rendered", { detail: { version } }));
}

function refused(error, version) {
  if (error.status === 0 || error.status >= 500) {
    addNote({ key: "server", text: error.message, error: true });
    return;
  }
  const field = error.field;
  const label = state.LABELS[field] || field || "setting";
  if (lastGood && retries < 3) {
    retries += 1;
    addNote({ key: "refused", text: `That ${label} cannot be estimated (${error.message}), so the page went back to the last setting that could.`, error: true });
    const keep = { ...lastGood };
    state.replace(keep);
    return;
  }
  if (retries < 5 && field && field in state.getDefaults()) {
    retries += 1;
    addNote({ key: `refused-${field}`, text: `The ${label} from the link cannot be estimated (${error.message}), so the page uses the default instead.`, error: true });
    state.set({ [field]: state.getDefaults()[field] });
    return;
  }
  addNote({ key: "refused", text: `The page could not get an estimate: ${error.message}`, error: true });
}

const estimator = api.createEstimator({ onResult: draw, onError: refused });

// While a slider moves, fetch the estimates of the next positions so they can be drawn at once.
onNeighbours((field, values) => {
  const s = state.get();
  estimator.prefetch(values.map((v) => state.body({ ...s, [field]: v })));
});

function changed(s, version, notes) {
  for (const note of notes) addNote(note);
  syncControls(s);
  estimator.want(state.body(s), version);
}

// ---- start ---------------------------------------------------------------------------------------

async function start() {
  document.body.classList.add("is-loading");
  let catalog;
  try {
    catalog = await api.getCatalog();
  } catch (error) {
    addNote({ key: "server", text: `The page could not load its catalog: ${error.message}`, error: true });
    return;
  }
  courseLinks(catalog.course || {});
  const notes = state.init(catalog, location.search);
  for (const step of steps) step.init({ addNote });
  state.subscribe(changed);
  changed(state.get(), state.getVersion(), notes);
  // for scripts and tests: the state, the estimate on screen and the state version it reflects
  window.infercost = { state, get estimate() { return lastEstimate; }, get rendered() { return renderedVersion; }, renderTimes };
  state.writeUrl();
}

start();
