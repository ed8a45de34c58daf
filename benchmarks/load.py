"""Load the API: 20,000 estimate requests from 64 concurrent clients against a real server on loopback.

Starts the page's server in its own process on a free 127.0.0.1 port, sends a varied stream of valid
scenarios (plus a share of bad ones, which must come back 422), and reports errors (goal 0), p50/p99
latency, requests per second and the server's resident memory before and after (goal: flat).

    python benchmarks/load.py [--requests 20000] [--clients 64]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table, write_result  # noqa: E402

from infercost.server_process import running_server  # noqa: E402

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"]
GPUS = ["h100-sxm", "h200", "b200", "a100-80gb", "mi300x", "l40s"]
WARM_UP_REQUESTS = 4000
BAD_SHARE = 0.05  # of requests carry a mistake and must get a 422




def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def scenario(rng: random.Random) -> tuple[dict, int]:
    """A request body and the status it must get."""
    body = {"model": rng.choice(MODELS), "gpu": rng.choice(GPUS), "gpus": rng.choice([1, 2, 4, 8]),
            "precision": rng.choice(["16bit", "8bit", "4bit"]), "question_tokens": rng.randint(10, 8000),
            "answer_tokens": rng.randint(10, 4000), "conversation_tokens": rng.randint(100, 32000),
            "conversations": rng.randint(1, 200), "batch": rng.randint(1, 512), "busy_share": rng.uniform(0.05, 1)}
    if rng.random() < BAD_SHARE:
        body[rng.choice(["gpus", "batch", "question_tokens"])] = rng.choice([-1, 0, "many", None, 10**12])
        return body, 422
    return body, 200


async def client(http: httpx.AsyncClient, jobs: list[tuple[dict, int]], latencies: list[float], errors: list[str]):
    while jobs:
        body, expected = jobs.pop()
        start = time.perf_counter()
        try:
            r = await http.post("/api/estimate", json=body)
            status = r.status_code
        except httpx.HTTPError as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        latencies.append(time.perf_counter() - start)
        if status != expected:
            errors.append(f"status {status} for {body} (expected {expected})")


async def drive(base_url: str, requests: int, clients: int, seed: int) -> tuple[list[float], list[str], float]:
    rng = random.Random(seed)
    jobs = [scenario(rng) for _ in range(requests)]
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as http:
        start = time.perf_counter()
        await asyncio.gather(*(client(http, jobs, latencies, errors) for _ in range(clients)))
        elapsed = time.perf_counter() - start
    return latencies, errors, elapsed




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with running_server() as (url, pid):
        base_url = url.rstrip("/")
        # Warm-up that fills the server's bounded caches (imports, the estimate LRU), so that
        # "before" and "after" compare a steady state: growth between them would be a leak.
        asyncio.run(drive(base_url, WARM_UP_REQUESTS, args.clients, args.seed + 1))
        rss_before = rss_bytes(pid)
        latencies, errors, elapsed = asyncio.run(drive(base_url, args.requests, args.clients, args.seed))
        rss_after = rss_bytes(pid)
    q = statistics.quantiles(latencies, n=100)
    result = {
        "requests": args.requests, "clients": args.clients, "errors": len(errors), "first_errors": errors[:5],
        "p50_s": q[49], "p99_s": q[98], "requests_per_s": len(latencies) / elapsed,
        "server_rss_before_bytes": rss_before, "server_rss_after_bytes": rss_after,
    }
    print(f"{args.requests:,} POST /api/estimate from {args.clients} clients on loopback "
          f"({BAD_SHARE:.0%} deliberately bad, which must get 422)\n")
    print_table(["measure", "value", "goal"], [
        ["errors", f"{len(errors):,}", "0"],
        ["p50 latency", f"{q[49] * 1e3:.1f} ms", ""],
        ["p99 latency", f"{q[98] * 1e3:.1f} ms", ""],
        ["throughput", f"{result['requests_per_s']:,.0f} requests/s", ""],
        ["server memory before", f"{rss_before / 2**20:,.1f} MiB", ""],
        ["server memory after", f"{rss_after / 2**20:,.1f} MiB", "flat"],
    ])
    for e in errors[:5]:
        print("  error:", e)
    print(f"wrote {write_result('load', result)}")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
