"""The ``evaluq`` command line: a thin layer over the library's functions.

Subcommands: ``demo`` (the whole analysis on the shipped demo predictions), ``test`` (the
two-system significance test on prediction files), ``report`` (the analysis of a results file).
Each subcommand registers itself with an ``add_*_parser`` function below.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _add_demo_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="analyse the demo predictions shipped with evaluq")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates per data set")
    p.add_argument("--n-resamples", type=int, default=10_000,
                   help="resamples for the leaderboard intervals and ranks")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.set_defaults(func=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from evaluq.demo import run_demo

    run_demo(n_boot=args.n_boot, n_resamples=args.n_resamples, rng=args.seed)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``evaluq`` command."""
    from evaluq import __version__

    parser = argparse.ArgumentParser(
        prog="evaluq",
        description="Uncertainty quantification for model evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"evaluq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_demo_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evaluq`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, TypeError, FileNotFoundError, KeyError) as err:
        print(f"evaluq {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
