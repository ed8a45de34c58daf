"""Plain-text views of estimates and the catalog. Pure: they return strings; cli.py prints."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from .physics.params import active_params, total_params
from .results import Estimate
from .specs import GpuSpec, ModelSpec, NumberFormat
from .units import GB, KB, MS, TB, TFLOP


def format_bytes(n: float) -> str:
    """Decimal units (1 GB = 1e9 bytes), as the module and datasheets print them."""
    for unit, size in (("TB", TB), ("GB", GB), ("MB", 1e6), ("KB", KB)):
        if abs(n) >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def format_seconds(s: float) -> str:
    if s < 1:
        return f"{s / MS:,.1f} ms"
    if s < 120:
        return f"{s:,.2f} s"
    return f"{s / 60:,.1f} min"


def format_count(n: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if n >= size:
            return f"{n / size:,.2f}{unit}"
    return f"{n:,.0f}"


def format_usd(x: float | None) -> str:
    if x is None:
        return "n/a (no price)"
    return f"${x:,.4f}" if x < 0.1 else f"${x:,.2f}"


def table(rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> str:
    """Left-aligned text columns; the first column is labels."""
    all_rows = ([list(header)] if header else []) + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(all_rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in all_rows]
    if header:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _section(title: str, rows: Iterable[tuple[str, str]]) -> str:
    return f"{title}\n" + table([list(r) for r in rows]) + "\n"


def format_estimate(e: Estimate) -> str:
    s, r, kv, b, sp, c = e.scenario, e.reading, e.kv, e.batching, e.speculative, e.cost
    head = (f"{e.model.name} at {e.precision.precision} ({e.precision.note}) on {e.hardware.gpus} x {e.hardware.name}\n"
            f"{format_count(e.model.params_total)} parameters ({format_count(e.model.params_active)} active), "
            f"weights {format_bytes(e.fit.weights_bytes)}. {e.fit.message}\n"
            f"Assumes {s.compute_efficiency:.0%} of peak compute when reading, {s.memory_efficiency:.0%} of peak "
            f"memory bandwidth when writing.\n")
    parts = [head]
    parts.append(_section("1. Reading vs writing (one user)", [
        ("question / answer", f"{r.question_tokens:,} / {r.answer_tokens:,} tokens"),
        ("time to first token", f"{format_seconds(r.ttft_s)} ({r.prefill_bound}-bound)"),
        ("writing speed", f"{r.decode_tokens_per_s:,.1f} tokens/s ({r.decode_bound}-bound)"),
        ("time to write the answer", format_seconds(r.write_s)),
        ("whole answer", format_seconds(r.answer_s)),
    ]))
    parts.append(_section("2. KV cache", [
        ("per token", format_bytes(kv.kv_bytes_per_token)),
        ("one conversation", f"{format_bytes(kv.conversation_kv_bytes)} ({kv.conversation_tokens:,} tokens)"),
        ("memory for caches", f"{format_bytes(max(0.0, kv.usable_kv_bytes))} of {format_bytes(kv.total_memory_bytes)}"),
        ("conversations that fit", f"{kv.conversations_fit:,} paged ({kv.kv_block_tokens}-token blocks), "
                                   f"{kv.conversations_fit_reserved:,} reserving the full context"),
        ("asked for", f"{kv.conversations:,} ({'fit' if kv.all_fit else 'do not all fit'})"),
    ]))
    knee = "never (memory binds)" if b.compute_knee_batch is None else f"{b.compute_knee_batch:,}"
    parts.append(_section(f"3. Batching (conversations of {b.context_tokens:,} tokens)", [
        ("batch", f"{b.batch:,}{'' if b.batch_fits else ' (more than memory holds)'}"),
        ("total output", f"{b.current.total_tokens_per_s:,.0f} tokens/s"),
        ("each user", f"{b.current.per_user_tokens_per_s:,.1f} tokens/s"),
        ("memory limit", f"batch {b.memory_limit_batch:,}"),
        ("compute limit", f"batch {knee}"),
    ]))
    spec_rows = [("draft model", sp.draft_model_name or "none in the catalog"),
                 ("draft length / acceptance", f"{sp.draft_tokens} / {sp.acceptance_rate:.0%}"),
                 ("tokens per big-model pass", f"{sp.expected_tokens_per_pass:.2f}")]
    if sp.speedup is not None:
        spec_rows.append(("speedup", f"{sp.speedup:.2f}x ({sp.tokens_per_s_without:,.1f} -> {sp.tokens_per_s_with:,.1f} tokens/s)"))
    if sp.shared_prefix_tokens:
        spec_rows.append(("prompt cache", f"{format_seconds(sp.prefill_saved_s)} less prefill, "
                                          f"{format_bytes(sp.memory_saved_bytes)} less cache"))
    parts.append(_section("4. Speculative decoding", spec_rows))
    caveat = ("" if e.fit.fits and kv.conversations_fit else
              " (as if it fit: " + ("the weights do not fit)" if not e.fit.fits else "no conversation fits)"))
    parts.append(_section("5. Cost" + caveat, [
        ("price", f"{format_usd(c.price_per_gpu_hour_usd)} per GPU-hour, busy {c.busy_share:.0%}"),
        ("output", f"{format_usd(c.usd_per_million_output)} per million tokens (batch {c.batch:,})"),
        ("input", f"{format_usd(c.usd_per_million_input)} per million tokens"),
        ("one answer", format_usd(c.usd_per_answer)),
    ]))
    parts.append(_format_serving(e))
    return "\n".join(p for p in parts if p).rstrip() + "\n"


def _format_serving(e: Estimate) -> str:
    """A serving engine under load, and how far such estimates typically are from real systems."""
    sv, fid = e.serving, e.fidelity
    if sv is None:
        return ""
    if sv.max_load is None:
        return f"Serving at max load\n{sv.message}\n"
    ml = sv.max_load
    rows = [("batch", f"{ml.batch:,.0f} conversations (limited by {ml.batch_limit})"),
            ("total output", f"{ml.output_tokens_per_s:,.0f} tokens/s, {ml.per_user_tokens_per_s:,.1f} per user"),
            ("time per output token", format_seconds(ml.tpot_s)),
            ("output cost", f"{format_usd(ml.usd_per_million_output)} per million tokens, all-in "
                            "(the GPU time reading questions is charged to the answers)")]
    text = _section(f"Serving at max load ({ml.engine}-like engine, prompts mixed into decode steps)", rows)
    if fid is not None:
        text += (f"How close: estimates of this kind are typically within {fid.typical_error_share:.0%} of published "
                 f"measurements ({fid.group}; {fid.points} points, {fid.held_out_error_share:.0%} on held-out "
                 f"ones); the plain roofline of steps 1-3 is typically {fid.plain_roofline_error_share:.0%} off.\n")
    return text


def format_models(models: Iterable[ModelSpec]) -> str:
    rows = [[m.id, m.name, format_count(total_params(m)), format_count(active_params(m)),
             f"{m.max_context_tokens:,}"] for m in models]
    return table(rows, ["id", "name", "params", "active", "context"])


def format_gpus(gpus: Iterable[GpuSpec]) -> str:
    rows = []
    for g in gpus:
        bf16 = g.peak.get(NumberFormat.BF16)
        rows.append([g.id, g.name, f"{g.memory_bytes / GB:,.0f} GB", f"{g.memory_bandwidth_bytes_per_s / TB:,.2f} TB/s",
                     "-" if bf16 is None else f"{bf16 / TFLOP:,.0f}", format_usd(g.price_per_gpu_hour_usd)])
    return table(rows, ["id", "name", "memory", "bandwidth", "BF16 TFLOP/s", "price/h"])


def estimates_csv(rows: Sequence[tuple[dict[str, object], Estimate]]) -> str:
    """One CSV line per estimate of a sweep: the swept values, then the headline numbers."""
    out = io.StringIO()
    writer = csv.writer(out)
    swept = list(rows[0][0]) if rows else []
    writer.writerow(swept + ["fits", "ttft_s", "decode_tokens_per_s", "answer_s", "conversations_fit",
                             "total_tokens_per_s", "usd_per_million_output", "usd_per_million_input"])
    for values, e in rows:
        writer.writerow([values[k] for k in swept] + [
            e.fit.fits, f"{e.reading.ttft_s:.6g}", f"{e.reading.decode_tokens_per_s:.6g}",
            f"{e.reading.answer_s:.6g}", e.kv.conversations_fit, f"{e.batching.current.total_tokens_per_s:.6g}",
            "" if e.cost.usd_per_million_output is None else f"{e.cost.usd_per_million_output:.6g}",
            "" if e.cost.usd_per_million_input is None else f"{e.cost.usd_per_million_input:.6g}"])
    return out.getvalue()
