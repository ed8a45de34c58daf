"""The nouns of the core: models, accelerators, number formats and precisions.

Frozen dataclasses in base units (bytes, FLOP/s, bytes/s, seconds). Facts come from the data
files (catalog.py); nothing here holds a spec number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Precision(Enum):
    """Weight precisions: the page offers 16, 8 and 4-bit; 32-bit serves the benchmark's fp32 runs."""

    BIT32 = "32bit"
    BIT16 = "16bit"
    BIT8 = "8bit"
    BIT4 = "4bit"


class KvPrecision(Enum):
    """Precision of the KV cache, chosen separately from the weights."""

    BIT16 = "16bit"
    BIT8 = "8bit"


class NumberFormat(Enum):
    """A number format an accelerator computes in (its tensor-core peak is quoted per format)."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    FP4 = "fp4"
    INT4 = "int4"  # weight-only storage format; never a compute format here


@dataclass(frozen=True)
class MlaSpec:
    """Multi-head latent attention (DeepSeek-V2/V3): the cache holds a compressed latent per token."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None  # None: queries are projected directly from the hidden state


@dataclass(frozen=True)
class MoeSpec:
    """Mixture of experts: each token is routed to `experts_per_token` of `experts`."""

    experts: int
    experts_per_token: int
    expert_ffn_size: int
    shared_experts: int = 0
    dense_layers: int = 0  # the first layers keep a plain MLP of the model's ffn_size (DeepSeek-V3: 3)
    expert_bias: bool = False  # gpt-oss: experts carry biases


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer as its config.json describes it."""

    id: str
    name: str
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_size: int
    vocab_size: int
    max_context_tokens: int
    tied_embeddings: bool = False
    gated_mlp: bool = True  # SwiGLU / GeGLU: three matrices; plain MLP: two
    qkv_bias: bool = False
    attention_output_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    sliding_window_tokens: int | None = None
    sliding_window_layers: int = 0  # how many of `layers` use the window
    moe: MoeSpec | None = None
    mla: MlaSpec | None = None
    published_params: float | None = None  # total, as the model card prints it
    published_active_params: float | None = None
    source: str = ""
    family: str = ""
    notes: str = ""

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def full_attention_layers(self) -> int:
        return self.layers - self.sliding_window_layers


@dataclass(frozen=True)
class PeakFlops:
    """Dense (not 2:4 sparse) peak throughput per compute format, FLOP/s; None where not native."""

    fp32_flop_per_s: float | None = None
    bf16_flop_per_s: float | None = None
    fp8_flop_per_s: float | None = None
    int8_flop_per_s: float | None = None
    fp4_flop_per_s: float | None = None

    def get(self, fmt: NumberFormat) -> float | None:
        return getattr(self, f"{fmt.value}_flop_per_s", None)


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator: peak compute per format, memory, bandwidth, link and a default price."""

    id: str
    name: str
    vendor: str
    peak: PeakFlops
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    link_bandwidth_bytes_per_s: float | None  # one direction, per GPU, to its peers
    link_name: str
    price_per_gpu_hour_usd: float | None
    price_source: str = ""
    price_as_of: str = ""
    sources: tuple[str, ...] = field(default_factory=tuple)
    notes: str = ""
    measured: bool = False  # True for "this machine", built from benchmark measurements
