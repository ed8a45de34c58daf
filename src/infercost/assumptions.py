"""Serving-runtime assumptions (efficiencies, memory reserve, paging, link latency) from data/assumptions.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .units import GB


@dataclass(frozen=True)
class Assumptions:
    compute_efficiency: float
    memory_efficiency: float
    memory_reserve_share: float
    kv_block_tokens: int
    prefill_chunk_tokens: int
    activation_bytes_per_element: float
    allreduce_hop_latency_s: float
    pcie_bandwidth_bytes_per_s: float
    sources: dict[str, str]


@cache
def assumptions() -> Assumptions:
    raw = tomllib.loads(resources.files("infercost").joinpath("data/assumptions.toml").read_text("utf-8"))
    eff, mem, link = raw["efficiency"], raw["memory"], raw["link"]
    return Assumptions(
        compute_efficiency=eff["compute_share"],
        memory_efficiency=eff["memory_share"],
        memory_reserve_share=mem["reserve_share"],
        kv_block_tokens=mem["kv_block_tokens"],
        prefill_chunk_tokens=mem["prefill_chunk_tokens"],
        activation_bytes_per_element=mem["activation_bytes_per_element"],
        allreduce_hop_latency_s=link["allreduce_hop_latency_s"],
        pcie_bandwidth_bytes_per_s=link["pcie_bandwidth_gb_per_s_one_direction"] * GB,
        sources={
            "efficiency": eff["source"],
            "memory_reserve": mem["reserve_source"],
            "kv_block": mem["kv_block_source"],
            "prefill_chunk": mem["prefill_chunk_source"],
            "allreduce_latency": link["allreduce_hop_latency_source"],
            "pcie": link["pcie_source"],
        },
    )
