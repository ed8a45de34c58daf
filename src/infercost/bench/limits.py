"""A device's own limits, measured before the model runs, and the "this device" GpuSpec built from them."""

from __future__ import annotations

import warnings

from . import predict, probes
from .convert import Unsupported, _fp8_linear_class, _int8_weight_only_class, cpu_int8_engine, quantize_dynamic_int8

PROBE_REPEATS = 5


def _int8_layer(torch, device, n: int):
    """The int8 (or fp8) linear layer the model will run, n x n, and its input dtype."""
    lin = torch.nn.Linear(n, n, bias=False)
    if device.kind == "cpu":
        return quantize_dynamic_int8(torch, torch.nn.Sequential(lin), cpu_int8_engine(torch)), torch.float32
    if device.kind == "cuda":
        return _fp8_linear_class(torch)(lin.to(torch.bfloat16)).to(device.id), torch.bfloat16
    return _int8_weight_only_class(torch)(lin, torch.float16).to(device.id), torch.float16


def matmul_probe(torch, device, precision: str, n: int):
    """FLOP/s for `precision` on `device`; raises Unsupported with the reason when it cannot run."""
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    try:
        if precision in dtypes:
            return probes.matmul_flops(torch, device.id, dtypes[precision], n, PROBE_REPEATS)
        if precision == "int8" and device.kind == "cuda":
            raise Unsupported(f"no int8 matmul path in torch {torch.__version__} for {device.name}; "
                              "fp8 needs compute capability 8.9+")
        layer, dtype = _int8_layer(torch, device, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return probes.linear_flops(torch, device.id, layer, n, n, dtype, PROBE_REPEATS)
    except Unsupported:
        raise
    except Exception as exc:  # noqa: BLE001 - a kernel the device lacks: a reason, not a traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Unsupported(f"{precision} matmul failed on {device.id}: {first[:200]}") from None


def measure_limits(torch, device, precisions, s: dict, tick):
    """(limits dict, GpuSpec, {precision: reason it cannot run})."""
    tick(f"{device.id}: memory read bandwidth")
    budget = s["probe_bytes"]
    if device.kind != "cpu":
        budget = min(budget, device.available_memory_bytes / 4)
    read, kernel = probes.read_bandwidth(torch, device.id, budget, PROBE_REPEATS)
    pages, read_4k = device.kind, None
    if device.kind == "cpu":
        pages = probes.cpu_pages_of_new_buffer(torch, budget)
        if pages == "transparent huge pages":
            read_4k = probes.cpu_read_bandwidth_4k(torch, budget, PROBE_REPEATS)
    else:
        pages = f"{device.kind} device memory"
    matmul, failed = {}, {}
    if device.kind == "cuda":  # TF32 is a separate figure from strict fp32
        torch.backends.cuda.matmul.allow_tf32 = True
        matmul["tf32"] = probes.matmul_flops(torch, device.id, torch.float32, s["probe_matmul"], PROBE_REPEATS)
        torch.backends.cuda.matmul.allow_tf32 = False
    # fp32 always: the core needs a 16- or 32-bit peak for any estimate, even of an int8-only run.
    for p in dict.fromkeys([*precisions, "fp32"]):
        tick(f"{device.id}: {p} matmul")
        try:
            matmul[p] = matmul_probe(torch, device, p, s["probe_matmul"])
        except Unsupported as exc:
            if p in precisions:
                failed[p] = str(exc)
    strict = {k: v for k, v in matmul.items() if k != "tf32" or s["tf32"]}
    if s["tf32"] and "tf32" in strict:
        strict["fp32"] = strict.pop("tf32")
    gpu = predict.device_gpu_spec(device, read.median, {k: v for k, v in strict.items() if k in predict.PEAK_SLOT})
    limit = {
        "device": device.id,
        "memory_read_bytes_per_s": read.to_dict(),
        "memory_read_kernel": f"torch {kernel} over {budget / 2**20:.0f} MiB fp32",
        "memory_pages": pages,
        "memory_read_4k_bytes_per_s": read_4k.to_dict() if read_4k else None,
        "matmul_flop_per_s": {k: v.to_dict() for k, v in matmul.items()},
        "matmul_size": s["probe_matmul"],
        "gpu_spec": None,  # filled by result.add_limits
    }
    return limit, gpu, failed
