"""Tensor-parallel communication: two all-reduces per layer per forward pass (Megatron-LM, arXiv 1909.08053 §3)."""

from __future__ import annotations

from ..specs import ModelSpec
from .machine import Machine

ACTIVATION_BYTES_PER_ELEMENT = 2  # all-reduced activations travel at 16-bit


def ring_allreduce_s(message_bytes: float, gpus: int, link_bytes_per_s: float, hop_latency_s: float) -> float:
    """Ring all-reduce: 2(G-1) hops of latency plus 2(G-1)/G of the message over the link (Thakur et al. 2005)."""
    if gpus <= 1:
        return 0.0
    hops = 2 * (gpus - 1)
    return hops * hop_latency_s + hops / gpus * message_bytes / link_bytes_per_s


def tensor_parallel_comm_s(m: ModelSpec, machine: Machine, tokens_in_pass: float) -> float:
    """Communication time of one forward pass over `tokens_in_pass` tokens (zero on one GPU)."""
    message_bytes = tokens_in_pass * m.hidden_size * ACTIVATION_BYTES_PER_ELEMENT
    per_allreduce = ring_allreduce_s(message_bytes, machine.gpus, machine.link_bandwidth_bytes_per_s,
                                     machine.allreduce_hop_latency_s)
    return 2 * m.layers * per_allreduce
