"""One benchmark session: devices, limits, model, every device x precision, speculative decoding.

Results are gathered in the result dict as they finish, so Ctrl-C keeps what was done.
"""

from __future__ import annotations

import gc
import time

from . import predict, probes, specdec
from .cli import BenchError
from .convert import Unsupported, check_supported, convert, precisions_for
from .devices import find_devices, system_memory
from .limits import measure_limits
from .models import ModelError, model_spec, resolve_source
from .report import Reporter, print_summary
from .result import add_limits, add_run, add_speculative, finish, new_result, write
from .runner import RunSettings, make_prompt, measure
from .timing import sync_for

ORDER = {"fp32": 0, "int8": 1, "fp8": 1, "bf16": 2, "fp16": 2}
WORKSPACE_BYTES = 1.5e9
SPECULATIVE_MAX_TOKENS = 32  # target alone + speculative, interleaved, three times: keep it short  # probe buffer, activations, the interpreter and libraries


def _choose_devices(torch, wanted):
    found = find_devices(torch)
    if wanted is None:
        return found
    chosen = [d for d in found if d.kind in wanted]
    absent = [w for w in wanted if w not in {d.kind for d in found}]
    if absent:
        what = {"cuda": "no CUDA GPU is visible to torch", "mps": "Apple MPS is not available",
                "cpu": "no CPU"}[absent[0]]
        raise BenchError(f"--device {absent[0]}: {what} (found: {', '.join(d.id for d in found)})")
    return chosen


def _plan(devices, wanted):
    plan, skipped = [], []
    for d in devices:
        for p in wanted or precisions_for(d):
            try:
                check_supported(d, p)
                plan.append((d, p))
            except Unsupported as exc:
                skipped.append({"device": d.id, "precision": p, "reason": str(exc)})
    plan.sort(key=lambda dp: (dp[0].kind != "cpu", ORDER.get(dp[1], 3)))
    return plan, skipped


def _params(torch, source, spec) -> int:
    if spec is not None:
        from ..physics.params import total_params

        return int(total_params(spec))
    from transformers import AutoModelForCausalLM

    from .loading import _config_object

    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(_config_object(source.config))
    return int(sum(p.numel() for p in m.parameters()))


def _check_fits(plan, params: int, spec, available_cpu: float) -> None:
    """Refuse, before loading, a model whose weights this machine cannot hold (core's weight bytes)."""
    from ..physics.memory import weight_bytes

    fp32 = weight_bytes(spec, 4.0) if spec is not None else params * 4.0
    cpu_runs = [p for d, p in plan if d.kind == "cpu"]
    copies = 2 if len(plan) > 1 else 1  # the fp32 master plus one copy being converted
    need = fp32 * copies + (fp32 / 4 if "int8" in cpu_runs else 0) + WORKSPACE_BYTES
    if need > available_cpu:
        raise BenchError(f"the model will not fit in memory: {params / 1e9:.2f}B parameters need about "
                         f"{need / 1e9:.1f} GB for this run (fp32 weights{' plus a converted copy' if copies > 1 else ''}), "
                         f"and {available_cpu / 1e9:.1f} GB is available; try --precision or a smaller model")


BYTES_PER_WEIGHT = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "fp8": 1.0}


def _fit_on_devices(plan, params: int, spec, skipped: list) -> list:
    """Skip, with the reason, a GPU precision whose weights exceed the device's free memory."""
    from ..physics.memory import weight_bytes

    kept = []
    for d, p in plan:
        need = weight_bytes(spec, BYTES_PER_WEIGHT[p]) if spec is not None else params * BYTES_PER_WEIGHT[p]
        if d.kind != "cpu" and need > 0.9 * d.available_memory_bytes:
            skipped.append({"device": d.id, "precision": p, "reason": f"the weights ({need / 1e9:.1f} GB at {p}) do "
                            f"not fit in {d.available_memory_bytes / 1e9:.1f} GB free on {d.name}"})
        else:
            kept.append((d, p))
    return kept


def run_bench(s: dict) -> int:
    import torch
    from rich.console import Console

    console = Console()
    start = time.perf_counter()
    if s["threads"]:
        torch.set_num_threads(s["threads"])
    devices = _choose_devices(torch, s["devices"])
    try:
        source = resolve_source(s["model"], s["config"], s["quick"])
        try:
            spec = model_spec(source)
        except ValueError as exc:  # the core cannot read this architecture: run without estimates
            spec, spec_problem = None, str(exc)
        else:
            spec_problem = ""
        params = _params(torch, source, spec)
    except ModelError as exc:
        raise BenchError(str(exc)) from None
    plan, skipped = _plan(devices, s["precisions"])
    if plan:
        _check_fits(plan, params, spec, system_memory()[1])
        plan = _fit_on_devices(plan, params, spec, skipped)
    if not plan:
        raise BenchError("nothing to run: " + "; ".join(x["reason"] for x in skipped))
    settings = RunSettings(s["prompt_tokens"], s["new_tokens"], s["batch_sizes"], s["batch_steps"], s["repeats"], s["seed"])
    result = new_result(s, devices, source, spec, params, torch)
    result["skipped"].extend(skipped)
    if spec_problem:
        result["notes"].append(f"No estimates: {spec_problem}")
    reporter = Reporter(console, total=_work_units(devices, plan, s))
    interrupted = False
    try:
        with reporter:
            _session(torch, s, settings, devices, plan, source, spec, result, reporter)
    except KeyboardInterrupt:
        interrupted = True
        result["status"] = "interrupted"
        result["notes"].append("Interrupted with Ctrl-C: the file holds what finished.")
    finish(result, time.perf_counter() - start)
    print_summary(console, result)
    if s["json"]:
        try:
            path = write(result, s["json"])
        except OSError as exc:
            raise BenchError(f"cannot write {s['json']}: {exc.strerror or exc}") from None
        console.print(f"Result written to {path}")
    return 130 if interrupted else 0


def _work_units(devices, plan, s) -> int:
    per_run = 1 + s["repeats"] + len([b for b in s["batch_sizes"] if b != 1])
    return len(devices) + 1 + len(plan) * per_run + (s["repeats"] if s["speculative"] else 0)


def _session(torch, s, settings, devices, plan, source, spec, result, reporter) -> None:
    gpu_specs = {}
    for d in devices:
        wanted = [p for dev, p in plan if dev is d]
        limit, gpu, failed = measure_limits(torch, d, wanted, s, reporter.tick)
        for precision, reason in failed.items():
            result["skipped"].append({"device": d.id, "precision": precision, "reason": reason})
            plan = [(dev, p) for dev, p in plan if not (dev is d and p == precision)]
        add_limits(result, limit, gpu)
        gpu_specs[d.id] = (gpu, limit)
        reporter.advance()
    from .loading import build_model

    reporter.tick(f"building {source.label}")
    master = build_model(source, s["seed"])
    reporter.advance()
    vocab = master.config.vocab_size
    outputs, kept, spec_done = {}, {}, False
    for i, (d, p) in enumerate(plan):
        # fp32 on the CPU is the master itself; the last CPU conversion may consume the master, unless
        # it is the int8 draft that the speculative run needs beside the fp32 target.
        last = i == len(plan) - 1 and not (p == "int8" and s["speculative"])
        in_place = d.kind == "cpu" and (p == "fp32" or last)
        reporter.tick(f"{d.id} {p}: converting")
        try:
            conv = convert(torch, master, d, p, in_place=in_place, tf32=s["tf32"])
        except Unsupported as exc:
            result["skipped"].append({"device": d.id, "precision": p, "reason": str(exc)})
            reporter.advance(1 + s["repeats"] + len([b for b in s["batch_sizes"] if b != 1]))
            continue
        prompt = make_prompt(torch, vocab, s["prompt_tokens"], s["seed"], d.id)
        measured = measure(torch, conv.model, d.id, prompt, settings,
                           lambda what, d=d, p=p: reporter.tick(f"{d.id} {p}: {what}", advance=what != "warm-up"))
        reporter.advance()
        gpu, limit = gpu_specs[d.id]
        add_run(result, d, conv, measured, settings, spec, gpu, limit)
        outputs[(d.id, p)] = measured
        if d.kind == "cpu" and p in ("fp32", "int8"):
            kept[p] = conv
        else:
            del conv
            gc.collect()
        if s["speculative"] and not spec_done and {"fp32", "int8"} <= set(kept):
            spec_done = True
            _speculative(torch, s, kept, outputs, result, reporter, vocab)
            kept.pop("int8")
            gc.collect()
    if s["speculative"] and not spec_done:
        result["notes"].append("Speculative decoding was not measured: it needs the CPU fp32 and int8 runs.")


def _speculative(torch, s, kept, outputs, result, reporter, vocab) -> None:
    """fp32 target, its int8 copy as the draft, same prompt as the runs; each speculative repeat is
    timed right after the target alone, so both see the same machine (other load drifts)."""
    target, draft = kept["fp32"].model, kept["int8"].model
    k, n = s["draft_tokens"], min(s["new_tokens"], SPECULATIVE_MAX_TOKENS)
    prompt = make_prompt(torch, vocab, s["prompt_tokens"], s["seed"], "cpu")
    sync = sync_for("cpu")
    runs, alone = [], []
    for r in range(s["repeats"]):
        reporter.tick(f"speculative k={k}: repeat {r + 1}/{s['repeats']}")
        alone.append(specdec.target_alone(torch, target, prompt, n, sync))
        runs.append(specdec.generate(torch, target, draft, prompt, n, k, sync))
        reporter.advance()
    add_speculative(result, runs, alone, k, outputs[("cpu", "fp32")], kept["int8"].path)
