"""Summaries of repeated timings: median with min-max (pure Python; no torch)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Stat:
    """A measured quantity over repeats: median, min, max and every sample (base units)."""

    median: float
    min: float
    max: float
    samples: tuple[float, ...]

    @classmethod
    def of(cls, samples: list[float] | tuple[float, ...]) -> "Stat":
        if not samples:
            raise ValueError("no samples")
        values = tuple(float(s) for s in samples)
        return cls(statistics.median(values), min(values), max(values), values)

    @property
    def repeats(self) -> int:
        return len(self.samples)

    @property
    def spread_percent(self) -> float:
        """(max - min) / median, in percent: how far apart the repeats landed."""
        return 100.0 * (self.max - self.min) / self.median if self.median else 0.0

    def inverse(self, numerator: float = 1.0) -> "Stat":
        """numerator / x for every sample (seconds per token -> tokens per second)."""
        return Stat.of([numerator / s for s in self.samples])

    def scaled(self, factor: float) -> "Stat":
        return Stat.of([s * factor for s in self.samples])

    def to_dict(self) -> dict:
        return {
            "median": self.median,
            "min": self.min,
            "max": self.max,
            "repeats": self.repeats,
            "samples": list(self.samples),
        }


def error_percent(estimate: float | None, measured: float | None) -> float | None:
    """(estimate - measured) / measured in percent; positive when the estimate is too high."""
    if estimate is None or not measured:
        return None
    return 100.0 * (estimate - measured) / measured
