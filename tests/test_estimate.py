"""estimate(): the module's numbers end to end, answers instead of crashes, and invariants."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infercost import catalog
from infercost.errors import ScenarioError, UnknownNameError
from infercost.estimate import estimate
from infercost.scenario import Scenario
from infercost.specs import Precision


@pytest.fixture(scope="module")
def default():
    return estimate(Scenario())


def test_module_numbers_on_the_default_page(default):
    assert default.model.kv_bytes_per_token == 327_680
    assert default.kv.conversation_kv_bytes == pytest.approx(2.62e9, rel=1e-3)
    assert default.fit.fits
    # reading a question is quick, writing an answer takes seconds
    assert default.reading.ttft_s < 0.5 < 5 < default.reading.answer_s


def test_grid_is_100_squares_of_the_right_kinds(default):
    kinds = [c.kind for c in default.kv.grid]
    assert len(kinds) == 100
    assert kinds.count("weights") == round(100 * default.fit.weights_bytes / default.kv.total_memory_bytes)
    kv = [c.conversation for c in default.kv.grid if c.kind == "kv"]
    share = default.kv.conversations * default.kv.conversation_kv_bytes / default.kv.total_memory_bytes
    assert abs(len(kv) - 100 * share) <= 1
    assert kv == sorted(kv) and 0 <= kv[0] and kv[-1] < default.kv.conversations


def test_to_dict_is_json_and_round_trips_the_scenario(default):
    data = json.loads(json.dumps(default.to_dict()))
    assert Scenario.from_dict(data["scenario"]) == default.scenario
    assert len(data["kv"]["grid"]) == 100


def test_weights_that_do_not_fit_are_an_answer():
    e = estimate(Scenario(model="llama-3.1-405b", gpu="l4", gpus=1))
    assert not e.fit.fits
    assert e.fit.min_gpus > 1 and str(e.fit.min_gpus) in e.fit.message
    assert 128 % e.fit.min_gpus == 0  # a count that splits the attention heads evenly
    assert e.kv.overflow_cells > 0 and e.kv.conversations_fit == 0
    ok = estimate(Scenario(model="llama-3.1-405b", gpu="l4", gpus=e.fit.min_gpus))
    assert ok.fit.fits


def test_more_gpus_than_any_count_can_hold():
    e = estimate(Scenario(model="deepseek-v3", gpu="l4", gpus=1, precision=Precision.BIT16))
    assert e.fit.min_gpus is not None  # 1.3 TB over 24 GB cards is still an answer


@pytest.mark.parametrize("changes,field", [
    ({"model": "gpt-5"}, "model"),
    ({"gpu": "h900"}, "gpu"),
    ({"draft_model": "nope"}, "draft_model"),
    ({"question_tokens": 130_000, "answer_tokens": 2_000}, "answer_tokens"),
    ({"conversation_tokens": 200_000}, "conversation_tokens"),
    ({"shared_prefix_tokens": 5_000, "question_tokens": 100}, "shared_prefix_tokens"),
])
def test_bad_scenarios_name_their_field(changes, field):
    with pytest.raises((ScenarioError, UnknownNameError)) as info:
        estimate(Scenario(**changes))
    assert info.value.field == field


def test_precision_cuts_weights_and_raises_speed():
    by_precision = {p: estimate(Scenario(precision=p)) for p in (Precision.BIT16, Precision.BIT8, Precision.BIT4)}
    weights = [by_precision[p].fit.weights_bytes for p in (Precision.BIT16, Precision.BIT8, Precision.BIT4)]
    speed = [by_precision[p].reading.decode_tokens_per_s for p in (Precision.BIT16, Precision.BIT8, Precision.BIT4)]
    assert weights == sorted(weights, reverse=True) and speed == sorted(speed)


def test_fp4_on_blackwell_but_weight_only_int4_on_hopper():
    assert estimate(Scenario(gpu="b200", precision=Precision.BIT4)).precision.compute_format == "fp4"
    hopper = estimate(Scenario(gpu="h100-sxm", precision=Precision.BIT4)).precision
    assert (hopper.weight_format, hopper.compute_format) == ("int4", "bf16")


def test_cost_levers_move_the_unit_cost_tenfold(default):
    costs = [lever.usd_per_million_output for lever in default.cost.levers if lever.usd_per_million_output]
    assert max(costs) / min(costs) >= 10
    assert {lever.kind for lever in default.cost.levers} == {"model", "precision", "batch"}


def test_busy_share_scales_cost_inversely():
    full, half = estimate(Scenario(busy_share=1.0)).cost, estimate(Scenario(busy_share=0.5)).cost
    assert half.usd_per_million_output == pytest.approx(2 * full.usd_per_million_output)


def test_speculative_with_no_acceptance_is_slower():
    assert estimate(Scenario(acceptance_rate=0.0)).speculative.speedup < 1


def test_prompt_cache_saves_time_and_memory():
    sp = estimate(Scenario(question_tokens=4000, shared_prefix_tokens=3000)).speculative
    assert sp.prefill_saved_s > 0 and sp.memory_saved_bytes > 0


def test_custom_model_and_custom_gpu():
    m = catalog.model("qwen3-8b")
    gpu = catalog.gpu("l40s")
    e = estimate(Scenario(custom_model=m, custom_gpu=gpu))
    assert e.model.name == m.name and e.hardware.name == gpu.name
    assert Scenario.from_json(e.scenario.to_json()) == e.scenario


MODELS = sorted(catalog.models())
GPUS = sorted(catalog.gpus())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODELS), st.sampled_from(GPUS), st.sampled_from(["16bit", "8bit", "4bit"]),
       st.sampled_from(["16bit", "8bit"]), st.integers(1, 16), st.integers(1, 8000), st.integers(1, 4000),
       st.integers(1, 30000), st.integers(1, 500), st.integers(1, 1024), st.floats(0.05, 1), st.floats(0.05, 1),
       st.floats(0, 1), st.floats(0.01, 1))
def test_every_number_is_finite_and_costs_positive(model, gpu, precision, kv, gpus, q, a, conv, n, batch, eta_c,
                                                   eta_m, alpha, busy):
    m = catalog.model(model)
    q, a, conv = min(q, m.max_context_tokens // 2), min(a, m.max_context_tokens // 2), min(conv, m.max_context_tokens)
    e = estimate(Scenario(model=model, gpu=gpu, precision=precision, kv_precision=kv, gpus=gpus, question_tokens=q,
                          answer_tokens=a, conversation_tokens=conv, conversations=n, batch=batch,
                          compute_efficiency=eta_c, memory_efficiency=eta_m, acceptance_rate=alpha, busy_share=busy))
    for value in (e.reading.ttft_s, e.reading.answer_s, e.reading.decode_tokens_per_s,
                  e.batching.current.total_tokens_per_s, e.cost.usd_per_million_output, e.cost.usd_per_million_input,
                  e.cost.usd_per_answer):
        assert value > 0 and math.isfinite(value)
    assert len(e.kv.grid) == 100
    curve = e.batching.curve
    for lo, hi in zip(curve, curve[1:]):
        assert hi.total_tokens_per_s >= lo.total_tokens_per_s * (1 - 1e-12)
        assert hi.per_user_tokens_per_s <= lo.per_user_tokens_per_s * (1 + 1e-12)
