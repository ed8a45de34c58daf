"""The timing loop: warm-up, repeats, device synchronisation, median with min-max."""

from __future__ import annotations

import time
from collections.abc import Callable

from .stats import Stat


def no_sync() -> None:
    """The CPU runs synchronously: nothing to wait for."""


def sync_for(device: str) -> Callable[[], None]:
    """A function that waits until `device` has finished its queued work."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    if device.startswith("mps"):
        import torch

        return torch.mps.synchronize
    return no_sync


def time_once(fn: Callable[[], object], sync: Callable[[], None] = no_sync) -> float:
    """Seconds one call of `fn` takes, synchronised on both ends."""
    sync()
    start = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - start


def repeat(fn: Callable[[], object], repeats: int = 3, warmup: int = 1,
           sync: Callable[[], None] = no_sync, min_time_s: float = 0.0) -> Stat:
    """Time `fn` `repeats` times after `warmup` untimed calls.

    With `min_time_s`, each sample loops `fn` until it has run that long and reports the mean per
    call, so that very short calls are not dominated by the clock's resolution.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        calls = 0
        while True:
            fn()
            calls += 1
            sync()
            elapsed = time.perf_counter() - start
            if elapsed >= min_time_s:
                break
        samples.append(elapsed / calls)
    return Stat.of(samples)
