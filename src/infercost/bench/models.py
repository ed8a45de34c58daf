"""The model under test: a built-in Llama-family shape with seeded random weights, a local or hub
model (`--model`), or any architecture from a config.json with random weights (`--config`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InferCostError

# TinyLlama-1.1B's shape (https://huggingface.co/TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T,
# config.json): 4.4 GB at fp32, far beyond any CPU cache, so decoding is limited by memory.
BUILTIN_CONFIGS: dict[str, dict] = {
    "llama-1.1b": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
        "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "hidden_act": "silu", "initializer_range": 0.02,
    },
    # A tiny shape for --quick and the tests: seconds, not minutes; it measures overhead, not memory.
    "llama-tiny": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 4096,
        "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "hidden_act": "silu", "initializer_range": 0.02,
    },
}
DEFAULT_MODEL = "llama-1.1b"
QUICK_MODEL = "llama-tiny"


class ModelError(InferCostError):
    """A model that cannot be found, read or built."""


@dataclass(frozen=True)
class ModelSource:
    """Where the model comes from, resolved before anything heavy is loaded."""

    kind: str  # "builtin" | "config" | "path" | "hub"
    id: str
    config: dict  # the config.json fields
    random_weights: bool

    @property
    def label(self) -> str:
        return f"{self.id} ({'random weights' if self.random_weights else 'real weights'})"


def _read_json(path: Path, flag: str) -> dict:
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ModelError(flag, f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ModelError(flag, f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ModelError(flag, f"{path} must hold a JSON object")
    return data


def _looks_like_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def resolve_source(model: str | None, config: str | None, quick: bool) -> ModelSource:
    """Decide what to load, reading at most a config.json; raises ModelError on a bad name or file."""
    if model and config:
        raise ModelError("--model", "give either --model or --config, not both")
    if config:
        path = Path(config).expanduser()
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ModelError("--config", f"no config file at {config}")
        data = _read_json(path, "--config")
        if "model_type" not in data:
            raise ModelError("--config", f"{path} has no model_type: not a Hugging Face config.json")
        return ModelSource("config", path.parent.name if path.name == "config.json" else path.stem, data, True)
    if model is None:
        name = QUICK_MODEL if quick else DEFAULT_MODEL
        return ModelSource("builtin", name, dict(BUILTIN_CONFIGS[name]), True)
    if model in BUILTIN_CONFIGS:
        return ModelSource("builtin", model, dict(BUILTIN_CONFIGS[model]), True)
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelError("--model", f"{model} has no config.json: not a Hugging Face model folder")
        return ModelSource("path", str(path), _read_json(path / "config.json", "--model"), False)
    if _looks_like_hub_id(model):
        return ModelSource("hub", model, _hub_config(model), False)
    builtins = ", ".join(BUILTIN_CONFIGS)
    raise ModelError("--model", f"unknown model {model!r}: not a folder, a hub id (org/name) or a built-in ({builtins})")


def _hub_config(model_id: str) -> dict:
    """The hub model's config.json: from the local cache, or downloaded because the user asked for it."""
    try:
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(model_id).to_dict()
    except Exception as exc:  # noqa: BLE001 - any hub failure is the same answer to the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError("--model", f"cannot fetch {model_id} from the hub: {first[:160]}") from None


def spec_id(source: ModelSource) -> str:
    """A catalog-style slug for the benchmarked model: 'bench-' + its name, lowercased."""
    slug = re.sub(r"[^a-z0-9]+", "-", source.id.lower()).strip("-")
    return f"bench-{slug[-60:].strip('-') or 'model'}"


def model_spec(source: ModelSource):
    """The core's ModelSpec of this model, from its config.json (raises ConfigError when the core
    cannot read the architecture; the benchmark then runs without estimates)."""
    from ..hf_config import model_from_config

    return model_from_config(source.config, model_id=spec_id(source), name=source.id)
