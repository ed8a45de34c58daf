"""estimate(scenario) -> Estimate: every number the module shows, from the physics functions."""

from __future__ import annotations

from functools import lru_cache

from . import catalog
from . import fidelity as fidelity_data
from .assumptions import assumptions
from .errors import ScenarioError, UnknownNameError
from .physics import caching, cost, latency, memory, params, speculative
from .physics.batching import batch_point, batching_curve, compute_knee_batch
from .physics.machine import Machine, tensor_parallel_size_at_least
from .precision import Formats, resolve
from .results import (Batching, Cost, CostLever, Estimate, Fit, HardwareSummary, KvCache, ModelSummary,
                      PrecisionSummary, Reading, Speculative)
from .estimate_serving import serving_section
from .scenario import MAX_GPUS, Scenario
from .specs import GpuSpec, ModelSpec, Precision


# ---------------------------------------------------------------------------------------------
# Resolution of the scenario into model, accelerator, formats and machine.

def _model(s: Scenario) -> ModelSpec:
    return s.custom_model if s.custom_model is not None else catalog.model(s.model)


def _gpu(s: Scenario) -> GpuSpec:
    return s.custom_gpu if s.custom_gpu is not None else catalog.gpu(s.gpu)


def _machine(gpu: GpuSpec, gpus: int, fmt: Formats, s: Scenario) -> Machine:
    a = assumptions()
    return Machine(
        gpus=gpus,
        peak_flop_per_s=gpu.peak.get(fmt.compute_format) or 0.0,
        memory_bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        memory_bytes=gpu.memory_bytes,
        link_bandwidth_bytes_per_s=gpu.link_bandwidth_bytes_per_s or a.pcie_bandwidth_bytes_per_s,
        allreduce_hop_latency_s=a.allreduce_hop_latency_s,
        compute_efficiency=s.compute_efficiency,
        memory_efficiency=s.memory_efficiency,
    )


def _check_lengths(s: Scenario, m: ModelSpec) -> None:
    limit = m.max_context_tokens
    if s.question_tokens >= limit:
        raise ScenarioError("question_tokens", f"{s.question_tokens:,} tokens leaves no room for an answer in "
                                               f"{m.name}'s context of {limit:,} tokens")
    if s.question_tokens + s.answer_tokens > limit:
        raise ScenarioError("answer_tokens", f"question plus answer ({s.question_tokens + s.answer_tokens:,} tokens) "
                                             f"is past {m.name}'s context of {limit:,} tokens")
    if s.conversation_tokens > limit:
        raise ScenarioError("conversation_tokens", f"{s.conversation_tokens:,} tokens is past {m.name}'s context "
                                                   f"of {limit:,} tokens")
    if s.shared_prefix_tokens > s.question_tokens:
        raise ScenarioError("shared_prefix_tokens", f"a shared prefix of {s.shared_prefix_tokens:,} tokens is longer "
                                                    f"than the question ({s.question_tokens:,} tokens)")


def _workspace_bytes(m: ModelSpec) -> float:
    a = assumptions()
    return memory.activation_workspace_bytes(m, a.prefill_chunk_tokens, a.activation_bytes_per_element)


# ---------------------------------------------------------------------------------------------
# The steps.

def _fit(m: ModelSpec, gpu: GpuSpec, gpus: int, fmt: Formats) -> Fit:
    a = assumptions()
    weights = memory.weight_bytes(m, fmt.weight_bytes_per_param)
    workspace = _workspace_bytes(m)
    need = memory.min_gpus_to_fit(weights, gpu.memory_bytes, a.memory_reserve_share, workspace, MAX_GPUS)
    fits = need is not None and gpus >= need
    # Suggest a count tensor parallelism can use: one that splits the attention heads evenly.
    suggest = None if need is None else (tensor_parallel_size_at_least(m.heads, m.kv_heads, need, MAX_GPUS) or need)
    usable_per_gpu = gpu.memory_bytes * (1 - a.memory_reserve_share)
    if fits:
        message = f"The weights fit on {gpus} × {gpu.name}."
    elif need is None:
        message = f"The weights do not fit on even {MAX_GPUS:,} × {gpu.name}."
    elif suggest != need:
        message = (f"The weights do not fit on {gpus} × {gpu.name}: they need at least {need}, and {suggest} "
                   f"to split the model's {m.heads} attention heads evenly.")
    else:
        message = f"The weights do not fit on {gpus} × {gpu.name}: it needs at least {need}."
    return Fit(fits, weights, weights / gpus, usable_per_gpu, suggest, message)


def _reading(m: ModelSpec, machine: Machine, fmt: Formats, s: Scenario) -> Reading:
    prefill = latency.prefill_pass(m, machine, fmt, s.question_tokens)
    step = latency.decode_step(m, machine, fmt, 1, s.question_tokens + 1)
    write_s = latency.answer_decode_s(m, machine, fmt, s.question_tokens, s.answer_tokens)
    return Reading(
        question_tokens=s.question_tokens,
        answer_tokens=s.answer_tokens,
        prefill_flop=latency.prefill_flop(m, s.question_tokens),
        prefill_s=prefill.time_s,
        prefill_bound=prefill.bound,
        ttft_s=prefill.time_s,  # the prefill pass itself yields the first token
        prefill_tokens_per_s=s.question_tokens / prefill.time_s,
        decode_step_s=step.time_s,
        decode_bound=step.bound,
        decode_tokens_per_s=1 / step.time_s,
        comm_per_step_s=step.comm_s,
        write_s=write_s,
        answer_s=prefill.time_s + write_s,
    )


def _kv_capacity(m: ModelSpec, machine: Machine, fmt: Formats, weights_bytes: float,
                 conversation_tokens: int) -> tuple[float, float, int]:
    """(runtime reserve + workspace, bytes left for caches, conversations that fit with paged allocation)."""
    a = assumptions()
    total = machine.total_memory_bytes
    reserve = total * a.memory_reserve_share + _workspace_bytes(m)
    usable = total - reserve - weights_bytes
    paged = memory.kv_bytes_for_sequence(m, memory.paged_tokens(conversation_tokens, a.kv_block_tokens),
                                         fmt.kv_bytes_per_element)
    return reserve, usable, memory.conversations_that_fit(usable, paged)


def _kv(m: ModelSpec, machine: Machine, fmt: Formats, fit: Fit, s: Scenario) -> KvCache:
    a = assumptions()
    reserve, usable, fit_paged = _kv_capacity(m, machine, fmt, fit.weights_bytes, s.conversation_tokens)
    per_conversation = memory.kv_bytes_for_sequence(m, s.conversation_tokens, fmt.kv_bytes_per_element)
    reserved = memory.kv_bytes_for_sequence(m, m.max_context_tokens, fmt.kv_bytes_per_element)
    total = machine.total_memory_bytes
    grid, overflow = memory.memory_grid(total, fit.weights_bytes, reserve, per_conversation, s.conversations)
    return KvCache(
        kv_bytes_per_token=memory.kv_bytes_per_token(m, fmt.kv_bytes_per_element),
        conversation_tokens=s.conversation_tokens,
        conversation_kv_bytes=per_conversation,
        conversations=s.conversations,
        total_memory_bytes=total,
        weights_bytes=fit.weights_bytes,
        reserve_bytes=reserve,
        usable_kv_bytes=usable,
        conversations_fit=fit_paged,
        conversations_fit_reserved=memory.conversations_that_fit(usable, reserved),
        kv_block_tokens=a.kv_block_tokens,
        all_fit=fit.fits and s.conversations <= fit_paged,
        grid=tuple(grid),
        overflow_cells=overflow,
    )


def _batching(m: ModelSpec, machine: Machine, fmt: Formats, kv: KvCache, s: Scenario) -> Batching:
    limit = kv.conversations_fit
    knee = compute_knee_batch(m, machine, fmt, s.conversation_tokens)
    upto = max(s.batch, 2 * limit, 2 * (knee or 0), 64)
    upto = min(upto, max(s.batch, 4 * max(limit, 1), 64))
    return Batching(
        context_tokens=s.conversation_tokens,
        batch=s.batch,
        current=batch_point(m, machine, fmt, s.batch, s.conversation_tokens),
        curve=tuple(batching_curve(m, machine, fmt, s.conversation_tokens, upto)),
        memory_limit_batch=limit,
        compute_knee_batch=knee,
        batch_fits=s.batch <= limit,
    )


def _draft(m: ModelSpec, s: Scenario) -> ModelSpec | None:
    if s.draft_model is not None:
        try:
            draft = catalog.model(s.draft_model)
        except UnknownNameError as exc:
            raise UnknownNameError("draft_model", exc.message) from None
        if not catalog.can_draft(draft, m):
            raise ScenarioError("draft_model", f"{draft.name} cannot draft for {m.name}: a draft shares the "
                                               "target's tokenizer family and is smaller")
        return draft
    return None if s.custom_model is not None else catalog.default_draft_model(m)


def _speculative(m: ModelSpec, machine: Machine, fmt: Formats, s: Scenario) -> Speculative:
    context = s.question_tokens + s.answer_tokens // 2
    k, alpha = s.draft_tokens, s.acceptance_rate
    target = latency.decode_step(m, machine, fmt, 1, context).time_s
    verify = latency.decode_step(m, machine, fmt, 1, context, new_tokens=k + 1).time_s
    draft = _draft(m, s)
    draft_step = None if draft is None else latency.decode_step(draft, machine, fmt, 1, context).time_s
    gain = None if draft_step is None else speculative.speedup(alpha, k, draft_step, target, verify)
    users = min(s.conversations, max(1, s.batch))
    return Speculative(
        draft_model_id=None if draft is None else draft.id,
        draft_model_name=None if draft is None else draft.name,
        draft_tokens=k,
        acceptance_rate=alpha,
        expected_tokens_per_pass=speculative.expected_tokens_per_pass(alpha, k),
        draft_step_s=draft_step,
        target_step_s=target,
        verify_step_s=verify,
        step_ratio=None if draft_step is None else draft_step / target,
        speedup=gain,
        tokens_per_s_without=1 / target,
        tokens_per_s_with=None if gain is None else gain / target,
        shared_prefix_tokens=s.shared_prefix_tokens,
        prefill_saved_s=caching.prefill_saved_s(m, machine, fmt, s.question_tokens, s.shared_prefix_tokens),
        memory_saved_bytes=caching.memory_saved_bytes(m, fmt, s.shared_prefix_tokens, users),
        prefix_sharing_users=users,
    )


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
    machine = _machine(gpu, gpus, fmt, s)
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
    fit = _fit(m, gpu, s.gpus, fmt)
    if fit.min_gpus is None:
        return None, fit.message
    gpus = max(s.gpus, fit.min_gpus)
    machine = _machine(gpu, gpus, fmt, s)
    limit = _kv_capacity(m, machine, fmt, fit.weights_bytes, s.conversation_tokens)[2]
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


def _cost(m: ModelSpec, gpu: GpuSpec, fmt: Formats, s: Scenario, limit: int) -> Cost:
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


def _summaries(m: ModelSpec, gpu: GpuSpec, fmt: Formats, machine: Machine, s: Scenario, price: float | None):
    model = ModelSummary(m.id, m.name, params.total_params(m), params.active_params(m),
                         memory.kv_bytes_per_token(m, fmt.kv_bytes_per_element), m.max_context_tokens, m.is_moe,
                         m.source)
    hardware = HardwareSummary(gpu.id, gpu.name, s.gpus, machine.peak_flop_per_s, gpu.memory_bandwidth_bytes_per_s,
                               gpu.memory_bytes, machine.link_bandwidth_bytes_per_s, price, gpu.price_source,
                               gpu.price_as_of, gpu.measured)
    precision = PrecisionSummary(s.precision.value, s.kv_precision.value, fmt.weight_format.value,
                                 fmt.compute_format.value, fmt.weight_bytes_per_param, fmt.kv_bytes_per_element,
                                 fmt.note)
    return model, hardware, precision


def _resolved(s: Scenario) -> tuple[ModelSpec, GpuSpec, Formats, Machine]:
    m, gpu = _model(s), _gpu(s)
    _check_lengths(s, m)
    fmt = resolve(s.precision, s.kv_precision, gpu)
    if not gpu.peak.get(fmt.compute_format):
        raise ScenarioError("gpu", f"{gpu.name} has no peak throughput listed for {fmt.compute_format.value}")
    return m, gpu, fmt, _machine(gpu, s.gpus, fmt, s)


def reading(s: Scenario) -> Reading:
    """Step 1 alone, for one point: time to first token, writing speed and the whole answer's time."""
    m, _, fmt, machine = _resolved(s)
    return _reading(m, machine, fmt, s)


def estimate(s: Scenario) -> Estimate:
    """Every number of the module for one scenario. Weights that do not fit are reported in `fit`."""
    m, gpu, fmt, machine = _resolved(s)
    fit = _fit(m, gpu, s.gpus, fmt)
    kv = _kv(m, machine, fmt, fit, s)
    cost_section = _cost(m, gpu, fmt, s, kv.conversations_fit)
    model, hardware, precision = _summaries(m, gpu, fmt, machine, s, cost_section.price_per_gpu_hour_usd)
    a = assumptions()
    return Estimate(
        scenario=s,
        model=model,
        hardware=hardware,
        precision=precision,
        fit=fit,
        reading=_reading(m, machine, fmt, s),
        kv=kv,
        batching=_batching(m, machine, fmt, kv, s),
        speculative=_speculative(m, machine, fmt, s),
        cost=cost_section,
        assumptions={
            "compute_efficiency": s.compute_efficiency,
            "memory_efficiency": s.memory_efficiency,
            "memory_reserve_share": a.memory_reserve_share,
            "kv_block_tokens": a.kv_block_tokens,
            "prefill_chunk_tokens": a.prefill_chunk_tokens,
            "allreduce_hop_latency_s": a.allreduce_hop_latency_s,
            "sources": a.sources,
        },
        serving=serving_section(m, gpu, fmt, s, fit.fits, cost_section.price_per_gpu_hour_usd),
        # The scored measurements are of catalog accelerators; a measured or custom one has no such basis.
        fidelity=None if s.custom_gpu is not None else fidelity_data.note(m, s.precision, s.gpus),
    )
