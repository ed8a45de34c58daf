"""The catalog: models and accelerators from the package's data/*.toml, loaded once, checked loudly.

The data files hold facts in the units their keys name (TFLOP/s, GB, TB/s, GB/s both directions);
this module converts them to base units (FLOP/s, bytes, bytes/s one direction) via units.py.
A broken entry fails at load with the file, the entry id and the field.
"""

from __future__ import annotations

import math
import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from .errors import InferCostError, UnknownNameError
from .physics.params import active_params, total_params
from .specs import GpuSpec, MlaSpec, ModelSpec, MoeSpec, NumberFormat, PeakFlops
from .units import GB, TB, TFLOP

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

_MODEL_POSITIVE_INTS = ("layers", "hidden_size", "heads", "kv_heads", "head_dim", "ffn_size",
                        "vocab_size", "max_context_tokens")
_MODEL_COUNTS = ("norms_per_layer", "sliding_window_layers")  # zero allowed
_MODEL_BOOLS = ("tied_embeddings", "gated_mlp", "qkv_bias", "attention_output_bias", "qk_norm")
_MODEL_STRINGS = ("id", "name", "family", "source")
_MODEL_OPTIONAL = {"sliding_window_tokens", "published_params", "published_active_params",
                   "published_params_source", "notes", "moe", "mla"}
_MOE_POSITIVE_INTS = ("experts", "experts_per_token", "expert_ffn_size")
_MLA_POSITIVE_INTS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
_PEAK_FORMATS = ("fp32", "bf16", "fp8", "int8", "fp4")
_GPU_STRINGS = ("id", "name", "vendor", "link_name", "price_as_of", "price_source")
_GPU_POSITIVE_NUMBERS = ("memory_gb", "memory_bandwidth_tb_per_s", "price_per_gpu_hour_usd",
                         "bf16_tflop_per_s")
_GPU_OPTIONAL_NUMBERS = ("fp32_tflop_per_s", "fp8_tflop_per_s", "int8_tflop_per_s",
                         "fp4_tflop_per_s", "link_bandwidth_gb_per_s_bidirectional")


class CatalogDataError(InferCostError):
    """An entry of the package's data files is missing a field or holds a wrong value."""


# --- checks on raw TOML values -------------------------------------------------------------------

def _fail(where: str, key: str, message: str) -> CatalogDataError:
    return CatalogDataError(f"{where}.{key}", message)


def _positive_int(entry: dict, key: str, where: str, minimum: int = 1) -> int:
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, key, f"must be an integer, got {value!r}")
    if value < minimum:
        raise _fail(where, key, f"must be at least {minimum}, got {value}")
    return value


def _positive_number(entry: dict, key: str, where: str) -> float:
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, key, f"must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise _fail(where, key, f"must be a positive finite number, got {value}")
    return float(value)


def _bool(entry: dict, key: str, where: str) -> bool:
    if not isinstance(entry[key], bool):
        raise _fail(where, key, f"must be true or false, got {entry[key]!r}")
    return entry[key]


def _string(entry: dict, key: str, where: str) -> str:
    if not isinstance(entry[key], str) or not entry[key].strip():
        raise _fail(where, key, f"must be a non-empty string, got {entry[key]!r}")
    return entry[key]


def _check_keys(entry: Any, where: str, required: tuple[str, ...], optional: set[str]) -> None:
    if not isinstance(entry, dict):
        raise CatalogDataError(where, f"must be a table, got {type(entry).__name__}")
    for key in required:
        if key not in entry:
            raise _fail(where, key, "missing")
    unknown = sorted(set(entry) - set(required) - optional)
    if unknown:
        raise _fail(where, unknown[0], "unknown key (typo?)")


# --- models ---------------------------------------------------------------------------------------

def model_problem(m: ModelSpec) -> tuple[str, str] | None:
    """The first inconsistency of a model as (field, message), or None when sound.

    Checks any ModelSpec (catalog, imported or built by a caller): integer fields are integers in
    range, then the fields agree with each other.
    """
    counts = [(f, getattr(m, f), 1) for f in _MODEL_POSITIVE_INTS]
    counts += [(f, getattr(m, f), 0) for f in _MODEL_COUNTS]
    if m.sliding_window_tokens is not None:
        counts.append(("sliding_window_tokens", m.sliding_window_tokens, 1))
    if m.moe is not None:
        counts += [(f"moe.{f}", getattr(m.moe, f), 1) for f in _MOE_POSITIVE_INTS]
        counts += [(f"moe.{f}", getattr(m.moe, f), 0) for f in ("shared_experts", "dense_layers")]
    if m.mla is not None:
        counts += [(f"mla.{f}", getattr(m.mla, f), 1) for f in _MLA_POSITIVE_INTS]
    for name, value, minimum in counts:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            return name, f"must be an integer of at least {minimum}, got {value!r}"
    if not isinstance(m.id, str) or not SLUG_PATTERN.match(m.id):
        return "id", f"must be a lowercase slug (a-z, 0-9, '-', '.'), got {m.id!r}"
    if m.kv_heads > m.heads or m.heads % m.kv_heads:
        return "kv_heads", f"{m.kv_heads} must divide heads ({m.heads})"
    if m.sliding_window_layers > m.layers:
        return "sliding_window_layers", f"{m.sliding_window_layers} exceeds layers ({m.layers})"
    if m.sliding_window_layers and m.sliding_window_tokens is None:
        return "sliding_window_tokens", f"missing, yet {m.sliding_window_layers} layers slide"
    if m.sliding_window_tokens is not None and not m.sliding_window_layers:
        return "sliding_window_layers", "must be positive when sliding_window_tokens is set"
    if m.moe is not None:
        if m.moe.experts_per_token > m.moe.experts:
            return "moe.experts_per_token", f"{m.moe.experts_per_token} exceeds experts ({m.moe.experts})"
        if m.moe.dense_layers >= m.layers:
            return "moe.dense_layers", f"{m.moe.dense_layers} leaves no MoE layer of {m.layers}"
    if m.published_active_params and not m.published_params:
        return "published_active_params", "needs published_params"
    if m.published_active_params and m.published_active_params > m.published_params:
        return "published_active_params", "exceeds published_params"
    return None


MIN_RATE = 1e6  # FLOP/s, bytes/s and bytes below a million describe no accelerator (and overflow the times)


def gpu_problem(g: GpuSpec) -> tuple[str, str] | None:
    """The first implausible value of an accelerator (catalog, measured or built by a caller) as
    (field, message), or None when sound: every rate and size finite and at least MIN_RATE."""
    numbers = [(f"peak.{f}_flop_per_s", g.peak.get(NumberFormat(f))) for f in _PEAK_FORMATS]
    if all(value is None for _, value in numbers[:2]):
        return "peak.bf16_flop_per_s", "needs a 16-bit or 32-bit peak"
    numbers += [("memory_bytes", g.memory_bytes), ("memory_bandwidth_bytes_per_s", g.memory_bandwidth_bytes_per_s),
                ("link_bandwidth_bytes_per_s", g.link_bandwidth_bytes_per_s)]
    for name, value in numbers:
        if value is None and name not in ("memory_bytes", "memory_bandwidth_bytes_per_s"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value < MIN_RATE:
            return name, f"must be a finite number of at least {MIN_RATE:g}, got {value!r}"
    price = g.price_per_gpu_hour_usd
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                              or not math.isfinite(price) or price <= 0):
        return "price_per_gpu_hour_usd", f"must be a positive finite number or null, got {price!r}"
    return None


def _moe_from_entry(entry: Any, where: str) -> MoeSpec:
    _check_keys(entry, where, _MOE_POSITIVE_INTS + ("shared_experts", "dense_layers", "expert_bias"), set())
    ints = {k: _positive_int(entry, k, where) for k in _MOE_POSITIVE_INTS}
    counts = {k: _positive_int(entry, k, where, minimum=0) for k in ("shared_experts", "dense_layers")}
    return MoeSpec(**ints, **counts, expert_bias=_bool(entry, "expert_bias", where))


def _mla_from_entry(entry: Any, where: str) -> MlaSpec:
    _check_keys(entry, where, _MLA_POSITIVE_INTS, {"q_lora_rank"})
    ints = {k: _positive_int(entry, k, where) for k in _MLA_POSITIVE_INTS}
    q_lora = _positive_int(entry, "q_lora_rank", where) if "q_lora_rank" in entry else None
    return MlaSpec(**ints, q_lora_rank=q_lora)


def model_from_entry(entry: Any, where: str = "models.toml") -> ModelSpec:
    """One [[model]] table -> ModelSpec, every field checked; raises CatalogDataError naming it."""
    required = _MODEL_STRINGS + _MODEL_POSITIVE_INTS + _MODEL_COUNTS + _MODEL_BOOLS
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        where = f"{where}[{entry['id']}]"
    _check_keys(entry, where, required, _MODEL_OPTIONAL)
    values: dict[str, Any] = {k: _string(entry, k, where) for k in _MODEL_STRINGS}
    values |= {k: _positive_int(entry, k, where) for k in _MODEL_POSITIVE_INTS}
    values |= {k: _positive_int(entry, k, where, minimum=0) for k in _MODEL_COUNTS}
    values |= {k: _bool(entry, k, where) for k in _MODEL_BOOLS}
    if "sliding_window_tokens" in entry:
        values["sliding_window_tokens"] = _positive_int(entry, "sliding_window_tokens", where)
    for key in ("published_params", "published_active_params"):
        if key in entry:
            values[key] = _positive_number(entry, key, where)
    notes = [_string(entry, "notes", where)] if "notes" in entry else []
    if "published_params_source" in entry:
        notes.append("Published count: " + _string(entry, "published_params_source", where) + ".")
    values["notes"] = " ".join(notes)
    if "moe" in entry:
        values["moe"] = _moe_from_entry(entry["moe"], f"{where}.moe")
    if "mla" in entry:
        values["mla"] = _mla_from_entry(entry["mla"], f"{where}.mla")
    spec = ModelSpec(**values)
    problem = model_problem(spec)
    if problem is not None:
        raise _fail(where, *problem)
    return spec


# --- accelerators ---------------------------------------------------------------------------------

def gpu_from_entry(entry: Any, where: str = "gpus.toml") -> GpuSpec:
    """One [[gpu]] table -> GpuSpec in base units; raises CatalogDataError naming the field."""
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        where = f"{where}[{entry['id']}]"
    _check_keys(entry, where, _GPU_STRINGS + _GPU_POSITIVE_NUMBERS + ("sources",),
                set(_GPU_OPTIONAL_NUMBERS) | {"notes"})
    text = {k: _string(entry, k, where) for k in _GPU_STRINGS}
    if not SLUG_PATTERN.match(text["id"]):
        raise _fail(where, "id", f"must be a lowercase slug, got {text['id']!r}")
    number = {k: _positive_number(entry, k, where) for k in _GPU_POSITIVE_NUMBERS}
    number |= {k: _positive_number(entry, k, where) for k in _GPU_OPTIONAL_NUMBERS if k in entry}
    sources = entry["sources"]
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s for s in sources):
        raise _fail(where, "sources", "must be a non-empty list of strings")
    peak = PeakFlops(**{f"{f}_flop_per_s": number[f"{f}_tflop_per_s"] * TFLOP
                        for f in _PEAK_FORMATS if f"{f}_tflop_per_s" in number})
    link = number.get("link_bandwidth_gb_per_s_bidirectional")
    return GpuSpec(
        id=text["id"], name=text["name"], vendor=text["vendor"], peak=peak,
        memory_bytes=number["memory_gb"] * GB,
        memory_bandwidth_bytes_per_s=number["memory_bandwidth_tb_per_s"] * TB,
        link_bandwidth_bytes_per_s=None if link is None else link * GB / 2,  # one direction
        link_name=text["link_name"],
        price_per_gpu_hour_usd=number["price_per_gpu_hour_usd"],
        price_source=text["price_source"], price_as_of=text["price_as_of"],
        sources=tuple(sources), notes=_string(entry, "notes", where) if "notes" in entry else "",
    )


# --- files ----------------------------------------------------------------------------------------

def _entries(filename: str, table: str) -> list[Any]:
    raw = resources.files("infercost").joinpath("data", filename).read_bytes()
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CatalogDataError(filename, f"not valid TOML: {exc}") from exc
    entries = document.get(table)
    if not isinstance(entries, list) or not entries:
        raise CatalogDataError(filename, f"needs at least one [[{table}]] table")
    return entries


def _by_id(specs: list, filename: str) -> dict:
    out: dict = {}
    for spec in specs:
        if spec.id in out:
            raise CatalogDataError(f"{filename}[{spec.id}].id", "duplicate id")
        out[spec.id] = spec
    return out


@cache
def models() -> dict[str, ModelSpec]:
    """Every catalog model by id, in file order."""
    return _by_id([model_from_entry(e) for e in _entries("models.toml", "model")], "models.toml")


@cache
def gpus() -> dict[str, GpuSpec]:
    """Every catalog accelerator by id, in file order."""
    return _by_id([gpu_from_entry(e) for e in _entries("gpus.toml", "gpu")], "gpus.toml")


def _lookup(kind: str, table: dict, key: str):
    if isinstance(key, str) and key in table:
        return table[key]
    raise UnknownNameError(kind, f"unknown {kind} {key!r}; known: {', '.join(table)}")


def model(model_id: str) -> ModelSpec:
    """The catalog model `model_id`; UnknownNameError("model", ...) lists the known ids."""
    return _lookup("model", models(), model_id)


def gpu(gpu_id: str) -> GpuSpec:
    """The catalog accelerator `gpu_id`; UnknownNameError("gpu", ...) lists the known ids."""
    return _lookup("gpu", gpus(), gpu_id)


def can_draft(draft: ModelSpec, target: ModelSpec) -> bool:
    """Speculative decoding (Leviathan et al. 2023, arXiv 2211.17192) needs a draft with the target's
    tokenizer (`family` is the tokenizer lineage) that is cheaper per token: fewer total and fewer
    active parameters, so a dense 8B never drafts for a 3B-active MoE."""
    return (bool(target.family) and draft.family == target.family and draft.id != target.id
            and total_params(draft) < total_params(target) and active_params(draft) < active_params(target))


def drafts_for(target: ModelSpec) -> list[ModelSpec]:
    """Catalog models that can draft for `target`, smallest first."""
    return sorted((m for m in models().values() if can_draft(m, target)), key=total_params)


def default_draft_model(target: ModelSpec) -> ModelSpec | None:
    """The smallest catalog model that can draft for `target`, if any."""
    return next(iter(drafts_for(target)), None)
