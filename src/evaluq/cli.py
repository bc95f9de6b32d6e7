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


def _add_test_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "test", help="two-system significance test on prediction files",
        description="Is H1 better than H0 on TARGETS? Files: .txt (one label per line), "
                    ".csv / .tsv (rows of probabilities), .npy. Positive differences mean "
                    "H1 is better.")
    p.add_argument("targets", help="targets file")
    p.add_argument("h0", help="baseline predictions file")
    p.add_argument("h1", help="treatment predictions file")
    p.add_argument("--metrics", nargs="+", default=None,
                   help="metric names (default: BooStSa's four for the kind of labels)")
    p.add_argument("--method", default="berg-kirkpatrick",
                   help="berg-kirkpatrick (default), paired or permutation")
    p.add_argument("--n-resamples", type=int, default=1000, help="resamples (default 1000)")
    p.add_argument("--sample-size", type=float, default=None,
                   help="Berg-Kirkpatrick sub-sample fraction in [0.05, 0.5] (default 0.1)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--kind", default=None, help="hard, soft or regression (default: detected)")
    p.add_argument("--labels", nargs="+", default=None,
                   help="hard labels: the label set, in order (default: the labels seen)")
    p.add_argument("--h0-name", default="h0")
    p.add_argument("--h1-name", default="h1")
    p.set_defaults(func=_run_test)


def _run_test(args: argparse.Namespace) -> int:
    from evaluq.significance import bootstrap_test

    res = bootstrap_test(args.targets, args.h0, args.h1, metrics=args.metrics,
                         method=args.method, n_resamples=args.n_resamples,
                         sample_size=args.sample_size, confidence_level=args.confidence_level,
                         rng=args.seed, kind=args.kind, labels=_parse_labels(args.labels),
                         h0_name=args.h0_name,
                         h1_name=args.h1_name)
    print(res.summary())
    return 0


def _parse_labels(labels: list[str] | None) -> list[int] | list[str] | None:
    """Labels from the command line: integers when they all are (as the .txt loader reads)."""
    if labels is None:
        return None
    try:
        return [int(v) for v in labels]
    except ValueError:
        return labels


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
    _add_test_parser(sub)
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
