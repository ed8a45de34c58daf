// Numbers for people: each function returns [value, unit] or a string; no physics here.

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function int(x) {
  return Number.isFinite(x) ? grouped.format(Math.round(x)) : "–";
}

/** About three significant figures, grouped: 0.0123, 1.23, 12.3, 123, 1,234. */
export function num(x, digits = 3) {
  if (!Number.isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 10 ** (digits - 1)) return grouped.format(Math.round(x));
  if (a === 0) return "0";
  const decimals = Math.min(6, Math.max(0, digits - 1 - Math.floor(Math.log10(a))));
  return trim(x.toFixed(decimals));
}

/** "2.60" -> "2.6", "80.0" -> "80" (the figures keep their tabular digits). */
function trim(text) {
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

export function tokens(n) {
  return `${int(n)} token${n === 1 ? "" : "s"}`;
}

/** Seconds as [value, unit] in µs, ms, s, min or h. */
export function time(s) {
  if (!Number.isFinite(s)) return ["–", ""];
  if (s < 1e-3) return [num(s * 1e6), "µs"];
  if (s < 1) return [num(s * 1e3), "ms"];
  if (s < 120) return [num(s), "s"];
  if (s < 7200) return [num(s / 60), "min"];
  return [num(s / 3600), "h"];
}

export function timeText(s) {
  const [v, u] = time(s);
  return `${v} ${u}`;
}

/** Bytes as [value, unit] in decimal units (GB = 1e9 bytes), as GPU memory is sold. */
export function bytes(b) {
  if (!Number.isFinite(b)) return ["–", ""];
  const units = [[1e15, "PB"], [1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
  for (const [size, unit] of units) {
    if (Math.abs(b) >= size) return [num(b / size), unit];
  }
  return [int(b), "bytes"];
}

export function bytesText(b) {
  const [v, u] = bytes(b);
  return `${v} ${u}`;
}

/** Bytes per token in KB of 1,024 bytes, the unit the course uses ("about 320 KB"). */
export function kib(b) {
  if (!Number.isFinite(b)) return ["–", ""];
  if (b >= 1024 * 1024) return [num(b / (1024 * 1024)), "MB"];
  return [num(b / 1024), "KB"];
}

export function usd(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 1000) return "$" + grouped.format(Math.round(x));
  if (a >= 100) return "$" + x.toFixed(0);
  if (a >= 1) return "$" + x.toFixed(2);
  if (a >= 0.01) return "$" + x.toFixed(2 + (a < 0.1 ? 1 : 0));
  if (a === 0) return "$0";
  return "$" + x.toPrecision(2);
}

export function percent(share) {
  return Number.isFinite(share) ? `${Math.round(share * 100)}%` : "–";
}

export function params(n) {
  if (!Number.isFinite(n)) return "–";
  if (n >= 1e12) return `${num(n / 1e12)}T`;
  if (n >= 1e9) return `${num(n / 1e9)}B`;
  return `${num(n / 1e6)}M`;
}

export function precisionLabel(p) {
  return { "32bit": "32-bit", "16bit": "16-bit", "8bit": "8-bit", "4bit": "4-bit" }[p] || p;
}

export function compact(x) {
  if (!Number.isFinite(x)) return "";
  const a = Math.abs(x);
  if (a >= 1e6) return `${num(x / 1e6, 2)}M`;
  if (a >= 1e3) return `${num(x / 1e3, 2)}k`;
  return num(x, 2);
}

export function ratio(x) {
  if (!Number.isFinite(x)) return "–";
  return x >= 10 ? int(x) : num(x, 2);
}
