"""Speculative decoding: Leviathan et al.'s formula and a simulation that never changes the output."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infercost.physics import speculative


def test_expected_tokens_known_values():
    assert speculative.expected_tokens_per_pass(0.8, 4) == pytest.approx((1 - 0.8**5) / 0.2)
    assert speculative.expected_tokens_per_pass(0.0, 4) == 1.0
    assert speculative.expected_tokens_per_pass(1.0, 4) == 5.0


def test_speedup_reduces_to_the_paper_formula():
    # with the verify pass costing one target step, speedup = E / (k c + 1) (Leviathan et al. Thm 3.8)
    assert speculative.speedup(0.8, 5, 0.05, 1.0, 1.0) == pytest.approx((1 - 0.8**6) / 0.2 / 1.25, rel=1e-9)


@given(st.integers(1, 16), st.floats(0.001, 1), st.floats(1, 2))
def test_no_acceptance_is_a_slowdown(k, c, verify):
    assert speculative.speedup(0.0, k, c, 1.0, verify) < 1


@given(st.floats(0, 1), st.integers(1, 12), st.integers(1, 200), st.integers(0, 2**32))
def test_simulation_output_equals_the_target_alone(alpha, k, n, seed):
    trace = speculative.simulate(alpha, k, n, seed)
    assert trace.identical and len(trace.output) == n
    written = [e.token for e in trace.events if e.kind != "rejected"]
    assert tuple(written) == trace.output


def test_simulation_shows_all_three_kinds_and_is_seeded():
    trace = speculative.simulate(0.6, 4, 30, seed=7)
    assert {e.kind for e in trace.events} == {"accepted", "rejected", "target"}
    assert trace == speculative.simulate(0.6, 4, 30, seed=7)


def test_simulated_acceptance_tracks_alpha():
    trace = speculative.simulate(0.7, 4, 5000, seed=1)
    assert trace.accepted / trace.proposed == pytest.approx(0.7, abs=0.03)
    assert len(trace.output) / trace.target_passes == pytest.approx(
        speculative.expected_tokens_per_pass(0.7, 4), rel=0.05)
