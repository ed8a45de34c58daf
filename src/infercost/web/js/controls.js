// Sliders over a list of values (so long ranges move in sensible steps), kept in step with the state.

import { setText } from "./dom.js";

let prefetchHook = null;
const AHEAD = 10;

/** fn(field, values): called with the values a slider is likely to take next. */
export function onNeighbours(fn) {
  prefetchHook = fn;
}

/**
 * A range input whose positions are `values`. onInput(value) runs on every move; set(value) shows a
 * value from the state (exact, even between steps); setValues(list) changes the steps.
 */
export function valueSlider(input, output, { values, format, onInput, field = null }) {
  let list = values.slice();
  let current = list[0];
  let lastIndex = -1;

  /** The values a drag reaches next: ahead first, a few behind, up to AHEAD of them. */
  function neighbours(index, direction) {
    if (!prefetchHook || !field) return;
    const forward = direction < 0 ? -1 : 1;
    const out = [];
    for (let d = 1; out.length < AHEAD && d <= list.length; d += 1) {
      for (const i of direction === 0 ? [index + d, index - d] : [index + forward * d, ...(d % 3 === 0 ? [index - forward * (d / 3)] : [])]) {
        if (list[i] !== undefined && out.length < AHEAD) out.push(list[i]);
      }
    }
    if (out.length) prefetchHook(field, out);
  }

  function nearest(value) {
    let best = 0;
    for (let i = 1; i < list.length; i += 1) {
      if (Math.abs(list[i] - value) < Math.abs(list[best] - value)) best = i;
    }
    return best;
  }

  function show(value) {
    current = value;
    const text = format(value);
    setText(output, text);
    input.setAttribute("aria-valuetext", text);
  }

  function setValues(next) {
    list = next.slice();
    input.min = "0";
    input.max = String(Math.max(0, list.length - 1));
    input.step = "1";
    input.value = String(nearest(current));
  }

  input.addEventListener("input", () => {
    const index = Number(input.value);
    const value = list[index];
    show(value);
    onInput(value);
    neighbours(index, lastIndex < 0 ? 0 : index - lastIndex);
    lastIndex = index;
  });
  input.addEventListener("pointerdown", () => neighbours(Number(input.value), 0));
  input.addEventListener("focus", () => {
    lastIndex = Number(input.value);
    neighbours(lastIndex, 0);
  });

  setValues(list);
  return {
    set(value) {
      if (value !== current || output.textContent === "") show(value);
      const index = String(nearest(value));
      if (input.value !== index) input.value = index;
    },
    setValues(next) {
      if (next.length === list.length && next.every((v, i) => v === list[i])) return;
      setValues(next);
    },
    get values() {
      return list;
    },
  };
}

export function range(from, to, step) {
  const out = [];
  for (let i = 0; from + i * step <= to + 1e-9; i += 1) out.push(Number((from + i * step).toFixed(6)));
  return out;
}

/** Radio buttons with the same name: set(value) checks one; onChange(value) when the reader picks. */
export function radios(container, onChange) {
  const inputs = [...container.querySelectorAll("input[type=radio]")];
  for (const input of inputs) input.addEventListener("change", () => input.checked && onChange(input.value));
  return {
    set(value) {
      for (const input of inputs) input.checked = input.value === value;
    },
  };
}
