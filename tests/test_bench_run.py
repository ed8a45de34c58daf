"""`infercost bench --quick` end to end on the CPU: three precisions, schema, speculative, Ctrl-C."""

from __future__ import annotations

import argparse
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from infercost.bench import cli, session  # noqa: E402
from infercost.bench.schema import validate_result  # noqa: E402


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "quick.json"
    rc = _run(["--quick", "--device", "cpu", "--json", str(path)])
    assert rc == 0
    return json.loads(path.read_text())


@pytest.mark.slow
def test_quick_run_is_a_valid_result(quick_result):
    assert validate_result(quick_result) == []
    assert quick_result["status"] == "complete"
    assert quick_result["model"]["random_weights"] is True


@pytest.mark.slow
def test_three_cpu_precisions_with_estimates(quick_result):
    runs = {r["precision"]: r for r in quick_result["runs"]}
    assert set(runs) == {"fp32", "bf16", "int8"}
    for r in runs.values():
        assert r["ttft_s"]["repeats"] >= 3 and r["decode_step_s"]["repeats"] >= 3
        assert r["estimate"] is not None and r["error_percent"]["decode_step_s"] is not None
        assert [b["batch"] for b in r["batches"]] == [1, 4]
        assert r["kv_cache_bytes"] > 0 and r["peak_memory_bytes"] >= r["weight_bytes"]
    assert runs["int8"]["weight_bytes_read_per_step"] < runs["bf16"]["weight_bytes_read_per_step"] \
        < runs["fp32"]["weight_bytes_read_per_step"]
    assert "int8" in runs["int8"]["path"] and "engine" in runs["int8"]["path"]
    # bf16 and int8 write their own greedy tokens; fp32 is the reference the speculative run must equal
    assert len(runs["fp32"]["output_tokens"]) == quick_result["settings"]["new_tokens"]


@pytest.mark.slow
def test_limits_describe_this_machine(quick_result):
    lim = quick_result["limits"][0]
    assert lim["device"] == "cpu"
    assert set(lim["matmul_flop_per_s"]) == {"fp32", "bf16", "int8"}
    spec = lim["gpu_spec"]
    assert spec["measured"] and spec["memory_bandwidth_bytes_per_s"] == lim["memory_read_bytes_per_s"]["median"]
    assert spec["peak"]["int8_flop_per_s"] == lim["matmul_flop_per_s"]["int8"]["median"]


@pytest.mark.slow
def test_speculative_output_equals_target(quick_result):
    sp = quick_result["speculative"]
    assert sp["output_matches_target"] is True and sp["first_mismatch_index"] is None
    assert 0 <= sp["acceptance_rate"] <= 1 and sp["speedup"] > 0 and sp["predicted_speedup"] > 0


@pytest.mark.slow
def test_ctrl_c_keeps_what_finished(tmp_path, monkeypatch, capsys):
    real = session.measure
    calls = []

    def measure_then_interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(session, "measure", measure_then_interrupt)
    path = tmp_path / "partial.json"
    assert _run(["--quick", "--device", "cpu", "--no-speculative", "--json", str(path)]) == 130
    result = json.loads(path.read_text())
    assert result["status"] == "interrupted"
    assert [r["precision"] for r in result["runs"]] == ["fp32"]
    assert validate_result(result) == []
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
def test_cuda_quick_run(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    path = tmp_path / "cuda.json"
    assert _run(["--quick", "--device", "cuda", "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert validate_result(result) == []
    ran = {r["precision"] for r in result["runs"]}
    assert "fp32" in ran and ran & {"bf16", "fp16"}
    assert len(ran) + len(result["skipped"]) >= 3


@pytest.mark.slow
def test_local_model_folder_with_real_weights(tmp_path):
    from infercost.bench.loading import build_model
    from infercost.bench.models import resolve_source

    folder = tmp_path / "tiny-llama"
    build_model(resolve_source(None, None, quick=True), seed=3).save_pretrained(folder)
    path = tmp_path / "r.json"
    assert _run(["--quick", "--model", str(folder), "--precision", "fp32", "--no-speculative",
                 "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert validate_result(result) == []
    assert result["model"]["source"] == "path" and result["model"]["random_weights"] is False
    assert result["speculative"] is None


@pytest.mark.slow
def test_config_of_another_architecture(tmp_path):
    qwen2 = {"model_type": "qwen2", "hidden_size": 128, "intermediate_size": 352, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
             "max_position_embeddings": 512, "tie_word_embeddings": True}
    config = tmp_path / "config.json"
    config.write_text(json.dumps(qwen2))
    path = tmp_path / "r.json"
    assert _run(["--config", str(config), "--quick", "--precision", "int8", "--no-speculative",
                 "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert validate_result(result) == []
    assert result["model"]["spec"]["qkv_bias"] is True and result["model"]["random_weights"] is True
    assert [r["precision"] for r in result["runs"]] == ["int8"] and result["runs"][0]["estimate"]


@pytest.mark.slow
def test_two_precisions_keep_the_fp32_target_for_speculation(tmp_path):
    path = tmp_path / "r.json"
    assert _run(["--quick", "--device", "cpu", "--precision", "int8,fp32", "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert [r["precision"] for r in result["runs"]] == ["fp32", "int8"]
    assert result["speculative"]["output_matches_target"] is True
