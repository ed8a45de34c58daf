// The sticky top bar: model, precision, GPU type and count. It drives every step below.

import * as api from "./api.js";
import { radios } from "./controls.js";
import { $, el, setText } from "./dom.js";
import { bytesText, int, params, precisionLabel } from "./format.js";
import * as state from "./state.js";

const FAMILY_NAMES = { llama: "Llama", qwen2: "Qwen2.5", "qwen2.5": "Qwen2.5", qwen3: "Qwen3", mistral: "Mistral",
  mixtral: "Mixtral", deepseek: "DeepSeek", "gpt-oss": "gpt-oss", gemma: "Gemma", smollm: "SmolLM" };
const MEASURED = "measured:"; // option values of machines loaded from a benchmark result

let ui = null;

function familyName(family) {
  if (!family) return "Other";
  return FAMILY_NAMES[family] || family.charAt(0).toUpperCase() + family.slice(1);
}

function modelLabel(m) {
  const size = m.is_moe ? `${params(m.params_total)}, ${params(m.params_active)} active` : params(m.params_total);
  return `${m.name} (${size})`;
}

function fillModels(select, catalog, custom) {
  select.replaceChildren();
  const groups = new Map();
  for (const m of catalog.models) {
    const name = familyName(m.family);
    if (!groups.has(name)) groups.set(name, el("optgroup", { label: name }));
    groups.get(name).append(el("option", { value: m.id, text: modelLabel(m) }));
  }
  if (custom) {
    const group = el("optgroup", { label: "Imported" });
    group.append(el("option", { value: "custom", text: `${custom.name} (imported)` }));
    select.append(group);
  }
  for (const group of groups.values()) select.append(group);
}

function fillGpus(select, catalog, machines) {
  select.replaceChildren();
  if (machines.length) {
    const group = el("optgroup", { label: "Measured by infercost bench" });
    for (const m of machines) group.append(el("option", { value: MEASURED + m.id, text: `${m.name} (measured)` }));
    select.append(group);
  }
  const vendors = new Map();
  for (const g of catalog.gpus) {
    if (!vendors.has(g.vendor)) vendors.set(g.vendor, el("optgroup", { label: g.vendor }));
    vendors.get(g.vendor).append(el("option", { value: g.id, text: `${g.name} · ${bytesText(g.memory_bytes)}` }));
  }
  for (const group of vendors.values()) select.append(group);
}

export function init({ addNote }) {
  const catalog = state.getCatalog();
  ui = {
    model: $("tb-model"), gpu: $("tb-gpu"), gpus: $("tb-gpus"), banner: $("fit-banner"),
    bannerText: $("fit-banner-text"), apply: $("fit-apply"), applyN: $("fit-apply-n"),
    fileInput: $("tb-import"), copyStatus: $("tb-copy-status"), shownCustom: undefined, shownMachines: undefined,
    machines: [],
  };
  ui.precision = radios($("tb-precision"), (value) => state.set({ precision: value }));

  ui.model.addEventListener("change", () => {
    const value = ui.model.value;
    if (value === "custom") return;
    state.set({ model: value, custom_model: null });
  });
  ui.gpu.addEventListener("change", () => {
    const value = ui.gpu.value;
    const machine = ui.machines.find((m) => MEASURED + m.id === value);
    if (machine) state.set({ custom_gpu: machine, price_per_gpu_hour_usd: null });
    else state.set({ gpu: value, custom_gpu: null });
  });

  const setCount = (n) => {
    const [low, high] = catalog.bounds.gpus;
    const value = Math.min(Math.min(high, 1024), Math.max(low, Math.round(n)));
    ui.gpus.value = String(value);
    ui.gpus.removeAttribute("aria-invalid");
    state.set({ gpus: value });
  };
  ui.gpus.addEventListener("input", () => {
    const value = Number(ui.gpus.value);
    const valid = /^\d+$/.test(ui.gpus.value) && value >= 1 && value <= 1024;
    if (valid) state.set({ gpus: value });
    ui.gpus.setAttribute("aria-invalid", valid ? "false" : "true");
  });
  ui.gpus.addEventListener("change", () => {
    const value = Number(ui.gpus.value);
    setCount(Number.isFinite(value) && ui.gpus.value !== "" ? value : state.get().gpus);
  });
  $("tb-gpus-minus").addEventListener("click", () => setCount(state.get().gpus - 1));
  $("tb-gpus-plus").addEventListener("click", () => setCount(state.get().gpus + 1));
  ui.apply.addEventListener("click", () => {
    const n = Number(ui.apply.dataset.gpus);
    if (n >= 1) setCount(n);
  });

  $("tb-import-btn").addEventListener("click", () => ui.fileInput.click());
  ui.fileInput.addEventListener("change", async () => {
    const file = ui.fileInput.files && ui.fileInput.files[0];
    ui.fileInput.value = "";
    if (!file) return;
    try {
      const spec = await api.upload("api/models/import", file);
      addNote({ key: "import", text: `Imported ${spec.name} from ${file.name}. Choose a model in the list to go back to the catalog.` });
      state.set({ custom_model: spec, draft_model: null });
    } catch (error) {
      addNote({ key: "import", text: `That file could not be used as a model: ${error.message}`, error: true });
    }
  });

  $("tb-copy").addEventListener("click", async () => {
    state.writeUrl();
    try {
      await navigator.clipboard.writeText(location.href);
      setText(ui.copyStatus, "Copied");
    } catch {
      setText(ui.copyStatus, "Copy the address bar");
    }
    setTimeout(() => setText(ui.copyStatus, ""), 2500);
  });
}

/** Offer measured machines (GpuSpec-shaped, from a benchmark result) as hardware choices. */
export function addMachines(specs) {
  for (const spec of specs) {
    ui.machines = ui.machines.filter((m) => m.id !== spec.id).concat([spec]);
  }
  sync(state.get());
}

/** Show the state in the controls. */
export function sync(s) {
  const catalog = state.getCatalog();
  const customKey = s.custom_model ? JSON.stringify(s.custom_model) : null;
  if (ui.shownCustom !== customKey) {
    fillModels(ui.model, catalog, s.custom_model);
    ui.shownCustom = customKey;
  }
  ui.model.value = s.custom_model ? "custom" : s.model;
  if (s.custom_gpu && !ui.machines.some((m) => m.id === s.custom_gpu.id)) ui.machines.push(s.custom_gpu);
  const machinesKey = JSON.stringify(ui.machines.map((m) => m.id));
  if (ui.shownMachines !== machinesKey) {
    fillGpus(ui.gpu, catalog, ui.machines);
    ui.shownMachines = machinesKey;
  }
  ui.gpu.value = s.custom_gpu ? MEASURED + s.custom_gpu.id : s.gpu;
  ui.precision.set(s.precision);
  if (document.activeElement !== ui.gpus || Number(ui.gpus.value) !== s.gpus) ui.gpus.value = String(s.gpus);
}

/** The banner when the weights do not fit. */
export function render(est) {
  const fit = est.fit;
  if (fit.fits) {
    if (!ui.banner.hidden) ui.banner.hidden = true;
    return;
  }
  const hw = est.hardware;
  const usable = fit.usable_per_gpu_bytes * hw.gpus;
  let text = `${est.model.name} at ${precisionLabel(est.precision.precision)} needs ${bytesText(fit.weights_bytes)} for its weights; `
    + `${hw.gpus} × ${hw.name} hold ${bytesText(usable)} after the runtime's reserve.`;
  if (fit.min_gpus) {
    text += ` The fewest that hold it and split its attention heads evenly: ${int(fit.min_gpus)}.`;
    ui.apply.hidden = false;
    ui.apply.dataset.gpus = String(fit.min_gpus);
    setText(ui.applyN, int(fit.min_gpus));
  } else {
    text += ` Not even ${int(1024)} of them would: pick a larger GPU or a lower precision.`;
    ui.apply.hidden = true;
  }
  setText(ui.bannerText, text);
  ui.banner.hidden = false;
}
