"""The serving machine: G accelerators of one type under tensor parallelism, at given efficiencies."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Machine:
    """Everything the roofline needs, per GPU, plus how many GPUs share the work."""

    gpus: int
    peak_flop_per_s: float  # per GPU, in the compute format of the chosen precision
    memory_bandwidth_bytes_per_s: float  # per GPU
    memory_bytes: float  # per GPU
    link_bandwidth_bytes_per_s: float  # per GPU, one direction
    allreduce_hop_latency_s: float
    compute_efficiency: float
    memory_efficiency: float
    # Serving model (physics/engines.py sets these by link kind): per-step latency of a ring all-reduce
    # and the share of link bandwidth it reaches; None keeps the plain ring of allreduce_hop_latency_s.
    allreduce_latency_s: float | None = None
    link_bandwidth_share: float = 1.0

    @property
    def effective_flop_per_s(self) -> float:
        """G * F * eta_c: tensor parallelism splits every matrix over the GPUs."""
        return self.gpus * self.peak_flop_per_s * self.compute_efficiency

    @property
    def effective_bandwidth_bytes_per_s(self) -> float:
        """G * B * eta_m: each GPU reads its own shard of weights and cache."""
        return self.gpus * self.memory_bandwidth_bytes_per_s * self.memory_efficiency

    @property
    def total_memory_bytes(self) -> float:
        return self.gpus * self.memory_bytes


def tensor_parallel_size_at_least(heads: int, kv_heads: int, gpus: int, max_gpus: int) -> int | None:
    """Smallest G >= gpus that splits the attention heads evenly (heads % G == 0) and the KV heads
    either evenly or by replication (Megatron-LM tensor parallelism, arXiv 1909.08053 §3)."""
    for g in range(gpus, max_gpus + 1):
        if heads % g == 0 and (kv_heads % g == 0 or g % kv_heads == 0):
            return g
    return None
