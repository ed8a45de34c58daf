"""Speculative decoding measured for real: the output is the target's own greedy output."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from infercost.bench import convert, engine, specdec  # noqa: E402
from infercost.bench.devices import cpu_device  # noqa: E402
from infercost.bench.loading import build_model  # noqa: E402
from infercost.bench.models import resolve_source  # noqa: E402
from infercost.bench.runner import make_prompt  # noqa: E402

NEW = 24


@pytest.fixture(scope="module")
def tiny():
    source = resolve_source(None, None, quick=True)
    target = build_model(source, seed=0)
    prompt = make_prompt(torch, source.config["vocab_size"], 16, 0, "cpu")
    reference = engine.generate(target, prompt, NEW)[0].tolist()
    return source, target, prompt, reference


@pytest.fixture(scope="module")
def int8_draft(tiny):
    return convert.convert(torch, tiny[1], cpu_device(torch), "int8", in_place=False).model


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_int8_draft_output_equals_target_greedy(tiny, int8_draft, k):
    _, target, prompt, reference = tiny
    run = specdec.generate(torch, target, int8_draft, prompt, NEW, k)
    assert run.tokens == reference
    assert 0 <= run.accepted <= run.proposed == k * run.rounds
    assert run.rounds * (k + 1) >= NEW - 1


def test_perfect_draft_accepts_everything(tiny):
    _, target, prompt, reference = tiny
    run = specdec.generate(torch, target, target, prompt, NEW, 3)
    assert run.tokens == reference and run.acceptance_rate == 1.0
    assert run.tokens_per_target_pass == pytest.approx((NEW - 1) / run.rounds)


def test_unrelated_draft_is_still_exact(tiny):
    source, target, prompt, reference = tiny
    other = build_model(source, seed=1)  # different random weights: it guesses wrong almost always
    run = specdec.generate(torch, target, other, prompt, NEW, 4)
    assert run.tokens == reference
    assert run.acceptance_rate < 0.5


def test_draft_length_must_be_positive(tiny):
    _, target, prompt, _ = tiny
    with pytest.raises(ValueError):
        specdec.generate(torch, target, target, prompt, NEW, 0)
