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
    serving: ServingAssumptions | None = None


@dataclass(frozen=True)
class LinkAssumptions:
    """All-reduce over one kind of GPU link: a fixed latency and the share of link bandwidth reached."""

    allreduce_latency_s: float
    bandwidth_share: float


@dataclass(frozen=True)
class ServingAssumptions:
    """Constants of the serving (max-load) model; engine presets as raw tables for physics/engines.py."""

    step_overhead_s: float
    layer_overhead_s: float
    moe_imbalance: float
    runtime_bytes_per_gpu: float
    quantized_embeddings_bytes_per_param: float
    knee: float
    fp4_compute_share: float
    hidden_passes_per_layer: float
    weight_only_compute_share: float
    links: dict[str, LinkAssumptions]
    engines: dict[str, dict]


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
            **_serving_sources(raw),
        },
        serving=_serving(raw),
    )


def _serving(raw: dict) -> ServingAssumptions:
    sv = raw["serving"]
    return ServingAssumptions(
        step_overhead_s=sv["step_overhead_s"],
        layer_overhead_s=sv["layer_overhead_s"],
        moe_imbalance=sv["moe_imbalance"],
        runtime_bytes_per_gpu=sv["runtime_gb_per_gpu"] * GB,
        quantized_embeddings_bytes_per_param=sv["quantized_embeddings_bytes_per_param"],
        knee=float(sv["roofline_knee"]),
        fp4_compute_share=sv["fp4_compute_share"],
        hidden_passes_per_layer=sv["hidden_passes_per_layer"],
        weight_only_compute_share=sv["weight_only_compute_share"],
        links={kind: LinkAssumptions(t["allreduce_latency_s"], t["bandwidth_share"])
               for kind, t in raw["link"].items() if isinstance(t, dict)},
        engines={name: dict(t) for name, t in raw["engine"].items()},
    )


def _serving_sources(raw: dict) -> dict[str, str]:
    sv = raw["serving"]
    out = {f"serving_{k.removesuffix('_source')}": v for k, v in sv.items() if k.endswith("_source")}
    out |= {f"link_{kind}": t["source"] for kind, t in raw["link"].items() if isinstance(t, dict)}
    out |= {f"engine_{name}": t["source"] for name, t in raw["engine"].items()}
    return out
