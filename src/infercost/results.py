"""The typed result of estimate(): one nested frozen dataclass per step of the module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .codec import to_jsonable
from .physics.batching import BatchPoint
from .physics.memory import GridCell
from .scenario import Scenario


@dataclass(frozen=True)
class ModelSummary:
    id: str
    name: str
    params_total: int
    params_active: int
    kv_bytes_per_token: float
    max_context_tokens: int
    is_moe: bool
    source: str


@dataclass(frozen=True)
class HardwareSummary:
    id: str
    name: str
    gpus: int
    peak_flop_per_s: float  # per GPU, in the compute format of the chosen precision
    memory_bandwidth_bytes_per_s: float
    memory_bytes: float
    link_bandwidth_bytes_per_s: float
    price_per_gpu_hour_usd: float | None
    price_source: str
    price_as_of: str
    measured: bool


@dataclass(frozen=True)
class PrecisionSummary:
    precision: str
    kv_precision: str
    weight_format: str
    compute_format: str
    weight_bytes_per_param: float
    kv_bytes_per_element: float
    note: str


@dataclass(frozen=True)
class Fit:
    fits: bool
    weights_bytes: float
    weights_per_gpu_bytes: float
    usable_per_gpu_bytes: float
    min_gpus: int | None  # smallest count that holds the weights and splits the heads evenly; None: none does
    message: str


@dataclass(frozen=True)
class Reading:
    """Step 1: reading the question (prefill) vs writing the answer (decode), one user."""

    question_tokens: int
    answer_tokens: int
    prefill_flop: float
    prefill_s: float
    prefill_bound: str
    ttft_s: float
    prefill_tokens_per_s: float
    decode_step_s: float  # the first decode step, batch 1
    decode_bound: str
    decode_tokens_per_s: float
    comm_per_step_s: float
    write_s: float  # every token after the first
    answer_s: float  # ttft + write


@dataclass(frozen=True)
class KvCache:
    """Step 2: the KV cache filling GPU memory."""

    kv_bytes_per_token: float
    conversation_tokens: int
    conversation_kv_bytes: float
    conversations: int
    total_memory_bytes: float
    weights_bytes: float
    reserve_bytes: float  # runtime reserve plus activation workspace
    usable_kv_bytes: float
    conversations_fit: int  # paged allocation, blocks of kv_block_tokens
    conversations_fit_reserved: int  # reserving the model's whole context per conversation
    kv_block_tokens: int
    all_fit: bool
    grid: tuple[GridCell, ...]
    overflow_cells: int


@dataclass(frozen=True)
class Batching:
    """Step 3: total output and per-user speed against batch size."""

    context_tokens: int
    batch: int
    current: BatchPoint
    curve: tuple[BatchPoint, ...]
    memory_limit_batch: int
    compute_knee_batch: int | None
    batch_fits: bool


@dataclass(frozen=True)
class Speculative:
    """Step 4: speculative decoding and prompt caching."""

    draft_model_id: str | None
    draft_model_name: str | None
    draft_tokens: int
    acceptance_rate: float
    expected_tokens_per_pass: float
    draft_step_s: float | None
    target_step_s: float
    verify_step_s: float
    step_ratio: float | None  # c = draft step / target step
    speedup: float | None
    tokens_per_s_without: float
    tokens_per_s_with: float | None
    shared_prefix_tokens: int
    prefill_saved_s: float
    memory_saved_bytes: float
    prefix_sharing_users: int  # users assumed to share the prefix: min(conversations, batch)


@dataclass(frozen=True)
class CostLever:
    kind: str  # "model", "precision" or "batch"
    label: str
    usd_per_million_output: float | None
    note: str
    current: bool


@dataclass(frozen=True)
class Cost:
    """Step 5: cost per million tokens and per answer."""

    price_per_gpu_hour_usd: float | None
    busy_share: float
    batch: int  # the batch the cost assumes (the step-3 batch, capped by memory)
    output_tokens_per_s: float
    tokens_per_hour: float
    input_tokens_per_s: float
    usd_per_million_output: float | None
    usd_per_million_input: float | None
    usd_per_answer: float | None
    levers: tuple[CostLever, ...]


@dataclass(frozen=True)
class ServingStep:
    """Where one average engine step's time goes (seconds)."""

    weights_s: float  # dense weight matrices
    hidden_s: float  # norms and residual adds on the hidden state (repeated on every GPU)
    experts_s: float  # MoE routed experts
    attention_s: float  # reading the KV caches, prompt attention
    comm_s: float  # tensor-parallel all-reduces
    overhead_s: float  # scheduling, launches
    bound: str  # the largest part


@dataclass(frozen=True)
class ServingPoint:
    """What a continuous-batching engine delivers for the question/answer lengths at one load."""

    load: str  # "max load", "concurrency 32", "4 req/s"
    engine: str  # preset in data/assumptions.toml
    batch: float  # sequences decoding in an average step
    batch_limit: str  # "kv cache", "engine batch cap", "engine token cap" or "load"
    max_batch: float  # the batch at max load
    kv_capacity_tokens: float
    output_tokens_per_s: float  # whole system
    input_tokens_per_s: float
    requests_per_s: float
    ttft_s: float | None  # once admitted: the prompt read beside the decoding batch
    tpot_s: float  # time per output token = one step
    per_user_tokens_per_s: float
    usd_per_million_output: float | None
    step: ServingStep


@dataclass(frozen=True)
class Serving:
    """Serving under load: prefill mixed into decode steps, the batch an engine really runs, and the
    costs the plain roofline leaves out (communication by link, per-step overhead, MoE, FP4, KV reads)."""

    question_tokens: int
    answer_tokens: int
    max_load: ServingPoint | None  # None when not one request fits beside the weights
    at_batch: ServingPoint | None  # the step-3 batch as a concurrency
    message: str


@dataclass(frozen=True)
class Fidelity:
    """How far this kind of estimate typically is from real serving systems (data/fidelity.toml)."""

    typical_error_share: float  # median |predicted / measured - 1| of the group below
    group: str  # the measurement group that matches this scenario ("4-bit", "8 GPUs", "all", ...)
    overall_error_share: float
    held_out_error_share: float  # on measurements the constants were not fitted to
    within_25_share: float
    plain_roofline_error_share: float  # the same set scored with the module's plain model
    points: int
    date: str
    basis: str
    caveats: tuple[str, ...]
    applies_to: str = "serving section"


@dataclass(frozen=True)
class Estimate:
    scenario: Scenario
    model: ModelSummary
    hardware: HardwareSummary
    precision: PrecisionSummary
    fit: Fit
    reading: Reading
    kv: KvCache
    batching: Batching
    speculative: Speculative
    cost: Cost
    assumptions: dict[str, Any]
    serving: Serving | None = None
    fidelity: Fidelity | None = None

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)
