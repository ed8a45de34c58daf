"""Fidelity: the published measurements map to scenarios (or say why not), the score holds, the note loads."""

import importlib
import json
import sys
from pathlib import Path

import pytest

from infercost import catalog
from infercost import fidelity as fidelity_data
from infercost.specs import Precision

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        module = importlib.import_module("fidelity")
        module.reference_path()
    except SystemExit:
        pytest.skip("shared/reference/measured-train.json is not in this checkout")
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


@pytest.fixture(scope="module")
def scored(bench):
    records, cases, unmapped = bench.load_cases()
    rows = bench.evaluate(cases)
    return records, cases, unmapped, rows


def test_every_measurement_is_mapped_or_has_a_reason(scored):
    records, cases, unmapped, _ = scored
    assert len(cases) + len(unmapped) == len(records) == 180
    assert all(u.reason for u in unmapped)
    assert len(cases) >= 150


def test_hold_out_is_deterministic_and_about_30_percent(bench, scored):
    records, cases, _, _ = scored
    share = sum(c.groups["split"] == "held-out" for c in cases) / len(cases)
    assert 0.2 < share < 0.4
    assert [bench.map_record(c.index, records[c.index]).groups["split"] for c in cases[:20]] == \
        [c.groups["split"] for c in cases[:20]]


def test_the_score_meets_the_bar(scored):
    _, cases, _, rows = scored
    errors = [abs(r["error"]) for r in rows if r["error"] is not None]
    assert len(errors) == len(cases)
    errors.sort()
    assert errors[len(errors) // 2] <= 0.12


def test_the_plain_roofline_is_worse(bench, scored):
    _, cases, _, rows = scored
    plain = sorted(abs(bench.error(bench.predict_plain(c), c.measured)) for c in cases)
    ours = sorted(abs(r["error"]) for r in rows)
    assert plain[len(plain) // 2] > 2 * ours[len(ours) // 2]


def test_shipped_summary_matches_a_fresh_run(bench, scored):
    records, cases, unmapped, rows = scored
    data = fidelity_data.summary()
    assert data is not None, "run: python benchmarks/fidelity.py --write-data"
    errors = sorted(abs(r["error"]) for r in rows)
    n = len(errors)
    median = (errors[n // 2] + errors[(n - 1) // 2]) / 2
    assert data["points"] == len(cases)
    assert data["overall_error_share"] == pytest.approx(median, abs=0.002)


def test_note_quotes_the_worst_matching_group():
    data = fidelity_data.summary()
    if data is None:
        pytest.skip("no data/fidelity.toml")
    note = fidelity_data.note(catalog.model("llama-3.1-70b"), Precision.BIT4, 1)
    expected = max(data["groups"]["precision"]["4-bit"], data["groups"]["gpus"]["1"],
                   data["groups"]["architecture"]["dense"])
    assert note.typical_error_share == pytest.approx(expected)
    assert note.held_out_error_share > 0 and note.caveats


def test_results_json_lists_unmapped_points_with_reasons():
    path = BENCHMARKS / "results" / "fidelity.json"
    if not path.exists():
        pytest.skip("benchmark not run")
    res = json.loads(path.read_text())
    assert res["mapped"] + res["unmapped"] == res["records"]
    assert all(u["reason"] for u in res["unmapped_points"])


@pytest.mark.parametrize("record", [
    {},
    {"model": "Llama-4-Scout", "gpu_type": "B200", "gpu_count": 1, "isl": 128, "osl": 128, "precision": "FP4",
     "concurrency": "max load", "unit": "output tokens/s (whole system)", "value": 1.0, "engine": "TensorRT-LLM"},
    {"model": "Llama-3.1-8B", "gpu_type": "RTX 6000 Pro", "gpu_count": 2, "isl": 128, "osl": 128, "precision": "FP4",
     "concurrency": "max load", "unit": "output tokens/s (whole system)", "value": 1.0,
     "engine": "TensorRT-LLM (trtllm-bench, PyTorch backend)", "parallelism": "TP1,PP2"},
    {"model": "Llama-3.1-8B", "gpu_type": "H100", "gpu_count": None, "isl": "ShareGPT", "osl": None,
     "precision": "BF16", "concurrency": "QPS=1", "unit": "x", "value": 1.5, "engine": "vLLM"},
])
def test_unusual_records_are_listed_not_crashed(bench, record):
    mapped = bench.map_record(0, record)
    assert isinstance(mapped, bench.Unmapped) and mapped.reason


def test_a_rate_and_a_per_user_record_map(bench):
    base = {"model": "Llama-3.1-8B-Instruct", "gpu_type": "H100 SXM", "gpu_count": 1, "isl": 500, "osl": 200,
            "precision": "FP8", "engine": "vLLM", "engine_version": "0.6", "value": 100.0, "metric": "m"}
    rate = bench.map_record(1, {**base, "concurrency": "4 req/s offered", "unit": "output tokens/s (whole system)"})
    user = bench.map_record(2, {**base, "concurrency": "concurrency 8", "unit": "tokens/s/user"})
    assert rate.quantity == "output" and user.quantity == "per_user"
    assert bench.predict(rate) == pytest.approx(4 * 200, rel=0.02)
    assert 30 < bench.predict(user) < 1000
