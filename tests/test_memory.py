"""KV cache, weights and the memory grid: known answers from the module and papers, and invariants."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infercost import catalog
from infercost.physics import memory
from infercost.units import GB


def test_llama70_kv_per_token_is_320_kb(llama70):
    assert memory.kv_bytes_per_token(llama70, 2) == 327_680


def test_llama70_conversation_sizes_from_the_module(llama70, h100):
    eight_k = memory.kv_bytes_for_sequence(llama70, 8_000, 2)
    full = memory.kv_bytes_for_sequence(llama70, 128_000, 2)
    assert round(eight_k / GB, 1) == 2.6
    assert round(full / GB) == 42
    assert full > h100.memory_bytes / 2


def test_deepseek_v3_mla_cache_per_token():
    assert memory.kv_bytes_per_token(catalog.model("deepseek-v3"), 2) == 70_272


def test_8bit_kv_halves_the_cache(llama70):
    assert memory.kv_bytes_per_token(llama70, 1) * 2 == memory.kv_bytes_per_token(llama70, 2)


def test_sliding_window_caps_the_cache():
    mistral = catalog.model("mistral-7b")
    window = mistral.sliding_window_tokens
    assert memory.kv_bytes_for_sequence(mistral, 3 * window, 2) == memory.kv_bytes_for_sequence(mistral, window, 2)


def test_alternating_window_layers_grow_at_half_speed_past_the_window():
    gemma = catalog.model("gemma-2-9b")
    w = gemma.sliding_window_tokens
    growth = memory.kv_bytes_for_sequence(gemma, 2 * w, 2) - memory.kv_bytes_for_sequence(gemma, w, 2)
    per_layer = memory.kv_bytes_per_token_per_layer(gemma, 2)
    assert growth == per_layer * gemma.full_attention_layers * w


@given(st.sampled_from(sorted(catalog.models())), st.integers(1, 100_000), st.integers(1, 100_000))
def test_kv_grows_linearly_with_tokens_without_window(model_id, a, b):
    m = catalog.model(model_id)
    if m.sliding_window_layers:
        return
    total = memory.kv_bytes_for_sequence(m, a + b, 2)
    assert math.isclose(total, memory.kv_bytes_for_sequence(m, a, 2) + memory.kv_bytes_for_sequence(m, b, 2))


def test_weights_at_each_precision(llama70):
    assert memory.weight_bytes(llama70, 2) == pytest.approx(141.1e9, rel=1e-3)
    assert memory.weight_bytes(llama70, 1) == pytest.approx(70.55e9, rel=1e-3)


def test_paged_tokens_round_up_to_blocks():
    assert memory.paged_tokens(1, 16) == 16
    assert memory.paged_tokens(16, 16) == 16
    assert memory.paged_tokens(17, 16) == 32


def test_min_gpus_to_fit():
    assert memory.min_gpus_to_fit(141e9, 80e9, 0.1, 1e9, 64) == 2
    assert memory.min_gpus_to_fit(1e15, 80e9, 0.1, 0, 64) is None


def test_grid_has_100_squares_in_order():
    grid, overflow = memory.memory_grid(100.0, 40.0, 10.0, 5.0, 4)
    kinds = [c.kind for c in grid]
    assert len(grid) == 100 and overflow == 0
    assert kinds.count("weights") == 40 and kinds.count("reserve") == 10 and kinds.count("kv") == 20
    assert kinds.count("free") == 30
    assert [c.conversation for c in grid if c.kind == "kv"] == [i for i in range(4) for _ in range(5)]


def test_grid_counts_overflow_squares():
    grid, overflow = memory.memory_grid(100.0, 80.0, 10.0, 7.0, 3)
    assert overflow == 11  # 80 + 10 + 21 = 111 %
    assert [c.kind for c in grid].count("free") == 0


@given(st.floats(1, 1e12), st.floats(0, 2), st.floats(0, 0.5), st.floats(1e-6, 1), st.integers(0, 5000))
def test_grid_always_has_100_squares(total, w, r, conv, n):
    grid, overflow = memory.memory_grid(total, w * total, r * total, conv * total, n)
    assert len(grid) == 100 and overflow >= 0
