"""A scenario resolved into model, accelerator, number formats and machine, with the two memory
facts every section needs: whether the weights fit, and how many conversations fit beside them."""

from __future__ import annotations

import dataclasses

from . import catalog
from .assumptions import assumptions
from .errors import ScenarioError
from .physics import engines, memory
from .physics.machine import Machine, tensor_parallel_size_at_least
from .precision import Formats, resolve
from .results import Fit
from .scenario import MAX_GPUS, Scenario
from .specs import GpuSpec, ModelSpec


def model_of(s: Scenario) -> ModelSpec:
    return s.custom_model if s.custom_model is not None else catalog.model(s.model)


def gpu_of(s: Scenario) -> GpuSpec:
    return s.custom_gpu if s.custom_gpu is not None else catalog.gpu(s.gpu)


def machine_for(gpu: GpuSpec, gpus: int, fmt: Formats, s: Scenario) -> Machine:
    """The steps' machine: the serving model's link (an NVLink bridge joins pairs only, beyond them
    the all-reduce crosses PCIe), with the plain ring all-reduce at the per-hop latency of small
    messages rather than the latency fitted to max-load measurements."""
    machine = engines.machine_for(gpu, gpus, fmt, s.compute_efficiency, s.memory_efficiency)
    return dataclasses.replace(machine, allreduce_latency_s=None)


def check_lengths(s: Scenario, m: ModelSpec) -> None:
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


def workspace_bytes(m: ModelSpec) -> float:
    a = assumptions()
    return memory.activation_workspace_bytes(m, a.prefill_chunk_tokens, a.activation_bytes_per_element)


def fit_weights(m: ModelSpec, gpu: GpuSpec, gpus: int, fmt: Formats) -> Fit:
    a = assumptions()
    weights = memory.weight_bytes(m, fmt.weight_bytes_per_param)
    workspace = workspace_bytes(m)
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


def kv_capacity(m: ModelSpec, machine: Machine, fmt: Formats, weights_bytes: float,
                 conversation_tokens: int) -> tuple[float, float, int]:
    """(runtime reserve + workspace, bytes left for caches, conversations that fit with paged allocation)."""
    a = assumptions()
    total = machine.total_memory_bytes
    reserve = total * a.memory_reserve_share + workspace_bytes(m)
    usable = memory.usable_kv_bytes(total, a.memory_reserve_share, weights_bytes, workspace_bytes(m))
    paged = memory.kv_bytes_for_sequence(m, memory.paged_tokens(conversation_tokens, a.kv_block_tokens),
                                         fmt.kv_bytes_per_element)
    return reserve, usable, memory.conversations_that_fit(usable, paged)


def resolved(s: Scenario) -> tuple[ModelSpec, GpuSpec, Formats, Machine]:
    m, gpu = model_of(s), gpu_of(s)
    check_lengths(s, m)
    fmt = resolve(s.precision, s.kv_precision, gpu)
    if not gpu.peak.get(fmt.compute_format):
        raise ScenarioError("gpu", f"{gpu.name} has no peak throughput listed for {fmt.compute_format.value}")
    return m, gpu, fmt, machine_for(gpu, s.gpus, fmt, s)
