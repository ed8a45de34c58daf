from __future__ import annotations

import pytest

from infercost.bench.stats import Stat, error_percent
from infercost.bench.timing import repeat


def test_stat_median_min_max_spread():
    s = Stat.of([3.0, 1.0, 2.0])
    assert (s.median, s.min, s.max, s.repeats) == (2.0, 1.0, 3.0, 3)
    assert s.spread_percent == pytest.approx(100.0)
    assert s.inverse(10).median == pytest.approx(5.0)
    assert s.to_dict()["samples"] == [3.0, 1.0, 2.0]


def test_stat_needs_samples():
    with pytest.raises(ValueError):
        Stat.of([])


def test_error_percent_sign_and_missing():
    assert error_percent(1.1, 1.0) == pytest.approx(10.0)
    assert error_percent(0.5, 1.0) == pytest.approx(-50.0)
    assert error_percent(None, 1.0) is None and error_percent(1.0, 0.0) is None


def test_repeat_warms_up_then_times_each_repeat():
    calls = []
    st = repeat(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(calls) == 5 and st.repeats == 3 and st.min > 0
