"""`infercost serve | estimate | catalog | bench`. The only module that prints."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import typing
from pathlib import Path
from typing import Any, NoReturn

from . import catalog
from .codec import to_jsonable
from .errors import InferCostError
from .report import estimates_csv, format_estimate, format_gpus, format_models
from .scenario import Scenario

EXIT_USAGE = 2
SCENARIO_FIELDS = [f for f in dataclasses.fields(Scenario) if not f.name.startswith("custom_")]
FIELD_HELP = {
    "model": "model id (see `infercost catalog`)",
    "precision": "weights: 16bit, 8bit or 4bit (32bit for benchmarks)",
    "kv_precision": "KV cache: 16bit or 8bit",
    "gpu": "accelerator id (see `infercost catalog`)",
    "gpus": "number of GPUs (tensor parallel)",
    "compute_efficiency": "share of peak compute reached when reading (0-1)",
    "memory_efficiency": "share of peak memory bandwidth reached when writing (0-1)",
    "question_tokens": "question length (step 1)",
    "answer_tokens": "answer length (step 1)",
    "conversation_tokens": "conversation length (step 2)",
    "conversations": "number of conversations held at once (step 2)",
    "batch": "batch size (step 3)",
    "draft_model": "draft model id for speculative decoding (step 4)",
    "draft_tokens": "draft length k (step 4)",
    "acceptance_rate": "share of draft guesses the big model accepts (step 4)",
    "shared_prefix_tokens": "tokens of a prompt prefix shared by all requests (step 4)",
    "price_per_gpu_hour_usd": "price per GPU-hour in USD (default: the catalog's)",
    "busy_share": "share of the hour the server has work (step 5)",
}


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _field_type(field: dataclasses.Field) -> Any:
    tp = typing.get_type_hints(Scenario)[field.name]
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if args else tp


def _parse_value(text: str, tp: Any) -> Any:
    if tp is int:
        return int(text)
    if tp is float:
        return float(text)
    return text  # strings and enums: Scenario validates them


def _add_estimate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimate", help="estimate one scenario (or a sweep)", description=(
        "Estimate time, memory, batching, speculative decoding and cost for one scenario. "
        "Flags override --scenario FILE, which overrides the defaults."))
    for f in SCENARIO_FIELDS:
        p.add_argument(_flag(f.name), dest=f.name, metavar="VALUE", help=FIELD_HELP.get(f.name))
    p.add_argument("--scenario", type=Path, metavar="FILE", help="scenario as JSON (as written by --json)")
    p.add_argument("--sweep", action="append", default=[], metavar="FIELD=V1,V2,...",
                   help="vary a field; repeat for a grid; prints CSV (or JSON with --json)")
    p.add_argument("--json", action="store_true", help="print the whole estimate as JSON")


def _scenario_from_args(args: argparse.Namespace) -> Scenario:
    base: dict[str, Any] = {}
    if args.scenario is not None:
        try:
            text = args.scenario.read_text(encoding="utf-8")
        except OSError as exc:
            raise InferCostError("scenario", f"cannot read {args.scenario}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InferCostError("scenario", f"{args.scenario} is not UTF-8 text") from None
        base = Scenario.from_json(text).to_dict()
    for f in SCENARIO_FIELDS:
        raw = getattr(args, f.name)
        if raw is not None:
            base[f.name] = _convert_flag(f, raw)
    return Scenario.from_dict(base)


def _convert_flag(f: dataclasses.Field, raw: str) -> Any:
    tp = _field_type(f)
    try:
        return _parse_value(raw, tp)
    except ValueError:
        kind = "a whole number" if tp is int else "a number"
        raise InferCostError(f.name, f"must be {kind}, not {raw!r}") from None


def _parse_sweep(specs: list[str]) -> list[tuple[dataclasses.Field, list[str]]]:
    by_name = {f.name: f for f in SCENARIO_FIELDS}
    sweeps = []
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        if not sep or name not in by_name or not values.strip():
            raise InferCostError("sweep", f"expected FIELD=V1,V2,... with a scenario field, not {spec!r}")
        sweeps.append((by_name[name], [v.strip() for v in values.split(",") if v.strip()]))
    return sweeps


def _cmd_estimate(args: argparse.Namespace) -> int:
    from .estimate import estimate

    scenario = _scenario_from_args(args)
    if not args.sweep:
        result = estimate(scenario)
        print(json.dumps(result.to_dict(), indent=2) if args.json else format_estimate(result), end="\n" if args.json else "")
        return 0
    sweeps = _parse_sweep(args.sweep)
    rows = []
    for combo in itertools.product(*[values for _, values in sweeps]):
        changes = {f.name: _convert_flag(f, v) for (f, _), v in zip(sweeps, combo)}
        variant = Scenario.from_dict({**scenario.to_dict(), **changes})
        rows.append((changes, estimate(variant)))
    if args.json:
        print(json.dumps([e.to_dict() for _, e in rows], indent=2))
    else:
        print(estimates_csv(rows), end="")
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    models, gpus = catalog.models().values(), catalog.gpus().values()
    if args.json:
        print(json.dumps({"models": to_jsonable(list(models)), "gpus": to_jsonable(list(gpus))}, indent=2))
        return 0
    if args.kind in ("all", "models"):
        print("Models\n" + format_models(models) + "\n")
    if args.kind in ("all", "gpus"):
        print("Accelerators\n" + format_gpus(gpus))
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from .server import serve

    return serve(host=args.host, port=args.port, course_base_url=args.course_url)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="infercost", description="Why serving a large language model costs what it costs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    serve = sub.add_parser("serve", help="run the interactive page in your browser (offline)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--course-url", default="", metavar="URL",
                       help="base URL of the course, for the links to other modules")
    _add_estimate(sub)
    cat = sub.add_parser("catalog", help="list the models and accelerators")
    cat.add_argument("kind", nargs="?", choices=["all", "models", "gpus"], default="all")
    cat.add_argument("--json", action="store_true")
    from .bench.cli import add_arguments as add_bench_arguments

    add_bench_arguments(sub.add_parser("bench", help="time a small model on this machine's CPU and GPU"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "estimate":
            return _cmd_estimate(args)
        if args.command == "catalog":
            return _cmd_catalog(args)
        if args.command == "serve":
            return _cmd_serve(args)
        from .bench.cli import run as run_bench

        return run_bench(args)
    except InferCostError as exc:
        print(f"infercost: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("infercost: stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
