"""Prompt caching: a prefix shared by many requests is read once and its cache kept (vLLM automatic prefix caching)."""

from __future__ import annotations

from ..precision import Formats
from ..specs import ModelSpec
from .latency import prefill_pass
from .machine import Machine
from .memory import kv_bytes_for_sequence


def prefill_saved_s(m: ModelSpec, machine: Machine, fmt: Formats, prompt_tokens: int, shared_prefix_tokens: int) -> float:
    """Prefill time of the full prompt minus that of only the part after the cached prefix."""
    prefix = min(shared_prefix_tokens, prompt_tokens - 1)
    if prefix <= 0:
        return 0.0
    full = prefill_pass(m, machine, fmt, prompt_tokens).time_s
    rest = prefill_pass(m, machine, fmt, prompt_tokens - prefix, cached_tokens=prefix).time_s
    return max(0.0, full - rest)


def memory_saved_bytes(m: ModelSpec, fmt: Formats, shared_prefix_tokens: int, users: int) -> float:
    """Users sharing one prefix hold its cache once instead of once each."""
    if users <= 1 or shared_prefix_tokens <= 0:
        return 0.0
    return (users - 1) * kv_bytes_for_sequence(m, shared_prefix_tokens, fmt.kv_bytes_per_element)
