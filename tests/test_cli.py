"""The CLI as a user runs it: tables, JSON, sweeps, and one-line errors with exit 2."""

import json
import subprocess
import sys

import pytest

from infercost.cli import main
from infercost.scenario import Scenario


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_issue_command_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "infercost.cli", "estimate", "--model", "llama-3.1-70b", "--gpu",
                           "h100-sxm", "--gpus", "2", "--precision", "16bit", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["model"]["kv_bytes_per_token"] == 327_680
    assert data["scenario"]["gpus"] == 2 and data["fit"]["fits"]


def test_table_by_default(capsys):
    code, out, _ = run(capsys, "estimate")
    assert code == 0
    for heading in ("1. Reading vs writing", "2. KV cache", "3. Batching", "4. Speculative decoding", "5. Cost"):
        assert heading in out
    assert "327.7 KB" in out
    assert "Serving at max load" in out and "How close: " in out


@pytest.mark.parametrize("argv,field", [
    (["estimate", "--gpus", "-1"], "gpus"),
    (["estimate", "--gpus", "0"], "gpus"),
    (["estimate", "--gpus", "two"], "gpus"),
    (["estimate", "--compute-efficiency", "nan"], "compute_efficiency"),
    (["estimate", "--busy-share", "inf"], "busy_share"),
    (["estimate", "--precision", "3bit"], "precision"),
    (["estimate", "--model", "gpt-9"], "model"),
    (["estimate", "--gpu", "h900"], "gpu"),
    (["estimate", "--question-tokens", "200000"], "question_tokens"),
    (["estimate", "--question-tokens", "130000", "--answer-tokens", "5000"], "answer_tokens"),
    (["estimate", "--sweep", "nonsense"], "sweep"),
    (["estimate", "--scenario", "/nonexistent.json"], "scenario"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"infercost: error: {field}: ")


def test_usage_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["estimate", "--no-such-flag"])
    assert info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_scenario_file_and_flags_override_it(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(Scenario(model="qwen3-8b", gpus=1).to_json())
    code, out, _ = run(capsys, "estimate", "--scenario", str(path), "--batch", "7", "--json")
    data = json.loads(out)
    assert code == 0 and data["scenario"]["model"] == "qwen3-8b" and data["scenario"]["batch"] == 7


def test_bad_scenario_file(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text('{"gpus": -3}')
    code, _, err = run(capsys, "estimate", "--scenario", str(path))
    assert code == 2 and "gpus" in err


def test_sweep_prints_csv(capsys):
    code, out, _ = run(capsys, "estimate", "--sweep", "precision=16bit,8bit,4bit", "--sweep", "gpus=2,4")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].startswith("precision,gpus,fits") and len(lines) == 7


def test_catalog(capsys):
    code, out, _ = run(capsys, "catalog")
    assert code == 0 and "llama-3.1-70b" in out and "h100-sxm" in out
    code, out, _ = run(capsys, "catalog", "--json")
    data = json.loads(out)
    assert len(data["models"]) >= 20 and len(data["gpus"]) >= 15
