// The page's only way to numbers: the JSON API. Estimates are coalesced while a slider is dragged
// (one request in flight, then the latest state), cached, and never applied out of order.

export class ApiError extends Error {
  constructor(status, detail) {
    super(messageOf(detail) || `the server answered ${status}`);
    this.status = status;
    this.detail = detail;
  }

  /** The first field the server named, e.g. "answer_tokens" or "custom_model". */
  get field() {
    const loc = Array.isArray(this.detail) && this.detail[0] && this.detail[0].loc;
    if (!Array.isArray(loc)) return null;
    const parts = loc.filter((p) => p !== "body");
    return parts.length ? String(parts[0]) : null;
  }
}

function messageOf(detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => d && d.msg).filter(Boolean).join("; ");
  return "";
}

async function request(path, options = {}) {
  let response;
  try {
    response = await fetch(path, { headers: { Accept: "application/json" }, ...options });
  } catch {
    throw new ApiError(0, "The page cannot reach its server. Is `infercost serve` still running?");
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data && data.detail ? data.detail : `HTTP ${response.status}`);
  return data;
}

const postJson = (path, payload) => request(path, {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json" },
  body: JSON.stringify(payload),
});

export const getCatalog = () => request("api/catalog");
export const simulate = (payload) => postJson("api/simulate/speculative", payload);

export function upload(path, file) {
  const form = new FormData();
  form.append("file", file, file.name || "upload.json");
  return request(path, { method: "POST", body: form });
}

const CACHE_SIZE = 400;
const PREFETCH_QUEUE = 10;

/**
 * estimator.want(body, version): ask for the estimate of a scenario. onResult(estimate, version) runs
 * for the newest version answered so far only; onError(error, version) for a refused one.
 * estimator.prefetch(bodies): fetch likely next scenarios (the neighbours of a slider being dragged)
 * while nothing else is asked, so the next step of a drag is drawn from the cache.
 */
export function createEstimator({ onResult, onError }) {
  const cache = new Map();
  const pending = new Map(); // key -> promise of an estimate being fetched
  let busy = false; // a wanted estimate is on its way
  let wanted = null; // the newest { body, version } asked while busy
  let applied = 0;
  let queue = [];
  let prefetching = false;

  function remember(key, value) {
    cache.delete(key);
    cache.set(key, value);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value);
  }

  function fetchKey(key, body) {
    const promise = postJson("api/estimate", body).then((estimate) => {
      remember(key, estimate);
      return estimate;
    }).finally(() => pending.delete(key));
    pending.set(key, promise);
    return promise;
  }

  function deliver(estimate, version) {
    if (version < applied) return; // an older answer never overwrites a newer one
    applied = version;
    onResult(estimate, version);
  }

  function attach(promise, version, owned) {
    promise.then((estimate) => deliver(estimate, version), (error) => {
      if (version >= applied) onError(error, version);
    }).finally(() => {
      if (!owned) return;
      busy = false;
      if (wanted) {
        const next = wanted;
        wanted = null;
        want(next.body, next.version);
      } else {
        pump();
      }
    });
  }

  function want(body, version) {
    const key = JSON.stringify(body);
    const hit = cache.get(key);
    if (hit) {
      wanted = null;
      remember(key, hit);
      deliver(hit, version);
      return;
    }
    const fetching = pending.get(key);
    if (fetching) { // already on its way (fetched ahead while a slider moved): wait for that one
      wanted = null;
      attach(fetching, version, false);
      return;
    }
    if (busy) {
      wanted = { body, version };
      return;
    }
    busy = true;
    attach(fetchKey(key, body), version, true);
  }

  function pump() {
    if (busy || prefetching) return;
    while (queue.length) {
      const { key, body } = queue.shift();
      if (cache.has(key) || pending.has(key)) continue;
      prefetching = true;
      fetchKey(key, body).catch(() => {}).finally(() => {
        prefetching = false;
        pump();
      });
      return;
    }
  }

  function prefetch(bodies) {
    queue = bodies.slice(0, PREFETCH_QUEUE).map((body) => ({ key: JSON.stringify(body), body }));
    pump();
  }

  return { want, prefetch };
}
