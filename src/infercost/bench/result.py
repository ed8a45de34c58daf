"""Assemble the result dict (schema infercost.bench/1) as measurements finish."""

from __future__ import annotations

import os
import platform
import sys
from datetime import datetime, timezone

from ..codec import to_jsonable
from . import predict
from .convert import CORE_PRECISION
from .schema import SCHEMA, write_result
from .stats import Stat, error_percent


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("infercost")
    except Exception:  # noqa: BLE001
        return "unknown"


def new_result(s: dict, devices, source, spec, params: int, torch) -> dict:
    import transformers

    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in s.items()
                if k not in ("json", "devices", "precisions")}
    settings["devices"] = list(s["devices"]) if s["devices"] else None
    settings["precisions"] = list(s["precisions"]) if s["precisions"] else None
    settings["threads"] = torch.get_num_threads()
    return {
        "schema": SCHEMA,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "infercost_version": _version(),
        "status": "complete",
        "settings": settings,
        "machine": {"os": platform.platform(), "python": sys.version.split()[0], "torch": torch.__version__,
                    "transformers": transformers.__version__, "load_average_start": load_average()},
        "devices": [d.to_dict() for d in devices],
        "limits": [],
        "model": {
            "id": source.id, "name": spec.name if spec else source.id, "source": source.kind,
            "random_weights": source.random_weights, "params": params,
            "spec": to_jsonable(spec) if spec is not None else None,
            "config": {k: v for k, v in source.config.items() if isinstance(v, (int, float, str, bool, type(None)))},
        },
        "runs": [],
        "skipped": [],
        "speculative": None,
        "total_s": 0.0,
        "notes": [
            "Estimates use this machine's measured limits with compute and memory efficiency 1.0.",
            *(["Random weights: speed does not depend on weight values."] if source.random_weights else []),
        ],
    }


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load averages (Unix); None elsewhere."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def finish(result: dict, total_s: float) -> None:
    """Close the result: wall time, load at the end, and a note when other work shared the machine."""
    result["total_s"] = total_s
    load = load_average()
    result["machine"]["load_average_end"] = load
    cpus = os.cpu_count() or 1
    busiest = max((x[1] for x in (result["machine"].get("load_average_start"), load) if x), default=0.0)
    if busiest > cpus + 0.5:
        result["notes"].append(
            f"The machine was busy (5-minute load average {busiest:.1f} on {cpus} CPUs, this run included): other "
            "processes shared the cores and memory bandwidth, so timings are slower and spread wider than on an "
            "idle machine.")


def add_limits(result: dict, limit: dict, gpu) -> None:
    limit["gpu_spec"] = to_jsonable(gpu)
    result["limits"].append(limit)


def add_run(result: dict, device, conv, m, s, spec, gpu, limit: dict) -> None:
    """One device x precision: measurements, achieved shares of the limits, estimate and error."""
    read_bw = limit["memory_read_bytes_per_s"]["median"]
    peak = limit["matmul_flop_per_s"].get(conv.precision, {}).get("median")
    tokens = s.prompt_tokens + s.new_tokens
    kv_per_token = m.kv_cache_bytes / tokens if tokens else 0.0
    step_bytes = conv.read_bytes + kv_per_token * (s.prompt_tokens + s.new_tokens / 2)
    if spec is not None:
        from ..physics.latency import prefill_flop

        flop = prefill_flop(spec, s.prompt_tokens)
    else:
        flop = 2.0 * result["model"]["params"] * s.prompt_tokens
    estimate, note = predict.estimate_run(spec, gpu, conv.precision, s.prompt_tokens, s.new_tokens,
                                          tuple(s.batch_sizes), s.batch_steps)
    tps = m.decode_step_s.inverse()
    batches = []
    for b, st in sorted(m.batches.items()):
        est_b = estimate["batch_tokens_per_s"].get(str(b)) if estimate else None
        tok = st.inverse(b)
        batches.append({"batch": b, "steps": s.new_tokens - 1 if b == 1 else s.batch_steps,
                        "step_s": st.to_dict(), "tokens_per_s": tok.to_dict(),
                        "estimate_tokens_per_s": est_b, "error_percent": error_percent(est_b, tok.median)})
    decode_bps = step_bytes / m.decode_step_s.median
    prefill_fps = flop / m.ttft_s.median
    result["runs"].append({
        "device": device.id,
        "precision": conv.precision,
        "core_precision": CORE_PRECISION[conv.precision].value,
        "path": conv.path,
        "prompt_tokens": s.prompt_tokens,
        "new_tokens": s.new_tokens,
        "weight_bytes": conv.stored_bytes,
        "weight_bytes_read_per_step": conv.read_bytes,
        "kv_cache_bytes": m.kv_cache_bytes,
        "kv_bytes_per_token": kv_per_token,
        "peak_memory_bytes": conv.stored_bytes + max(0, m.peak_memory_bytes or 0),
        "ttft_s": m.ttft_s.to_dict(),
        "decode_step_s": m.decode_step_s.to_dict(),
        "decode_tokens_per_s": tps.to_dict(),
        "batches": batches,
        "achieved": {
            "decode_bytes_per_step": step_bytes,
            "decode_bytes_per_s": decode_bps,
            "decode_share_of_read_bandwidth": decode_bps / read_bw if read_bw else None,
            "prefill_flop": flop,
            "prefill_flop_per_s": prefill_fps,
            "prefill_share_of_matmul_peak": prefill_fps / peak if peak else None,
        },
        "estimate": estimate,
        "estimate_note": note,
        "error_percent": {
            "ttft_s": error_percent(estimate and estimate["ttft_s"], m.ttft_s.median),
            "decode_step_s": error_percent(estimate and estimate["decode_step_s"], m.decode_step_s.median),
            "decode_tokens_per_s": error_percent(estimate and estimate["decode_tokens_per_s"], tps.median),
        },
        "output_tokens": m.output_tokens,
    })


def add_speculative(result: dict, runs, alone, k: int, fp32_run, draft_path: str) -> None:
    """Speculative runs against the target alone, timed in alternation on the same prompt."""
    n = len(runs[0].tokens)
    spec_tps = Stat.of([r.decode_s for r in runs]).inverse(n - 1)
    target_step = Stat.of([a[0] / (n - 1) for a in alone])
    target_tps = target_step.inverse()
    proposed = sum(r.proposed for r in runs)
    accepted = sum(r.accepted for r in runs)
    alpha = accepted / proposed if proposed else 0.0
    rounds = sum(r.rounds for r in runs)
    verify_s = sum(r.verify_s for r in runs) / rounds
    draft_step_s = sum(r.draft_s for r in runs) / (rounds * k)
    reference = alone[0][1]
    matches = all(r.tokens == reference for r in runs) and reference == fp32_run.output_tokens[:n]
    first_diff = next((i for i, (a, b) in enumerate(zip(runs[0].tokens, reference)) if a != b), None)
    predicted = predict.predicted_speedup(alpha, k, draft_step_s, target_step.median, verify_s)
    result["speculative"] = {
        "device": "cpu",
        "target_precision": "fp32",
        "draft": f"int8 copy of the target ({draft_path})",
        "draft_tokens": k,
        "new_tokens": n,
        "rounds": rounds,
        "proposed": proposed,
        "accepted": accepted,
        "acceptance_rate": alpha,
        "tokens_per_target_pass": (n - 1) * len(runs) / rounds,
        "target_step_s": target_step.median,
        "draft_step_s": draft_step_s,
        "verify_pass_s": verify_s,
        "draft_cost_ratio": draft_step_s / target_step.median,
        "draft_prefill_s": Stat.of([r.draft_prefill_s for r in runs]).median,
        "target_tokens_per_s": target_tps.to_dict(),
        "speculative_tokens_per_s": spec_tps.to_dict(),
        "speedup": spec_tps.median / target_tps.median,
        "predicted_tokens_per_pass": predicted["expected_tokens_per_pass"],
        "predicted_speedup": predicted["speedup_measured_verify"],
        "predicted_speedup_verify_as_one_step": predicted["speedup_formula"],
        "output_matches_target": matches,
        "first_mismatch_index": first_diff,
    }


def write(result: dict, path: str):
    return write_result(result, path)
