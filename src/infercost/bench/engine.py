"""A plain greedy generation loop over a Hugging Face causal LM and its KV cache.

Our own loop rather than `generate`: one forward per token, argmax, nothing else, so the timing is
the model's and not the sampler's. Works across transformers 4.45+ (`past_key_values`) and 5.x
(`cache`).
"""

from __future__ import annotations

import inspect
from functools import lru_cache


@lru_cache(maxsize=64)
def _cache_kwarg(forward_cls: type) -> str:
    params = inspect.signature(forward_cls.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _major() -> int:
    import transformers

    return int(transformers.__version__.split(".")[0])


def forward(model, ids, cache=None, last_only: bool = True):
    """(logits, cache) for token ids `ids` [batch, n] appended after `cache`."""
    kwargs = {_cache_kwarg(type(model)): cache, "use_cache": True}
    if last_only:
        kwargs["logits_to_keep"] = 1
    out = model(ids, **kwargs)
    new_cache = out.get("cache") if "cache" in out.keys() else out.get("past_key_values")
    return out.logits, new_cache


def greedy(logits):
    """The argmax token of the last position, shape [batch, 1]."""
    return logits[:, -1, :].argmax(dim=-1, keepdim=True)


def crop(cache, length: int) -> None:
    """Cut the cache back to its first `length` tokens (so a run can repeat from the same prompt)."""
    remove = cache.get_seq_length() - length
    if remove <= 0:
        return
    if _major() >= 5:
        cache.crop(-remove)
    else:
        cache.crop(length)


def repeat_batch(cache, batch: int) -> None:
    """Give every one of `batch` sequences its own copy of the cached prompt."""
    if batch > 1:
        cache.batch_repeat_interleave(batch)


def kv_tensors(cache):
    if hasattr(cache, "layers"):
        for layer in cache.layers:
            for name in ("keys", "values"):
                t = getattr(layer, name, None)
                if t is not None and hasattr(t, "nbytes"):
                    yield t
    else:  # transformers 4.x DynamicCache
        yield from getattr(cache, "key_cache", [])
        yield from getattr(cache, "value_cache", [])


def kv_bytes(cache) -> int:
    """Bytes the KV cache holds now."""
    return int(sum(t.numel() * t.element_size() for t in kv_tensors(cache)))


def generate(model, prompt, new_tokens: int):
    """Greedy tokens [batch, new_tokens] after `prompt`; the reference the speculative run must equal."""
    import torch

    with torch.inference_mode():
        logits, cache = forward(model, prompt)
        tokens = [greedy(logits)]
        for _ in range(new_tokens - 1):
            logits, cache = forward(model, tokens[-1], cache)
            tokens.append(greedy(logits))
    return torch.cat(tokens, dim=1)
