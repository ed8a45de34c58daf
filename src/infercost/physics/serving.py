"""Serving under load: the batch an engine really runs and the speeds that follow (pure functions).

An engine with continuous (in-flight) batching keeps `b` sequences decoding; each step writes one token
for each and reads a share of the waiting prompts (prefill mixed into decode steps, as vLLM's chunked
prefill and TensorRT-LLM's in-flight batching do; Agrawal et al. 2024, Sarathi-Serve, arXiv 2403.02310).
In steady state b / osl requests finish per step and as many prompts of isl tokens enter, so an
average step holds b decode tokens and b * isl / osl prompt tokens (Little's law).

The batch is the smallest of: the conversations the KV cache holds (what is left after weights and
the runtime's reserve; an engine that reserves whole sequences at admission, like TensorRT-LLM's
GUARANTEED_NO_EVICT, needs isl + osl tokens each, one that grows them page by page, like vLLM, needs
isl + osl / 2 on average), the engine's batch cap (max_num_seqs), its token cap per step
(max_num_batched_tokens), and the load: a concurrency, or a request rate through Little's law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ..precision import Formats
from ..specs import ModelSpec
from .machine import Machine
from .memory import kv_bytes_for_sequence, paged_tokens
from .step import StepLoad, StepPhysics, StepTime, engine_step


@dataclass(frozen=True)
class Engine:
    """A serving engine's limits and memory policy (presets in data/assumptions.toml)."""

    name: str
    max_batch: int  # max_num_seqs / max_batch_size
    max_tokens_per_step: int  # max_num_batched_tokens / max_num_tokens
    memory_utilization: float  # share of GPU memory the engine may use at all (vLLM 0.9; TensorRT-LLM 1.0)
    kv_share_of_free: float  # share of what is left after weights and runtime that becomes KV cache
    reserve_whole_sequence: bool  # admission reserves isl + osl (no eviction) vs pages grown on demand
    kv_block_tokens: int = 16
    source: str = ""


class MaxLoad(NamedTuple):
    """Every request queued at once (offline, 'infinite rate')."""


class Concurrency(NamedTuple):
    """A fixed number of requests in flight (a closed-loop client)."""

    requests: int


class RequestRate(NamedTuple):
    """Requests arriving at this average rate (an open-loop client)."""

    per_s: float


Load = MaxLoad | Concurrency | RequestRate


@dataclass(frozen=True)
class Serving:
    """What an engine delivers for one workload at one load."""

    load: str  # "max load", "concurrency 64", "4 req/s"
    input_tokens: int
    output_tokens: int
    batch: float  # sequences decoding in an average step
    batch_limit: str  # what sets the batch: "kv cache", "engine batch cap", "engine token cap", "load"
    kv_capacity_tokens: float
    max_batch: float  # the batch at max load
    step_s: float  # an average step = time per output token
    output_tokens_per_s: float
    input_tokens_per_s: float
    requests_per_s: float
    ttft_s: float | None  # from admission; None when the offered rate exceeds what the engine serves
    tpot_s: float
    saturated: bool  # offered load above capacity (rate mode) or max load
    step: StepTime
    engine: str


def kv_capacity_tokens(m: ModelSpec, machine: Machine, fmt: Formats, engine: Engine, weights_bytes: float,
                       workspace_bytes: float, physics: StepPhysics) -> float:
    """Tokens of cache that fit: (G M util - weights - runtime - workspace) * kv share / bytes per token."""
    runtime = machine.gpus * physics.runtime_bytes_per_gpu
    free = machine.total_memory_bytes * engine.memory_utilization - weights_bytes - runtime - workspace_bytes
    per_token = kv_bytes_for_sequence(m, 1, fmt.kv_bytes_per_element)
    return max(0.0, free * engine.kv_share_of_free / per_token)


def tokens_held_per_request(m: ModelSpec, engine: Engine, isl: int, osl: int) -> float:
    """Cache one request occupies on average (sliding-window layers are ignored: a conservative count)."""
    if engine.reserve_whole_sequence:
        return paged_tokens(isl + osl, engine.kv_block_tokens)
    return paged_tokens(isl, engine.kv_block_tokens) + osl / 2 + engine.kv_block_tokens / 2


def average_step(m: ModelSpec, machine: Machine, fmt: Formats, batch: float, isl: int, osl: int,
                 physics: StepPhysics, attention_flop_per_s: float) -> StepTime:
    """A steady-state step: `batch` decoding at mean context isl + osl/2, and batch/osl prompts."""
    return engine_step(m, machine, fmt, StepLoad(batch, isl + osl / 2, batch / osl, isl), physics,
                       attention_flop_per_s)


def first_token_s(m: ModelSpec, machine: Machine, fmt: Formats, batch: float, isl: int, osl: int, engine: Engine,
                  physics: StepPhysics, attention_flop_per_s: float) -> float:
    """A newly admitted prompt is read in chunks of what the step's token cap leaves beside the decoders."""
    room = max(1.0, engine.max_tokens_per_step - batch)
    chunks = max(1, math.ceil(isl / room))
    step = engine_step(m, machine, fmt, StepLoad(batch, isl + osl / 2, 1.0 / chunks, isl), physics,
                       attention_flop_per_s)
    return chunks * step.time_s


def max_batch(m: ModelSpec, engine: Engine, isl: int, osl: int, kv_tokens: float) -> tuple[float, str]:
    """The largest steady-state batch and what limits it."""
    limits = {
        "kv cache": kv_tokens / tokens_held_per_request(m, engine, isl, osl),
        "engine batch cap": float(engine.max_batch),
        "engine token cap": engine.max_tokens_per_step / (1 + isl / osl),
    }
    name = min(limits, key=limits.get)
    return max(0.0, math.floor(limits[name])), name


def _batch_at_rate(rate_per_s: float, osl: int, hi: float, step_at) -> float:
    """Little's law: b = rate * osl * step(b); step grows with b, so bisect on b in [0, hi]."""
    lo = 0.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if mid < rate_per_s * osl * step_at(max(mid, 1e-9)).time_s:
            lo = mid
        else:
            hi = mid
    return max(hi, 1e-9)


def serve(m: ModelSpec, machine: Machine, fmt: Formats, isl: int, osl: int, load: Load, engine: Engine,
          physics: StepPhysics, weights_bytes: float, workspace_bytes: float,
          attention_flop_per_s: float) -> Serving:
    """The batch, throughput, TTFT and time per output token for `load` (see the module docstring)."""
    kv_tokens = kv_capacity_tokens(m, machine, fmt, engine, weights_bytes, workspace_bytes, physics)
    b_max, limit = max_batch(m, engine, isl, osl, kv_tokens)

    def step_at(b: float) -> StepTime:
        return average_step(m, machine, fmt, b, isl, osl, physics, attention_flop_per_s)

    saturated = True
    label = "max load"
    b = b_max
    if isinstance(load, Concurrency):
        label = f"concurrency {load.requests}"
        if load.requests < b_max:
            b, limit, saturated = float(load.requests), "load", False
    elif isinstance(load, RequestRate):
        label = f"{load.per_s:g} req/s"
        if b_max >= 1 and load.per_s < b_max / (osl * step_at(b_max).time_s):
            b, limit, saturated = _batch_at_rate(load.per_s, osl, b_max, step_at), "load", False
    if b < 1:
        raise ValueError("no request fits in the KV cache left after the weights")
    step = step_at(b)
    requests_per_s = b / (osl * step.time_s)
    ttft = first_token_s(m, machine, fmt, b, isl, osl, engine, physics, attention_flop_per_s)
    return Serving(label, isl, osl, b, limit, kv_tokens, b_max, step.time_s, b / step.time_s,
                   requests_per_s * isl, requests_per_s, ttft, step.time_s, saturated, step, engine.name)
