"""Step 5: cost per million tokens and per answer, and the levers (model size, precision, batch)
that move it, each on the fewest GPUs of the chosen type that hold the variant."""

from __future__ import annotations

from functools import lru_cache

from . import catalog
from .assumptions import assumptions
from .physics import cost, latency, params
from .physics.batching import batch_point
from .physics.machine import Machine
from .precision import Formats, resolve
from .resolution import fit_weights, kv_capacity, machine_for
from .results import Cost, CostLever
from .scenario import Scenario
from .specs import GpuSpec, ModelSpec, Precision


def _cost_batch(s: Scenario, memory_limit_batch: int) -> int:
    """The step-3 batch, capped where the conversations of step 2 no longer fit."""
    return max(1, min(s.batch, memory_limit_batch)) if memory_limit_batch >= 1 else 1


def _input_tokens_per_s(m: ModelSpec, machine: Machine, fmt: Formats, s: Scenario) -> float:
    """Prefill throughput with prompts packed into chunks of prefill_chunk_tokens."""
    prompts = max(1, assumptions().prefill_chunk_tokens // s.question_tokens)
    return prompts * s.question_tokens / latency.prefill_pass(m, machine, fmt, s.question_tokens, prompts).time_s


def _unit_costs(m: ModelSpec, gpu: GpuSpec, gpus: int, fmt: Formats, s: Scenario, price: float | None,
                batch: int) -> tuple[float, float, float | None, float | None]:
    """(output tokens/s, input tokens/s, USD per million output, USD per million input)."""
    machine = machine_for(gpu, gpus, fmt, s)
    out_tps = batch_point(m, machine, fmt, batch, s.conversation_tokens).total_tokens_per_s
    in_tps = _input_tokens_per_s(m, machine, fmt, s)
    if price is None:
        return out_tps, in_tps, None, None
    return (out_tps, in_tps, cost.usd_per_million_tokens(gpus, price, out_tps, s.busy_share),
            cost.usd_per_million_tokens(gpus, price, in_tps, s.busy_share))


def _lever_cost(m: ModelSpec, gpu: GpuSpec, s: Scenario, price: float | None, precision: Precision,
                batch: int | None) -> tuple[float | None, str]:
    """Unit cost of a variant on the smallest count of this GPU (at least the scenario's) that holds it."""
    fmt = resolve(precision, s.kv_precision, gpu)
    fit = fit_weights(m, gpu, s.gpus, fmt)
    if fit.min_gpus is None:
        return None, fit.message
    gpus = max(s.gpus, fit.min_gpus)
    machine = machine_for(gpu, gpus, fmt, s)
    limit = kv_capacity(m, machine, fmt, fit.weights_bytes, s.conversation_tokens)[2]
    b = _cost_batch(s, limit) if batch is None else max(1, min(batch, limit))
    note = f"{gpus} GPU{'s' if gpus > 1 else ''}, batch {b}"
    if price is None:
        return None, note
    out_tps = batch_point(m, machine, fmt, b, s.conversation_tokens).total_tokens_per_s
    return cost.usd_per_million_tokens(gpus, price, out_tps, s.busy_share), note


# Fields the cost levers do not read: dragging these reuses the levers already computed.
_LEVER_NEUTRAL = {"question_tokens": 1, "answer_tokens": 1, "conversations": 1, "draft_model": None,
                  "draft_tokens": 1, "acceptance_rate": 0.0, "shared_prefix_tokens": 0}


def _levers(m: ModelSpec, gpu: GpuSpec, s: Scenario, price: float | None, limit: int) -> tuple[CostLever, ...]:
    return _levers_for(m, gpu, s.replace(**_LEVER_NEUTRAL), price, limit)


@lru_cache(maxsize=1024)
def _levers_for(m: ModelSpec, gpu: GpuSpec, s: Scenario, price: float | None, limit: int) -> tuple[CostLever, ...]:
    levers = []
    family = [x for x in catalog.models().values() if m.family and x.family == m.family] if s.custom_model is None else [m]
    for x in sorted(family, key=params.total_params):
        usd, note = _lever_cost(x, gpu, s, price, s.precision, None)
        levers.append(CostLever("model", x.name, usd, note, x.id == m.id))
    for p in (Precision.BIT16, Precision.BIT8, Precision.BIT4):
        usd, note = _lever_cost(m, gpu, s, price, p, None)
        levers.append(CostLever("precision", p.value, usd, note, p is s.precision))
    current_batch = _cost_batch(s, limit)
    for b in sorted({1, current_batch, max(1, limit)}):
        usd, note = _lever_cost(m, gpu, s, price, s.precision, b)
        levers.append(CostLever("batch", f"batch {b}", usd, note, b == current_batch))
    return tuple(levers)


def cost_section(m: ModelSpec, gpu: GpuSpec, fmt: Formats, s: Scenario, limit: int) -> Cost:
    price = s.price_per_gpu_hour_usd if s.price_per_gpu_hour_usd is not None else gpu.price_per_gpu_hour_usd
    b = _cost_batch(s, limit)
    out_tps, in_tps, usd_out, usd_in = _unit_costs(m, gpu, s.gpus, fmt, s, price, b)
    per_answer = None if usd_out is None or usd_in is None else cost.usd_per_answer(
        s.question_tokens, s.answer_tokens, usd_in, usd_out)
    return Cost(
        price_per_gpu_hour_usd=price,
        busy_share=s.busy_share,
        batch=b,
        output_tokens_per_s=out_tps,
        tokens_per_hour=cost.tokens_per_hour(out_tps, s.busy_share),
        input_tokens_per_s=in_tps,
        usd_per_million_output=usd_out,
        usd_per_million_input=usd_in,
        usd_per_answer=per_answer,
        levers=_levers(m, gpu, s, price, limit),
    )
