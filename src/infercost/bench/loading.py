"""Build or load the model with torch: seeded random weights for built-in shapes and configs."""

from __future__ import annotations

from .models import ModelError, ModelSource

POOL_VALUES = 1 << 26  # 67M values (268 MB at fp32) from which every matrix takes a seeded slice


def _config_object(config: dict):
    from transformers import AutoConfig

    fields = {k: v for k, v in config.items() if k not in ("architectures", "transformers_version", "auto_map")}
    model_type = fields.pop("model_type")
    try:
        return AutoConfig.for_model(model_type, **fields)
    except (ValueError, KeyError) as exc:
        raise ModelError("--config", f"transformers does not know model_type {model_type!r} ({exc})") from None


def _dtype_kwarg(dtype) -> dict:
    """transformers 4.56 renamed torch_dtype to dtype."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def fill_random(model, seed: int, std: float) -> None:
    """Seeded random weights: normal(0, std) matrices, unit norm scales, zero biases.

    Drawing 1e9 normal values takes ~10 s on two cores, so each matrix copies a slice of one seeded
    pool of POOL_VALUES values at a seeded offset instead. Speed does not depend on weight values.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    size = min(POOL_VALUES, max(p.numel() for p in model.parameters()))
    pool = torch.empty(size).normal_(0.0, std, generator=gen)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() < 2:
                p.fill_(1.0 if "norm" in name or name.endswith("layernorm.weight") else 0.0)
                continue
            flat = p.view(-1)
            offset = int(torch.randint(0, size, (1,), generator=gen))
            done = 0
            while done < flat.numel():
                n = min(flat.numel() - done, size - offset)
                flat[done:done + n].copy_(pool[offset:offset + n])
                done += n
                offset = 0


def build_model(source: ModelSource, seed: int):
    """The model in fp32 on the CPU, in eval mode."""
    import torch
    from transformers import AutoModelForCausalLM

    if source.random_weights:
        from transformers.initialization import no_init_weights

        config = _config_object(source.config)
        try:
            with no_init_weights():
                model = AutoModelForCausalLM.from_config(config, **_dtype_kwarg(torch.float32))
        except ValueError as exc:
            raise ModelError("--config", f"not a causal language model: {str(exc).splitlines()[0][:160]}") from None
        fill_random(model, seed, float(source.config.get("initializer_range", 0.02)))
    else:
        try:
            model = AutoModelForCausalLM.from_pretrained(source.id, **_dtype_kwarg(torch.float32))
        except Exception as exc:  # noqa: BLE001 - any loading failure is one line to the user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError("--model", f"cannot load {source.id}: {first[:160]}") from None
    return model.eval()
