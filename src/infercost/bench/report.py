"""What the user sees: a progress bar while it runs, tables at the end (rich). Formatting is pure
(`format_*` return text or rich renderables); printing happens in `print_summary` only."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


class Reporter:
    """One progress bar over the whole session: `tick` names the current step, `advance` moves on."""

    def __init__(self, console: Console, total: int) -> None:
        self.progress = Progress(TextColumn("{task.description:<42}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
        self.task = self.progress.add_task("starting", total=total)

    def __enter__(self) -> "Reporter":
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.update(self.task, description="done" if exc[0] is None else "interrupted")
        self.progress.stop()

    def tick(self, description: str, advance: bool = False) -> None:
        if advance:
            self.progress.advance(self.task)
        self.progress.update(self.task, description=description)

    def advance(self, steps: int = 1) -> None:
        self.progress.advance(self.task, steps)


def _si(value: float | None, unit: str, digits: int = 3) -> str:
    if value is None:
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:,.1f}"


def _err(p: float | None) -> str:
    return "-" if p is None else f"{p:+.0f}%"


def _spread(stat: dict) -> str:
    return f"{100 * (stat['max'] - stat['min']) / stat['median']:.0f}%"


def format_limits(result: dict) -> Table:
    names = list(dict.fromkeys(k for lim in result["limits"] for k in lim["matmul_flop_per_s"]))
    t = Table(title="Measured limits (median, spread)", title_justify="left")
    for col in ("device", "memory read", "on 4 KB pages", *[f"{n} matmul" for n in names]):
        t.add_column(col, justify="left" if col == "device" else "right")
    for lim in result["limits"]:
        read = lim["memory_read_bytes_per_s"]
        four_k = lim.get("memory_read_4k_bytes_per_s")
        mm = lim["matmul_flop_per_s"]
        t.add_row(lim["device"], f"{_si(read['median'], 'B/s')} ({_spread(read)})",
                  _si(four_k["median"], "B/s") if four_k else "-",
                  *[f"{_si(mm[n]['median'], 'FLOP/s')} ({_spread(mm[n])})" if n in mm else "-" for n in names])
    return t


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def format_latency(result: dict) -> Table:
    """Batch 1: time to first token and decode step, measured median beside the estimate."""
    t = Table(title="Batch 1: measured median | estimate | error; spread = (max - min) / median",
              title_justify="left")
    for col in ("device", "prec", "TTFT ms", "est", "err", "decode ms/tok", "est", "err", "tok/s", "spread"):
        t.add_column(col, justify="left" if col in ("device", "prec") else "right")
    for r in result["runs"]:
        est, err = r["estimate"] or {}, r["error_percent"]
        t.add_row(r["device"], r["precision"], _ms(r["ttft_s"]["median"]), _ms(est.get("ttft_s")), _err(err["ttft_s"]),
                  _ms(r["decode_step_s"]["median"]), _ms(est.get("decode_step_s")), _err(err["decode_step_s"]),
                  f"{r['decode_tokens_per_s']['median']:.1f}",
                  f"{_spread(r['ttft_s'])}/{_spread(r['decode_step_s'])}")
    return t


def format_throughput(result: dict) -> Table:
    """Total tokens/s by batch size, and what share of the measured limits each run reached."""
    sizes = sorted({b["batch"] for r in result["runs"] for b in r["batches"]})
    t = Table(title="Total tokens/s by batch (error of the estimate); achieved share of the measured limits",
              title_justify="left")
    for col in ("device", "prec", *[f"b={b}" for b in sizes], "decode read", "prefill math", "KV cache", "peak mem"):
        t.add_column(col, justify="left" if col in ("device", "prec") else "right")
    for r in result["runs"]:
        by = {b["batch"]: b for b in r["batches"]}
        cells = [f"{by[b]['tokens_per_s']['median']:.1f} ({_err(by[b].get('error_percent'))})" if b in by else "-"
                 for b in sizes]
        a = r["achieved"]
        t.add_row(r["device"], r["precision"], *cells,
                  f"{_si(a['decode_bytes_per_s'], 'B/s')} {_share(a['decode_share_of_read_bandwidth'])}",
                  f"{_si(a['prefill_flop_per_s'], 'FLOP/s')} {_share(a['prefill_share_of_matmul_peak'])}",
                  _si(r["kv_cache_bytes"], "B"), _si(r["peak_memory_bytes"], "B"))
    return t


def format_speculative(result: dict) -> str:
    sp = result.get("speculative")
    if not sp:
        return ""
    same = "identical to" if sp["output_matches_target"] else f"DIFFERENT from (first at token {sp['first_mismatch_index']})"
    return (f"Speculative decoding (CPU, {sp['target_precision']} target, {sp['draft']}, k={sp['draft_tokens']}): "
            f"acceptance {100 * sp['acceptance_rate']:.0f}%, {sp['tokens_per_target_pass']:.2f} tokens per target pass; "
            f"{sp['target_tokens_per_s']['median']:.2f} -> {sp['speculative_tokens_per_s']['median']:.2f} tokens/s, "
            f"speedup {sp['speedup']:.2f}x measured vs {sp['predicted_speedup']:.2f}x from the formula "
            f"(Leviathan et al., measured rate and step times; {sp['predicted_speedup_verify_as_one_step']:.2f}x if the "
            f"verify pass cost one decode step). Output {same} the target's own greedy output.")


def format_footer(result: dict) -> list[str]:
    lines = [f"Memory pages: " + "; ".join(f"{lim['device']} {lim['memory_pages']}" for lim in result["limits"]),
             f"Model: {result['model']['name']} ({result['model']['params'] / 1e9:.3g}B parameters, "
             f"{'random weights' if result['model']['random_weights'] else 'real weights'}); "
             f"prompt {result['settings']['prompt_tokens']} tokens, {result['settings']['new_tokens']} new tokens, "
             f"{result['settings']['repeats']} repeats after warm-up."]
    for r in result["runs"]:
        lines.append(f"  {r['device']} {r['precision']}: {r['path']}")
    for sk in result["skipped"]:
        lines.append(f"Skipped {sk['device']} {sk['precision']}: {sk['reason']}")
    lines.extend(result["notes"])
    lines.append(f"Total {result['total_s']:.0f} s ({result['status']}).")
    return lines


def print_summary(console: Console, result: dict) -> None:
    if result["limits"]:
        console.print(format_limits(result))
    if result["runs"]:
        console.print(format_latency(result))
        console.print(format_throughput(result))
    spec = format_speculative(result)
    if spec:
        console.print(spec)
    for line in format_footer(result):
        console.print(line, highlight=False)
