"""Import a Hugging Face config.json as a ModelSpec.

Field meanings and defaults follow transformers' configuration_*.py / modeling_*.py for each
model_type. Every value is checked before anything is built: a malformed or unsupported config
raises ConfigError naming the config field (nested ones as "text_config.hidden_size").
"""

from __future__ import annotations

import json
import re
from typing import Any

from .catalog import SLUG_PATTERN, model_problem
from .errors import ConfigError
from .hf_families import FAMILIES, MAX_INT, SUPPORTED_MODEL_TYPES, Config, describe, tokenizer_family
from .specs import ModelSpec

MAX_CONFIG_BYTES = 1 << 20  # real config.json files are a few KB
MAX_JSON_DEPTH = 32
__all__ = ["MAX_CONFIG_BYTES", "MAX_INT", "SUPPORTED_MODEL_TYPES", "model_from_config", "model_from_json_bytes"]
_SPEC_TO_CONFIG_FIELD = {"kv_heads": "num_key_value_heads", "sliding_window_tokens": "sliding_window",
                         "sliding_window_layers": "layer_types", "moe.dense_layers": "num_hidden_layers",
                         "moe.experts_per_token": "num_experts_per_tok"}


def _model_type(config: dict) -> tuple[str, Config]:
    """The family's model_type and the config dict its fields live in."""
    model_type = config.get("model_type")
    if model_type is None:
        raise ConfigError("model_type", "missing")
    if not isinstance(model_type, str):
        raise ConfigError("model_type", f"must be a string, got {describe(model_type)}")
    if model_type == "gemma3":
        text = config.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError("text_config", "must be an object holding the gemma3_text fields")
        return "gemma3_text", Config(text, "text_config.")
    if model_type not in FAMILIES:
        raise ConfigError("model_type", f"unsupported {model_type[:40]!r}; supported: "
                          f"{', '.join(SUPPORTED_MODEL_TYPES)}")
    return model_type, Config(config)


def _names(config: dict, model_type: str, model_id: str | None, name: str | None) -> tuple[str, str]:
    path = config.get("_name_or_path")
    base = path.rstrip("/").rsplit("/", 1)[-1] if isinstance(path, str) and path.strip("/ ") else ""
    if model_id is None:
        slug = re.sub(r"[^a-z0-9.]+", "-", base.lower()).strip("-.")
        model_id = slug[:80] if SLUG_PATTERN.match(slug[:80]) else "custom-" + model_type.replace("_", "-")
    if not isinstance(model_id, str) or len(model_id) > 100 or not SLUG_PATTERN.match(model_id):
        raise ConfigError("model_id", f"must be a lowercase slug (a-z, 0-9, '-', '.'), got {model_id!r}")
    name = (base[:100] or model_id) if name is None else name
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ConfigError("name", "must be a non-empty string of at most 200 characters")
    return model_id, name


def model_from_config(config: dict, model_id: str | None = None, name: str | None = None) -> ModelSpec:
    """A parsed config.json -> ModelSpec; raises ConfigError naming the field at fault."""
    if not isinstance(config, dict):
        raise ConfigError("config", f"must be a JSON object, got {type(config).__name__}")
    model_type, c = _model_type(config)
    family = FAMILIES[model_type]
    c.defaults = dict(family.defaults)
    layers, hidden, heads = c.int("num_hidden_layers"), c.int("hidden_size"), c.int("num_attention_heads")
    if heads > hidden:
        raise ConfigError(c.field("num_attention_heads"), f"{heads} exceeds hidden_size ({hidden})")
    tie_default = family.tied_default
    if c.prefix:  # a nested text_config may leave the tie to the top level
        tie_default = Config(config).bool("tie_word_embeddings", tie_default)
    values: dict[str, Any] = {
        "layers": layers, "hidden_size": hidden, "heads": heads,
        "kv_heads": c.int("num_key_value_heads", heads),
        "head_dim": c.int("head_dim", hidden // heads),
        "ffn_size": c.int("intermediate_size"), "vocab_size": c.int("vocab_size"),
        "max_context_tokens": c.int("max_position_embeddings"),
        "tied_embeddings": c.bool("tie_word_embeddings", tie_default),
        **family.attention(c), **dict(family.fixed), **family.window(c, layers), **family.moe(c, layers),
        **family.latent(c),  # DeepSeek: replaces head_dim with v_head_dim
    }
    model_id, name = _names(config, model_type, model_id, name)
    spec = ModelSpec(id=model_id, name=name, family=tokenizer_family(family, values["vocab_size"]),
                     source="imported Hugging Face config.json",
                     notes=f"Imported from a config.json of model_type {model_type}; shapes only, "
                     "small extras (router score biases, attention sinks, gates) are not counted.", **values)
    problem = model_problem(spec)
    if problem is not None:
        field, message = problem
        raise ConfigError(c.field(_SPEC_TO_CONFIG_FIELD.get(field, field)), message)
    return spec


def _json_depth(text: str) -> int:
    """Deepest nesting of [ and { outside strings, found without recursion."""
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", re.sub(r'"(?:\\.|[^"\\])*"', '""', text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _reject_constant(token: str) -> Any:
    raise ConfigError("config", f"{token} is not valid JSON")


def model_from_json_bytes(data: bytes, model_id: str | None = None, name: str | None = None) -> ModelSpec:
    """The bytes of a config.json -> ModelSpec; not JSON, not an object or too deep -> ConfigError("config")."""
    if not isinstance(data, (bytes, bytearray)):
        raise ConfigError("config", f"must be bytes, got {type(data).__name__}")
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError("config", f"too large: {len(data)} bytes, at most {MAX_CONFIG_BYTES}")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError("config", "not UTF-8 text") from exc
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise ConfigError("config", f"nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError("config", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise ConfigError("config", "nested too deeply") from exc
    if not isinstance(parsed, dict):
        raise ConfigError("config", f"must be a JSON object, got {type(parsed).__name__}")
    return model_from_config(parsed, model_id=model_id, name=name)
