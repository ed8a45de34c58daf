"""The core's estimate for each benchmark run, on this device's measured limits.

"This device" is a GpuSpec built from the probes (measured=True): peak FLOP/s per format from the
matmul probes, memory bandwidth from the read probe, memory = device memory. Because these are
this machine's sustained limits, not datasheet peaks, the estimate uses compute and memory
efficiency 1.0. Everything else (FLOP and bytes per pass, the roofline) is the core's.
"""

from __future__ import annotations

from ..specs import GpuSpec, KvPrecision, ModelSpec, PeakFlops
from .convert import CORE_PRECISION
from .stats import Stat

# Which PeakFlops slot each benchmark precision's matmul probe fills ("fp16" fills the 16-bit slot
# on devices without bf16; the core has one 16-bit slot).
PEAK_SLOT = {"fp32": "fp32_flop_per_s", "bf16": "bf16_flop_per_s", "fp16": "bf16_flop_per_s",
             "int8": "int8_flop_per_s", "fp8": "fp8_flop_per_s"}


def device_gpu_spec(device, read_bytes_per_s: float, matmul: dict[str, Stat]) -> GpuSpec:
    peaks = {}
    for precision, stat in matmul.items():
        slot = PEAK_SLOT.get(precision)
        if slot and slot not in peaks:
            peaks[slot] = stat.median
    what = f"{device.cores} threads" if device.kind == "cpu" else f"{device.cores} SMs" if device.cores else device.kind
    return GpuSpec(
        id=f"this-machine-{device.id.replace(':', '')}", name=f"This machine: {device.name} ({what})",
        vendor=device.kind, peak=PeakFlops(**peaks), memory_bytes=device.memory_bytes,
        memory_bandwidth_bytes_per_s=read_bytes_per_s, link_bandwidth_bytes_per_s=None, link_name="",
        price_per_gpu_hour_usd=None, sources=("measured by infercost bench",),
        notes="Sustained limits measured on this machine (memory read probe, matmul probes).", measured=True,
    )


def _scenario(spec: ModelSpec, gpu: GpuSpec, precision: str, prompt: int, new: int, batch: int, context: int):
    from ..scenario import Scenario

    return Scenario(
        model=spec.id, gpu=gpu.id, custom_model=spec, custom_gpu=gpu, gpus=1,
        precision=CORE_PRECISION[precision], kv_precision=KvPrecision.BIT16,
        compute_efficiency=1.0, memory_efficiency=1.0, question_tokens=prompt, answer_tokens=new,
        conversation_tokens=context, conversations=1, batch=batch,
    )


def estimate_run(spec: ModelSpec | None, gpu: GpuSpec, precision: str, prompt_tokens: int, new_tokens: int,
                 batch_sizes: tuple[int, ...], batch_steps: int) -> tuple[dict | None, str]:
    """({ttft_s, prefill_s, decode_step_s, decode_tokens_per_s, answer_s, batch_tokens_per_s}, note).

    decode_step_s is the mean step over the answer (write_s / (new_tokens - 1)), as measured.
    Batch estimates use the context the batch runs hold: the prompt plus half the timed steps.
    """
    if spec is None:
        return None, "no estimate: the core cannot read this model's config"
    from ..errors import InferCostError
    from ..estimate import estimate

    try:
        est = estimate(_scenario(spec, gpu, precision, prompt_tokens, new_tokens, 1, prompt_tokens + new_tokens))
        reading = est.reading
        step_s = reading.write_s / (new_tokens - 1) if new_tokens > 1 else reading.decode_step_s
        out = {
            "ttft_s": reading.ttft_s, "prefill_s": reading.prefill_s, "prefill_bound": reading.prefill_bound,
            "decode_step_s": step_s, "decode_tokens_per_s": 1.0 / step_s, "decode_bound": reading.decode_bound,
            "answer_s": reading.answer_s, "batch_tokens_per_s": {},
            "compute_format": est.precision.compute_format,
        }
        context = prompt_tokens + max(1, batch_steps // 2)
        for b in batch_sizes:
            point = estimate(_scenario(spec, gpu, precision, prompt_tokens, new_tokens, b, context)).batching.current
            out["batch_tokens_per_s"][str(b)] = point.total_tokens_per_s
    except InferCostError as exc:
        return None, f"no estimate: {exc}"
    return out, "core estimate on measured limits, efficiencies 1.0"


def predicted_speedup(acceptance_rate: float, k: int, draft_step_s: float, target_step_s: float,
                      verify_step_s: float) -> dict:
    """The formula's speedup from the measured rate and step times (core physics.speculative)."""
    from ..physics import speculative

    return {
        "expected_tokens_per_pass": speculative.expected_tokens_per_pass(acceptance_rate, k),
        "speedup_measured_verify": speculative.speedup(acceptance_rate, k, draft_step_s, target_step_s, verify_step_s),
        "speedup_formula": speculative.speedup(acceptance_rate, k, draft_step_s, target_step_s, target_step_s),
    }
