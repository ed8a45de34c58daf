"""`infercost bench` arguments and refusals: one line, exit 2, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from infercost.bench import cli


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


def _refusal(capsys, argv: list[str]) -> str:
    rc = _run(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert err.startswith("infercost bench: ")
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_cli_module_imports_without_torch():
    code = ("import sys, argparse, infercost, infercost.bench.cli as c; p = argparse.ArgumentParser(); "
            "c.add_arguments(p); p.parse_args(['--quick']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_add_arguments_on_a_subparser():
    parser = argparse.ArgumentParser(prog="infercost")
    sub = parser.add_subparsers(dest="command")
    cli.add_arguments(sub.add_parser("bench"))
    args = parser.parse_args(["bench", "--quick", "--precision", "fp32,int8", "--json", "out.json"])
    s = cli.settings_from_args(args)
    assert s["precisions"] == ("fp32", "int8") and s["json"] == "out.json" and s["quick"]


def test_unknown_precision(capsys):
    assert "unknown int4" in _refusal(capsys, ["--quick", "--precision", "fp32,int4"])


def test_absent_cuda_device(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    assert "no CUDA GPU" in _refusal(capsys, ["--quick", "--device", "cuda"])


def test_unknown_device_name(capsys):
    assert "unknown tpu" in _refusal(capsys, ["--quick", "--device", "tpu"])


def test_unknown_model_path(capsys):
    assert "unknown model" in _refusal(capsys, ["--quick", "--model", "/no/such/model-folder"])


def test_model_folder_without_config(capsys, tmp_path):
    assert "no config.json" in _refusal(capsys, ["--model", str(tmp_path)])


def test_config_that_is_not_json(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    assert "not valid JSON" in _refusal(capsys, ["--config", str(bad)])


def test_model_that_will_not_fit_is_refused_before_loading(capsys, tmp_path):
    huge = {"model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers": 126,
            "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
            "max_position_embeddings": 131072}  # Llama 3.1 405B's shape: 1.6 TB at fp32
    path = tmp_path / "config.json"
    path.write_text(json.dumps(huge))
    err = _refusal(capsys, ["--config", str(path)])
    assert "will not fit in memory" in err and "GB" in err


def test_precision_the_cpu_cannot_run(capsys):
    err = _refusal(capsys, ["--quick", "--device", "cpu", "--precision", "fp8"])
    assert "nothing to run" in err and "fp8" in err


@pytest.mark.parametrize("argv, words", [
    (["--repeats", "2"], "--repeats"),
    (["--new-tokens", "1"], "--new-tokens"),
    (["--batch-sizes", "1,x"], "--batch-sizes"),
    (["--batch-sizes", "0"], "--batch-sizes"),
    (["--model", "a/b", "--config", "c.json"], "give one"),
])
def test_bad_numbers_and_combinations(capsys, argv, words):
    assert words in _refusal(capsys, ["--quick", *argv])


def test_missing_torch_names_the_extra(capsys, monkeypatch):
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert "pip install 'infercost[bench]'" in _refusal(capsys, ["--quick"])


def test_result_file_in_a_folder_that_cannot_be_written(capsys, tmp_path):
    assert "is a folder" in _refusal(capsys, ["--quick", "--json", str(tmp_path)])
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert "not writable" in _refusal(capsys, ["--quick", "--json", str(locked / "r.json")])
    finally:
        locked.chmod(0o700)
