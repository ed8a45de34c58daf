"""Page latency: slider input to painted update, page load time, and the API under 32 concurrent clients.

    python benchmarks/page_latency.py [--quick] [--chromium /usr/bin/chromium] [--json benchmarks/results/page_latency.json]

1. Page load: navigation start to the first estimate painted, in a fresh browser context each time.
2. Slider drags: for each slider, a mouse drag across its whole track in headless Chromium. For every
   input event that changed the state, the time from the event to the first frame painted with an
   estimate at least that new (the page coalesces requests while dragging, so a superseded input is
   served by a later paint). "Painted" is the task after the next animation frame. Two passes: the
   first drag (every value new to the server and the page's cache) and a drag back (cached).
3. API: 32 concurrent httpx clients in a closed loop against the real server (uvicorn on loopback, in
   its own process), each sending POST /api/estimate with scenarios drawn at random (so the server's
   cache rarely helps) and, separately, the same scenario (cached); then an open loop in which each of
   the 32 clients sends 5 requests a second at random times (32 learners dragging sliders now and
   then). p50 / p99 per request. The load generator shares the machine's CPUs with the server.

Goals from the issue: p95 <= 16 ms per update; API p99 <= 10 ms. Prints a table; writes JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

from infercost.server_process import running_server

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SLIDERS = ["s1-question", "s1-answer", "s2-length", "s2-count", "s3-batch", "s4-k", "s4-alpha", "s4-prefix",
           "s5-busy", "as-compute", "as-memory"]

INSTRUMENT = """() => {
  const log = window.__latency = { inputs: [], paints: [] };
  let last = window.infercost.state.getVersion();
  document.addEventListener("input", (e) => {
    const v = window.infercost.state.getVersion();
    if (v !== last) log.inputs.push({ t: e.timeStamp, v });
    last = v;
  });
  document.addEventListener("infercost:rendered", (e) => {
    const v = e.detail.version;
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => log.paints.push({ t: performance.now(), v });
      ch.port2.postMessage(0);
    });
  });
}"""


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50_ms": pct(values, 50), "p95_ms": pct(values, 95), "p99_ms": pct(values, 99),
            "max_ms": max(values) if values else None}






def drawn(page) -> None:
    page.wait_for_function("() => window.infercost && window.infercost.rendered > 0 "
                           "&& window.infercost.rendered === window.infercost.state.getVersion()", timeout=20_000)


# ---- browser ---------------------------------------------------------------------------------------

def page_loads(browser, url: str, runs: int) -> dict:
    first_paint, dom_ready = [], []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.add_init_script("""document.addEventListener("infercost:rendered", () => {
            if (window.__firstDraw) return;
            requestAnimationFrame(() => { const ch = new MessageChannel();
              ch.port1.onmessage = () => { window.__firstDraw = performance.now(); }; ch.port2.postMessage(0); });
        });""")
        page.goto(url)
        page.wait_for_function("() => window.__firstDraw > 0", timeout=20_000)
        first_paint.append(page.evaluate("window.__firstDraw"))
        dom_ready.append(page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
        context.close()
    return {"first_estimate_painted": summary(first_paint), "dom_content_loaded": summary(dom_ready)}


def drag(page, slider: str, steps: int, step_ms: float, backwards: bool) -> None:
    box = page.locator(f"#{slider}").bounding_box()
    y = box["y"] + box["height"] / 2
    left, right = box["x"] + 6, box["x"] + box["width"] - 6
    start, end = (right, left) if backwards else (left, right)
    page.mouse.move(start, y)
    page.mouse.down()
    for i in range(1, steps + 1):
        page.mouse.move(start + (end - start) * i / steps, y)
        page.wait_for_timeout(step_ms)
    page.mouse.up()


def match(log: dict) -> list[float]:
    """Latency of each state-changing input: to the first paint of that version or a newer one."""
    out = []
    for event in log["inputs"]:
        paints = [p["t"] for p in log["paints"] if p["v"] >= event["v"] and p["t"] >= event["t"]]
        if paints:
            out.append(min(paints) - event["t"])
    return out


def slider_drags(browser, url: str, steps: int, step_ms: float) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    drawn(page)
    page.evaluate(INSTRUMENT)
    results = {}
    for slider in SLIDERS:
        page.locator(f"#{slider}").scroll_into_view_if_needed()
        row = {}
        for label, backwards in (("first_drag", False), ("drag_back_cached", True)):
            page.evaluate("() => { window.__latency.inputs = []; window.__latency.paints = []; }")
            drag(page, slider, steps, step_ms, backwards)
            drawn(page)
            page.wait_for_timeout(60)
            row[label] = summary(match(page.evaluate("window.__latency")))
        results[slider] = row
        row["render_ms"] = summary(page.evaluate("window.infercost.renderTimes"))
        page.goto(url)  # each slider starts from the defaults
        drawn(page)
        page.evaluate(INSTRUMENT)
    context.close()
    return results


# ---- API -------------------------------------------------------------------------------------------

def random_scenario(rng: random.Random) -> dict:
    return {"batch": rng.choice([1, 2, 4, 8, 16, 24, 32, 48, 64, 96]),
            "question_tokens": rng.choice([100, 200, 500, 1000, 2000, 4000]),
            "answer_tokens": rng.choice([50, 100, 200, 500, 1000]),
            "conversations": rng.randint(1, 200), "busy_share": round(rng.uniform(0.05, 1), 2),
            "gpus": rng.choice([2, 4, 8]), "precision": rng.choice(["16bit", "8bit", "4bit"])}


async def api_load(url: str, clients: int, seconds: float, same: bool, seed: int = 0) -> dict:
    import httpx

    rng = random.Random(seed)
    latencies: list[float] = []
    errors = 0
    fixed = {"batch": 32}
    deadline = time.perf_counter() + seconds

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            body = fixed if same else random_scenario(rng)
            t0 = time.perf_counter()
            r = await http.post(url + "api/estimate", json=body)
            latencies.append((time.perf_counter() - t0) * 1000)
            errors += r.status_code != 200

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        await http.post(url + "api/estimate", json=fixed)  # warm-up
        start = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        elapsed = time.perf_counter() - start
    out = summary(latencies)
    out.update(requests_per_s=len(latencies) / elapsed, errors=errors, clients=clients, seconds=seconds)
    return out


async def api_single(url: str, requests: int) -> dict:
    import httpx

    rng = random.Random(1)
    latencies = []
    async with httpx.AsyncClient(timeout=30) as http:
        await http.post(url + "api/estimate", json={})
        start = time.perf_counter()
        for _ in range(requests):
            t0 = time.perf_counter()
            await http.post(url + "api/estimate", json=random_scenario(rng))
            latencies.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - start
    out = summary(latencies)
    out.update(requests_per_s=requests / elapsed, clients=1)
    return out


async def api_open_loop(url: str, clients: int, rate_per_client: float, seconds: float) -> dict:
    """Each client sends requests at random (Poisson) times, `rate_per_client` a second, without waiting."""
    import httpx

    rng = random.Random(2)
    latencies: list[float] = []
    errors = 0
    tasks = []

    async def one(http: httpx.AsyncClient, body: dict) -> None:
        nonlocal errors
        t0 = time.perf_counter()
        r = await http.post(url + "api/estimate", json=body)
        latencies.append((time.perf_counter() - t0) * 1000)
        errors += r.status_code != 200

    async def client(http: httpx.AsyncClient, deadline: float) -> None:
        while True:
            await asyncio.sleep(rng.expovariate(rate_per_client))
            if time.perf_counter() >= deadline:
                return
            tasks.append(asyncio.create_task(one(http, random_scenario(rng))))

    limits = httpx.Limits(max_connections=clients * 4, max_keepalive_connections=clients * 4)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        await http.post(url + "api/estimate", json={})
        start = time.perf_counter()
        await asyncio.gather(*(client(http, start + seconds) for _ in range(clients)))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    out = summary(latencies)
    out.update(requests_per_s=len(latencies) / elapsed, errors=errors, clients=clients,
               offered_per_s=clients * rate_per_client, seconds=seconds)
    return out


# ---- report ----------------------------------------------------------------------------------------

def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:7.1f}"


def report(result: dict) -> str:
    lines = ["Page latency (ms): input event to the frame painted with its estimate", "",
             f"{'slider':<14} {'n':>4} {'p50':>7} {'p95':>7} {'max':>7}   {'back p50':>8} {'p95':>7}   {'draw p50':>8} {'p95':>7}"]
    for slider, row in result["sliders"].items():
        a, b, r = row["first_drag"], row["drag_back_cached"], row["render_ms"]
        lines.append(f"{slider:<14} {a['n']:>4} {fmt(a['p50_ms'])} {fmt(a['p95_ms'])} {fmt(a['max_ms'])}   "
                     f"{fmt(b['p50_ms']):>8} {fmt(b['p95_ms'])}   {fmt(r['p50_ms']):>8} {fmt(r['p95_ms'])}")
    load = result["page_load"]
    lines += ["", f"page load, first estimate painted: p50 {fmt(load['first_estimate_painted']['p50_ms'])}  "
                  f"p95 {fmt(load['first_estimate_painted']['p95_ms'])}  (DOMContentLoaded p50 "
                  f"{fmt(load['dom_content_loaded']['p50_ms'])})", ""]
    lines.append(f"{'API POST /api/estimate':<34} {'p50':>7} {'p99':>7} {'req/s':>8}")
    for name, row in result["api"].items():
        lines.append(f"{name:<34} {fmt(row['p50_ms'])} {fmt(row['p99_ms'])} {row.get('requests_per_s', 0):8.0f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "page_latency.json")
    parser.add_argument("--quick", action="store_true", help="fewer loads, shorter drags and API runs")
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    loads, steps, seconds = (3, 12, 2.0) if args.quick else (10, 30, 8.0)
    with running_server() as (url, _):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            page_load = page_loads(browser, url, loads)
            sliders = slider_drags(browser, url, steps, step_ms=16)
            browser.close()
        api = {
            "1 client, sequential, varied": asyncio.run(api_single(url, 200 if not args.quick else 50)),
            f"{args.clients} clients, varied scenarios": asyncio.run(api_load(url, args.clients, seconds, same=False)),
            f"{args.clients} clients, one scenario (cached)": asyncio.run(api_load(url, args.clients, seconds, same=True)),
            f"{args.clients} clients, 5 req/s each, open loop": asyncio.run(api_open_loop(url, args.clients, 5.0, seconds)),
        }
    result = {
        "benchmark": "page_latency", "version": 1, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "method": {"drag_steps": steps, "drag_step_ms": 16, "page_loads": loads, "api_seconds": seconds,
                   "paint": "task after the next requestAnimationFrame", "server": "uvicorn, one process, loopback"},
        "goals": {"update_p95_ms": 16, "api_p99_ms": 10},
        "page_load": page_load, "sliders": sliders, "api": api,
    }
    print(report(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
