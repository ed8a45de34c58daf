"""Time one converted model: time to first token, decode at batch 1, total tokens/s at batch b."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import engine
from .memory import peak_since_reset, reset_peak
from .stats import Stat
from .timing import sync_for


@dataclass(frozen=True)
class RunSettings:
    prompt_tokens: int = 128
    new_tokens: int = 64
    batch_sizes: tuple[int, ...] = (1, 4, 16)
    batch_steps: int = 4
    repeats: int = 3
    seed: int = 0


@dataclass
class Measured:
    ttft_s: Stat
    decode_step_s: Stat  # mean step over the new_tokens - 1 steps after the first token, per repeat
    batches: dict[int, Stat] = field(default_factory=dict)  # step seconds at batch b
    kv_cache_bytes: int = 0  # at batch 1 after prompt + new tokens
    peak_memory_bytes: int | None = None  # working memory beyond what was resident before the run
    output_tokens: list[int] = field(default_factory=list)


def make_prompt(torch, vocab_size: int, tokens: int, seed: int, device: str):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (1, tokens), generator=gen).to(device)


Tick = Callable[[str], None]
WARMUP_PROMPT_TOKENS = 32


def measure(torch, model, device: str, prompt, s: RunSettings, tick: Tick = lambda _: None) -> Measured:
    """Warm-up, then `repeats` x (prefill + greedy decode), then decode steps at each batch size."""
    sync = sync_for(device)
    before = reset_peak(torch, device)
    ttft, steps, tokens = [], [], []
    prompt_cache = None
    kv_bytes = 0
    with torch.inference_mode():
        tick("warm-up")  # a short prompt and two steps: first-call costs, not the full length again
        logits, cache = engine.forward(model, prompt[:, :WARMUP_PROMPT_TOKENS])
        tok = engine.greedy(logits)
        for _ in range(2):
            logits, cache = engine.forward(model, tok, cache)
            tok = engine.greedy(logits)
        sync()
        for r in range(s.repeats):
            tick(f"repeat {r + 1}/{s.repeats}")
            sync()
            start = time.perf_counter()
            logits, cache = engine.forward(model, prompt)
            tok = engine.greedy(logits)
            sync()
            first = time.perf_counter()
            if prompt_cache is None:
                prompt_cache = (copy.deepcopy(cache), tok.clone())
            out = [tok]
            for _ in range(s.new_tokens - 1):
                logits, cache = engine.forward(model, out[-1], cache)
                out.append(engine.greedy(logits))
            sync()
            end = time.perf_counter()
            ttft.append(first - start)
            steps.append((end - first) / (s.new_tokens - 1))
            if not tokens:
                tokens = torch.cat(out, dim=1)[0].tolist()
                kv_bytes = engine.kv_bytes(cache)
        del cache
        batches = {1: Stat.of(steps)} if 1 in s.batch_sizes else {}
        for b in s.batch_sizes:
            if b == 1:
                continue
            tick(f"batch {b}")
            batches[b] = _batch_steps(torch, model, prompt_cache, b, s, sync)
    peak = peak_since_reset(torch, device)
    working = peak - before if peak is not None and before is not None else None
    return Measured(Stat.of(ttft), Stat.of(steps), batches, kv_bytes, working, tokens)


def _batch_steps(torch, model, prompt_cache, batch: int, s: RunSettings, sync) -> Stat:
    """Seconds per decode step for `batch` sequences, each holding the prompt's KV cache."""
    cache = copy.deepcopy(prompt_cache[0])
    engine.repeat_batch(cache, batch)
    first = prompt_cache[1].repeat(batch, 1)
    length = s.prompt_tokens
    logits, cache = engine.forward(model, first, cache)  # warm-up step at this batch size
    samples = []
    for _ in range(s.repeats):
        engine.crop(cache, length)
        tok = first
        sync()
        start = time.perf_counter()
        for _ in range(s.batch_steps):
            logits, cache = engine.forward(model, tok, cache)
            tok = engine.greedy(logits)
        sync()
        samples.append((time.perf_counter() - start) / s.batch_steps)
    return Stat.of(samples)
