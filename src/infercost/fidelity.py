"""How far the estimate typically is from real systems: the summary benchmarks/fidelity.py writes to
data/fidelity.toml, turned into the note an Estimate carries (`Estimate.fidelity`)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from .results import Fidelity
from .specs import ModelSpec, Precision

MIN_GROUP_POINTS = 5  # smaller groups are too noisy to quote on their own

_PRECISION_GROUP = {Precision.BIT16: "16-bit", Precision.BIT8: "8-bit", Precision.BIT4: "4-bit"}


@cache
def summary() -> dict | None:
    """The parsed data/fidelity.toml, or None when the benchmark has not written it."""
    path = resources.files("infercost").joinpath("data/fidelity.toml")
    if not path.is_file():
        return None
    return tomllib.loads(path.read_text("utf-8"))


def _gpu_group(gpus: int) -> str:
    for bucket in (1, 2, 4, 8):
        if gpus <= bucket:
            return str(bucket)
    return "8"


def _candidates(data: dict, model: ModelSpec, precision: Precision, gpus: int) -> list[tuple[str, float]]:
    groups, counts = data.get("groups", {}), data.get("group_points", {})
    wanted = (("gpus", _gpu_group(gpus), "{} GPU{}"), ("precision", _PRECISION_GROUP.get(precision), "{}"),
              ("architecture", "MoE" if model.is_moe else "dense", "{}"))
    out = []
    for table, key, label in wanted:
        if key is None or key not in groups.get(table, {}):
            continue
        if counts.get(table, {}).get(key, 0) < MIN_GROUP_POINTS:
            continue
        name = label.format(key, "" if key == "1" else "s") if table == "gpus" else label.format(key)
        out.append((name, groups[table][key]))
    return out


def note(model: ModelSpec, precision: Precision, gpus: int) -> Fidelity | None:
    """The typical error for this scenario: the largest median error among the matching groups."""
    data = summary()
    if data is None:
        return None
    candidates = _candidates(data, model, precision, gpus)
    group, typical = max(candidates, key=lambda t: t[1]) if candidates else ("all", data["overall_error_share"])
    return Fidelity(
        typical_error_share=typical, group=group, overall_error_share=data["overall_error_share"],
        held_out_error_share=data["held_out_error_share"], within_25_share=data["within_25_share"],
        plain_roofline_error_share=data["plain_roofline_error_share"], points=data["points"], date=data["date"],
        basis=data["basis"], caveats=tuple(data.get("caveats", ())),
        applies_to=data.get("applies_to", "serving section"),
    )
