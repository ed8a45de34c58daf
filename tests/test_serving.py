"""Serving under load: the batch an engine runs, prefill mixed into decode, loads, and the extra terms."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infercost import catalog
from infercost.estimate import estimate
from infercost.physics import comms, step
from infercost.physics.engines import (compute_share, engine, link_kind, machine_for, serving_estimate,
                                       serving_weights_bytes, step_physics)
from infercost.physics.memory import weight_bytes
from infercost.physics.serving import Concurrency, MaxLoad, RequestRate
from infercost.precision import resolve
from infercost.scenario import Scenario
from infercost.specs import KvPrecision, Precision


def fmt(gpu_id, precision=Precision.BIT8, kv=KvPrecision.BIT8):
    return resolve(precision, kv, catalog.gpu(gpu_id))


def serve(model="llama-3.1-70b", gpu="h100-sxm", gpus=1, precision=Precision.BIT8, isl=1000, osl=1000,
          load=MaxLoad(), engine_name="vllm"):
    return serving_estimate(catalog.model(model), catalog.gpu(gpu), gpus, fmt(gpu, precision), isl, osl, load,
                            engine_name)


def test_tight_memory_limits_the_batch_by_the_kv_cache():
    s = serve("llama-3.1-70b", "h200", 1, engine_name="trtllm-bench")
    assert s.batch_limit == "kv cache"
    held = s.kv_capacity_tokens / s.batch
    assert 2000 <= held <= 2000 + 2 * 16  # whole sequences reserved (isl + osl, paged)


def test_small_model_hits_the_engine_batch_cap():
    s = serve("llama-3.1-8b", "h200", 1, isl=128, osl=128)
    assert s.batch_limit == "engine batch cap" and s.batch == engine("vllm").max_batch


def test_paged_engine_holds_half_an_answer_on_average():
    s = serve("llama-3.1-70b", "h100-sxm", 2, isl=1000, osl=2000, engine_name="vllm")
    if s.batch_limit == "kv cache":
        assert s.kv_capacity_tokens / s.batch == pytest.approx(1000 + 1000 + 8, rel=0.02)


def test_weights_that_leave_no_room_raise():
    with pytest.raises(ValueError):
        serve("llama-3.1-405b", "h100-sxm", 4, precision=Precision.BIT8)


def test_prompts_mixed_into_decode_cost_output_speed():
    short, long = serve(isl=128, osl=512, gpus=2), serve(isl=4096, osl=512, gpus=2)
    assert long.output_tokens_per_s < short.output_tokens_per_s
    assert long.input_tokens_per_s > short.input_tokens_per_s


def test_concurrency_below_capacity_sets_the_batch():
    full = serve(gpus=2)
    some = serve(gpus=2, load=Concurrency(16))
    assert some.batch == 16 and some.batch_limit == "load" and not some.saturated
    assert some.output_tokens_per_s < full.output_tokens_per_s
    assert some.tpot_s < full.tpot_s
    assert serve(gpus=2, load=Concurrency(10**6)).output_tokens_per_s == pytest.approx(full.output_tokens_per_s)


def test_low_request_rate_is_served_in_full_and_high_rate_saturates():
    full = serve(gpus=2)
    low = serve(gpus=2, load=RequestRate(0.5))
    assert not low.saturated
    assert low.output_tokens_per_s == pytest.approx(0.5 * 1000, rel=1e-3)
    assert low.batch < full.batch
    high = serve(gpus=2, load=RequestRate(1e4))
    assert high.saturated and high.output_tokens_per_s == pytest.approx(full.output_tokens_per_s)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 512), st.integers(1, 512), st.sampled_from([128, 1000, 4000]), st.sampled_from([64, 500]))
def test_more_concurrency_never_lowers_throughput(a, b, isl, osl):
    lo, hi = sorted((a, b))
    x = serve("llama-3.1-8b", "h100-sxm", 1, isl=isl, osl=osl, load=Concurrency(lo))
    y = serve("llama-3.1-8b", "h100-sxm", 1, isl=isl, osl=osl, load=Concurrency(hi))
    assert y.output_tokens_per_s >= x.output_tokens_per_s * (1 - 1e-9)
    assert y.tpot_s >= x.tpot_s * (1 - 1e-9)
    assert x.ttft_s > 0 and math.isfinite(x.ttft_s)


def test_link_kinds():
    assert link_kind(catalog.gpu("h100-sxm"), 8) == "nvlink"
    assert link_kind(catalog.gpu("l40s"), 4) == "pcie"  # "PCIe Gen4 x16 (no NVLink)"
    assert link_kind(catalog.gpu("h100-pcie"), 2) == "nvlink" and link_kind(catalog.gpu("h100-pcie"), 4) == "pcie"


def test_allreduce_pays_a_latency_per_ring_step_and_the_message_over_the_link():
    assert comms.allreduce_s(1e6, 1, 1e9, 1e-5, 1.0) == 0
    two, eight = comms.allreduce_s(0, 2, 1e9, 1e-5, 1.0), comms.allreduce_s(0, 8, 1e9, 1e-5, 1.0)
    assert two == pytest.approx(2e-5) and eight == pytest.approx(14e-5)
    assert comms.allreduce_s(8e6, 8, 1e9, 0, 0.5) == pytest.approx(14 / 8 * 8e6 / 0.5e9)


def test_pcie_all_reduce_costs_more_than_nvlink():
    m = catalog.model("llama-3.1-70b")
    nv = machine_for(catalog.gpu("h100-sxm"), 4, fmt("h100-sxm"), 0.5, 0.7)
    pc = machine_for(catalog.gpu("l40s"), 4, fmt("l40s"), 0.5, 0.7)
    assert comms.tensor_parallel_comm_s(m, pc, 256) > 5 * comms.tensor_parallel_comm_s(m, nv, 256) > 0


def test_soft_roofline_knee():
    assert step._roofline_s(2.0, 1.0, 1.0, 1.0, math.inf) == 2.0
    at_ridge = step._roofline_s(1.0, 1.0, 1.0, 1.0, 2.0)
    assert at_ridge == pytest.approx(math.sqrt(2))
    far = step._roofline_s(100.0, 1.0, 1.0, 1.0, 2.0)
    assert 100 <= far < 100.01


def test_moe_reads_experts_hit_and_the_busiest_sets_the_pace():
    m, f = catalog.model("mixtral-8x7b"), fmt("h100-sxm")
    machine = machine_for(catalog.gpu("h100-sxm"), 1, f, 0.5, 0.7)
    one = step.experts_s(m, machine, f, step.StepLoad(1, 100), 1.0)
    many = step.experts_s(m, machine, f, step.StepLoad(64, 100), 1.0)
    assert one < 0.4 * many
    assert step.busiest_expert_share(8, 128, 8, 1.0) > step.busiest_expert_share(8000, 128, 8, 1.0) > 1
    assert step.busiest_expert_share(8000, 128, 8, 0.0) == 1


def test_quantized_checkpoints_keep_lm_head_at_16_bit():
    m = catalog.model("llama-3.1-8b")
    f = fmt("h100-sxm")
    assert serving_weights_bytes(m, f) > weight_bytes(m, f.weight_bytes_per_param) + 0.9e9
    sixteen = fmt("h100-sxm", Precision.BIT16, KvPrecision.BIT16)
    assert serving_weights_bytes(m, sixteen) == weight_bytes(m, 2.0)


def test_native_fp4_reaches_a_smaller_share_of_its_peak():
    assert compute_share(fmt("b200", Precision.BIT4)) < 1.0
    assert compute_share(fmt("h100-sxm", Precision.BIT8)) == 1.0
    assert compute_share(fmt("h100-sxm", Precision.BIT4)) <= 1.0  # weight-only INT4 on Hopper


def test_hidden_state_work_is_repeated_on_every_gpu():
    m = catalog.model("llama-3.1-70b")
    one = machine_for(catalog.gpu("h100-sxm"), 1, fmt("h100-sxm"), 0.5, 0.7)
    eight = machine_for(catalog.gpu("h100-sxm"), 8, fmt("h100-sxm"), 0.5, 0.7)
    load = step.StepLoad(256, 1000)
    passes = step_physics().hidden_passes_per_layer
    assert step.hidden_state_s(m, one, load, passes) == pytest.approx(step.hidden_state_s(m, eight, load, passes))


def test_estimate_has_a_serving_section_and_a_fidelity_note():
    e = estimate(Scenario())
    sv = e.serving
    assert sv.max_load is not None and sv.at_batch is not None
    assert sv.max_load.output_tokens_per_s >= sv.at_batch.output_tokens_per_s
    assert sv.at_batch.batch == Scenario().batch
    d = e.to_dict()
    assert d["serving"]["max_load"]["step"]["bound"] in {"weights", "hidden", "experts", "attention", "comm",
                                                          "overhead"}
    if e.fidelity is not None:
        assert 0 < e.fidelity.typical_error_share < 1 and e.fidelity.points > 0


def test_serving_section_when_weights_do_not_fit():
    e = estimate(Scenario(model="llama-3.1-405b", gpus=1))
    assert e.serving.max_load is None and "do not fit" in e.serving.message
