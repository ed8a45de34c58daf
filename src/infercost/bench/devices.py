"""Find the devices: the CPU always, CUDA GPUs and Apple MPS when present."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

THP_PATH = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@dataclass(frozen=True)
class Device:
    """One device the benchmark can run on, as found on this machine."""

    id: str  # "cpu", "cuda:0", "mps"
    kind: str  # "cpu" | "cuda" | "mps"
    name: str
    cores: int  # CPU: threads torch uses; CUDA: streaming multiprocessors; MPS: 0 (not reported)
    memory_bytes: float  # total memory the device can hold weights in
    available_memory_bytes: float  # free now (CPU: MemAvailable; GPU: free device memory)
    torch_version: str
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "id": self.id, "kind": self.kind, "name": self.name, "cores": self.cores,
            "memory_bytes": self.memory_bytes, "available_memory_bytes": self.available_memory_bytes,
            "torch_version": self.torch_version, "details": dict(self.details),
        }


def _meminfo() -> dict[str, float]:
    """/proc/meminfo in bytes (Linux); empty elsewhere."""
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key] = float(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def transparent_huge_pages() -> str:
    """The kernel's THP mode ("always", "madvise", "never"), or "absent" where there is none."""
    try:
        text = THP_PATH.read_text()
    except OSError:
        return "absent"
    for word in text.split():
        if word.startswith("["):
            return word.strip("[]")
    return "absent"


def system_memory() -> tuple[float, float]:
    """(total, available) bytes of RAM."""
    info = _meminfo()
    if info:
        return info.get("MemTotal", 0.0), info.get("MemAvailable", info.get("MemFree", 0.0))
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        avail = os.sysconf("SC_AVPHYS_PAGES")
        return float(pages * size), float(avail * size)
    except (ValueError, OSError, AttributeError):
        return 0.0, 0.0


def cpu_device(torch) -> Device:
    total, available = system_memory()
    return Device(
        id="cpu", kind="cpu", name=cpu_name(), cores=torch.get_num_threads(),
        memory_bytes=total, available_memory_bytes=available, torch_version=torch.__version__,
        details={
            "logical_cpus": os.cpu_count() or 0,
            "transparent_huge_pages": transparent_huge_pages(),
            "thp_mem_alloc_enable": os.environ.get("THP_MEM_ALLOC_ENABLE", ""),
            "quantized_engines": list(torch.backends.quantized.supported_engines),
            "machine": platform.machine(),
        },
    )


def cuda_devices(torch) -> list[Device]:
    if not torch.cuda.is_available():
        return []
    found = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        found.append(Device(
            id=f"cuda:{i}", kind="cuda", name=p.name, cores=p.multi_processor_count,
            memory_bytes=float(total), available_memory_bytes=float(free), torch_version=torch.__version__,
            details={"compute_capability": f"{p.major}.{p.minor}", "cuda": torch.version.cuda or "",
                     "bf16": bool(torch.cuda.is_bf16_supported())},
        ))
    return found


def mps_device(torch) -> list[Device]:
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        return []
    total, available = system_memory()
    try:
        limit = float(torch.mps.recommended_max_memory())
    except (AttributeError, RuntimeError):
        limit = total
    return [Device(id="mps", kind="mps", name=f"Apple {platform.machine()} GPU (MPS)", cores=0,
                   memory_bytes=limit, available_memory_bytes=min(available, limit) if available else limit,
                   torch_version=torch.__version__, details={"unified_memory": True})]


def find_devices(torch) -> list[Device]:
    """Every device torch can run on here: the CPU first, then CUDA GPUs, then MPS."""
    return [cpu_device(torch), *cuda_devices(torch), *mps_device(torch)]


def device_kinds_present(torch) -> set[str]:
    return {d.kind for d in find_devices(torch)}
