"""Cost per million tokens and per answer."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infercost.physics import cost


def test_known_answer():
    # 1 GPU at $2/h writing 1,000 tokens/s all hour: 3.6 M tokens for $2
    assert cost.usd_per_million_tokens(1, 2.0, 1000, 1.0) == pytest.approx(2 / 3.6)


def test_idle_time_raises_the_price():
    assert cost.usd_per_million_tokens(1, 2.0, 1000, 0.25) == pytest.approx(4 * cost.usd_per_million_tokens(1, 2.0, 1000, 1))


def test_answer_cost():
    assert cost.usd_per_answer(1000, 500, 0.1, 1.0) == pytest.approx((1000 * 0.1 + 500 * 1.0) / 1e6)


@given(st.integers(1, 1024), st.floats(0.01, 1000), st.floats(1e-3, 1e7), st.floats(0.01, 1))
def test_costs_positive_and_finite(g, price, tps, busy):
    usd = cost.usd_per_million_tokens(g, price, tps, busy)
    assert usd > 0 and math.isfinite(usd)
