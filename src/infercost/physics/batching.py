"""Batching: one read of the weights serves every sequence in the batch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..precision import Formats
from ..specs import ModelSpec
from .latency import decode_step
from .machine import Machine

MAX_KNEE_BATCH = 1 << 20


@dataclass(frozen=True)
class BatchPoint:
    batch: int
    step_s: float
    total_tokens_per_s: float  # b / step time: what the server writes
    per_user_tokens_per_s: float  # 1 / step time: what each reader sees
    bound: str  # "memory" or "compute"


def batch_point(m: ModelSpec, machine: Machine, fmt: Formats, batch: int, context_tokens: float) -> BatchPoint:
    step = decode_step(m, machine, fmt, batch, context_tokens)
    return BatchPoint(batch, step.time_s, batch / step.time_s, 1 / step.time_s, step.bound)


def compute_knee_batch(m: ModelSpec, machine: Machine, fmt: Formats, context_tokens: float) -> int | None:
    """Smallest batch whose step is compute-bound (the roofline's corner); None if memory always binds.

    Compute grows by 2 P_active + attention per sequence, memory by one sequence's cache: past the
    corner more batch no longer comes nearly free. Found by bisection (the sign changes once).
    """
    if m.moe is None:
        return _dense_knee_batch(m, machine, fmt, context_tokens)

    def compute_bound(b: int) -> bool:
        return decode_step(m, machine, fmt, b, context_tokens).bound == "compute"

    if not compute_bound(MAX_KNEE_BATCH):
        return None
    lo, hi = 1, MAX_KNEE_BATCH
    while lo < hi:
        mid = (lo + hi) // 2
        if compute_bound(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _dense_knee_batch(m: ModelSpec, machine: Machine, fmt: Formats, context_tokens: float) -> int | None:
    """Dense models read the same weights at any batch, so the corner has a closed form:
    b * flop_per_seq / C >= (W + b * kv_per_seq) / B  <=>  b >= (W / B) / (flop_per_seq / C - kv_per_seq / B)."""
    one = decode_step(m, machine, fmt, 1, context_tokens)
    weights_s = decode_step(m, machine, fmt, 0, context_tokens).memory_s  # the weights alone
    per_sequence_s = one.compute_s - (one.memory_s - weights_s)
    if per_sequence_s <= 0:
        return None
    knee = max(1, math.ceil(weights_s / per_sequence_s - 1e-9))
    while knee > 1 and decode_step(m, machine, fmt, knee - 1, context_tokens).bound == "compute":
        knee -= 1  # guard against rounding at the corner
    while decode_step(m, machine, fmt, knee, context_tokens).bound != "compute":
        knee += 1
    return knee if knee <= MAX_KNEE_BATCH else None


def curve_batches(upto: int) -> list[int]:
    """Batch sizes for the chart: 1, 2, 3, 4, 6, 8, 12, 16, ... up to `upto` (and `upto` itself)."""
    sizes, b = [], 1
    while b < upto:
        sizes.append(b)
        if b * 3 // 2 < upto and b >= 2:
            sizes.append(b * 3 // 2)
        b *= 2
    sizes.append(upto)
    return sorted(set(sizes))


def batching_curve(m: ModelSpec, machine: Machine, fmt: Formats, context_tokens: float, upto: int) -> list[BatchPoint]:
    return [batch_point(m, machine, fmt, b, context_tokens) for b in curve_batches(upto)]
