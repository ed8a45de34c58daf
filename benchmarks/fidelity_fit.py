"""Fit the serving model's few free constants to the TRAINING split of the published measurements.

Only constants that no datasheet gives are fitted (per-step and per-layer overhead, all-reduce latency
and bandwidth share per link kind, the roofline's knee, MoE imbalance). The fit minimises a robust
(soft-L1) loss on log(predicted / measured) over the train split; the held-out split is never seen.
Prints the fitted values, their residuals by group, and the held-out score; copy the values into
src/infercost/data/assumptions.toml by hand (the fit is a report, not a runtime step).

    python benchmarks/fidelity_fit.py [--params step,layer,nvlink_lat,...]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import fidelity  # noqa: E402

from infercost.assumptions import LinkAssumptions, assumptions  # noqa: E402
from infercost.physics import engines  # noqa: E402

# name: (getter on ServingAssumptions -> value, setter, lower, upper, log-scale)
PARAMS = {
    "step": ("step_overhead_s", 0.0, 20e-3),
    "layer": ("layer_overhead_s", 0.0, 200e-6),
    "knee": ("knee", 1.0, 50.0),
    "moe": ("moe_imbalance", 0.0, 5.0),
    "fp4": ("fp4_compute_share", 0.2, 1.0),
    "passes": ("hidden_passes_per_layer", 0.0, 40.0),
    "nvlink_lat": (("nvlink", "allreduce_latency_s"), 0.0, 100e-6),
    "nvlink_share": (("nvlink", "bandwidth_share"), 0.05, 1.0),
    "pcie_lat": (("pcie", "allreduce_latency_s"), 0.0, 500e-6),
    "pcie_share": (("pcie", "bandwidth_share"), 0.05, 1.0),
}


# Start values that assume the term away (so a term the training points cannot see stays neutral).
NEUTRAL = {"knee": 50.0, "fp4": 1.0, "nvlink_lat": 4e-6, "pcie_lat": 4e-6, "pcie_share": 1.0, "nvlink_share": 1.0,
           "step": 0.0, "layer": 0.0, "moe": 1.0, "passes": 2.0}


def current(name: str) -> float:
    key = PARAMS[name][0]
    sv = assumptions().serving
    if isinstance(key, tuple):
        return getattr(sv.links[key[0]], key[1])
    return getattr(sv, key)


def with_values(values: dict[str, float]):
    """An Assumptions object with these serving constants (the core reads it through engines.assumptions)."""
    a = assumptions()
    sv = a.serving
    links = dict(sv.links)
    fields = {}
    for name, v in values.items():
        key = PARAMS[name][0]
        if isinstance(key, tuple):
            links[key[0]] = replace(links[key[0]], **{key[1]: v})
        else:
            fields[key] = v
    return replace(a, serving=replace(sv, links=links, **fields))


def install(values: dict[str, float]) -> None:
    patched = with_values(values)
    engines.assumptions = lambda: patched
    engines.step_physics.cache_clear()
    engines.engine.cache_clear()


def log_errors(cases, values) -> list[float]:
    install(values)
    out = []
    for c in cases:
        try:
            out.append(math.log(fidelity.predict(c) / c.measured))
        except ValueError:
            out.append(math.log(1e-3))
    return out


def fit(names: list[str], train: list) -> dict[str, float]:
    """Robust least squares on log(predicted / measured) over `train`; returns the fitted values."""
    from scipy.optimize import least_squares

    x0 = [NEUTRAL.get(n, min(max(current(n), PARAMS[n][1]), PARAMS[n][2])) for n in names]
    scale = [max(abs(PARAMS[n][2] - PARAMS[n][1]), 1e-12) for n in names]

    def residual(x):
        return log_errors(train, {n: v * s for n, v, s in zip(names, x, scale)})

    result = least_squares(residual, [v / s for v, s in zip(x0, scale)], loss="soft_l1", f_scale=0.1,
                        bounds=([PARAMS[n][1] / s for n, s in zip(names, scale)],
                                [PARAMS[n][2] / s for n, s in zip(names, scale)]), diff_step=1e-3)
    install({})
    return {n: v * s for n, v, s in zip(names, result.x, scale)}


def median_abs(cases, values) -> float:
    return statistics.median(abs(math.exp(x) - 1) for x in log_errors(cases, values))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="nvlink_lat,pcie_lat,pcie_share,knee,fp4")
    parser.add_argument("--by-source", action="store_true",
                        help="also fit on all engines but one and score the one left out")
    args = parser.parse_args(argv)
    names = args.params.split(",")
    _, cases, _ = fidelity.load_cases()
    train = [c for c in cases if c.groups["split"] == "train"]
    held = [c for c in cases if c.groups["split"] == "held-out"]
    values = fit(names, train)
    for n, v in values.items():
        print(f"{n:>14} = {v:.6g}")
    for label, cs in (("train", train), ("held-out", held)):
        e = [abs(math.exp(x) - 1) for x in log_errors(cs, values)]
        print(f"{label}: median |err| {statistics.median(e):.1%} over {len(e)}")
    if args.by_source:
        for source in sorted({c.groups["engine"] for c in cases}):
            rest = [c for c in cases if c.groups["engine"] != source]
            alone = [c for c in cases if c.groups["engine"] == source]
            v = fit(names, rest)
            print(f"fitted without {source!r}: {', '.join(f'{k}={x:.3g}' for k, x in v.items())}; "
                  f"left out {median_abs(alone, v):.1%} over {len(alone)}, fitted on {median_abs(rest, v):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def residual_table(cases, values, worst: int = 25) -> None:
    """Signed error per point, worst first, and medians per group."""
    errs = [math.exp(x) - 1 for x in log_errors(cases, values)]
    groups: dict[tuple[str, str], list[float]] = {}
    for c, e in zip(cases, errs):
        for g in ("gpus", "precision", "architecture", "engine"):
            groups.setdefault((g, c.groups[g]), []).append(e)
    for (g, k), es in sorted(groups.items()):
        print(f"  {g:>12} {k:<30} n={len(es):>3} median|e|={statistics.median(map(abs, es)):.1%} "
              f"signed={statistics.median(es):+.1%}")
    order = sorted(zip(cases, errs), key=lambda t: -abs(t[1]))[:worst]
    for c, e in order:
        print(f"  #{c.index:>3} {c.model.id:<16} {c.gpu.id:<10} x{c.gpus} {c.precision.value:<5} "
              f"{c.isl:>5}/{c.osl:<5} {c.groups['engine']:<22} {e:+.0%}")
