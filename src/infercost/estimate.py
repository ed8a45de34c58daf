"""estimate(scenario) -> Estimate: every number the module shows, from the physics functions."""

from __future__ import annotations

from . import catalog
from . import fidelity as fidelity_data
from .assumptions import assumptions
from .errors import ScenarioError, UnknownNameError
from .estimate_cost import cost_section
from .estimate_serving import serving_section
from .physics import caching, latency, memory, params, speculative
from .physics.batching import batch_point, batching_curve, compute_knee_batch
from .physics.machine import Machine
from .precision import Formats
from .resolution import fit_weights, kv_capacity, resolved
from .results import (Batching, Estimate, Fit, HardwareSummary, KvCache, ModelSummary, PrecisionSummary, Reading,
                      Speculative)
from .scenario import Scenario
from .specs import GpuSpec, ModelSpec


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


def _kv(m: ModelSpec, machine: Machine, fmt: Formats, fit: Fit, s: Scenario) -> KvCache:
    a = assumptions()
    reserve, usable, fit_paged = kv_capacity(m, machine, fmt, fit.weights_bytes, s.conversation_tokens)
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


def reading(s: Scenario) -> Reading:
    """Step 1 alone, for one point: time to first token, writing speed and the whole answer's time."""
    m, _, fmt, machine = resolved(s)
    return _reading(m, machine, fmt, s)


def estimate(s: Scenario) -> Estimate:
    """Every number of the module for one scenario. Weights that do not fit are reported in `fit`."""
    m, gpu, fmt, machine = resolved(s)
    fit = fit_weights(m, gpu, s.gpus, fmt)
    kv = _kv(m, machine, fmt, fit, s)
    costs = cost_section(m, gpu, fmt, s, kv.conversations_fit)
    model, hardware, precision = _summaries(m, gpu, fmt, machine, s, costs.price_per_gpu_hour_usd)
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
        cost=costs,
        assumptions={
            "compute_efficiency": s.compute_efficiency,
            "memory_efficiency": s.memory_efficiency,
            "memory_reserve_share": a.memory_reserve_share,
            "kv_block_tokens": a.kv_block_tokens,
            "prefill_chunk_tokens": a.prefill_chunk_tokens,
            "allreduce_hop_latency_s": a.allreduce_hop_latency_s,
            "sources": a.sources,
        },
        serving=serving_section(m, gpu, fmt, s, fit.fits, costs.price_per_gpu_hour_usd),
        # The scored measurements are of catalog accelerators; a measured or custom one has no such basis.
        fidelity=None if s.custom_gpu is not None else fidelity_data.note(m, s.precision, s.gpus),
    )
