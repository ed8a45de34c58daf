"""Prefill and decode by the roofline."""

import pytest

from infercost import catalog
from infercost.physics import latency
from infercost.physics.machine import Machine
from infercost.physics.params import active_params
from infercost.precision import resolve
from infercost.specs import KvPrecision, Precision


def machine_for(gpu, gpus=1, eta_c=0.5, eta_m=0.7):
    fmt = resolve(Precision.BIT16, KvPrecision.BIT16, gpu)
    return Machine(gpus, gpu.peak.get(fmt.compute_format), gpu.memory_bandwidth_bytes_per_s, gpu.memory_bytes,
                   gpu.link_bandwidth_bytes_per_s, 5e-6, eta_c, eta_m), fmt


def test_prefill_flop_is_2p_per_token_plus_causal_attention(llama70):
    n = 1000
    lookup = llama70.vocab_size * llama70.hidden_size  # untied: the input embedding is a lookup, not a product
    expected = 2 * (active_params(llama70) - lookup) * n + 2 * 80 * 64 * 128 * n * n
    assert latency.prefill_flop(llama70, n) == pytest.approx(expected)


def test_reading_is_compute_bound_and_writing_memory_bound(llama70, h100):
    machine, fmt = machine_for(h100, 2)
    assert latency.prefill_pass(llama70, machine, fmt, 2000).bound == "compute"
    assert latency.decode_step(llama70, machine, fmt, 1, 2000).bound == "memory"


def test_decode_step_at_batch_one_reads_the_weights(llama70, h100):
    machine, fmt = machine_for(h100, 1)
    step = latency.decode_step(llama70, machine, fmt, 1, 1)
    weights_s = 141.1e9 / (3.35e12 * 0.7)
    assert step.memory_s == pytest.approx(weights_s, rel=2e-3)


def test_long_answer_takes_far_longer_than_reading_a_long_question(llama70, h100):
    machine, fmt = machine_for(h100, 2)
    read = latency.prefill_pass(llama70, machine, fmt, 4000).time_s
    write = latency.answer_decode_s(llama70, machine, fmt, 4000, 1000)
    assert read < 1.0 < 10 * read < write


@pytest.mark.parametrize("model_id,gpu_id,gpus,prompt,steps,batch", [
    ("llama-3.1-70b", "h100-sxm", 2, 500, 3000, 1),
    ("llama-3.1-8b", "h100-sxm", 1, 10, 2000, 512),  # crosses from compute- to memory-bound
    ("mistral-7b", "l4", 1, 3000, 2500, 8),  # crosses the sliding window
    ("gemma-2-9b", "a100-80gb", 1, 1, 5000, 4),
])
def test_answer_closed_form_matches_the_step_by_step_sum(model_id, gpu_id, gpus, prompt, steps, batch):
    m = catalog.model(model_id)
    machine, fmt = machine_for(catalog.gpu(gpu_id), gpus)
    exact = sum(latency.decode_step(m, machine, fmt, batch, prompt + 1 + i).time_s for i in range(steps - 1))
    assert latency.answer_decode_s(m, machine, fmt, prompt, steps, batch) == pytest.approx(exact, rel=1e-9)


def test_tensor_parallel_adds_communication(llama70, h100):
    one, fmt = machine_for(h100, 1)
    eight, _ = machine_for(h100, 8)
    assert latency.decode_step(llama70, one, fmt, 1, 100).comm_s == 0
    assert latency.decode_step(llama70, eight, fmt, 1, 100).comm_s > 0


def test_short_moe_prompt_reads_only_the_experts_it_touches():
    moe, h100 = catalog.model("qwen3-30b-a3b"), catalog.gpu("h100-sxm")
    machine, fmt = machine_for(h100, 1)
    short, long = latency.prefill_pass(moe, machine, fmt, 2), latency.prefill_pass(moe, machine, fmt, 4000)
    assert short.memory_s < 0.5 * long.memory_s


def test_mla_decode_attends_in_the_latent():
    ds = catalog.model("deepseek-v3")
    assert latency.attention_head_dim(ds, absorbed=True) == (2 * 512 + 64) / 2
    assert latency.attention_head_dim(ds) == (128 + 64 + 128) / 2


def test_moe_reads_only_the_experts_it_touches():
    mixtral, h100 = catalog.model("mixtral-8x7b"), catalog.gpu("h100-sxm")
    machine, fmt = machine_for(h100, 2)
    one = latency.decode_bytes(mixtral, fmt, 1, 1)
    many = latency.decode_bytes(mixtral, fmt, 64, 1)
    assert one < 0.4 * many
