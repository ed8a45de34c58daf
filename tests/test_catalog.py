"""The catalog: every entry loads, matches its published and reference figures, and fails loudly when broken."""

from __future__ import annotations

import copy
import dataclasses
import tomllib
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infercost import catalog
from infercost.catalog import CatalogDataError, gpu_from_entry, model_from_entry
from infercost.errors import UnknownNameError
from infercost.physics.params import active_params, total_params
from infercost.specs import NumberFormat

# Parameter counts computed from the shapes in /work/shared/reference/models.json
# (params_total_computed, params_active_computed), copied here so the tests run on a fresh checkout.
REFERENCE_PARAMS = {
    "llama-3.1-8b": (8030261248, 8030261248),
    "llama-3.1-70b": (70553706496, 70553706496),
    "llama-3.1-405b": (405853388800, 405853388800),
    "llama-3.2-1b": (1235814400, 1235814400),
    "llama-3.2-3b": (3212749824, 3212749824),
    "qwen2.5-0.5b": (494032768, 494032768),
    "qwen2.5-7b": (7615616512, 7615616512),
    "qwen2.5-72b": (72706203648, 72706203648),
    "qwen3-8b": (8190735360, 8190735360),
    "qwen3-32b": (32762123264, 32762123264),
    "qwen3-235b-a22b": (235093634560, 22190763520),
    "qwen3-30b-a3b": (30532122624, 3353032704),
    "mistral-7b": (7241732096, 7241732096),
    "mixtral-8x7b": (46702792704, 12879925248),
    "gpt-oss-120b": (116789048640, 5710443840),  # the reference leaves out biases (~0.03%)
    "gpt-oss-20b": (20907927360, 4186416960),
    "gemma-2-9b": (9241705984, 9241705984),
    "gemma-3-27b": (27009002240, 27009002240),
    "smollm2-135m": (134515008, 134515008),
    "smollm2-360m": (361821120, 361821120),
    "smollm2-1.7b": (1711376384, 1711376384),
    "tinyllama-1.1b": (1100048384, 1100048384),
    "deepseek-v3": (671026404352, 37552282624),
}
# 16-bit KV bytes per token over all layers (reference kv_bytes_per_token_bf16_full_attention).
REFERENCE_KV_BYTES_16BIT = {
    "llama-3.1-8b": 131072, "llama-3.1-70b": 327680, "llama-3.1-405b": 516096, "llama-3.2-1b": 32768,
    "llama-3.2-3b": 114688, "qwen2.5-0.5b": 12288, "qwen2.5-7b": 57344, "qwen2.5-72b": 327680,
    "qwen3-8b": 147456, "qwen3-32b": 262144, "qwen3-235b-a22b": 192512, "qwen3-30b-a3b": 98304,
    "mistral-7b": 131072, "mixtral-8x7b": 131072, "gpt-oss-120b": 73728, "gpt-oss-20b": 49152,
    "gemma-2-9b": 344064, "gemma-3-27b": 507904, "smollm2-135m": 23040, "smollm2-360m": 40960,
    "smollm2-1.7b": 196608, "tinyllama-1.1b": 22528,
}
REQUIRED_GPUS = ("h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l40s", "l4",
                 "rtx-4090", "rtx-5090", "mi300x", "mi325x", "tpu-v5e", "tpu-v6e", "gaudi-3")
# Accelerators with no price in /work/shared/reference/prices.json: their price must say so.
UNPRICED_IN_REFERENCE = ("gb200", "rtx-4090", "rtx-5090", "mi325x", "mi355x", "tpu-v5e", "tpu-v6e", "gaudi-3")


def _raw_entries(filename: str, table: str) -> list[dict]:
    text = resources.files("infercost").joinpath("data", filename).read_text("utf-8")
    return tomllib.loads(text)[table]


# --- models ---------------------------------------------------------------------------------------

def test_catalog_holds_the_required_models_in_file_order():
    models = catalog.models()
    assert len(models) >= 20
    assert set(REFERENCE_PARAMS) <= set(models)
    assert list(models) == [e["id"] for e in _raw_entries("models.toml", "model")]
    assert all(key == spec.id and catalog.SLUG_PATTERN.match(key) for key, spec in models.items())


def test_models_load_once():
    assert catalog.models() is catalog.models()
    assert catalog.gpus() is catalog.gpus()


@pytest.mark.parametrize("model_id", sorted(REFERENCE_PARAMS))
def test_parameter_count_matches_the_reference_computation(model_id):
    spec = catalog.model(model_id)
    total, active = REFERENCE_PARAMS[model_id]
    assert total_params(spec) == pytest.approx(total, rel=1e-3)
    assert active_params(spec) == pytest.approx(active, rel=1e-3)


@pytest.mark.parametrize("spec", list(catalog.models().values()), ids=lambda m: m.id)
def test_parameter_count_is_within_one_percent_of_the_published_one(spec):
    if spec.published_params is None:
        pytest.skip("no published count")
    assert total_params(spec) == pytest.approx(spec.published_params, rel=0.01)
    assert "Published count:" in spec.notes  # every published figure carries its source


def test_design_checks_for_llama_3_1():
    assert total_params(catalog.model("llama-3.1-70b")) == pytest.approx(70.55e9, rel=1e-3)
    assert total_params(catalog.model("llama-3.1-8b")) == pytest.approx(8.03e9, rel=1e-3)


@pytest.mark.parametrize("model_id", sorted(REFERENCE_KV_BYTES_16BIT))
def test_kv_shapes_match_the_reference(model_id):
    m = catalog.model(model_id)
    assert 2 * m.layers * m.kv_heads * m.head_dim * 2 == REFERENCE_KV_BYTES_16BIT[model_id]


def test_deepseek_v3_uses_latent_attention():
    m = catalog.model("deepseek-v3")
    assert m.mla is not None and m.moe is not None
    assert (m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, m.mla.qk_nope_head_dim) == (512, 64, 128)
    assert (m.mla.v_head_dim, m.mla.q_lora_rank) == (128, 1536)
    assert (m.moe.experts, m.moe.experts_per_token, m.moe.expert_ffn_size) == (256, 8, 2048)
    assert (m.moe.shared_experts, m.moe.dense_layers, m.ffn_size) == (1, 3, 18432)
    assert m.layers * (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * 2 == 70272
    assert m.max_context_tokens == 163840


def test_architecture_flags():
    models = catalog.models()
    for m in models.values():
        if m.id.startswith("qwen2.5"):
            assert m.qkv_bias and not m.attention_output_bias and not m.qk_norm
        if m.id.startswith("qwen3"):
            assert m.qk_norm and not m.qkv_bias
        if m.id.startswith("gemma"):
            assert m.norms_per_layer == 4 and m.gated_mlp and m.tied_embeddings
        if m.id.startswith("gpt-oss"):
            assert m.qkv_bias and m.attention_output_bias and m.moe.expert_bias
            assert (m.sliding_window_tokens, m.sliding_window_layers) == (128, m.layers // 2)
    assert models["gemma-3-27b"].qk_norm


@pytest.mark.parametrize("model_id, window, sliding_layers", [
    ("mistral-7b", 4096, 32), ("gemma-2-9b", 4096, 21), ("gemma-3-27b", 1024, 52),
    ("gpt-oss-20b", 128, 12), ("gpt-oss-120b", 128, 18), ("llama-3.1-70b", None, 0),
    ("mixtral-8x7b", None, 0), ("qwen2.5-7b", None, 0),
])
def test_sliding_windows(model_id, window, sliding_layers):
    m = catalog.model(model_id)
    assert (m.sliding_window_tokens, m.sliding_window_layers) == (window, sliding_layers)


def test_every_model_names_its_source_and_family():
    for m in catalog.models().values():
        assert m.source.startswith("https://") and m.family and m.name


# --- accelerators ---------------------------------------------------------------------------------

def test_catalog_holds_the_required_accelerators():
    gpus = catalog.gpus()
    assert len(gpus) >= 15
    assert set(REQUIRED_GPUS) <= set(gpus)
    assert all(key == spec.id and catalog.SLUG_PATTERN.match(key) for key, spec in gpus.items())


@pytest.mark.parametrize("spec", list(catalog.gpus().values()), ids=lambda g: g.id)
def test_every_accelerator_is_complete(spec):
    assert spec.memory_bytes > 0 and spec.memory_bandwidth_bytes_per_s > 0
    assert spec.peak.get(NumberFormat.BF16) > 0
    assert spec.price_per_gpu_hour_usd > 0 and spec.price_as_of and spec.price_source
    assert spec.sources and any("https://" in s for s in spec.sources)
    assert spec.link_name and not spec.measured
    # plausibility: peaks in 10 TFLOP/s .. 20 PFLOP/s, memory 8 .. 400 GB, bandwidth 0.1 .. 20 TB/s
    for fmt in NumberFormat:
        peak = spec.peak.get(fmt)
        assert peak is None or 1e13 <= peak <= 2e16
    assert 8e9 <= spec.memory_bytes <= 4e11
    assert 1e11 <= spec.memory_bandwidth_bytes_per_s <= 2e13


def test_units_are_converted_to_base_units():
    h100 = catalog.gpu("h100-sxm")
    assert h100.peak.bf16_flop_per_s == pytest.approx(989.4e12)
    assert h100.peak.fp8_flop_per_s == pytest.approx(1978.9e12)
    assert h100.peak.fp4_flop_per_s is None
    assert h100.memory_bytes == pytest.approx(80e9)
    assert h100.memory_bandwidth_bytes_per_s == pytest.approx(3.35e12)
    assert h100.link_bandwidth_bytes_per_s == pytest.approx(450e9)  # 900 GB/s both ways -> one way
    assert catalog.gpu("a100-80gb").peak.fp8_flop_per_s is None
    assert catalog.gpu("b200").peak.fp4_flop_per_s == pytest.approx(9000e12)


@pytest.mark.parametrize("gpu_id", UNPRICED_IN_REFERENCE)
def test_prices_without_a_source_are_marked(gpu_id):
    assert catalog.gpu(gpu_id).price_source.startswith("UNSOURCED")


def test_sourced_prices_are_not_marked():
    for g in catalog.gpus().values():
        if g.id not in UNPRICED_IN_REFERENCE:
            assert not g.price_source.startswith("UNSOURCED"), g.id


# --- lookups --------------------------------------------------------------------------------------

def test_lookup_by_id():
    assert catalog.model("llama-3.1-70b").layers == 80
    assert catalog.gpu("h100-sxm").name.startswith("NVIDIA H100")


@pytest.mark.parametrize("lookup, field", [(catalog.model, "model"), (catalog.gpu, "gpu")])
@pytest.mark.parametrize("bad", ["nope", "", "LLAMA-3.1-8B", None, 42])
def test_unknown_names_raise_naming_the_field(lookup, field, bad):
    with pytest.raises(UnknownNameError) as info:
        lookup(bad)
    assert info.value.field == field
    assert f"unknown {field}" in info.value.message and "known:" in info.value.message


def test_unknown_model_lists_the_known_ids():
    with pytest.raises(UnknownNameError, match="llama-3.1-8b, llama-3.1-70b"):
        catalog.model("gpt-5")


# --- draft models ---------------------------------------------------------------------------------

@pytest.mark.parametrize("target, draft", [
    ("llama-3.1-70b", "llama-3.2-1b"), ("llama-3.1-8b", "llama-3.2-1b"), ("qwen2.5-72b", "qwen2.5-0.5b"), ("qwen2.5-7b", "qwen2.5-0.5b"),
    ("qwen3-32b", "qwen3-8b"), ("qwen3-235b-a22b", "qwen3-8b"), ("mixtral-8x7b", "mistral-7b"),
    ("gpt-oss-120b", "gpt-oss-20b"), ("smollm2-1.7b", "smollm2-135m"),
    ("deepseek-v3", None), ("llama-3.2-1b", None), ("tinyllama-1.1b", None),
    ("qwen3-30b-a3b", None),  # a dense 8B reads more per token than a 3B-active MoE
])
def test_default_draft_model(target, draft):
    found = catalog.default_draft_model(catalog.model(target))
    assert (found.id if found else None) == draft


def test_an_explicit_draft_of_another_tokenizer_is_refused():
    from infercost.errors import ScenarioError
    from infercost.estimate import estimate
    from infercost.scenario import Scenario

    with pytest.raises(ScenarioError) as info:
        estimate(Scenario(model="llama-3.1-8b", draft_model="qwen3-8b"))
    assert info.value.field == "draft_model"


def test_every_draft_shares_the_tokenizer_and_is_smaller():
    for target in catalog.models().values():
        draft = catalog.default_draft_model(target)
        if draft is not None:
            assert draft.family == target.family and catalog.can_draft(draft, target)
            assert total_params(draft) < total_params(target)
            assert active_params(draft) < active_params(target)


# --- broken data fails loudly ---------------------------------------------------------------------

def _llama_entry() -> dict:
    return copy.deepcopy(_raw_entries("models.toml", "model")[0])


def _deepseek_entry() -> dict:
    return copy.deepcopy(next(e for e in _raw_entries("models.toml", "model") if e["id"] == "deepseek-v3"))


def _h100_entry() -> dict:
    return copy.deepcopy(_raw_entries("gpus.toml", "gpu")[0])


def test_raw_entries_round_trip():
    assert model_from_entry(_llama_entry()) == catalog.model("llama-3.1-8b")
    assert gpu_from_entry(_h100_entry()) == catalog.gpu("h100-sxm")


@pytest.mark.parametrize("key, value, message", [
    ("layers", "32", "must be an integer"), ("layers", True, "must be an integer"),
    ("layers", 0, "at least 1"), ("hidden_size", -4096, "at least 1"), ("vocab_size", 1.5, "integer"),
    ("tied_embeddings", "no", "true or false"), ("source", "", "non-empty string"),
    ("published_params", float("nan"), "positive finite"), ("published_params", -1.0, "positive"),
    ("kv_heads", 7, "must divide heads"), ("sliding_window_layers", 33, "exceeds layers"),
    ("sliding_window_tokens", 4096, "must be positive when"), ("id", "Llama 8B", "slug"),
    ("lyaers", 32, "unknown key"),
])
def test_broken_model_entry_names_the_entry_and_field(key, value, message):
    entry = _llama_entry()
    entry[key] = value
    with pytest.raises(CatalogDataError, match=message) as info:
        model_from_entry(entry)
    assert info.value.field.startswith("models.toml[")
    expected = "sliding_window_layers" if key == "sliding_window_tokens" else key
    assert info.value.field.endswith(f".{expected}")


def test_sliding_layers_without_a_window_name_the_window():
    entry = _llama_entry()
    entry["sliding_window_layers"] = 4
    with pytest.raises(CatalogDataError, match="4 layers slide") as info:
        model_from_entry(entry)
    assert info.value.field == "models.toml[llama-3.1-8b].sliding_window_tokens"


@pytest.mark.parametrize("table, key, value", [
    ("moe", "experts_per_token", 300), ("moe", "experts", 0), ("moe", "dense_layers", 61),
    ("moe", "expert_bias", 1), ("mla", "kv_lora_rank", "512"), ("mla", "q_lora_rank", 0),
])
def test_broken_nested_tables_name_the_field(table, key, value):
    entry = _deepseek_entry()
    entry[table][key] = value
    with pytest.raises(CatalogDataError) as info:
        model_from_entry(entry)
    assert info.value.field == f"models.toml[deepseek-v3].{table}.{key}"


@given(st.sampled_from(sorted(set(_llama_entry()) - {"published_params", "published_params_source", "notes"})))
def test_any_missing_required_model_field_is_named(key):
    entry = _llama_entry()
    del entry[key]
    with pytest.raises(CatalogDataError, match="missing") as info:
        model_from_entry(entry)
    assert info.value.field.endswith(f".{key}")


@settings(max_examples=60)
@given(key=st.sampled_from(["bf16_tflop_per_s", "memory_gb", "memory_bandwidth_tb_per_s",
                            "price_per_gpu_hour_usd", "link_bandwidth_gb_per_s_bidirectional"]),
       value=st.one_of(st.text(max_size=5), st.booleans(), st.none(), st.just(float("inf")),
                       st.just(float("nan")), st.floats(max_value=0.0), st.integers(max_value=0)))
def test_broken_gpu_numbers_are_named(key, value):
    entry = _h100_entry()
    entry[key] = value
    with pytest.raises(CatalogDataError) as info:
        gpu_from_entry(entry)
    assert info.value.field == f"gpus.toml[h100-sxm].{key}"


@pytest.mark.parametrize("key", ["bf16_tflop_per_s", "price_per_gpu_hour_usd", "sources", "memory_gb"])
def test_missing_gpu_field_is_named(key):
    entry = _h100_entry()
    del entry[key]
    with pytest.raises(CatalogDataError, match="missing") as info:
        gpu_from_entry(entry)
    assert info.value.field == f"gpus.toml[h100-sxm].{key}"


def test_gpu_sources_must_be_a_list_of_strings():
    entry = _h100_entry()
    entry["sources"] = "https://example.com"
    with pytest.raises(CatalogDataError, match="list of strings"):
        gpu_from_entry(entry)


def test_entry_that_is_not_a_table():
    with pytest.raises(CatalogDataError, match="must be a table"):
        model_from_entry(["not", "a", "table"])


@pytest.mark.parametrize("changes, field", [
    ({"kv_heads": 0}, "kv_heads"), ({"layers": -1}, "layers"), ({"head_dim": 2.5}, "head_dim"),
    ({"sliding_window_layers": -1}, "sliding_window_layers"), ({"vocab_size": True}, "vocab_size"),
    ({"sliding_window_tokens": 0, "sliding_window_layers": 4}, "sliding_window_tokens"),
])
def test_model_problem_checks_any_spec(changes, field):
    spec = dataclasses.replace(catalog.model("llama-3.1-8b"), **changes)
    assert catalog.model_problem(spec)[0] == field
    assert catalog.model_problem(catalog.model("llama-3.1-8b")) is None
