"""The result file of `infercost bench --json PATH`: version, validator and atomic write.

The layout is documented in docs/bench-result-schema.md; `validate_result` checks a loaded file
against it and returns the problems found (an empty list means the file is good). No torch here.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

SCHEMA = "infercost.bench/1"
STATUSES = ("complete", "interrupted")
DEVICE_KINDS = ("cpu", "cuda", "mps")
PRECISIONS = ("fp32", "bf16", "fp16", "int8", "fp8")
CORE_PRECISIONS = ("32bit", "16bit", "8bit", "4bit")
MODEL_SOURCES = ("builtin", "config", "path", "hub")
STAT_KEYS = ("median", "min", "max", "repeats", "samples")


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def obj(self, v: Any, path: str, keys: tuple[str, ...] = ()) -> bool:
        if not isinstance(v, dict):
            self.fail(path, "must be an object")
            return False
        missing = [k for k in keys if k not in v]
        for k in missing:
            self.fail(f"{path}.{k}", "missing")
        return not missing

    def lst(self, v: Any, path: str) -> bool:
        if not isinstance(v, list):
            self.fail(path, "must be a list")
            return False
        return True

    def text(self, v: Any, path: str, choices: tuple[str, ...] | None = None) -> None:
        if not isinstance(v, str):
            self.fail(path, "must be text")
        elif choices is not None and v not in choices:
            self.fail(path, f"must be one of {', '.join(choices)}, not {v!r}")

    def flag(self, v: Any, path: str) -> None:
        if not isinstance(v, bool):
            self.fail(path, "must be true or false")

    def count(self, v: Any, path: str, minimum: int = 0) -> None:
        if not _int(v) or v < minimum:
            self.fail(path, f"must be a whole number >= {minimum}")

    def number(self, v: Any, path: str, optional: bool = False, positive: bool = False) -> None:
        if v is None and optional:
            return
        if not _num(v):
            self.fail(path, "must be a finite number" + (" or null" if optional else ""))
        elif positive and v <= 0:
            self.fail(path, "must be above 0")

    def stat(self, v: Any, path: str, optional: bool = False) -> None:
        """{median, min, max, repeats, samples}: positive numbers with min <= median <= max."""
        if v is None and optional:
            return
        if not self.obj(v, path, STAT_KEYS):
            return
        for k in ("median", "min", "max"):
            self.number(v[k], f"{path}.{k}", positive=True)
        self.count(v["repeats"], f"{path}.repeats", 1)
        if self.lst(v["samples"], f"{path}.samples"):
            if any(not _num(s) or s <= 0 for s in v["samples"]):
                self.fail(f"{path}.samples", "must hold positive numbers")
            elif _int(v["repeats"]) and len(v["samples"]) != v["repeats"]:
                self.fail(f"{path}.samples", f"holds {len(v['samples'])} values, repeats says {v['repeats']}")
        if all(_num(v[k]) for k in ("median", "min", "max")) and not v["min"] <= v["median"] <= v["max"]:
            self.fail(path, "must have min <= median <= max")


def _check_devices(c: _Checker, devices: Any) -> set[str]:
    ids: set[str] = set()
    if not c.lst(devices, "devices"):
        return ids
    if not devices:
        c.fail("devices", "must list at least the CPU")
    for i, d in enumerate(devices):
        p = f"devices[{i}]"
        if not c.obj(d, p, ("id", "kind", "name", "cores", "memory_bytes", "torch_version")):
            continue
        c.text(d["id"], f"{p}.id")
        c.text(d["kind"], f"{p}.kind", DEVICE_KINDS)
        c.text(d["name"], f"{p}.name")
        c.count(d["cores"], f"{p}.cores")
        c.number(d["memory_bytes"], f"{p}.memory_bytes", positive=True)
        if isinstance(d["id"], str):
            ids.add(d["id"])
    return ids


def _check_limits(c: _Checker, limits: Any, ids: set[str]) -> None:
    if not c.lst(limits, "limits"):
        return
    for i, lim in enumerate(limits):
        p = f"limits[{i}]"
        if not c.obj(lim, p, ("device", "memory_read_bytes_per_s", "memory_pages", "matmul_flop_per_s", "gpu_spec")):
            continue
        if lim["device"] not in ids:
            c.fail(f"{p}.device", f"{lim['device']!r} is not one of the devices")
        c.stat(lim["memory_read_bytes_per_s"], f"{p}.memory_read_bytes_per_s")
        c.stat(lim.get("memory_read_4k_bytes_per_s"), f"{p}.memory_read_4k_bytes_per_s", optional=True)
        c.text(lim["memory_pages"], f"{p}.memory_pages")
        if c.obj(lim["matmul_flop_per_s"], f"{p}.matmul_flop_per_s"):
            for name, st in lim["matmul_flop_per_s"].items():
                c.stat(st, f"{p}.matmul_flop_per_s.{name}")
        if c.obj(lim["gpu_spec"], f"{p}.gpu_spec", ("id", "name", "peak", "memory_bytes",
                                                      "memory_bandwidth_bytes_per_s", "measured")):
            g = lim["gpu_spec"]
            c.number(g["memory_bandwidth_bytes_per_s"], f"{p}.gpu_spec.memory_bandwidth_bytes_per_s", positive=True)
            c.number(g["memory_bytes"], f"{p}.gpu_spec.memory_bytes", positive=True)
            if g["measured"] is not True:
                c.fail(f"{p}.gpu_spec.measured", "must be true")
            if c.obj(g["peak"], f"{p}.gpu_spec.peak"):
                for k, v in g["peak"].items():
                    c.number(v, f"{p}.gpu_spec.peak.{k}", optional=True, positive=True)


def _check_estimate(c: _Checker, est: Any, path: str) -> None:
    if est is None:
        return
    if c.obj(est, path, ("ttft_s", "decode_step_s", "decode_tokens_per_s")):
        for k in ("ttft_s", "decode_step_s", "decode_tokens_per_s"):
            c.number(est[k], f"{path}.{k}", positive=True)


def _check_runs(c: _Checker, runs: Any, ids: set[str]) -> None:
    if not c.lst(runs, "runs"):
        return
    keys = ("device", "precision", "core_precision", "path", "prompt_tokens", "new_tokens", "weight_bytes",
            "kv_cache_bytes", "peak_memory_bytes", "ttft_s", "decode_step_s", "decode_tokens_per_s", "batches",
            "achieved", "estimate", "error_percent")
    for i, r in enumerate(runs):
        p = f"runs[{i}]"
        if not c.obj(r, p, keys):
            continue
        if r["device"] not in ids:
            c.fail(f"{p}.device", f"{r['device']!r} is not one of the devices")
        c.text(r["precision"], f"{p}.precision", PRECISIONS)
        c.text(r["core_precision"], f"{p}.core_precision", CORE_PRECISIONS)
        c.text(r["path"], f"{p}.path")
        c.count(r["prompt_tokens"], f"{p}.prompt_tokens", 1)
        c.count(r["new_tokens"], f"{p}.new_tokens", 2)
        for k in ("weight_bytes", "kv_cache_bytes", "peak_memory_bytes"):
            c.number(r[k], f"{p}.{k}", positive=True)
        for k in ("ttft_s", "decode_step_s", "decode_tokens_per_s"):
            c.stat(r[k], f"{p}.{k}")
        if c.lst(r["batches"], f"{p}.batches"):
            for j, b in enumerate(r["batches"]):
                q = f"{p}.batches[{j}]"
                if c.obj(b, q, ("batch", "step_s", "tokens_per_s")):
                    c.count(b["batch"], f"{q}.batch", 1)
                    c.stat(b["step_s"], f"{q}.step_s")
                    c.stat(b["tokens_per_s"], f"{q}.tokens_per_s")
                    c.number(b.get("estimate_tokens_per_s"), f"{q}.estimate_tokens_per_s", optional=True, positive=True)
        if c.obj(r["achieved"], f"{p}.achieved"):
            for k, v in r["achieved"].items():
                c.number(v, f"{p}.achieved.{k}", optional=True)
        _check_estimate(c, r["estimate"], f"{p}.estimate")
        if c.obj(r["error_percent"], f"{p}.error_percent"):
            for k, v in r["error_percent"].items():
                c.number(v, f"{p}.error_percent.{k}", optional=True)


def _check_speculative(c: _Checker, s: Any) -> None:
    if s is None:
        return
    keys = ("device", "target_precision", "draft", "draft_tokens", "proposed", "accepted", "acceptance_rate",
            "target_tokens_per_s", "speculative_tokens_per_s", "speedup", "predicted_speedup", "output_matches_target")
    if not c.obj(s, "speculative", keys):
        return
    c.text(s["draft"], "speculative.draft")
    c.count(s["draft_tokens"], "speculative.draft_tokens", 1)
    c.count(s["proposed"], "speculative.proposed", 0)
    c.count(s["accepted"], "speculative.accepted", 0)
    if _int(s["proposed"]) and _int(s["accepted"]) and s["accepted"] > s["proposed"]:
        c.fail("speculative.accepted", "exceeds proposed")
    c.number(s["acceptance_rate"], "speculative.acceptance_rate")
    if _num(s["acceptance_rate"]) and not 0 <= s["acceptance_rate"] <= 1:
        c.fail("speculative.acceptance_rate", "must be between 0 and 1")
    c.stat(s["target_tokens_per_s"], "speculative.target_tokens_per_s")
    c.stat(s["speculative_tokens_per_s"], "speculative.speculative_tokens_per_s")
    c.number(s["speedup"], "speculative.speedup", positive=True)
    c.number(s["predicted_speedup"], "speculative.predicted_speedup", optional=True, positive=True)
    c.flag(s["output_matches_target"], "speculative.output_matches_target")


def validate_result(obj: Any) -> list[str]:
    """Problems with a loaded result file, one line each naming the field; [] when it is good."""
    c = _Checker()
    top = ("schema", "created_utc", "status", "settings", "machine", "devices", "limits", "model", "runs",
           "skipped", "speculative", "total_s")
    if not isinstance(obj, dict):
        return ["the file must hold a JSON object (an infercost bench result)"]
    if obj.get("schema") != SCHEMA:
        found = obj.get("schema")
        return [f"schema: expected {SCHEMA!r}, found {found!r}: not an infercost bench result of this version"]
    c.obj(obj, "result", top)
    c.text(obj.get("created_utc"), "created_utc")
    c.text(obj.get("status"), "status", STATUSES)
    c.number(obj.get("total_s"), "total_s")
    if c.obj(obj.get("settings"), "settings", ("prompt_tokens", "new_tokens", "repeats", "seed")):
        s = obj["settings"]
        c.count(s["prompt_tokens"], "settings.prompt_tokens", 1)
        c.count(s["new_tokens"], "settings.new_tokens", 2)
        c.count(s["repeats"], "settings.repeats", 1)
    c.obj(obj.get("machine"), "machine")
    ids = _check_devices(c, obj.get("devices"))
    _check_limits(c, obj.get("limits"), ids)
    if c.obj(obj.get("model"), "model", ("id", "source", "random_weights", "params", "spec")):
        m = obj["model"]
        c.text(m["id"], "model.id")
        c.text(m["source"], "model.source", MODEL_SOURCES)
        c.flag(m["random_weights"], "model.random_weights")
        c.count(m["params"], "model.params", 1)
        if m["spec"] is not None:
            c.obj(m["spec"], "model.spec", ("id", "name", "layers", "hidden_size", "heads", "kv_heads", "head_dim"))
    _check_runs(c, obj.get("runs"), ids)
    if c.lst(obj.get("skipped"), "skipped"):
        for i, s in enumerate(obj["skipped"]):
            if c.obj(s, f"skipped[{i}]", ("device", "precision", "reason")):
                c.text(s["reason"], f"skipped[{i}].reason")
    _check_speculative(c, obj.get("speculative"))
    return c.problems


def write_result(obj: dict, path: str | os.PathLike) -> Path:
    """Write the result as JSON atomically: a temporary file beside it, flushed, then renamed over."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, indent=2, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def load_result(path: str | os.PathLike) -> tuple[dict | None, list[str]]:
    """(result, problems) from a file; result is None when it cannot be read as JSON."""
    try:
        obj = json.loads(Path(path).read_text("utf-8"))
    except OSError as exc:
        return None, [f"cannot read {path}: {exc.strerror or exc}"]
    except json.JSONDecodeError as exc:
        return None, [f"{path} is not JSON ({exc.msg} at line {exc.lineno})"]
    return obj, validate_result(obj)
