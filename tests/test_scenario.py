"""Scenario: defaults, JSON round trip, and every bad input named."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infercost.errors import ScenarioError
from infercost.scenario import INT_BOUNDS, Scenario
from infercost.specs import KvPrecision, Precision


def test_module_defaults():
    s = Scenario()
    assert (s.compute_efficiency, s.memory_efficiency) == (0.5, 0.7)
    assert s.precision is Precision.BIT16 and s.kv_precision is KvPrecision.BIT16


def test_strings_become_enums():
    assert Scenario(precision="4bit", kv_precision="8bit").precision is Precision.BIT4


def test_json_round_trip():
    s = Scenario(model="qwen3-8b", precision=Precision.BIT8, gpus=2, price_per_gpu_hour_usd=2.5, busy_share=0.9)
    assert Scenario.from_json(s.to_json()) == s
    assert Scenario.from_dict(s.to_dict()) == s


@given(st.fixed_dictionaries({k: st.integers(lo, min(hi, 10**6)) for k, (lo, hi) in INT_BOUNDS.items()}),
       st.floats(0.01, 1), st.floats(0.01, 1), st.floats(0, 1), st.sampled_from(["16bit", "8bit", "4bit"]))
def test_round_trip_property(ints, eta_c, eta_m, alpha, precision):
    s = Scenario(**ints, compute_efficiency=eta_c, memory_efficiency=eta_m, acceptance_rate=alpha, precision=precision)
    assert Scenario.from_json(s.to_json()) == s


BAD = [
    ("gpus", -1), ("gpus", 0), ("gpus", 10**9), ("gpus", 1.5), ("gpus", "2"), ("gpus", True), ("gpus", None),
    ("question_tokens", 0), ("answer_tokens", -5), ("batch", 0), ("conversations", 0),
    ("compute_efficiency", 0), ("compute_efficiency", 1.5), ("compute_efficiency", math.nan),
    ("memory_efficiency", math.inf), ("busy_share", -0.1), ("acceptance_rate", 1.01),
    ("price_per_gpu_hour_usd", 0), ("price_per_gpu_hour_usd", -3), ("price_per_gpu_hour_usd", math.inf),
    ("precision", "3bit"), ("kv_precision", "4bit"), ("model", ""), ("model", 7), ("draft_tokens", 0),
]


@pytest.mark.parametrize("field,value", BAD)
def test_bad_values_name_their_field(field, value):
    with pytest.raises(ScenarioError) as info:
        Scenario(**{field: value})
    assert info.value.field == field


@pytest.mark.parametrize("text,field", [
    ('{"gpus": -1}', "gpus"),
    ('{"gpus": NaN}', "gpus"),
    ('{"wat": 1}', "wat"),
    ('[1, 2]', "Scenario"),
    ('{"gpus": ', "scenario"),
    ('{"custom_model": {"id": "x"}}', "custom_model"),
])
def test_bad_json_is_a_clear_error(text, field):
    with pytest.raises(ScenarioError) as info:
        Scenario.from_json(text)
    assert info.value.field == field


def test_custom_model_and_gpu_are_checked_in_the_core():
    import dataclasses

    from infercost import catalog

    llama = catalog.model("llama-3.1-8b")
    with pytest.raises(ScenarioError) as info:
        Scenario(custom_model=dataclasses.replace(llama, sliding_window_layers=40, sliding_window_tokens=10))
    assert info.value.field == "custom_model.sliding_window_layers"
    h100 = catalog.gpu("h100-sxm")
    for field, value in [("memory_bandwidth_bytes_per_s", -3e12), ("memory_bandwidth_bytes_per_s", 1e-300),
                         ("memory_bytes", math.nan), ("price_per_gpu_hour_usd", -2.0)]:
        with pytest.raises(ScenarioError) as info:
            Scenario(custom_gpu=dataclasses.replace(h100, **{field: value}))
        assert info.value.field == f"custom_gpu.{field}"
