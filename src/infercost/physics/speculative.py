"""Speculative decoding (Leviathan, Kalman, Matias 2023, arXiv 2211.17192): a draft guesses, the target checks."""

from __future__ import annotations

import random
from dataclasses import dataclass

TARGET_TEXT = (
    "A small draft model guesses the next few words and the big model checks every guess in one "
    "pass so the answer arrives sooner yet stays exactly what the big model would have written alone"
).split()
WRONG_GUESSES = ("maybe", "quickly", "the", "several", "then", "it", "small", "model", "very", "and")


def expected_tokens_per_pass(acceptance_rate: float, draft_tokens: int) -> float:
    """E = (1 - alpha^(k+1)) / (1 - alpha): tokens written per target pass (Leviathan et al. eq. 1)."""
    if acceptance_rate >= 1.0:
        return draft_tokens + 1.0
    return (1 - acceptance_rate ** (draft_tokens + 1)) / (1 - acceptance_rate)


def speedup(acceptance_rate: float, draft_tokens: int, draft_step_s: float, target_step_s: float,
            verify_step_s: float) -> float:
    """E * T_target / (k * T_draft + T_verify); with T_verify = T_target this is E / (k c + 1) (§3.4)."""
    tokens = expected_tokens_per_pass(acceptance_rate, draft_tokens)
    return tokens * target_step_s / (draft_tokens * draft_step_s + verify_step_s)


@dataclass(frozen=True)
class SpecEvent:
    kind: str  # "accepted" (draft guess kept), "rejected" (draft guess thrown away), "target" (big model's own token)
    token: str
    target_pass: int


@dataclass(frozen=True)
class SpecTrace:
    events: tuple[SpecEvent, ...]
    output: tuple[str, ...]
    target_output: tuple[str, ...]
    target_passes: int
    accepted: int
    proposed: int

    @property
    def identical(self) -> bool:
        return self.output == self.target_output


def target_next(prefix: list[str]) -> str:
    """The big model, greedy: its next word is fixed by what came before."""
    return TARGET_TEXT[len(prefix) % len(TARGET_TEXT)]


def simulate(acceptance_rate: float, draft_tokens: int, output_tokens: int, seed: int) -> SpecTrace:
    """Run greedy speculative decoding with a draft that agrees with the target with probability alpha.

    Each pass: the draft proposes k words; the target scores all k+1 prefixes in one pass; guesses
    are kept up to the first disagreement, where the target's own word is written instead (or a
    bonus word after k accepted guesses). The output equals what the target writes alone.
    """
    rng = random.Random(seed)
    out: list[str] = []
    events: list[SpecEvent] = []
    passes = accepted = proposed = 0
    while len(out) < output_tokens:
        guesses: list[str] = []
        for _ in range(draft_tokens):
            right = target_next(out + guesses)
            guesses.append(right if rng.random() < acceptance_rate else rng.choice([w for w in WRONG_GUESSES if w != right]))
        checked = [target_next(out + guesses[:j]) for j in range(draft_tokens + 1)]  # one target pass
        passes += 1
        for j in range(draft_tokens + 1):
            if len(out) >= output_tokens:
                break
            if j < draft_tokens:
                proposed += 1
            if j < draft_tokens and guesses[j] == checked[j]:
                accepted += 1
                events.append(SpecEvent("accepted", guesses[j], passes))
                out.append(guesses[j])
                continue
            if j < draft_tokens:
                events.append(SpecEvent("rejected", guesses[j], passes))
            events.append(SpecEvent("target", checked[j], passes))
            out.append(checked[j])
            break
    alone: list[str] = []
    while len(alone) < output_tokens:
        alone.append(target_next(alone))
    return SpecTrace(tuple(events), tuple(out), tuple(alone), passes, accepted, proposed)
