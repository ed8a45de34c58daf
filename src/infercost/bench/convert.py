"""Precision conversion: which three precisions each device runs, and how the model gets there.

CPU: fp32 (eager), bf16 (eager), int8 (dynamic int8 linear layers, torch.ao, the engine below).
CUDA: fp32 (TF32 off unless asked), bf16 (fp16 where bf16 is absent), fp8 (compute capability
8.9+, torch._scaled_mm) else int8 is reported as unsupported. MPS: fp32, fp16, int8 weight-only
(torch._weight_int8pack_mm). Every conversion is tried on a small input first, so a precision the
device cannot run becomes a reason in the report, not a traceback.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

from ..specs import Precision

CORE_PRECISION = {"fp32": Precision.BIT32, "bf16": Precision.BIT16, "fp16": Precision.BIT16,
                  "int8": Precision.BIT8, "fp8": Precision.BIT8}
ALL_PRECISIONS = tuple(CORE_PRECISION)
# Measured here (2-core Xeon, torch 2.13, 1.1B Llama shape): fbgemm and x86 decoded at ~55 ms/token
# at best, onednn at ~80 ms (onednn read a 128-token prompt a little faster). Decode speed decides.
CPU_INT8_ENGINES = ("fbgemm", "x86", "onednn")


class Unsupported(Exception):
    """A precision this device cannot run; str(self) is the reason for the report."""


@dataclass
class Converted:
    model: object
    precision: str
    path: str  # how it runs, named for the report
    stored_bytes: int  # every weight held
    read_bytes: int  # weights one decode step reads (the input embedding table contributes one row)


def precisions_for(device) -> tuple[str, ...]:
    """The three precisions the device runs well."""
    if device.kind == "cuda":
        cc = tuple(int(x) for x in device.details.get("compute_capability", "0.0").split("."))
        half = "bf16" if device.details.get("bf16") else "fp16"
        return ("fp32", half, "fp8" if cc >= (8, 9) else "int8")
    if device.kind == "mps":
        return ("fp32", "fp16", "int8")
    return ("fp32", "bf16", "int8")


SUPPORTED = {"cpu": ("fp32", "bf16", "int8"), "cuda": ("fp32", "bf16", "fp16", "fp8", "int8"),
             "mps": ("fp32", "fp16", "int8")}


def check_supported(device, precision: str) -> None:
    """Raise Unsupported when this benchmark has no path for `precision` on `device`'s kind."""
    runs = SUPPORTED[device.kind]
    if precision not in runs:
        raise Unsupported(f"the benchmark has no {precision} path on {device.kind} (it runs {', '.join(runs)})")


def cpu_int8_engine(torch) -> str:
    for engine in CPU_INT8_ENGINES:
        if engine in torch.backends.quantized.supported_engines:
            return engine
    raise Unsupported("this torch has no quantized engine for int8 on the CPU")


def quantize_dynamic_int8(torch, model, engine: str):
    """nn.Linear -> dynamic int8 Linear (int8 weights per tensor, activations quantized per call)."""
    torch.backends.quantized.engine = engine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notice points at torchao
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


def _fp8_linear_class(torch):
    class Fp8Linear(torch.nn.Module):
        """fp8 (e4m3) weights and activations, per-tensor scales, bf16 out (torch._scaled_mm)."""

        def __init__(self, lin):
            super().__init__()
            w = lin.weight.detach().float()
            self.register_buffer("w_scale", (w.abs().max() / 448.0).clamp(min=1e-12).reshape(()))
            self.register_buffer("weight", (w / self.w_scale).to(torch.float8_e4m3fn).t().contiguous().t())
            self.bias = lin.bias
            self.out_features = lin.out_features

        def forward(self, x):
            shape = x.shape
            x2 = x.reshape(-1, shape[-1])
            rows = x2.shape[0]
            pad = (-rows) % 16
            if pad:
                x2 = torch.nn.functional.pad(x2, (0, 0, 0, pad))
            xs = (x2.abs().max().float() / 448.0).clamp(min=1e-12)
            xq = (x2 / xs).to(torch.float8_e4m3fn)
            y = torch._scaled_mm(xq, self.weight.t(), scale_a=xs, scale_b=self.w_scale, out_dtype=torch.bfloat16)
            y = y[:rows]
            if self.bias is not None:
                y = y + self.bias
            return y.reshape(*shape[:-1], self.out_features)

    return Fp8Linear


def _int8_weight_only_class(torch):
    class Int8WeightOnlyLinear(torch.nn.Module):
        """int8 weights with one scale per output row, 16-bit activations (torch._weight_int8pack_mm)."""

        def __init__(self, lin, dtype):
            super().__init__()
            w = lin.weight.detach().float()
            scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)
            self.register_buffer("weight", torch.round(w / scale[:, None]).to(torch.int8))
            self.register_buffer("scales", scale.to(dtype))
            self.bias = lin.bias
            self.out_features = lin.out_features

        def forward(self, x):
            shape = x.shape
            y = torch._weight_int8pack_mm(x.reshape(-1, shape[-1]), self.weight, self.scales)
            if self.bias is not None:
                y = y + self.bias
            return y.reshape(*shape[:-1], self.out_features)

    return Int8WeightOnlyLinear


def _swap_linears(torch, model, make) -> None:
    for name, child in list(model.named_children()):
        if isinstance(child, torch.nn.Linear):
            setattr(model, name, make(child))
        else:
            _swap_linears(torch, child, make)


def weight_bytes(torch, model) -> tuple[int, int]:
    """(stored, read per decode step) bytes of the weights, counting packed int8 layers too."""
    stored = read = 0
    embed = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    for module in model.modules():
        own = 0
        packed = getattr(module, "_packed_params", None)
        if packed is not None and hasattr(module, "weight") and callable(module.weight):
            w = module.weight()
            own += w.numel() * w.element_size() + (module.bias().numel() * 4 if module.bias() is not None else 0)
        for t in list(module.parameters(recurse=False)) + list(module.buffers(recurse=False)):
            if t.is_floating_point() or t.dtype in (torch.int8, torch.float8_e4m3fn):
                own += t.numel() * t.element_size()
        stored += own
        if module is embed:
            read += own // max(1, getattr(module, "num_embeddings", 1))
        else:
            read += own
    return stored, read


def convert(torch, model, device, precision: str, in_place: bool, tf32: bool = False) -> Converted:
    """The fp32 CPU `model` in `precision` on `device` (a copy unless `in_place`)."""
    check_supported(device, precision)
    m = model if in_place else copy.deepcopy(model)
    target = device.id
    if device.kind == "cpu":
        if precision == "fp32":
            path = "PyTorch eager, fp32"
        elif precision == "bf16":
            m = m.to(torch.bfloat16)
            path = "PyTorch eager, bf16"
        else:
            engine = cpu_int8_engine(torch)
            m = quantize_dynamic_int8(torch, m, engine)
            path = f"torch.ao dynamic int8 linear layers ({engine} engine), fp32 activations"
    elif device.kind == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        if precision == "fp32":
            m = m.to(target)
            path = f"PyTorch eager, fp32 (TF32 {'on' if tf32 else 'off'})"
        elif precision in ("bf16", "fp16"):
            m = m.to(device=target, dtype=torch.bfloat16 if precision == "bf16" else torch.float16)
            path = f"PyTorch eager, {precision}"
        elif precision == "fp8":
            m = m.to(torch.bfloat16)
            cls = _fp8_linear_class(torch)
            lm_head = m.get_output_embeddings()
            _swap_linears(torch, m, lambda lin: lin if lin is lm_head else cls(lin))
            m = m.to(target)
            path = "fp8 e4m3 linear layers, per-tensor scales (torch._scaled_mm), bf16 elsewhere; lm_head bf16"
        else:
            raise Unsupported(f"no int8 matmul path in torch {torch.__version__} for {device.name}; "
                              "fp8 needs compute capability 8.9+")
    else:  # mps
        if precision == "fp32":
            m = m.to(target)
            path = "PyTorch eager, fp32"
        elif precision == "fp16":
            m = m.to(device=target, dtype=torch.float16)
            path = "PyTorch eager, fp16"
        else:
            m = m.to(torch.float16)
            cls = _int8_weight_only_class(torch)
            _swap_linears(torch, m, lambda lin: cls(lin, torch.float16))
            m = m.to(target)
            path = "int8 weight-only linear layers (torch._weight_int8pack_mm), fp16 activations"
    _self_test(torch, m, target, precision)
    stored, read = weight_bytes(torch, m)
    return Converted(m.eval(), precision, path, stored, read)


def _self_test(torch, model, device: str, precision: str) -> None:
    """One tiny forward pass: a kernel the device lacks fails here, with a one-line reason."""
    try:
        with torch.inference_mode():
            model(torch.zeros(1, 2, dtype=torch.long, device=device), use_cache=False)
    except Exception as exc:  # noqa: BLE001 - reported as a skipped precision, never a traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Unsupported(f"{precision} failed on {device}: {first[:200]}") from None
