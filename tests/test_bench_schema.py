"""The result file: a real --quick result validates; broken ones are named field by field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from infercost.bench.schema import SCHEMA, load_result, validate_result, write_result

FIXTURE = Path(__file__).parent / "fixtures" / "bench_result_quick.json"


@pytest.fixture(scope="module")
def good() -> dict:
    return json.loads(FIXTURE.read_text())


def test_fixture_is_a_valid_complete_result(good):
    assert good["schema"] == SCHEMA
    assert validate_result(good) == []
    assert good["status"] == "complete"
    assert {r["precision"] for r in good["runs"]} == {"fp32", "bf16", "int8"}
    assert good["speculative"]["output_matches_target"] is True
    assert good["limits"][0]["gpu_spec"]["measured"] is True


def _broken(good, mutate) -> list[str]:
    bad = copy.deepcopy(good)
    mutate(bad)
    return validate_result(bad)


def test_not_an_object():
    assert validate_result([1, 2]) and "JSON object" in validate_result("x")[0]


def test_wrong_schema_version(good):
    problems = _broken(good, lambda r: r.update(schema="infercost.bench/0"))
    assert len(problems) == 1 and "infercost.bench/1" in problems[0]


@pytest.mark.parametrize("mutate, field", [
    (lambda r: r.pop("runs"), "result.runs"),
    (lambda r: r.update(status="half"), "status"),
    (lambda r: r["runs"][0]["ttft_s"].update(min=1e9), "runs[0].ttft_s"),
    (lambda r: r["runs"][0]["ttft_s"].update(repeats=7), "runs[0].ttft_s.samples"),
    (lambda r: r["runs"][0].update(device="tpu:0"), "runs[0].device"),
    (lambda r: r["runs"][0].update(precision="int4"), "runs[0].precision"),
    (lambda r: r["runs"][0]["decode_tokens_per_s"].update(median="fast"), "runs[0].decode_tokens_per_s.median"),
    (lambda r: r["limits"][0]["gpu_spec"].update(measured=False), "limits[0].gpu_spec.measured"),
    (lambda r: r["limits"][0].pop("memory_read_bytes_per_s"), "limits[0].memory_read_bytes_per_s"),
    (lambda r: r["speculative"].update(acceptance_rate=1.5), "speculative.acceptance_rate"),
    (lambda r: r["model"].update(random_weights="yes"), "model.random_weights"),
    (lambda r: r["skipped"].append({"device": "cpu"}), "skipped[0].precision"),
])
def test_broken_files_name_the_field(good, mutate, field):
    problems = _broken(good, mutate)
    assert any(p.startswith(field) for p in problems), problems


def test_write_is_atomic_and_leaves_no_temporary(tmp_path, good):
    path = write_result(good, tmp_path / "sub" / "r.json")
    assert json.loads(path.read_text()) == good
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_failed_write_keeps_the_old_file(tmp_path, good):
    path = write_result(good, tmp_path / "r.json")
    with pytest.raises(ValueError):
        write_result({**good, "total_s": float("nan")}, path)
    assert json.loads(path.read_text()) == good
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_load_result_reports_unreadable_files(tmp_path):
    assert load_result(tmp_path / "missing.json")[0] is None
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    obj, problems = load_result(bad)
    assert obj is None and "not JSON" in problems[0]
