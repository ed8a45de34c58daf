"""`python -m infercost.bench`: the benchmark without the main CLI."""

from __future__ import annotations

import argparse
import sys

from .cli import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="infercost bench", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
