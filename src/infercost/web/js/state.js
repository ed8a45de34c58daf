// The page's one shared state: the scenario sent to /api/estimate, mirrored in the URL's query string.
// A value in the URL that is not usable falls back to the default, with a note naming it.

import { int, precisionLabel } from "./format.js";

export const LABELS = {
  model: "model", precision: "precision", kv_precision: "KV cache precision", gpu: "GPU type",
  gpus: "number of GPUs", compute_efficiency: "share of peak arithmetic", memory_efficiency: "share of peak memory speed",
  question_tokens: "question length", answer_tokens: "answer length", conversation_tokens: "conversation length",
  conversations: "conversations at once", batch: "batch size", draft_model: "draft model", draft_tokens: "draft length",
  acceptance_rate: "guesses accepted", shared_prefix_tokens: "shared opening text",
  price_per_gpu_hour_usd: "price per GPU-hour", busy_share: "server busy", custom_model: "imported model",
  custom_gpu: "this machine",
};

// Page bounds: within the core's bounds, and what the page's controls offer.
const PAGE_MAX = { draft_tokens: 16, gpus: 1024 };
const PRECISIONS = ["16bit", "8bit", "4bit"];
const KV_PRECISIONS = ["16bit", "8bit"];
const SHARES = { compute_efficiency: [0.01, 1], memory_efficiency: [0.01, 1], busy_share: [0.01, 1], acceptance_rate: [0, 1] };
const MAX_JSON_PARAM = 8000;

let catalog = null;
let defaults = null;
let scenario = null;
let version = 0;
const listeners = new Set();
let urlTimer = 0;

export const getCatalog = () => catalog;
export const getDefaults = () => defaults;
export const get = () => scenario;
export const getVersion = () => version;

export function modelEntry(id = scenario.model) {
  return catalog.models.find((m) => m.id === id) || null;
}

export function gpuEntry(id = scenario.gpu) {
  return catalog.gpus.find((g) => g.id === id) || null;
}

/** The context limit of the model in use (an imported model's own). */
export function maxContext(s = scenario) {
  if (s.custom_model) return s.custom_model.max_context_tokens;
  const m = modelEntry(s.model);
  return m ? m.max_context_tokens : 131072;
}

export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function parseValue(name, raw) {
  const ids = (list) => list.map((x) => x.id);
  if (name === "model") return ids(catalog.models).includes(raw) ? raw : undefined;
  if (name === "gpu") return ids(catalog.gpus).includes(raw) ? raw : undefined;
  if (name === "draft_model") return raw === "" ? null : ids(catalog.models).includes(raw) ? raw : undefined;
  if (name === "precision") return PRECISIONS.includes(raw) ? raw : undefined;
  if (name === "kv_precision") return KV_PRECISIONS.includes(raw) ? raw : undefined;
  if (name in catalog.bounds) {
    if (!/^\d{1,9}$/.test(raw)) return undefined;
    const value = Number(raw);
    const [low, high] = catalog.bounds[name];
    return value >= low && value <= Math.min(high, PAGE_MAX[name] ?? high) ? value : undefined;
  }
  if (name in SHARES) {
    if (!/^\d*\.?\d+$/.test(raw)) return undefined;
    const value = Number(raw);
    const [low, high] = SHARES[name];
    return value >= low && value <= high ? value : undefined;
  }
  if (name === "price_per_gpu_hour_usd") {
    if (!/^\d*\.?\d+$/.test(raw)) return undefined;
    const value = Number(raw);
    return value > 0 && value <= 10000 ? value : undefined;
  }
  if (name === "custom_model" || name === "custom_gpu") {
    if (raw.length > MAX_JSON_PARAM) return undefined;
    try {
      const value = JSON.parse(raw);
      return value && typeof value === "object" && !Array.isArray(value) && typeof value.id === "string" ? value : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function shown(raw) {
  const text = String(raw);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Read the scenario from a query string; returns the notes for values that fell back. */
export function init(cat, search) {
  catalog = cat;
  defaults = { custom_model: null, custom_gpu: null, ...cat.defaults };
  scenario = { ...defaults };
  const notes = [];
  const params = new URLSearchParams(search);
  for (const [name, raw] of params) {
    if (!(name in LABELS)) {
      notes.push({ key: `url-${name}`, text: `The link's setting “${shown(name)}” is not one this page knows, so it was ignored.` });
      continue;
    }
    const value = parseValue(name, raw);
    if (value === undefined) {
      notes.push({ key: `url-${name}`, field: name,
        text: `The link's value for the ${LABELS[name]} (“${shown(raw)}”) is not usable, so the page uses the default${describeDefault(name)} instead.` });
    } else {
      scenario[name] = value;
    }
  }
  notes.push(...normalize(null));
  version = 1;
  return notes;
}

function describeDefault(name) {
  const value = defaults[name];
  if (value === null || value === undefined) return "";
  if (name === "precision" || name === "kv_precision") return ` (${precisionLabel(value)})`;
  if (typeof value === "number" && name in SHARES) return ` (${Math.round(value * 100)}%)`;
  if (typeof value === "number") return ` (${int(value)})`;
  return ` (${value})`;
}

export function describeValue(name, value) {
  if (value === null || value === undefined) return "automatic";
  if (name === "precision" || name === "kv_precision") return precisionLabel(value);
  if (name in SHARES) return `${Math.round(value * 100)}%`;
  if (typeof value === "number") return int(value);
  if (typeof value === "object") return value.name || value.id;
  return String(value);
}

/**
 * Keep the scenario inside what the model can hold: lengths within its context, the shared opening
 * within the question, a draft model of the same family. `changed` is the field the reader just
 * moved; the other one gives way. Returns notes for anything that was adjusted.
 */
function normalize(changed) {
  const notes = [];
  const ctx = maxContext();
  const name = scenario.custom_model ? scenario.custom_model.name : (modelEntry()?.name ?? scenario.model);
  if (scenario.conversation_tokens > ctx) {
    scenario.conversation_tokens = ctx;
    notes.push({ key: "clamp-conversation", text: `Conversation length set to ${int(ctx)} tokens, the longest ${name} can hold.` });
  }
  if (scenario.question_tokens + scenario.answer_tokens > ctx) {
    if (changed === "question_tokens") {
      scenario.question_tokens = Math.min(scenario.question_tokens, ctx - 1);
      scenario.answer_tokens = Math.max(1, ctx - scenario.question_tokens);
      notes.push({ key: "clamp-answer", text: `Answer shortened to ${int(scenario.answer_tokens)} tokens: question and answer together must fit in ${name}'s context of ${int(ctx)} tokens.` });
    } else {
      scenario.answer_tokens = Math.min(scenario.answer_tokens, ctx - 1);
      scenario.question_tokens = Math.max(1, ctx - scenario.answer_tokens);
      notes.push({ key: "clamp-question", text: `Question shortened to ${int(scenario.question_tokens)} tokens: question and answer together must fit in ${name}'s context of ${int(ctx)} tokens.` });
    }
  }
  if (scenario.shared_prefix_tokens > scenario.question_tokens) {
    scenario.shared_prefix_tokens = scenario.question_tokens;
  }
  if (scenario.draft_model !== null) {
    const target = scenario.custom_model ? null : modelEntry();
    if (!target || !target.drafts.includes(scenario.draft_model)) {
      const draft = modelEntry(scenario.draft_model);
      notes.push({ key: "clamp-draft", text: `${draft ? draft.name : scenario.draft_model} cannot draft for ${name} (it needs a smaller model of the same family), so the draft is chosen automatically.` });
      scenario.draft_model = null;
    }
  }
  return notes;
}

/** Change some fields; returns the notes of any adjustment. Listeners hear about it at once. */
export function set(changes, { field = null, silent = false } = {}) {
  const next = { ...scenario, ...changes };
  if ("gpu" in changes && changes.gpu !== scenario.gpu && !("price_per_gpu_hour_usd" in changes)) {
    next.price_per_gpu_hour_usd = null; // a price typed for one GPU does not carry over to another
  }
  if ("gpu" in changes && !("custom_gpu" in changes)) next.custom_gpu = null;
  const same = Object.keys(next).every((k) => sameValue(next[k], scenario[k]));
  if (same) return [];
  scenario = next;
  const notes = normalize(field ?? Object.keys(changes)[0]);
  version += 1;
  scheduleUrl();
  if (!silent) for (const fn of listeners) fn(scenario, version, notes);
  return notes;
}

/** Replace the whole scenario (e.g. going back to the last one the server accepted). */
export function replace(next) {
  scenario = { ...next };
  version += 1;
  scheduleUrl();
  for (const fn of listeners) fn(scenario, version, []);
}

function sameValue(a, b) {
  if (a === b) return true;
  if (a && b && typeof a === "object" && typeof b === "object") return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/** The body for /api/estimate: the full scenario (the page's "gpu" for this machine is not a catalog id). */
export function body(s = scenario) {
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if ((k === "custom_model" || k === "custom_gpu") && !v) continue;
    out[k] = v;
  }
  if (out.custom_gpu) out.gpu = defaults.gpu;
  return out;
}

/** Only what differs from the defaults, so links stay short. */
export function query(s = scenario) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) {
    if (sameValue(v, defaults[k]) || v === null || v === undefined) continue;
    if (k === "gpu" && s.custom_gpu) continue;
    params.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return params.toString();
}

function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, 250); // history.replaceState is rate-limited by browsers
}

export function writeUrl() {
  clearTimeout(urlTimer);
  const q = query();
  const target = q ? `?${q}` : location.pathname;
  if (location.search !== (q ? `?${q}` : "")) history.replaceState(null, "", target + location.hash);
}
