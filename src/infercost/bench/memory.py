"""Peak memory of a run: the process's resident peak on the CPU, the allocator's peak on a GPU."""

from __future__ import annotations

from pathlib import Path


def _status_bytes(key: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def rss_bytes() -> int | None:
    return _status_bytes("VmRSS")


def reset_peak(torch, device: str) -> int | None:
    """Start a new peak; returns the resident bytes now (CPU) or allocated bytes now (GPU)."""
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats(device)
        return int(torch.cuda.memory_allocated(device))
    try:  # Linux: writing 5 to clear_refs resets VmHWM, the resident peak
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return rss_bytes()


def peak_since_reset(torch, device: str) -> int | None:
    if device.startswith("cuda"):
        return int(torch.cuda.max_memory_allocated(device))
    if device.startswith("mps"):
        try:
            return int(torch.mps.driver_allocated_memory())
        except AttributeError:
            return None
    return _status_bytes("VmHWM")
