"""Time: prefill (reading the question), decode steps (writing), and a whole answer. Roofline model.

A pass takes max(FLOP / (G F eta_c), bytes / (G B eta_m)) (Williams et al. 2009, "Roofline"), plus
tensor-parallel communication.
"""

from __future__ import annotations

from typing import NamedTuple

from ..precision import Formats
from ..specs import ModelSpec
from .comms import tensor_parallel_comm_s
from .machine import Machine
from .memory import kv_bytes_for_sequence
from .params import matmul_params, params_touched_at_batch


def attention_head_dim(m: ModelSpec, absorbed: bool = False) -> float:
    """Mean width of one head's q.k and attention.v products. MLA: (qk_nope + qk_rope + v) / 2 with
    the heads expanded (prefill); with the up-projections absorbed, as decode runs it, each head
    works in the latent: (kv_lora + qk_rope + kv_lora) / 2 (DeepSeek-V2, arXiv 2405.04434 §2.1.2)."""
    if m.mla is None:
        return m.head_dim
    if absorbed:
        return (2 * m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) / 2
    return (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) / 2


def attended_pairs(cached_tokens: float, new_tokens: float, window: float | None) -> float:
    """Sum over new tokens of how many tokens each attends to (causal, continuous form)."""
    s, n = cached_tokens, new_tokens
    if window is None or s + n <= window:
        return n * s + n * n / 2
    if s >= window:
        return n * window
    return (window * window - s * s) / 2 + (s + n - window) * window


def attention_flop(m: ModelSpec, cached_tokens: float, new_tokens: float, absorbed: bool = False) -> float:
    """4 * n_heads * d_head per (query, key) pair per layer: q.k and attention.v, 2 FLOP per multiply-add."""
    per_pair = 4 * m.heads * attention_head_dim(m, absorbed)
    full = m.full_attention_layers * attended_pairs(cached_tokens, new_tokens, None)
    sliding = m.sliding_window_layers * attended_pairs(cached_tokens, new_tokens, m.sliding_window_tokens)
    return per_pair * (full + sliding)


def prefill_flop(m: ModelSpec, prompt_tokens: float, cached_tokens: float = 0) -> float:
    """2 * P_active * n_p + causal attention 2 * L * n_heads * d_head * n_p^2 (Kaplan et al. 2020, arXiv 2001.08361).

    P_active counts the weights multiplied (matmul_params): the input embedding is a lookup."""
    return 2 * matmul_params(m) * prompt_tokens + attention_flop(m, cached_tokens, prompt_tokens)


class PassTime(NamedTuple):
    """One forward pass: its time and which limit set it."""

    time_s: float
    compute_s: float
    memory_s: float
    comm_s: float

    @property
    def bound(self) -> str:
        return "compute" if self.compute_s >= self.memory_s else "memory"


def pass_time(flop: float, bytes_read: float, comm_s: float, machine: Machine) -> PassTime:
    compute_s = flop / machine.effective_flop_per_s
    memory_s = bytes_read / machine.effective_bandwidth_bytes_per_s
    return PassTime(max(compute_s, memory_s) + comm_s, compute_s, memory_s, comm_s)


def prefill_pass(m: ModelSpec, machine: Machine, fmt: Formats, prompt_tokens: float, batch: int = 1,
                 cached_tokens: float = 0) -> PassTime:
    """Reading `batch` prompts of `prompt_tokens` new tokens each (after `cached_tokens` already cached)."""
    flop = batch * prefill_flop(m, prompt_tokens, cached_tokens)
    bytes_read = params_touched_at_batch(m, batch * prompt_tokens) * fmt.weight_bytes_per_param  # MoE: experts hit
    bytes_read += batch * kv_bytes_for_sequence(m, cached_tokens + prompt_tokens, fmt.kv_bytes_per_element)
    return pass_time(flop, bytes_read, tensor_parallel_comm_s(m, machine, batch * prompt_tokens), machine)


def decode_flop(m: ModelSpec, batch: float, context_tokens: float, new_tokens: float = 1) -> float:
    """2 * P_active * b + attention 4 * L * n_heads * d_head * c * b, per new token of each sequence."""
    per_sequence = 2 * matmul_params(m) * new_tokens + attention_flop(m, context_tokens, new_tokens, absorbed=True)
    return batch * per_sequence


def decode_bytes(m: ModelSpec, fmt: Formats, batch: float, context_tokens: float, new_tokens: float = 1) -> float:
    """Weights read once per step (MoE: the experts the batch touches) + each sequence's KV cache."""
    weights = params_touched_at_batch(m, batch * new_tokens) * fmt.weight_bytes_per_param
    return weights + batch * kv_bytes_for_sequence(m, context_tokens, fmt.kv_bytes_per_element)


def decode_step(m: ModelSpec, machine: Machine, fmt: Formats, batch: float, context_tokens: float,
                new_tokens: float = 1) -> PassTime:
    """One step writing `new_tokens` for each of `batch` sequences holding `context_tokens` each."""
    flop = decode_flop(m, batch, context_tokens, new_tokens)
    bytes_read = decode_bytes(m, fmt, batch, context_tokens, new_tokens)
    return pass_time(flop, bytes_read, tensor_parallel_comm_s(m, machine, batch * new_tokens), machine)


def _linear_sum_s(first: PassTime, last: PassTime, count: int) -> float:
    """Sum of `count` step times that are linear in context between `first` and `last`."""
    return count * (first.time_s + last.time_s) / 2


def _sum_steps_s(step_at, lo: int, hi: int) -> float:
    """Exact sum of step_at(c).time_s for contexts lo..hi where one roofline limit binds throughout or
    the limits cross once: each limit is linear in context, so whichever binds at both ends binds
    between them; otherwise the crossover is found by bisection and each side summed as a line."""
    first, last = step_at(lo), step_at(hi)
    if first.bound == last.bound or hi - lo <= 1:
        return _linear_sum_s(first, last, hi - lo + 1)
    a, b = lo, hi
    while b - a > 1:
        mid = (a + b) // 2
        if step_at(mid).bound == first.bound:
            a = mid
        else:
            b = mid
    return _linear_sum_s(first, step_at(a), a - lo + 1) + _linear_sum_s(step_at(b), last, hi - b + 1)


def answer_decode_s(m: ModelSpec, machine: Machine, fmt: Formats, prompt_tokens: int, answer_tokens: int,
                    batch: int = 1) -> float:
    """Sum of the decode steps after the first token, the context growing by one token a step.

    Exact in closed form: step time is piecewise linear in context, with corners only where the
    sliding window fills and where the binding roofline limit changes.
    """
    if answer_tokens <= 1:
        return 0.0
    lo, hi = prompt_tokens + 1, prompt_tokens + answer_tokens - 1

    def step_at(context: int) -> PassTime:
        return decode_step(m, machine, fmt, batch, context)

    window = m.sliding_window_tokens if m.sliding_window_layers else None
    if window is not None and lo < window <= hi:
        return _sum_steps_s(step_at, lo, window - 1) + _sum_steps_s(step_at, window, hi)
    return _sum_steps_s(step_at, lo, hi)
