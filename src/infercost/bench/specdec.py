"""Speculative decoding, measured for real (Leviathan et al. 2023, arXiv 2211.17192), greedy.

A draft model proposes k tokens one at a time; the target scores all of them in one forward pass;
the longest prefix where the target's own argmax agrees is kept, plus the target's next token. The
output is the target's greedy output token for token (up to the target's floating-point agreement
between one-token and (k+1)-token passes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from . import engine
from .timing import no_sync


@dataclass(frozen=True)
class SpecRun:
    tokens: list[int]  # new_tokens tokens, the first from the target's prefill
    rounds: int
    proposed: int
    accepted: int
    decode_s: float  # after both prefills: every draft step and verify pass
    draft_s: float
    verify_s: float
    draft_prefill_s: float

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposed if self.proposed else 0.0

    @property
    def tokens_per_target_pass(self) -> float:
        return (len(self.tokens) - 1) / self.rounds if self.rounds else 0.0


def generate(torch, target, draft, prompt, new_tokens: int, k: int, sync=no_sync) -> SpecRun:
    """Greedy speculative generation of `new_tokens` tokens after `prompt` ([1, n] on one device)."""
    if k < 1:
        raise ValueError("draft length k must be at least 1")
    dev = prompt.device
    with torch.inference_mode():
        logits, tcache = engine.forward(target, prompt)
        full = prompt[0].tolist() + [int(engine.greedy(logits))]
        sync()
        t0 = time.perf_counter()
        _, dcache = engine.forward(draft, prompt)
        sync()
        draft_prefill_s = time.perf_counter() - t0
        dlen = prompt.shape[1]
        rounds = proposed = accepted = 0
        draft_s = verify_s = 0.0
        start = time.perf_counter()
        while len(full) - prompt.shape[1] < new_tokens:
            t_round = time.perf_counter()
            d_in = torch.tensor([full[dlen:]], device=dev)
            proposals = []
            for _ in range(k):
                logits, dcache = engine.forward(draft, d_in, dcache)
                d_in = engine.greedy(logits)
                proposals.append(d_in)
            sync()
            t_verify = time.perf_counter()
            verify_in = torch.cat([torch.tensor([[full[-1]]], device=dev), *proposals], dim=1)
            logits, tcache = engine.forward(target, verify_in, tcache, last_only=False)
            choice = logits[0, -(k + 1):].argmax(dim=-1).tolist()
            sync()
            t_end = time.perf_counter()
            guesses = torch.cat(proposals, dim=1)[0].tolist()
            n = 0
            while n < k and guesses[n] == choice[n]:
                n += 1
            before = len(full)
            full.extend(guesses[:n] + [choice[n]])
            engine.crop(tcache, before + n)  # the last written token is fed next round
            dlen = min(before + n, before + k - 1)
            engine.crop(dcache, dlen)
            rounds += 1
            proposed += k
            accepted += n
            draft_s += t_verify - t_round
            verify_s += t_end - t_verify
        decode_s = time.perf_counter() - start
    tokens = full[prompt.shape[1]:][:new_tokens]
    return SpecRun(tokens, rounds, proposed, accepted, decode_s, draft_s, verify_s, draft_prefill_s)


def target_alone(torch, target, prompt, new_tokens: int, sync=no_sync) -> tuple[float, list[int]]:
    """(decode seconds after the prefill, tokens): the baseline, timed beside each speculative run."""
    with torch.inference_mode():
        logits, cache = engine.forward(target, prompt)
        tok = engine.greedy(logits)
        tokens = [int(tok)]
        sync()
        start = time.perf_counter()
        for _ in range(new_tokens - 1):
            logits, cache = engine.forward(target, tok, cache)
            tok = engine.greedy(logits)
            tokens.append(int(tok))
        sync()
    return time.perf_counter() - start, tokens
