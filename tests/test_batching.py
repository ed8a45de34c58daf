"""Batching curve: throughput climbs, per-user speed falls, memory wall and compute knee."""

from hypothesis import given, settings
from hypothesis import strategies as st

from infercost import catalog
from infercost.physics.batching import batch_point, compute_knee_batch, curve_batches
from infercost.physics.machine import Machine
from infercost.precision import resolve
from infercost.specs import KvPrecision, Precision

MODELS = sorted(catalog.models())
GPUS = sorted(catalog.gpus())


def setup(model_id, gpu_id, precision, gpus):
    m, gpu = catalog.model(model_id), catalog.gpu(gpu_id)
    fmt = resolve(precision, KvPrecision.BIT16, gpu)
    machine = Machine(gpus, gpu.peak.get(fmt.compute_format), gpu.memory_bandwidth_bytes_per_s, gpu.memory_bytes,
                      gpu.link_bandwidth_bytes_per_s or 32e9, 5e-6, 0.5, 0.7)
    return m, machine, fmt


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(GPUS), st.sampled_from(list(Precision)), st.integers(1, 8),
       st.integers(1, 32_000), st.integers(1, 4096), st.integers(1, 4096))
def test_throughput_climbs_and_per_user_speed_falls(model_id, gpu_id, precision, gpus, context, b1, b2):
    m, machine, fmt = setup(model_id, gpu_id, precision, gpus)
    lo, hi = sorted((b1, b2))
    a, b = batch_point(m, machine, fmt, lo, context), batch_point(m, machine, fmt, hi, context)
    assert b.total_tokens_per_s >= a.total_tokens_per_s * (1 - 1e-12)
    assert b.per_user_tokens_per_s <= a.per_user_tokens_per_s * (1 + 1e-12)


def test_knee_is_where_compute_starts_to_bind():
    m, machine, fmt = setup("llama-3.1-70b", "h100-sxm", Precision.BIT16, 4)
    knee = compute_knee_batch(m, machine, fmt, 100)
    assert knee is not None and knee > 1
    assert batch_point(m, machine, fmt, knee, 100).bound == "compute"
    assert batch_point(m, machine, fmt, knee - 1, 100).bound == "memory"


def test_long_context_never_reaches_the_knee():
    m, machine, fmt = setup("llama-3.1-8b", "h100-sxm", Precision.BIT16, 1)
    assert compute_knee_batch(m, machine, fmt, 128_000) is None


def test_curve_batches_cover_one_to_limit():
    sizes = curve_batches(100)
    assert sizes[0] == 1 and sizes[-1] == 100 and sizes == sorted(set(sizes))
