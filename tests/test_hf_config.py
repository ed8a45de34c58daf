"""Importing Hugging Face config.json files: real configs match the catalog; bad ones name the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infercost import catalog
from infercost.errors import ConfigError
from infercost.hf_config import (
    MAX_CONFIG_BYTES,
    SUPPORTED_MODEL_TYPES,
    model_from_config,
    model_from_json_bytes,
)
from infercost.physics.params import active_params, total_params
from infercost.specs import ModelSpec

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
# Fixtures named after the catalog entry they describe (hand-written from the real config.json files).
CATALOG_FIXTURES = ("llama-3.1-8b", "llama-3.2-1b", "tinyllama-1.1b", "smollm2-135m", "mistral-7b",
                    "mixtral-8x7b", "qwen2.5-0.5b", "qwen2.5-7b", "qwen3-8b", "qwen3-30b-a3b",
                    "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b", "gemma-2-9b", "gemma-3-27b")
# Families without a catalog entry, checked against the published totals.
PUBLISHED_TOTALS = {
    "qwen1.5-moe-a2.7b": 14.3e9,  # qwen2_moe; Qwen blog: "14.3B parameters in total"
    "deepseek-v2-lite": 15.7e9,  # deepseek_v2; model card: 15.7B total
    "gemma-7b": 8.537680896e9,  # gemma; Gemma report Table 1: 786,432,000 + 7,751,248,896
    "gemma-3-1b": 1.0e9,  # gemma3_text; Gemma 3 report Table 1: 302M + 698M
}
SHAPE_FIELDS = ("layers", "hidden_size", "heads", "kv_heads", "head_dim", "ffn_size", "max_context_tokens",
                "tied_embeddings", "gated_mlp", "qkv_bias", "attention_output_bias", "qk_norm",
                "norms_per_layer", "sliding_window_tokens", "sliding_window_layers", "moe", "mla")


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def imported(name: str, **changes) -> ModelSpec:
    config = load(name)
    config.update(changes)
    return model_from_config(config, model_id=name)


def field_error(config, field: str, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        model_from_config(config, **kwargs)
    assert info.value.field == field, str(info.value)
    return info.value


# --- real configs ---------------------------------------------------------------------------------

def test_every_fixture_is_used():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(CATALOG_FIXTURES) | set(PUBLISHED_TOTALS)


def test_every_supported_model_type_has_a_fixture():
    covered = {load(p.stem)["model_type"] for p in FIXTURES.glob("*.json")}
    assert covered | {"qwen2_moe", "qwen3_moe", "deepseek_v2"} >= set(SUPPORTED_MODEL_TYPES)
    assert covered >= {"qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gemma3", "gemma3_text"}


@pytest.mark.parametrize("name", CATALOG_FIXTURES)
def test_import_matches_the_catalog_entry(name):
    spec = model_from_json_bytes((FIXTURES / f"{name}.json").read_bytes(), model_id=name)
    entry = catalog.model(name)
    assert total_params(spec) == pytest.approx(total_params(entry), rel=1e-3)
    assert active_params(spec) == pytest.approx(active_params(entry), rel=1e-3)
    assert {f: getattr(spec, f) for f in SHAPE_FIELDS} == {f: getattr(entry, f) for f in SHAPE_FIELDS}
    if name != "gemma-3-27b":  # its text_config omits vocab_size; transformers' default is 262208
        assert spec.vocab_size == entry.vocab_size
    if name != "smollm2-135m":  # model_type llama, but its own tokenizer
        assert spec.family == entry.family


@pytest.mark.parametrize("name", sorted(PUBLISHED_TOTALS))
def test_import_matches_the_published_total(name):
    assert total_params(imported(name)) == pytest.approx(PUBLISHED_TOTALS[name], rel=0.01)


def test_family_specifics():
    assert imported("qwen1.5-moe-a2.7b").moe.shared_experts == 4  # 5632 / 1408
    lite = imported("deepseek-v2-lite")
    assert lite.mla.q_lora_rank is None and lite.moe.dense_layers == 1 and lite.moe.shared_experts == 2
    gemma3_1b = imported("gemma-3-1b")
    assert (gemma3_1b.sliding_window_tokens, gemma3_1b.sliding_window_layers) == (512, 22)
    assert gemma3_1b.qk_norm and gemma3_1b.norms_per_layer == 4 and gemma3_1b.tied_embeddings
    assert imported("gemma-7b").tied_embeddings and imported("gemma-7b").norms_per_layer == 2


# --- defaults -------------------------------------------------------------------------------------

def test_head_dim_and_kv_heads_defaults():
    config = load("llama-3.1-8b")
    assert "head_dim" not in config
    assert imported("llama-3.1-8b").head_dim == 4096 // 32
    del config["num_key_value_heads"]
    assert model_from_config(config).kv_heads == 32
    assert imported("llama-3.1-8b", head_dim=None).head_dim == 128  # null reads as absent


def test_tied_embedding_defaults_per_family():
    llama, gemma2, qwen = load("llama-3.1-8b"), load("gemma-2-9b"), load("qwen2.5-0.5b")
    for config in (llama, gemma2, qwen):
        config.pop("tie_word_embeddings", None)
    assert not model_from_config(llama).tied_embeddings
    assert model_from_config(gemma2).tied_embeddings
    assert not model_from_config(qwen).tied_embeddings
    assert imported("qwen2.5-0.5b").tied_embeddings  # small Qwen2.5 models say so in their config
    gemma3 = load("gemma-3-27b")
    gemma3["tie_word_embeddings"] = False  # the top level of a nested config counts
    assert not model_from_config(gemma3).tied_embeddings


def test_ids_and_names():
    config = load("llama-3.1-8b")
    assert model_from_config(config).id == "custom-llama"
    config["_name_or_path"] = "meta-llama/Llama-3.1-8B"
    spec = model_from_config(config)
    assert (spec.id, spec.name, spec.family) == ("llama-3.1-8b", "Llama-3.1-8B", "llama")
    assert model_from_config(config, model_id="mine", name="My model").name == "My model"


# --- sliding windows ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, changes, window, sliding", [
    ("mistral-7b", {}, 4096, 32),
    ("mistral-7b", {"sliding_window": None}, None, 0),
    ("mixtral-8x7b", {"sliding_window": 4096}, 4096, 32),
    ("qwen2.5-7b", {}, None, 0),
    ("qwen2.5-7b", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 20}, 4096, 8),
    ("qwen2.5-7b", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 28}, None, 0),
    ("qwen3-8b", {"use_sliding_window": True, "sliding_window": 4096,
                  "layer_types": ["full_attention"] * 30 + ["sliding_attention"] * 6}, 4096, 6),
    ("gpt-oss-20b", {"layer_types": None}, 128, 12),
    ("gpt-oss-20b", {"layer_types": None, "sliding_window": None}, 128, 12),  # transformers' default
    ("gemma-2-9b", {}, 4096, 21),
    ("gemma-3-1b", {"sliding_window_pattern": None}, 512, 22),
    ("gemma-3-1b", {"sliding_window_pattern": 2}, 512, 13),
    ("gemma-3-1b", {"layer_types": ["sliding_attention"] * 20 + ["full_attention"] * 6}, 512, 20),
])
def test_sliding_windows(name, changes, window, sliding):
    spec = imported(name, **changes)
    assert (spec.sliding_window_tokens, spec.sliding_window_layers) == (window, sliding)


def test_gemma3_nested_window_pattern():
    spec = imported("gemma-3-27b")
    assert (spec.sliding_window_tokens, spec.sliding_window_layers, spec.layers) == (1024, 52, 62)


# --- experts --------------------------------------------------------------------------------------

def test_qwen_moe_dense_layers():
    spec = imported("qwen3-30b-a3b", mlp_only_layers=[0, 1, 47, 99])
    assert spec.moe.dense_layers == 3
    spec = imported("qwen3-30b-a3b", decoder_sparse_step=2)
    assert spec.moe.dense_layers == 24


def test_deepseek_moe_layer_frequency():
    spec = imported("deepseek-v3", moe_layer_freq=2, first_k_dense_replace=0)
    assert spec.moe.dense_layers == 30  # layers 0, 2, ..., 60 are MoE
    assert imported("deepseek-v3", n_routed_experts=None).moe is None


def test_gpt_oss_experts_per_token_spellings():
    config = load("gpt-oss-20b")
    del config["experts_per_token"]
    assert model_from_config(config).moe.experts_per_token == 4
    del config["num_experts_per_tok"]
    field_error(config, "num_experts_per_tok")


# --- malformed configs ----------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["num_hidden_layers", "hidden_size", "num_attention_heads",
                                   "intermediate_size", "vocab_size", "max_position_embeddings"])
def test_missing_required_field(field):
    config = load("llama-3.1-8b")
    del config[field]
    assert field_error(config, field).message == "missing"


@pytest.mark.parametrize("value, message", [
    ("32", "must be an integer"), (True, "must be an integer"), (32.0, "must be an integer"),
    (float("nan"), "must be an integer"), (None, "missing"), (-1, "between 1"), (0, "between 1"),
    (2**40, "between 1"), ([32], "must be an integer"), ({"n": 32}, "must be an integer"),
])
def test_wrong_values_name_the_field(value, message):
    config = load("llama-3.1-8b")
    config["num_hidden_layers"] = value
    assert message in field_error(config, "num_hidden_layers").message


@pytest.mark.parametrize("name, field, value", [
    ("llama-3.1-8b", "tie_word_embeddings", "false"), ("llama-3.1-8b", "attention_bias", 0),
    ("qwen2.5-7b", "use_sliding_window", "yes"), ("mistral-7b", "sliding_window", -4096),
    ("mixtral-8x7b", "num_local_experts", 0), ("mixtral-8x7b", "num_experts_per_tok", 9),
    ("qwen3-30b-a3b", "mlp_only_layers", "none"), ("qwen3-30b-a3b", "decoder_sparse_step", 0),
    ("qwen1.5-moe-a2.7b", "shared_expert_intermediate_size", 1000), ("deepseek-v3", "kv_lora_rank", "512"),
    ("deepseek-v3", "q_lora_rank", 0), ("deepseek-v3", "first_k_dense_replace", -1),
    ("gpt-oss-20b", "layer_types", ["sliding_attention"] * 3),
    ("gpt-oss-20b", "layer_types", ["chunked_attention"] * 24), ("gpt-oss-20b", "layer_types", "alternating"),
    ("llama-3.1-8b", "num_key_value_heads", 7), ("llama-3.1-8b", "num_attention_heads", 8192),
    ("llama-3.1-8b", "head_dim", 0),
])
def test_family_fields_name_the_field(name, field, value):
    config = load(name)
    config[field] = value
    field_error(config, field)


def test_nested_fields_carry_their_prefix():
    config = load("gemma-3-27b")
    config["text_config"]["num_hidden_layers"] = "62"
    field_error(config, "text_config.num_hidden_layers")
    config = load("gemma-3-27b")
    del config["text_config"]
    field_error(config, "text_config")
    config = load("gemma-3-27b")
    config["tie_word_embeddings"] = "yes"
    field_error(config, "tie_word_embeddings")


def test_unsupported_or_missing_model_type():
    config = load("llama-3.1-8b")
    config["model_type"] = "bert"
    error = field_error(config, "model_type")
    assert "unsupported 'bert'" in error.message and "llama" in error.message and "gemma3" in error.message
    config["model_type"] = 7
    field_error(config, "model_type")
    del config["model_type"]
    field_error(config, "model_type")


@pytest.mark.parametrize("config", [[], "llama", None, 42])
def test_config_must_be_an_object(config):
    field_error(config, "config")


@pytest.mark.parametrize("model_id", ["Llama 8B", "", "a/b", "x" * 101, 42])
def test_bad_model_id(model_id):
    field_error(load("llama-3.1-8b"), "model_id", model_id=model_id)


@pytest.mark.parametrize("name", ["", "   ", 42, "x" * 201])
def test_bad_name(name):
    field_error(load("llama-3.1-8b"), "name", name=name)


# --- bytes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, message", [
    (b"{not json", "not valid JSON"), (b"", "not valid JSON"), (b"[1, 2]", "must be a JSON object"),
    (b'"llama"', "must be a JSON object"), (b"\xff\xfe\x00", "not UTF-8"),
    (b'{"num_hidden_layers": NaN}', "NaN is not valid JSON"), (b'{"a": Infinity}', "Infinity"),
    (b'{"a": ' * 100 + b"1" + b"}" * 100, "nested more than"),
    (b"[" * 200_000 + b"]" * 200_000, "nested more than"),
    (b" " * (MAX_CONFIG_BYTES + 1), "too large"),
])
def test_bad_bytes(data, message):
    with pytest.raises(ConfigError, match=message) as info:
        model_from_json_bytes(data)
    assert info.value.field == "config"


def test_brackets_inside_strings_do_not_count_as_nesting():
    config = load("llama-3.1-8b")
    config["comment"] = "[[[[{{{{" * 20 + '\\"' + "]]]]"
    spec = model_from_json_bytes(json.dumps(config).encode(), model_id="x")
    assert spec.layers == 32


def test_bytes_must_be_bytes():
    with pytest.raises(ConfigError):
        model_from_json_bytes("{}")  # type: ignore[arg-type]


def test_byte_order_mark_is_accepted():
    data = b"\xef\xbb\xbf" + (FIXTURES / "llama-3.1-8b.json").read_bytes()
    assert model_from_json_bytes(data, model_id="x").layers == 32


# --- properties -----------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
FIXTURE_NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(FIXTURE_NAMES), data=st.data())
def test_any_corruption_gives_a_spec_or_a_config_error(name, data):
    config = load(name)
    target = config["text_config"] if "text_config" in config else config
    keys = data.draw(st.lists(st.sampled_from(sorted(target)), min_size=1, max_size=3, unique=True))
    for key in keys:
        target[key] = data.draw(JSON_VALUES)
    try:
        spec = model_from_config(copy.deepcopy(config), model_id="fuzz")
    except ConfigError as error:
        prefix = "text_config." if target is not config else ""
        assert error.field.startswith(prefix) or error.field in {"model_type", "tie_word_embeddings"}
    else:
        assert total_params(spec) > 0


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_spec_or_a_config_error(data):
    try:
        model_from_json_bytes(data)
    except ConfigError as error:
        assert error.field in {"config", "model_type"} or error.message
