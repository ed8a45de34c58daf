"""Map each published measurement (shared/reference/measured-train.json) to what the core can estimate.

A measurement becomes a `Case` (model, precision, GPU type and count, input/output lengths, load,
engine) or an `Unmapped` with the reason. Models and GPUs the catalog lacks are mapped to the nearest
entry with the reason, or built here from their public spec (never silently).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, replace

from infercost import catalog
from infercost.physics.engines import engine as engine_preset
from infercost.physics.params import total_params
from infercost.physics.serving import Concurrency, Engine, Load, MaxLoad, RequestRate
from infercost.specs import GpuSpec, ModelSpec, Precision

# --- models ---------------------------------------------------------------------------------------

LLAMA2_70B = ModelSpec(
    id="llama-2-70b", name="Llama 2 70B", family="llama2", layers=80, hidden_size=8192, heads=64, kv_heads=8,
    head_dim=128, ffn_size=28672, vocab_size=32000, max_context_tokens=4096,
    source="https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json",
    notes="Built here: not in the catalog (same shape as Llama 3.1 70B but a 32,000-token vocabulary and 4k context).")

# (pattern on the record's model name, catalog id or spec, note)
MODELS: tuple[tuple[str, str | ModelSpec, str], ...] = (
    (r"^Llama-3\.3-70B", "llama-3.1-70b", "Llama 3.3 70B has Llama 3.1 70B's architecture (same config.json shapes)"),
    (r"^Llama-3-70B", "llama-3.1-70b", "Llama 3 70B: Llama 3.1 70B's shapes (8k context)"),
    (r"^Llama-3\.1-70B", "llama-3.1-70b", ""),
    (r"^Llama-3\.1-405B", "llama-3.1-405b", ""),
    (r"^Llama-3(\.1)?-8B", "llama-3.1-8b", ""),
    (r"^Llama-2-70B", LLAMA2_70B, "built from Llama-2-70b-hf config.json"),
    (r"^Mistral-7B", "mistral-7b", "Mistral 7B v0.1 (sliding window 4096 > isl+osl here)"),
    (r"^Mixtral-8x7B", "mixtral-8x7b", ""),
    (r"^Qwen3-235B-A22B", "qwen3-235b-a22b", ""),
    (r"^Qwen3-30B-A3B", "qwen3-30b-a3b", ""),
    (r"^DeepSeek-(R1|V3)", "deepseek-v3", "DeepSeek-R1 has DeepSeek-V3's architecture"),
    (r"^gpt-oss-120b", "gpt-oss-120b", ""),
    (r"^gpt-oss-20b", "gpt-oss-20b", ""),
)

# --- accelerators ---------------------------------------------------------------------------------

def _gh200() -> GpuSpec:
    """GH200 Grace Hopper superchip, the 96 GB HBM3 version ('GH200 480GB' names its 480 GB of LPDDR5X)."""
    h100 = catalog.gpu("h100-sxm")
    return replace(h100, id="gh200-96gb", name="NVIDIA GH200 (96 GB HBM3)", memory_bytes=96e9,
                   memory_bandwidth_bytes_per_s=4.0e12, link_name="NVLink 4 / NVLink-C2C",
                   sources=("https://resources.nvidia.com/en-us-grace-cpu/grace-hopper-superchip (GH200 datasheet: "
                            "96 GB HBM3 at 4 TB/s, H100 Tensor Core GPU, 480 GB LPDDR5X)",),
                   notes="Built in benchmarks/fidelity_map.py: H100 compute, 96 GB HBM3 at 4 TB/s.")


# HBM capacities are sold in GiB: the catalog's "80 GB" H100 holds 80 GiB (nvidia-smi: 81,559 MiB). Where the
# free memory after the weights decides the batch this matters (70B at FP8 on one H100), so the fidelity
# run uses the memory the driver reports. CATALOG CHANGE REQUESTED (memory_gb = these values / 1e9).
MIB = 2**20
MEMORY_AS_REPORTED: dict[str, tuple[float, str]] = {
    "h100-sxm": (81559 * MIB, "nvidia-smi on H100 SXM5 80GB: 81,559 MiB"),
    "a100-80gb": (81920 * MIB, "nvidia-smi on A100 SXM4 80GB: 81,920 MiB"),
    "h200": (143771 * MIB, "nvidia-smi on H200 SXM: 143,771 MiB"),
    "b200": (183359 * MIB, "nvidia-smi on B200: 183,359 MiB (MLPerf system name 'B200-SXM-180GB')"),
    "gh200-96gb": (97871 * MIB, "nvidia-smi on GH200 96GB: 97,871 MiB"),
}


def as_reported(gpu: GpuSpec) -> GpuSpec:
    if gpu.id in MEMORY_AS_REPORTED:
        return replace(gpu, memory_bytes=MEMORY_AS_REPORTED[gpu.id][0])
    return gpu


GPUS: tuple[tuple[str, str, str], ...] = (
    (r"^GH200", "gh200", "built here: H100 compute with 96 GB HBM3 at 4.0 TB/s (not in the catalog)"),
    (r"^GB200", "gb200", ""),
    (r"^B200", "b200", ""),
    (r"^H200", "h200", ""),
    (r"^H100.*(PCIe|NVL)", "", "H100 PCIe/NVL: not mapped (the catalog's H100 PCIe has 80 GB, the NVL 94 GB)"),
    (r"^H100", "h100-sxm", "H100 SXM (the perf tables' 'H100 80GB HBM3' is the SXM part)"),
    (r"^A100.*40GB", "a100-40gb", ""),
    (r"^A100", "a100-80gb", ""),
    (r"^L40S", "l40s", ""),
    (r"^L4\b", "l4", ""),
    (r"^(AMD )?(Instinct )?MI300X", "mi300x", ""),
    (r"^(AMD )?(Instinct )?MI325X", "mi325x", ""),
    (r"^(AMD )?(Instinct )?MI355X", "mi355x", ""),
)

# --- cases ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    index: int
    model: ModelSpec
    gpu: GpuSpec
    gpus: int
    precision: Precision
    isl: int
    osl: int
    load: Load
    engine: str  # preset name in data/assumptions.toml [engine.*]
    measured: float  # output tokens/s of the whole system, or per-user tokens/s (quantity)
    groups: dict  # gpu count, precision, dense/moe, engine, source
    notes: str
    quantity: str = "output"  # "output" or "per_user"


@dataclass(frozen=True)
class Unmapped:
    index: int
    record: dict
    reason: str


def _precision(text: str) -> Precision | None:
    head = text.split(" ")[0].upper()
    if head.startswith("FP4/FP8"):
        return None
    return {"FP8": Precision.BIT8, "FP4": Precision.BIT4, "NVFP4": Precision.BIT4, "INT4": Precision.BIT4,
            "AWQ": Precision.BIT4, "BF16": Precision.BIT16, "FP16": Precision.BIT16,
            "BF16/FP16": Precision.BIT16}.get(head)


_NAME_NOISE = re.compile(r"[-_ ](instruct|chat|hf|it|fp8|fp4|nvfp4|awq|gptq|int4|base)\b.*$", re.I)


def _slug(name: str) -> str:
    return _NAME_NOISE.sub("", name.split(" (")[0]).strip().lower().replace("_", "-").replace(" ", "-")


def _model(name: str) -> tuple[ModelSpec | None, str]:
    for pattern, target, note in MODELS:
        if re.search(pattern, name):
            return (target if isinstance(target, ModelSpec) else catalog.model(target)), note
    slug = _slug(name)
    by_name = {_slug(m.name): m for m in catalog.models().values()}
    if slug in catalog.models():
        return catalog.model(slug), ""
    if slug in by_name:
        return by_name[slug], ""
    return None, f"model {name!r} has no catalog entry or mapping"


def _gpu(name: str) -> tuple[GpuSpec | None, str]:
    for pattern, target, note in GPUS:
        if re.search(pattern, name):
            if not target:
                return None, note
            return as_reported(_gh200() if target == "gh200" else catalog.gpu(target)), note
    return None, f"GPU {name!r} has no catalog entry or mapping"


def _load(text: str) -> Load | None:
    t = text.lower().strip()
    if t.startswith(("max load", "unbounded", "offline", "inf", "infinite")):
        return MaxLoad()
    rate = re.match(r"(?:qps\s*=\s*)?([\d.]+)\s*(?:req/s|requests/s|qps)", t) or re.match(r"qps\s*=\s*([\d.]+)", t)
    if rate:
        return RequestRate(float(rate.group(1)))
    conc = re.match(r"(?:concurrency|batch(?: size)?)\s*=?\s*(\d+)", t) or re.match(r"(\d+)\s*concurrent", t)
    if conc:
        return Concurrency(int(conc.group(1)))
    if t in ("single stream",):
        return Concurrency(1)
    return None


def _quantity(record: dict) -> str | None:
    """Which estimate the value measures: 'output' (whole-system output tokens/s) or 'per_user' (1/TPOT)."""
    unit = str(record.get("unit", "")).lower()
    if "tokens/s" in unit and "whole system" in unit:
        return "output"
    if "tokens/s/user" in unit or "single request" in unit:
        return "per_user"
    return None


def _engine(record: dict) -> str | None:
    e = str(record.get("engine", ""))
    if e.startswith("TensorRT-LLM (trtllm-bench") or "gptManagerBenchmark" in e:
        return "trtllm-bench"
    if e.startswith("TensorRT-LLM + Triton"):
        return "trtllm-triton"
    if re.search(r"vllm|sglang", e, re.I):
        return "vllm"
    return None


def _pipeline_stages(parallelism: str) -> int:
    pp = re.search(r"PP\s*(\d+)", parallelism or "")
    return int(pp.group(1)) if pp else 1


def _unmappable_reason(r: dict) -> str | None:
    engine, load = str(r.get("engine", "")), str(r.get("concurrency", ""))
    if not isinstance(r.get("gpu_count"), int):
        return "GPU count not given in the source excerpt"
    text = re.sub(r"no speculation|no draft", "", engine + " " + str(r.get("metric", "")), flags=re.I)
    if re.search(r"medusa|eagle|speculat|spec decode|draft", text, re.I):
        return "speculative decoding whose acceptance rate (or draft) is not published; the core needs both"
    if load.startswith("MLPerf"):
        return ("MLPerf scenario: submitter-chosen parallelism and a dataset whose mean input length is not in the "
                "record (OpenOrca/CNN-DM/mixed); SLO-bound Server runs need the latency percentiles too")
    if not isinstance(r.get("isl"), int) or not isinstance(r.get("osl"), int):
        return f"input/output lengths not fixed ({r.get('isl')!r} / {r.get('osl')!r})"
    if _pipeline_stages(str(r.get("parallelism", ""))) > 1:
        return f"pipeline parallelism ({r['parallelism']}) is not modelled: the core splits work by tensor parallelism"
    if _quantity(r) is None:
        return f"metric {r.get('metric')!r} in {r.get('unit')!r} is neither system output tokens/s nor per-user speed"
    return None


def held_out(record: dict) -> bool:
    """Deterministic ~30% hold-out: a hash of the setup, not of the value."""
    key = "|".join(str(record.get(k)) for k in ("model", "precision", "gpu_type", "gpu_count", "engine_version",
                                             "isl", "osl", "concurrency"))
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10 < 3


def map_record(index: int, r: dict) -> Case | Unmapped:
    reason = _unmappable_reason(r)
    if reason:
        return Unmapped(index, r, reason)
    model, model_note = _model(str(r.get("model", "")))
    gpu, gpu_note = _gpu(str(r.get("gpu_type", "")))
    precision = _precision(str(r.get("precision", "")))
    load = _load(str(r.get("concurrency", "")))
    engine = _engine(r)
    for value, why in ((model, model_note), (gpu, gpu_note), (precision, f"precision {r['precision']!r} not mapped"),
                       (load, f"load {r['concurrency']!r} not mapped"), (engine, f"engine {r['engine']!r} not mapped")):
        if value is None:
            return Unmapped(index, r, why)
    bits = {Precision.BIT16: "16-bit", Precision.BIT8: "8-bit", Precision.BIT4: "4-bit"}[precision]
    groups = {"gpus": str(r["gpu_count"]), "precision": bits, "architecture": "MoE" if model.is_moe else "dense",
              "engine": f"{str(r.get('engine', '')).split(' (')[0]} {r.get('engine_version', '')}".strip(),
              "split": "held-out" if held_out(r) else "train"}
    notes = "; ".join(n for n in (model_note, gpu_note) if n)
    return Case(index, model, gpu, int(r["gpu_count"]), precision, int(r["isl"]), int(r["osl"]), load, engine,
                float(r["value"]), groups, notes, _quantity(r))


def trtllm_bench_engine(case: Case) -> Engine:
    """The batch and token caps trtllm-bench picks for this workload (tensorrt_llm/bench/build/tuning.py,
    calc_engine_setting + finetune_setting): requests that fit in 95% of memory after the weights at
    isl + osl each, capped at 4096 and rounded up; tokens = batch * (1 + isl / osl), at least 2048."""
    gib = 2**30
    weight_bytes = {Precision.BIT16: 2.0, Precision.BIT8: 1.0, Precision.BIT4: 0.5}[case.precision]
    kv_bytes = 2.0 if case.precision is Precision.BIT16 else 1.0
    m = case.model
    per_token = 2 * m.layers * max(case.gpus, m.kv_heads) * m.head_dim * kv_bytes / gib
    engine_gib = total_params(m) * weight_bytes / gib
    available = case.gpus * case.gpu.memory_bytes / gib - engine_gib
    requests = max(1.0, 0.95 * available / (per_token * (case.isl + case.osl)))
    raw_bs = min(requests, 4096)
    if raw_bs < 256:
        max_bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        max_bs = 128 * math.ceil(raw_bs / 128)
    else:
        max_bs = 256 * math.ceil(raw_bs / 256)
    raw_tokens = min(raw_bs * (1 + case.isl / case.osl), 32768)
    if raw_tokens < 4096:
        max_tokens = max(2048, 256 * math.ceil(raw_tokens / 256))
    elif raw_tokens < 8192:
        max_tokens = 512 * math.ceil(raw_tokens / 512)
    else:
        max_tokens = 1024 * math.ceil(raw_tokens / 1024)
    return replace(engine_preset("trtllm-bench"), max_batch=max_bs, max_tokens_per_step=max_tokens)


def engine_for(case: Case) -> Engine | str:
    return trtllm_bench_engine(case) if case.engine == "trtllm-bench" else case.engine
