"""Scenario: every choice the page, CLI, API and library make, with the module's defaults and bounds."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

from .assumptions import assumptions
from .catalog import gpu_problem, model_problem
from .codec import from_dict, to_jsonable
from .errors import ScenarioError
from .specs import GpuSpec, KvPrecision, ModelSpec, Precision

MAX_GPUS = 1024
MAX_TOKENS = 10_000_000
MAX_BATCH = 1_000_000
MAX_CONVERSATIONS = 1_000_000
MAX_DRAFT_TOKENS = 16
MAX_PRICE_USD = 10_000.0

# (low, high) inclusive for whole numbers; shares are in (0, 1].
INT_BOUNDS: dict[str, tuple[int, int]] = {
    "gpus": (1, MAX_GPUS),
    "question_tokens": (1, MAX_TOKENS),
    "answer_tokens": (1, MAX_TOKENS),
    "conversation_tokens": (1, MAX_TOKENS),
    "conversations": (1, MAX_CONVERSATIONS),
    "batch": (1, MAX_BATCH),
    "draft_tokens": (1, MAX_DRAFT_TOKENS),
    "shared_prefix_tokens": (0, MAX_TOKENS),
}
SHARES = ("compute_efficiency", "memory_efficiency", "busy_share")
MIN_SHARE = 0.001  # efficiencies and busy share below 0.1% describe no real server (and overflow the times)


@dataclass(frozen=True)
class Scenario:
    model: str = "llama-3.1-70b"
    precision: Precision = Precision.BIT16
    kv_precision: KvPrecision = KvPrecision.BIT16
    gpu: str = "h100-sxm"
    gpus: int = 4
    compute_efficiency: float = dataclasses.field(default_factory=lambda: assumptions().compute_efficiency)
    memory_efficiency: float = dataclasses.field(default_factory=lambda: assumptions().memory_efficiency)
    question_tokens: int = 1000
    answer_tokens: int = 500
    conversation_tokens: int = 8000
    conversations: int = 8
    batch: int = 32
    draft_model: str | None = None  # None: the smallest model of the same family
    draft_tokens: int = 4
    acceptance_rate: float = 0.7
    shared_prefix_tokens: int = 0
    price_per_gpu_hour_usd: float | None = None  # None: the catalog's price for the GPU
    busy_share: float = 0.5
    custom_model: ModelSpec | None = None  # a model imported from a config.json, used instead of `model`
    custom_gpu: GpuSpec | None = None  # e.g. "this machine" from a benchmark result, used instead of `gpu`

    def __post_init__(self) -> None:
        for name, enum in (("precision", Precision), ("kv_precision", KvPrecision)):
            value = getattr(self, name)
            if not isinstance(value, enum):
                try:
                    object.__setattr__(self, name, enum(value))
                except ValueError:
                    allowed = ", ".join(e.value for e in enum)
                    raise ScenarioError(name, f"must be one of {allowed}, not {value!r}") from None
        for name, (low, high) in INT_BOUNDS.items():
            _check_int(name, getattr(self, name), low, high)
        for name in SHARES:
            _check_share(name, getattr(self, name), allow_zero=False)
        _check_share("acceptance_rate", self.acceptance_rate, allow_zero=True)
        if self.price_per_gpu_hour_usd is not None:
            _check_number("price_per_gpu_hour_usd", self.price_per_gpu_hour_usd)
            if not 0 < self.price_per_gpu_hour_usd <= MAX_PRICE_USD:
                raise ScenarioError("price_per_gpu_hour_usd", f"must be above 0 and at most {MAX_PRICE_USD:g}")
        for name in ("model", "gpu"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ScenarioError(name, "must be a catalog id")
        if self.draft_model is not None and (not isinstance(self.draft_model, str) or not self.draft_model):
            raise ScenarioError("draft_model", "must be a catalog id or null")
        for name, check in (("custom_model", model_problem), ("custom_gpu", gpu_problem)):
            spec = getattr(self, name)
            problem = None if spec is None else check(spec)
            if problem is not None:
                raise ScenarioError(f"{name}.{problem[0]}", problem[1])

    def replace(self, **changes: Any) -> Scenario:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: Any) -> Scenario:
        return from_dict(cls, data)

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError("scenario", f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
        return cls.from_dict(data)


def _check_number(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(name, f"must be a finite number, not {value!r}")


def _check_int(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(name, f"must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ScenarioError(name, f"must be between {low:,} and {high:,}, not {value:,}")


def _check_share(name: str, value: Any, allow_zero: bool) -> None:
    _check_number(name, value)
    low = 0.0 if allow_zero else MIN_SHARE
    if not low <= value <= 1:
        raise ScenarioError(name, f"must be from {low:g} up to 1, not {value!r}")
