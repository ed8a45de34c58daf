"""The serving model wired to its constants: engine presets, link kinds and `serving_estimate`.

Everything numeric comes from data/assumptions.toml (via assumptions.py) or the catalog; the physics
is in step.py and serving.py. `serving_estimate` is the one call a script needs.
"""

from __future__ import annotations

from functools import lru_cache

from ..assumptions import assumptions
from ..precision import Formats
from ..specs import GpuSpec, ModelSpec, NumberFormat
from .machine import Machine
from .memory import activation_workspace_bytes
from .params import embedding_params, total_params
from .serving import Engine, Load, MaxLoad, Serving, serve
from .step import StepPhysics

DEFAULT_ENGINE = "vllm"


def link_kind(gpu: GpuSpec, gpus: int = 2) -> str:
    """'nvlink' (NVLink / NVSwitch), 'pcie' (no peer link), or 'other' (Infinity Fabric, ICI, Ethernet).

    An NVLink bridge joins pairs only: beyond two GPUs the all-reduce crosses PCIe.
    """
    name = gpu.link_name.lower()
    if "no nvlink" in name or gpu.link_bandwidth_bytes_per_s is None:
        return "pcie"
    if "nvlink bridge" in name:
        return "nvlink" if gpus <= 2 else "pcie"
    if "nvlink" in name:
        return "nvlink"
    if "pcie" in name:
        return "pcie"
    return "other"


def machine_for(gpu: GpuSpec, gpus: int, fmt: Formats, compute_efficiency: float,
                memory_efficiency: float) -> Machine:
    """The Machine of the serving model: all-reduce latency and bandwidth share by the GPU's link kind."""
    a = assumptions()
    kind = link_kind(gpu, gpus)
    link = a.serving.links[kind]
    bandwidth = gpu.link_bandwidth_bytes_per_s or a.pcie_bandwidth_bytes_per_s
    if kind == "pcie" and "nvlink" in gpu.link_name.lower() and "no nvlink" not in gpu.link_name.lower():
        bandwidth = a.pcie_bandwidth_bytes_per_s  # bridged pairs talk over PCIe beyond the pair
    return Machine(
        gpus=gpus,
        peak_flop_per_s=gpu.peak.get(fmt.compute_format) or 0.0,
        memory_bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        memory_bytes=gpu.memory_bytes,
        link_bandwidth_bytes_per_s=bandwidth,
        allreduce_hop_latency_s=a.allreduce_hop_latency_s,
        compute_efficiency=compute_efficiency,
        memory_efficiency=memory_efficiency,
        allreduce_latency_s=link.allreduce_latency_s,
        link_bandwidth_share=link.bandwidth_share,
    )


@lru_cache(maxsize=None)
def engine(name: str = DEFAULT_ENGINE) -> Engine:
    """An engine preset from data/assumptions.toml [engine.NAME]."""
    raw = assumptions().serving.engines[name]
    return Engine(name, int(raw["max_batch"]), int(raw["max_tokens_per_step"]), float(raw["memory_utilization"]),
                  float(raw["kv_share_of_free"]), bool(raw["reserve_whole_sequence"]),
                  assumptions().kv_block_tokens, raw.get("source", ""))


@lru_cache(maxsize=1)
def step_physics() -> StepPhysics:
    sv = assumptions().serving
    return StepPhysics(sv.step_overhead_s, sv.layer_overhead_s, sv.moe_imbalance, sv.runtime_bytes_per_gpu, sv.knee,
                       sv.quantized_embeddings_bytes_per_param, sv.hidden_passes_per_layer)


def serving_weights_bytes(m: ModelSpec, fmt: Formats) -> float:
    """Weights as quantized checkpoints hold them: embedding and lm_head stay 16-bit below 16-bit formats."""
    a = assumptions().serving
    tables = embedding_params(m)
    if fmt.weight_bytes_per_param >= a.quantized_embeddings_bytes_per_param:
        return total_params(m) * fmt.weight_bytes_per_param
    return (total_params(m) - tables) * fmt.weight_bytes_per_param + tables * a.quantized_embeddings_bytes_per_param


def attention_peak_flop_per_s(gpu: GpuSpec, fmt: Formats) -> float | None:
    """8-bit peak for FP4 formats (attention runs FP8 FMHA, not FP4)."""
    if fmt.compute_format is NumberFormat.FP4:
        return gpu.peak.get(NumberFormat.FP8) or gpu.peak.get(NumberFormat.BF16)
    return None


def compute_share(fmt: Formats) -> float:
    """Share of the format's own peak its GEMMs reach relative to 8/16-bit math: native FP4 lower
    (activation quantization, block scales), weight-only formats pay the dequantization."""
    sv = assumptions().serving
    if fmt.compute_format is NumberFormat.FP4:
        return sv.fp4_compute_share
    return sv.weight_only_compute_share if fmt.weight_only else 1.0


def serving_estimate(model: ModelSpec, gpu: GpuSpec, gpus: int, formats: Formats, isl: int, osl: int,
                     load: Load = MaxLoad(), engine_name: str | Engine = DEFAULT_ENGINE,
                     compute_efficiency: float | None = None, memory_efficiency: float | None = None,
                     physics: StepPhysics | None = None) -> Serving:
    """Throughput, batch, TTFT and time per output token of `engine_name` serving isl/osl at `load`.

    Raises ValueError when not one request fits in memory after the weights.
    """
    a = assumptions()
    eta_c = a.compute_efficiency if compute_efficiency is None else compute_efficiency
    eta_m = a.memory_efficiency if memory_efficiency is None else memory_efficiency
    machine = machine_for(gpu, gpus, formats, eta_c * compute_share(formats), eta_m)
    eng = engine_name if isinstance(engine_name, Engine) else engine(engine_name)
    workspace = activation_workspace_bytes(model, min(eng.max_tokens_per_step, a.prefill_chunk_tokens),
                                           a.activation_bytes_per_element)
    peak8 = attention_peak_flop_per_s(gpu, formats)
    attention_flop_per_s = machine.effective_flop_per_s if peak8 is None else gpus * peak8 * eta_c
    return serve(model, machine, formats, isl, osl, load, eng, physics or step_physics(),
                 serving_weights_bytes(model, formats), workspace, attention_flop_per_s)
