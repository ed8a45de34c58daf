"""POST /api/bench/load: an `infercost bench --json` result file -> "this machine" and its measurements.

The file is checked with the benchmark's own validator (infercost.bench.schema.validate_result);
a wrong file gets a 422 listing every problem, each naming its field. The answer holds, per device,
a GpuSpec-shaped machine (measured=True, from the file's measured limits) that the page sends back
as the scenario's `custom_gpu`, and per run the measurement beside the estimate the file carries.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..bench.schema import validate_result
from .errors import ERROR_RESPONSES, ApiError, unprocessable
from .schemas import GpuSpecIn, ModelSpecIn
from .uploads import read_upload

MAX_BENCH_UPLOAD_BYTES = 1024 * 1024 - 32 * 1024  # under the server's body limit, with room for multipart
MAX_PROBLEMS = 30

router = APIRouter(prefix="/api")

UPLOAD_BODY = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {"type": "object", "required": ["file"],
                                       "properties": {"file": {"type": "string", "format": "binary"}}}},
    "application/json": {"schema": {"type": "object", "description": "the result file itself"}}}}}


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed in a result file")


def _problem(text: str) -> dict[str, Any]:
    field, sep, message = text.partition(": ")
    loc = ["body", "file", *[p for p in field.replace("[", ".").replace("]", "").split(".") if p]] if sep else ["body", "file"]
    return {"loc": loc, "msg": f"file: {text}"[:500], "type": "value_error"}


def _median(stat: Any) -> float | None:
    return stat.get("median") if isinstance(stat, dict) else None


def _machine(limit: dict, device: dict) -> dict[str, Any] | None:
    spec = limit.get("gpu_spec")
    if not isinstance(spec, dict):
        return None
    try:
        checked = GpuSpecIn.model_validate({**spec, "measured": True})
    except ValidationError:
        return None
    return {"device": device.get("id"), "kind": device.get("kind"), "name": device.get("name"),
            "gpu": checked.model_dump(), "memory_read_bytes_per_s": _median(limit.get("memory_read_bytes_per_s")),
            "matmul_flop_per_s": {k: _median(v) for k, v in (limit.get("matmul_flop_per_s") or {}).items()}}


def _run(run: dict) -> dict[str, Any]:
    est = run.get("estimate") or {}
    batch_est = est.get("batch_tokens_per_s") or {}
    return {
        "device": run["device"], "precision": run["precision"], "core_precision": run.get("core_precision"),
        "path": run.get("path"), "prompt_tokens": run.get("prompt_tokens"), "new_tokens": run.get("new_tokens"),
        "measured": {"ttft_s": _median(run.get("ttft_s")), "decode_tokens_per_s": _median(run.get("decode_tokens_per_s")),
                     "kv_bytes_per_token": run.get("kv_bytes_per_token"), "peak_memory_bytes": run.get("peak_memory_bytes")},
        "estimate": None if not est else {"ttft_s": est.get("ttft_s"), "decode_tokens_per_s": est.get("decode_tokens_per_s")},
        "error_percent": run.get("error_percent"),
        "batches": [{"batch": b.get("batch"), "measured_tokens_per_s": _median(b.get("tokens_per_s")),
                     "estimate_tokens_per_s": b.get("estimate_tokens_per_s", batch_est.get(str(b.get("batch")))),
                     "error_percent": b.get("error_percent")} for b in run.get("batches") or []],
        "estimate_note": run.get("estimate_note"),
    }


def summarize(result: dict) -> dict[str, Any]:
    devices = {d["id"]: d for d in result["devices"]}
    machines = [m for m in (_machine(limit, devices.get(limit["device"], {})) for limit in result["limits"]) if m]
    model = result["model"]
    spec = model.get("spec")
    if isinstance(spec, dict):
        slug = re.sub(r"[^a-z0-9.-]+", "-", str(spec.get("id", "")).lower()).strip("-.") or "bench-model"
        try:
            spec = ModelSpecIn.model_validate({**spec, "id": slug}).model_dump()
        except ValidationError:
            spec = None
    spec_keys = ("acceptance_rate", "draft_tokens", "speedup", "predicted_speedup", "output_matches_target",
                 "tokens_per_target_pass", "predicted_tokens_per_pass")
    speculative = result.get("speculative")
    return {
        "schema": result["schema"], "created_utc": result["created_utc"], "status": result["status"],
        "machines": machines,
        "model": {"id": model["id"], "name": model.get("name") or model["id"], "random_weights": model["random_weights"],
                  "params": model["params"], "spec": spec},
        "runs": [_run(r) for r in result["runs"]],
        "skipped": result["skipped"],
        "speculative": None if not isinstance(speculative, dict) else {k: speculative.get(k) for k in spec_keys},
        "notes": [n for n in result.get("notes", []) if isinstance(n, str)],
    }


@router.post("/bench/load", summary="This machine's measurements from an `infercost bench --json` file",
             openapi_extra=UPLOAD_BODY, responses=ERROR_RESPONSES)
async def load_bench(request: Request):
    data, _ = await read_upload(request, "file", MAX_BENCH_UPLOAD_BYTES)
    try:
        result = json.loads(data.decode("utf-8-sig"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise ApiError(["body", "file"], "not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise ApiError(["body", "file"], f"not a JSON file ({str(exc)[:120]})") from None
    try:
        problems = validate_result(result)
    except Exception:  # noqa: BLE001 - a malformed file must never become a 500
        problems = ["result: not a readable infercost bench result"]
    if problems:
        return unprocessable([_problem(p) for p in problems[:MAX_PROBLEMS]])
    try:
        summary = summarize(result)
    except (KeyError, TypeError, AttributeError, ValueError):
        raise ApiError(["body", "file"], "not a readable infercost bench result") from None
    if not summary["machines"]:
        raise ApiError(["body", "file", "limits"], "no device in the file has measured limits (gpu_spec)")
    return summary
