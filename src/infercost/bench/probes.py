"""This machine's own limits: sustained memory read bandwidth and matmul throughput per precision.

Memory read: the fastest of a few single-pass read kernels (sum, dot) over a buffer far larger
than the last-level cache. On the CPU torch allocates with transparent huge pages when
THP_MEM_ALLOC_ENABLE=1 (set by the CLI where the kernel offers THP); the probe reports which page
size it got and, for comparison, the same read on ordinary 4 KB pages (numpy memory, madvise off).
Matmul: square products for fp32/bf16/fp16 and the int8 kernels the benchmark runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from .stats import Stat
from .timing import repeat, sync_for

KINDS_READ = ("sum", "dot")


def anon_huge_bytes() -> int | None:
    """Bytes of this process's memory on transparent huge pages (Linux), None where unknown."""
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return None
    m = re.search(r"AnonHugePages:\s+(\d+) kB", text)
    return int(m.group(1)) * 1024 if m else None


def _read_kernels(torch, buf):
    return {"sum": lambda: buf.sum(), "dot": lambda: torch.dot(buf, buf)}


def read_bandwidth(torch, device: str, buffer_bytes: float, repeats: int) -> tuple[Stat, str]:
    """(bytes/s of the best read kernel, which kernel) over a fresh fp32 buffer on `device`."""
    n = int(buffer_bytes) // 4
    buf = torch.ones(n, dtype=torch.float32, device=device)
    sync = sync_for(device)
    best: tuple[Stat, str] | None = None
    for name, fn in _read_kernels(torch, buf).items():
        st = repeat(fn, repeats=repeats, warmup=1, sync=sync).inverse(buf.numel() * 4)
        if best is None or st.median > best[0].median:
            best = (st, name)
    del buf
    assert best is not None
    return best


def cpu_pages_of_new_buffer(torch, buffer_bytes: float) -> str:
    """Whether a fresh torch allocation of this size lands on huge pages."""
    before = anon_huge_bytes()
    buf = torch.ones(int(buffer_bytes) // 4, dtype=torch.float32)
    after = anon_huge_bytes()
    del buf
    if before is None or after is None:
        return "unknown page size"
    return "transparent huge pages" if after - before >= buffer_bytes / 2 else "4 KB pages"


def cpu_read_bandwidth_4k(torch, buffer_bytes: float, repeats: int) -> Stat | None:
    """The same read on ordinary 4 KB pages: numpy memory with its huge-page madvise turned off."""
    try:
        import numpy as np

        setter = np._core.multiarray._set_madvise_hugepage
    except (ImportError, AttributeError):
        return None
    previous = setter(False)
    try:
        arr = np.ones(int(buffer_bytes) // 4, dtype=np.float32)
    finally:
        setter(previous)
    buf = torch.from_numpy(arr)
    best = None
    for fn in _read_kernels(torch, buf).values():
        st = repeat(fn, repeats=repeats, warmup=1).inverse(buf.numel() * 4)
        if best is None or st.median > best.median:
            best = st
    return best


def matmul_flops(torch, device: str, dtype, n: int, repeats: int) -> Stat:
    """FLOP/s of an n x n x n product in `dtype` (2 n^3 FLOP)."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    return repeat(lambda: a @ b, repeats=repeats, warmup=1, sync=sync_for(device)).inverse(2.0 * n ** 3)


def linear_flops(torch, device: str, layer, in_features: int, tokens: int, dtype, repeats: int) -> Stat:
    """FLOP/s of a (converted) linear layer on `tokens` rows: how the model's int8/fp8 kernels run."""
    x = torch.randn(tokens, in_features).to(device=device, dtype=dtype)
    out_features = layer(x).shape[-1]
    with torch.inference_mode():
        st = repeat(lambda: layer(x), repeats=repeats, warmup=1, sync=sync_for(device))
    return st.inverse(2.0 * tokens * in_features * out_features)
