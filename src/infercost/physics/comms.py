"""Tensor-parallel communication: two all-reduces per layer per forward pass (Megatron-LM, arXiv 1909.08053 §3)."""

from __future__ import annotations

from ..specs import ModelSpec
from .machine import Machine

ACTIVATION_BYTES_PER_ELEMENT = 2  # all-reduced activations travel at 16-bit


def allreduce_s(message_bytes: float, gpus: int, link_bytes_per_s: float, hop_latency_s: float,
                bandwidth_share: float) -> float:
    """Ring all-reduce, alpha-beta form: 2(G-1) steps, each paying the link's per-step latency, move
    2(G-1)/G of the message at the share of link bandwidth an all-reduce reaches (Thakur, Rabenseifner
    and Gropp 2005; constants per link kind in data/assumptions.toml)."""
    if gpus <= 1:
        return 0.0
    steps = 2 * (gpus - 1)
    return steps * hop_latency_s + steps / gpus * message_bytes / (link_bytes_per_s * bandwidth_share)


def allreduce_on(machine: Machine, message_bytes: float) -> float:
    if machine.allreduce_latency_s is None:  # the steps: small-message hop latency, the whole link
        return allreduce_s(message_bytes, machine.gpus, machine.link_bandwidth_bytes_per_s,
                           machine.allreduce_hop_latency_s, 1.0)
    return allreduce_s(message_bytes, machine.gpus, machine.link_bandwidth_bytes_per_s, machine.allreduce_latency_s,
                       machine.link_bandwidth_share)


def tensor_parallel_comm_s(m: ModelSpec, machine: Machine, tokens_in_pass: float) -> float:
    """Communication time of one forward pass over `tokens_in_pass` tokens (zero on one GPU)."""
    if machine.gpus <= 1:
        return 0.0
    message_bytes = tokens_in_pass * m.hidden_size * ACTIVATION_BYTES_PER_ELEMENT
    return 2 * m.layers * allreduce_on(machine, message_bytes)
