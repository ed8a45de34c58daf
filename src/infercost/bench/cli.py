"""`infercost bench`: arguments and entry point. Importing this module does not import torch."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from .devices import transparent_huge_pages

DEVICE_CHOICES = ("cpu", "cuda", "mps")
PRECISION_CHOICES = ("fp32", "bf16", "fp16", "int8", "fp8")
MIN_TRANSFORMERS = (4, 45)
QUICK = {"prompt_tokens": 16, "new_tokens": 12, "batch_sizes": (1, 4), "batch_steps": 4, "probe_mib": 512,
         "probe_matmul": 1024}
FULL = {"prompt_tokens": 128, "new_tokens": 64, "batch_sizes": (1, 4, 16), "batch_steps": 4, "probe_mib": 1024,
        "probe_matmul": 2048}


class BenchError(Exception):
    """Bad input or a refusal: one line for the user, exit status 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `bench` options (the main CLI calls this on its subparser)."""
    parser.description = ("Time a model on this machine's devices at three precisions each, measure the "
                          "machine's limits first, and put the core's estimate beside every figure.")
    g = parser.add_argument_group("what to run")
    g.add_argument("--device", default=None, metavar="LIST",
                   help="devices, comma-separated: cpu, cuda, mps (default: every device found)")
    g.add_argument("--precision", default=None, metavar="LIST",
                   help="precisions, comma-separated: fp32, bf16, fp16, int8, fp8 "
                        "(default: three per device: CPU fp32,bf16,int8)")
    g.add_argument("--model", default=None, metavar="PATH_OR_ID",
                   help="a Hugging Face causal LM: local folder or hub id (real weights; a hub id downloads); "
                        "default: a built-in 1.1B Llama-family shape with seeded random weights")
    g.add_argument("--config", default=None, metavar="CONFIG_JSON",
                   help="a config.json: that architecture with seeded random weights")
    g.add_argument("--quick", action="store_true", help="a tiny model and short lengths (seconds; for tests)")
    g = parser.add_argument_group("lengths and repeats")
    g.add_argument("--prompt-tokens", type=int, default=None, help="prompt length for time to first token (128)")
    g.add_argument("--new-tokens", type=int, default=None, help="greedy tokens decoded at batch 1 (64)")
    g.add_argument("--batch-sizes", default=None, metavar="LIST", help="batch sizes for total tokens/s (1,4,16)")
    g.add_argument("--batch-steps", type=int, default=None, help="decode steps timed per repeat at each batch size above 1 (4)")
    g.add_argument("--repeats", type=int, default=3, help="timed repeats after warm-up, at least 3 (3)")
    g.add_argument("--seed", type=int, default=0, help="seed for random weights and the prompt (0)")
    g.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's choice)")
    g.add_argument("--draft-tokens", type=int, default=2,
                   help="speculative decoding: draft length k (2: the int8 draft costs ~40%% of an fp32 step here, "
                        "so short drafts pay best)")
    g.add_argument("--no-speculative", action="store_true", help="skip the speculative decoding measurement")
    g.add_argument("--tf32", action="store_true", help="CUDA: allow TF32 for the fp32 run (reported as such)")
    g.add_argument("--no-huge-pages", action="store_true",
                   help="CPU: do not ask torch for transparent huge pages (THP_MEM_ALLOC_ENABLE)")
    g = parser.add_argument_group("output")
    g.add_argument("--json", default=None, metavar="PATH", help="write the result file (schema infercost.bench/1)")


def _int_list(text: str, flag: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise BenchError(f"{flag}: expected whole numbers separated by commas, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise BenchError(f"{flag}: expected whole numbers of at least 1, got {text!r}")
    return tuple(dict.fromkeys(values))


def _names(text: str | None, flag: str, choices: tuple[str, ...]) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(dict.fromkeys(v.strip().lower() for v in text.split(",") if v.strip()))
    unknown = [n for n in names if n not in choices]
    if unknown or not names:
        raise BenchError(f"{flag}: unknown {', '.join(unknown) or 'empty value'}; choose from {', '.join(choices)}")
    return names


def settings_from_args(args: argparse.Namespace) -> dict:
    """Checked settings (no torch needed); raises BenchError with a one-line reason."""
    base = QUICK if args.quick else FULL
    s = {
        "quick": bool(args.quick),
        "devices": _names(args.device, "--device", DEVICE_CHOICES),
        "precisions": _names(args.precision, "--precision", PRECISION_CHOICES),
        "prompt_tokens": args.prompt_tokens if args.prompt_tokens is not None else base["prompt_tokens"],
        "new_tokens": args.new_tokens if args.new_tokens is not None else base["new_tokens"],
        "batch_sizes": _int_list(args.batch_sizes, "--batch-sizes") if args.batch_sizes else base["batch_sizes"],
        "batch_steps": args.batch_steps if args.batch_steps is not None else base["batch_steps"],
        "repeats": args.repeats, "seed": args.seed, "threads": args.threads,
        "draft_tokens": args.draft_tokens, "speculative": not args.no_speculative, "tf32": bool(args.tf32),
        "probe_bytes": base["probe_mib"] * 2**20, "probe_matmul": base["probe_matmul"],
        "model": args.model, "config": args.config, "json": args.json, "huge_pages": not args.no_huge_pages,
    }
    for key, low, high in (("prompt_tokens", 1, 100_000), ("new_tokens", 2, 100_000), ("batch_steps", 1, 10_000),
                           ("repeats", 3, 1000), ("draft_tokens", 1, 32)):
        if not low <= s[key] <= high:
            raise BenchError(f"--{key.replace('_', '-')}: must be between {low} and {high}, got {s[key]}")
    if any(b > 4096 for b in s["batch_sizes"]):
        raise BenchError("--batch-sizes: at most 4096")
    if s["threads"] is not None and not 1 <= s["threads"] <= 1024:
        raise BenchError(f"--threads: must be between 1 and 1024, got {s['threads']}")
    if args.model and args.config:
        raise BenchError("--model and --config: give one, not both")
    if s["json"]:
        _check_writable(s["json"])
    return s


def _check_writable(path: str) -> None:
    """Refuse before measuring for minutes a result file that could not be written."""
    target = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(target):
        raise BenchError(f"--json: {path} is a folder; give a file name")
    parent = os.path.dirname(target)
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent) if os.path.dirname(parent) != parent else ""
    if not parent or not os.access(parent, os.W_OK):
        raise BenchError(f"--json: cannot write {path} (its folder is not writable)")


def _check_stack() -> None:
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise BenchError(f"{' and '.join(missing)} not installed: pip install 'infercost[bench]'")
    import transformers

    version = tuple(int(p) for p in transformers.__version__.split(".")[:2] if p.isdigit())
    if version < MIN_TRANSFORMERS:
        raise BenchError(f"transformers {transformers.__version__} is too old (needs 4.45+): "
                         "pip install 'infercost[bench]'")


def _ask_for_huge_pages(settings: dict) -> None:
    """Ask torch's CPU allocator for transparent huge pages where the kernel offers them (before torch
    allocates: the allocator reads THP_MEM_ALLOC_ENABLE once)."""
    if settings["huge_pages"] and transparent_huge_pages() in ("always", "madvise"):
        os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 0 when done, 2 on bad input or a refusal (one line), 130 on Ctrl-C."""
    try:
        settings = settings_from_args(args)
        _check_stack()
        _ask_for_huge_pages(settings)
        from .session import run_bench

        return run_bench(settings)
    except BenchError as exc:
        print(f"infercost bench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("infercost bench: interrupted before anything was measured", file=sys.stderr)
        return 130
