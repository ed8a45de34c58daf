"""Which number formats a precision means on a given accelerator.

Weight format sets the bytes read per weight; compute format sets the peak FLOP/s. Weight-only
formats (INT8 or INT4 without native math) read fewer bytes but multiply at 16-bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .specs import GpuSpec, KvPrecision, NumberFormat, Precision

# Bytes per weight, including block-scale overhead for the 4-bit formats.
_WEIGHT_BYTES = {
    NumberFormat.FP32: 4.0,
    NumberFormat.BF16: 2.0,
    NumberFormat.FP8: 1.0,
    NumberFormat.INT8: 1.0,
    # NVFP4: one FP8 E4M3 scale per 16 values (NVIDIA, "Introducing NVFP4", 2025).
    NumberFormat.FP4: 0.5 + 1 / 16,
    # INT4 weight-only (AWQ/GPTQ): one 16-bit scale per group of 128 (arXiv 2306.00978 §4).
    NumberFormat.INT4: 0.5 + 2 / 128,
}

_KV_BYTES = {KvPrecision.BIT16: 2.0, KvPrecision.BIT8: 1.0}


@dataclass(frozen=True)
class Formats:
    """A precision resolved on one accelerator."""

    weight_format: NumberFormat
    compute_format: NumberFormat
    weight_bytes_per_param: float
    kv_bytes_per_element: float
    note: str

    @property
    def weight_only(self) -> bool:
        return self.weight_format != self.compute_format


def _has(gpu: GpuSpec, fmt: NumberFormat) -> bool:
    return gpu.peak.get(fmt) is not None


def _sixteen_bit_compute(gpu: GpuSpec) -> NumberFormat:
    return NumberFormat.BF16 if _has(gpu, NumberFormat.BF16) else NumberFormat.FP32


def _pick(precision: Precision, gpu: GpuSpec) -> tuple[NumberFormat, NumberFormat, str]:
    """(weight format, compute format, note): the lowest format the accelerator runs natively."""
    half = _sixteen_bit_compute(gpu)
    if precision is Precision.BIT32:
        fmt = NumberFormat.FP32 if _has(gpu, NumberFormat.FP32) else half
        return NumberFormat.FP32, fmt, "32-bit weights"
    if precision is Precision.BIT16:
        return NumberFormat.BF16, half, "16-bit weights and math (BF16)"
    if precision is Precision.BIT8:
        if _has(gpu, NumberFormat.FP8):
            return NumberFormat.FP8, NumberFormat.FP8, "FP8 weights and math"
        if _has(gpu, NumberFormat.INT8):
            return NumberFormat.INT8, NumberFormat.INT8, "INT8 weights and math (no FP8 on this accelerator)"
        return NumberFormat.INT8, half, "INT8 weights, 16-bit math (weight-only: no 8-bit math here)"
    if _has(gpu, NumberFormat.FP4):
        return NumberFormat.FP4, NumberFormat.FP4, "FP4 (NVFP4) weights and math"
    return NumberFormat.INT4, half, "INT4 weights, 16-bit math (weight-only: no FP4 on this accelerator)"


@cache
def resolve(precision: Precision, kv_precision: KvPrecision, gpu: GpuSpec) -> Formats:
    weight_fmt, compute_fmt, note = _pick(precision, gpu)
    return Formats(weight_fmt, compute_fmt, _WEIGHT_BYTES[weight_fmt], _KV_BYTES[kv_precision], note)
