"""Request bodies of the JSON API as pydantic models: precise OpenAPI bounds, strict types.

The core's Scenario stays the source of truth for validation; these models only refuse what is
malformed before it reaches the core (wrong types, NaN, values past the bounds the core declares),
so that the OpenAPI schema at /openapi.json states every bound.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


from .. import catalog
from ..catalog import MIN_RATE
from ..scenario import INT_BOUNDS, MAX_PRICE_USD, MIN_SHARE, Scenario

_DEFAULTS = Scenario()
ID_PATTERN = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"
MAX_ID_CHARS = 100
MAX_INT = 2**31 - 1
MAX_TEXT_CHARS = 2000
MAX_FLOP_PER_S = 1e20
MAX_MEMORY_BYTES = 1e15
MAX_BANDWIDTH_BYTES_PER_S = 1e15

ModelId = Literal[tuple(catalog.models())]  # the OpenAPI schema lists the catalog's ids
GpuId = Literal[tuple(catalog.gpus())]
Share = Annotated[float, Field(ge=MIN_SHARE, le=1, allow_inf_nan=False)]
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=ID_PATTERN)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
PositiveInt = Annotated[int, Field(ge=1, le=MAX_INT)]
Count = Annotated[int, Field(ge=0, le=MAX_INT)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _int(name: str, description: str):
    low, high = INT_BOUNDS[name]
    return Field(getattr(_DEFAULTS, name), ge=low, le=high, description=description)


class MoeIn(_Strict):
    experts: PositiveInt
    experts_per_token: PositiveInt
    expert_ffn_size: PositiveInt
    shared_experts: Count = 0
    dense_layers: Count = 0
    expert_bias: bool = False


class MlaIn(_Strict):
    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: PositiveInt | None = None


class ModelSpecIn(_Strict):
    """A model as POST /api/models/import returns it (a ModelSpec)."""

    id: Id
    name: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
    layers: PositiveInt
    hidden_size: PositiveInt
    heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    ffn_size: PositiveInt
    vocab_size: PositiveInt
    max_context_tokens: Annotated[int, Field(ge=1, le=INT_BOUNDS["conversation_tokens"][1])]
    tied_embeddings: bool = False
    gated_mlp: bool = True
    qkv_bias: bool = False
    attention_output_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: Annotated[int, Field(ge=0, le=16)] = 2
    sliding_window_tokens: PositiveInt | None = None
    sliding_window_layers: Count = 0
    moe: MoeIn | None = None
    mla: MlaIn | None = None
    published_params: Annotated[float, Field(gt=0, le=1e15, allow_inf_nan=False)] | None = None
    published_active_params: Annotated[float, Field(gt=0, le=1e15, allow_inf_nan=False)] | None = None
    source: Text = ""
    family: Annotated[str, Field(max_length=MAX_ID_CHARS)] = ""
    notes: Text = ""


def _positive(high: float):
    """A rate or size of an accelerator: at least catalog.MIN_RATE (smaller ones describe no device)."""
    return Annotated[float, Field(ge=MIN_RATE, le=high, allow_inf_nan=False)]


class PeakIn(_Strict):
    fp32_flop_per_s: _positive(MAX_FLOP_PER_S) | None = None
    bf16_flop_per_s: _positive(MAX_FLOP_PER_S) | None = None
    fp8_flop_per_s: _positive(MAX_FLOP_PER_S) | None = None
    int8_flop_per_s: _positive(MAX_FLOP_PER_S) | None = None
    fp4_flop_per_s: _positive(MAX_FLOP_PER_S) | None = None


class GpuSpecIn(_Strict):
    """An accelerator, e.g. "this machine" as POST /api/bench/load returns it (a GpuSpec)."""

    id: Id
    name: Annotated[str, Field(min_length=1, max_length=200)]
    vendor: Annotated[str, Field(max_length=MAX_ID_CHARS)]
    peak: PeakIn
    memory_bytes: _positive(MAX_MEMORY_BYTES)
    memory_bandwidth_bytes_per_s: _positive(MAX_BANDWIDTH_BYTES_PER_S)
    link_bandwidth_bytes_per_s: _positive(MAX_BANDWIDTH_BYTES_PER_S) | None = None
    link_name: Annotated[str, Field(max_length=MAX_ID_CHARS)] = ""
    price_per_gpu_hour_usd: _positive(MAX_PRICE_USD) | None = None
    price_source: Text = ""
    price_as_of: Annotated[str, Field(max_length=MAX_ID_CHARS)] = ""
    sources: Annotated[list[Text], Field(max_length=16)] = []
    notes: Text = ""
    measured: bool = False


class ScenarioIn(_Strict):
    """Every choice on the page. Send only what you change: missing fields take the defaults."""

    model: ModelId = Field(_DEFAULTS.model, description="catalog model id (GET /api/catalog)")
    precision: Literal["32bit", "16bit", "8bit", "4bit"] = Field(_DEFAULTS.precision.value,
                                                                description="weight precision")
    kv_precision: Literal["16bit", "8bit"] = Field(_DEFAULTS.kv_precision.value, description="KV cache precision")
    gpu: GpuId = Field(_DEFAULTS.gpu, description="catalog accelerator id")
    gpus: int = _int("gpus", "number of GPUs (tensor parallel)")
    compute_efficiency: Share = Field(_DEFAULTS.compute_efficiency,
                                      description="share of peak compute reached when reading the question")
    memory_efficiency: Share = Field(_DEFAULTS.memory_efficiency,
                                     description="share of peak memory speed reached when writing")
    question_tokens: int = _int("question_tokens", "question length (step 1)")
    answer_tokens: int = _int("answer_tokens", "answer length (step 1)")
    conversation_tokens: int = _int("conversation_tokens", "conversation length (step 2)")
    conversations: int = _int("conversations", "conversations held at once (step 2)")
    batch: int = _int("batch", "batch size (step 3)")
    draft_model: ModelId | None = Field(None, description="draft model id (step 4); null: the estimate picks one")
    draft_tokens: int = _int("draft_tokens", "draft length k (step 4)")
    acceptance_rate: float = Field(_DEFAULTS.acceptance_rate, ge=0, le=1, allow_inf_nan=False,
                                   description="share of draft guesses the big model accepts (step 4)")
    shared_prefix_tokens: int = _int("shared_prefix_tokens", "prompt prefix shared by all requests (step 4)")
    price_per_gpu_hour_usd: Annotated[float, Field(gt=0, le=MAX_PRICE_USD, allow_inf_nan=False)] | None = Field(
        None, description="USD per GPU-hour; null: the catalog's price")
    busy_share: Share = Field(_DEFAULTS.busy_share, description="share of the hour the server has work (step 5)")
    custom_model: ModelSpecIn | None = Field(None, description="a model from POST /api/models/import, used instead of `model`")
    custom_gpu: GpuSpecIn | None = Field(None, description="an accelerator (e.g. from POST /api/bench/load), used instead of `gpu`")


class SimulateIn(_Strict):
    """A seeded run of greedy speculative decoding with a draft right `acceptance_rate` of the time."""

    acceptance_rate: float = Field(0.7, ge=0, le=1, allow_inf_nan=False)
    draft_tokens: int = Field(4, ge=1, le=16)
    output_tokens: int = Field(40, ge=1, le=200)
    seed: int = Field(0, ge=0, le=2**32 - 1)
