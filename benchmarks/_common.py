"""Shared helpers of the benchmark scripts: timing statistics, a table, a JSON result file."""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

RESULTS_DIR = Path(__file__).parent / "results"


def time_per_call_s(fn: Callable[[], object], repeats: int = 7, min_batch_s: float = 0.2) -> dict[str, float]:
    """Median, min and max seconds per call over `repeats` batches, each batch long enough to time well."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_batch_s / 4:
            break
        calls *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples),
            "calls_per_repeat": calls, "repeats": repeats}


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, r in enumerate(cells):
        print("  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def write_result(name: str, data: dict) -> Path:
    """Write benchmarks/results/NAME.json atomically, with the machine it ran on."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "machine": {"python": platform.python_version(), "processor": platform.machine(),
                                           "cpus": os.cpu_count()}, **data}
    path = RESULTS_DIR / f"{name}.json"
    with tempfile.NamedTemporaryFile("w", dir=RESULTS_DIR, delete=False, suffix=".tmp") as tmp:
        json.dump(data, tmp, indent=2)
    os.replace(tmp.name, path)
    return path
