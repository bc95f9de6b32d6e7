"""The ``evaluq`` command line: a thin layer over the library's functions.

Subcommands: ``demo`` (the whole analysis on the shipped demo predictions), ``test`` (the
two-system significance test on prediction files), ``report`` (the analysis of a results file),
``ratings`` (Bradley-Terry ratings from a file of pairwise votes).
Each subcommand registers itself with an ``add_*_parser`` function below.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evaluq._dims import DATA_NOTE, LANGUAGE_LABEL, SCALE_CHECK
from evaluq._warn import warn

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

    from evaluq.reporting import Report


def _add_demo_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="analyse the demo predictions shipped with evaluq")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates per data set")
    p.add_argument("--n-resamples", type=int, default=10_000,
                   help="resamples for the leaderboard intervals and ranks")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--bayes", action=argparse.BooleanOptionalAction, default=True,
                   help="fit the hierarchical Bayesian model and print its posterior rank "
                        "report beside the resampling's (default: on)")
    p.set_defaults(func=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from evaluq.demo import run_demo

    run_demo(n_boot=args.n_boot, n_resamples=args.n_resamples, rng=args.seed, bayes=args.bayes)
    return 0


def _add_test_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "test", help="two-system significance test on prediction files",
        description="Is H1 better than H0 on TARGETS? Three files TARGETS H0 H1: .txt (one "
                    "label per line), .csv / .tsv (rows of probabilities), .npy; or one table "
                    "of one row per item (CSV, TSV, JSON lines, parquet) with --columns. "
                    "Positive differences mean H1 is better.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="TARGETS H0 H1: the targets, baseline and treatment predictions files; "
                        "or one table with --columns")
    p.add_argument("--columns", nargs=3, default=None, metavar=("TARGET", "H0", "H1"),
                   help="with one table file: its columns of the targets, the baseline's and "
                        "the treatment's predictions (labels or values; H0 and H1 name the "
                        "systems unless --h0-name / --h1-name)")
    p.add_argument("--metrics", nargs="+", default=None,
                   help="metric names (default: BooStSa's four for the kind of labels)")
    p.add_argument("--method", default="berg-kirkpatrick",
                   help="berg-kirkpatrick (default), paired or permutation")
    p.add_argument("--n-resamples", type=int, default=1000, help="resamples (default 1000)")
    p.add_argument("--sample-size", type=float, default=None,
                   help="Berg-Kirkpatrick sub-sample fraction in [0.05, 0.5] (default 0.1)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--kind", default=None,
                   help="hard (labels compared as written: '01', '1.0' and '1' differ), soft "
                        "or regression (default: detected; labels are read as text, and "
                        "integers only when every label of every file is a plain integer; "
                        "an ambiguous input, one number written two ways or whole-number "
                        "targets with a non-integer prediction, is refused, naming this flag)")
    p.add_argument("--labels", nargs="+", default=None,
                   help="hard labels: the label set, in order (default: the labels seen)")
    p.add_argument("--h0-name", default=None, help="the baseline's name (default h0)")
    p.add_argument("--h1-name", default=None, help="the treatment's name (default h1)")
    p.add_argument("--json", action="store_true",
                   help="print the result as JSON (settings, one record per metric, p-values, "
                        "intervals) instead of the text summary")
    p.add_argument("-o", "--out", default=None,
                   help="write the output (text or JSON) to this file instead of stdout")
    p.set_defaults(func=_run_test)


def _run_test(args: argparse.Namespace) -> int:
    from evaluq.significance import bootstrap_test

    targets, h0, h1, names, labels = _test_inputs(args)
    res = bootstrap_test(targets, h0, h1, metrics=args.metrics,
                         method=args.method, n_resamples=args.n_resamples,
                         sample_size=args.sample_size, confidence_level=args.confidence_level,
                         rng=args.seed, kind=args.kind, labels=labels,
                         h0_name=args.h0_name or names[0], h1_name=args.h1_name or names[1])
    if args.json:
        import json

        frame = res.to_dataframe().reset_index()
        frame["nan_reason"] = list(res.nan_reason)    # why a null (NaN, inf) is one
        settings = {k: v for k, v in res.to_dataset().attrs.items() if k != "nan_reason"}
        text = json.dumps({"settings": settings,
                           "results": json.loads(frame.to_json(orient="records"))}, indent=2)
    else:
        text = res.summary()
    _emit(text, args.out)
    return 0


def _test_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, tuple[str, str], Any]:
    """``evaluq test``'s targets, h0 and h1 (three files, or three columns of one table), the
    systems' default names and the --labels. Labels are read as text: a table's cells as
    written ("NA", "None" are labels; only an empty cell is missing), then typed together
    (:func:`evaluq.metrics._text_labels.type_label_texts`; ``.txt`` files likewise, by
    :func:`evaluq.bootstrap_test`)."""
    if args.columns is None:
        if len(args.files) != 3:
            raise ValueError(f"give three files, TARGETS H0 H1, or one table with --columns "
                             f"TARGET H0 H1; got {len(args.files)} file(s)")
        return (*args.files, ("h0", "h1"), _parse_labels(args.labels))
    if len(args.files) != 1:
        raise ValueError(f"--columns takes one table file; got {len(args.files)} files")
    path, columns = args.files[0], list(args.columns)
    df = _label_table(path)
    absent = [c for c in columns if c not in df.columns]
    if absent:
        raise ValueError(f"column(s) {absent} (given as --columns) not in {path}; its columns "
                         f"are: {', '.join(map(str, df.columns))}")
    empty = df[columns].isna()
    if empty.any(axis=None):
        rows = empty.any(axis=1).to_numpy().nonzero()[0]
        raise ValueError(f"{path}: {len(rows)} row(s) have no value in column(s) "
                         f"{[c for c in columns if empty[c].any()]} (rows "
                         f"{', '.join(map(str, rows[:10]))}{' ...' if len(rows) > 10 else ''}, "
                         f"counted from 0): every item needs a target and both predictions; "
                         f"remove those rows or fill them")
    values, labels = _typed_columns(args, [df[c].to_numpy() for c in columns], columns)
    return (*values, (str(columns[1]), str(columns[2])), labels)


def _typed_columns(args: argparse.Namespace, values: list[Any], columns: Sequence[str]
                   ) -> tuple[list[Any], Any]:
    """A table's three columns and the --labels, typed together when the columns are text
    (a text table's, read as written): plain integers, numbers or the labels as written."""
    if not all(v.dtype == object and all(isinstance(x, str) for x in v) for v in values):
        return values, _parse_labels(args.labels)
    import numpy as np

    from evaluq.metrics._text_labels import type_label_texts
    from evaluq.significance._bootstrap import kind_of_metrics

    texts = [np.char.strip(v.astype(str)) for v in values]
    extra = [np.array(args.labels, dtype=str)] if args.labels else []
    typed = type_label_texts([*map(str, columns), "labels"][:len(texts) + len(extra)],
                             texts + extra, kind=kind_of_metrics(args.metrics, args.kind),
                             unit="row")
    return typed[:3], (typed[3] if extra else None)


def _label_table(path: str) -> pd.DataFrame:
    """The table of ``evaluq test --columns``: a text table's cells read as written (no
    "NA" / "None" / "nan" read as missing; an empty cell is), other formats as typed."""
    from evaluq.io import read_table

    name = Path(path).name.lower()
    for compressed in (".gz", ".bz2", ".xz", ".zip"):
        name = name.removesuffix(compressed)
    if Path(name).suffix in (".csv", ".tsv", ".txt", ".tab"):
        return read_table(path, dtype=str, keep_default_na=False, na_values=[""])
    return read_table(path)


def _emit(text: str, out: str | None) -> None:
    """Print ``text``, or write it to the file ``out``."""
    if out is None:
        print(text)
        return
    from evaluq._atomic import write_text

    write_text(out, text + "\n")                  # atomic: temp file, then rename


def _parse_labels(labels: list[str] | None) -> list[int] | list[str] | None:
    """Labels from the command line: integers when they all are (as the .txt loader reads)."""
    if labels is None:
        return None
    try:
        return [int(v) for v in labels]
    except ValueError:
        return labels


REPORT_FORMATS = ("html", "md", "tex", "csv", "json")


def _add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="analyse a results file: HTML report, tables, cube",
        description="Analyse results files (CSV, TSV or tab-delimited .txt, JSON records, "
                    "JSON lines, parquet; a text file may "
                    "be compressed: runs.csv.gz, .bz2, .xz, .zip) with one score per "
                    "row (--score, long format) or one mean and SDs per model and language "
                    "(--mean, summary format). Writes to --out: report.html, the cube as "
                    "NetCDF, and every table as CSV, Markdown and LaTeX.")
    p.add_argument("files", nargs="+", metavar="FILE", help="results files (rows concatenated)")
    cols = p.add_argument_group("columns of the long format")
    cols.add_argument("--model", default="model",
                      help="model column (default 'model', or one so named up to case)")
    cols.add_argument("--language", default="language",
                      help="language / task / data set column (default 'language' up to case, "
                           "else one named as tasks: 'task', 'dataset', 'benchmark', ...)")
    cols.add_argument("--score", action="append", default=None, metavar="COL",
                      help="score column; repeat for several metrics (one section each); "
                           "default: a numeric column named 'score', up to case (long format)")
    cols.add_argument("--seed", default=None, metavar="COL",
                      help="seed (run) column (default: a column named 'seed', up to case, if any)")
    cols.add_argument("--bootstrap", default=None, metavar="COL",
                      help="bootstrap replicate column (empty on full-test-set rows)")
    cols.add_argument("--wide", nargs="*", default=None, metavar="COL",
                      help="a wide table: one column per language (task), whose cells are "
                           "the scores of --score NAME (default 'score'). Name the columns, "
                           "or give --wide alone to read every numeric column other than "
                           "--model / --seed / --bootstrap as a language")
    cols.add_argument("--item", default=None, metavar="COL",
                      help="item column: FILE... are per-item tables, one row per model and "
                           "item (and epoch: --seed), --score their per-item scores; analysed "
                           "as harness logs are (paired item bootstrap, item means, --bayes "
                           "the item model, --judge/--gold, --cluster COL). --language names "
                           "the task column, if any (a column 'task', 'subject', ... is read "
                           "as it without the flag, as in the long format)")
    _add_summary_columns(p)
    _add_reading_flags(p)
    _add_report_checks(p)
    _add_bayes_arguments(p)
    p.add_argument("--n-resamples", type=int, default=2000, help="resamples (default 2000)")
    p.add_argument("--replication", default="auto",
                   help="auto (default: parametric with bootstrap replicates or summary SDs, "
                        "else none), parametric, nonparametric or none")
    p.add_argument("--resample-languages", default="auto",
                   help="auto (default: fixed, or bootstrap when the replication is none), "
                        "fixed, bootstrap or subsample")
    p.add_argument("--how", default="mean",
                   help="aggregate over languages: mean (default), median, gmean, trimmed")
    p.add_argument("--rng", type=int, default=0, help="random seed (default 0)")
    p.add_argument("-o", "--out", default="evaluq-report", metavar="DIR",
                   help="output folder (default ./evaluq-report)")
    p.add_argument("--format", default=",".join(REPORT_FORMATS),
                   help="comma-separated outputs among html,md,tex,csv,json (default: all)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    _add_harness_arguments(p)
    p.set_defaults(func=_run_report)


def _add_summary_columns(p: argparse.ArgumentParser) -> None:
    """The summary format's columns: --mean, --sd-seed, --sd-boot, --n-seeds, --metric."""
    summ = p.add_argument_group("columns of the summary format")
    summ.add_argument("--mean", default=None, metavar="COL", help="mean score over seeds")
    summ.add_argument("--sd-seed", default=None, metavar="COL", help="seed-to-seed SD")
    summ.add_argument("--sd-boot", default=None, metavar="COL", help="boot-to-boot SD")
    summ.add_argument("--n-seeds", default="1", metavar="N|COL",
                      help="number of seeds: an integer or a column (default 1)")
    summ.add_argument("--metric", default=None, help="metric name (default: the mean column)")


def _add_reading_flags(p: argparse.ArgumentParser) -> None:
    """How the files' text is read: --na-value and --encoding."""
    files = p.add_argument_group("reading the files")
    files.add_argument("--na-value", action="append", default=None, metavar="TEXT",
                       help="read cells holding TEXT as empty (a run that is missing), e.g. "
                            "--na-value - --na-value OOM; CSV / TSV files (empty cells and NA "
                            "are read so already)")
    files.add_argument("--label-score", action="append", default=None, metavar="LABEL=NUMBER",
                       help="read a text label of the --score (and --judge, --gold) columns "
                            "as a score; repeat, e.g. --label-score C=1 --label-score I=0 "
                            "(Inspect's letters) or --label-score yes=1 --label-score no=0")
    files.add_argument("--exclude-language", action="append", default=None, metavar="LABEL",
                       help="leave out the rows of this --language label; repeat, e.g. "
                            "--exclude-language Average (a paper's average over the tasks, "
                            "which would be read as one more task)")
    files.add_argument("--encoding", default=None, metavar="NAME",
                       help="the text encoding of CSV / TSV / JSON files that are not UTF-8, "
                            "e.g. cp1252 (a Windows spreadsheet's export) or latin-1; UTF-16 "
                            "with a byte-order mark is read without it")


def _add_report_checks(p: argparse.ArgumentParser) -> None:
    """The report's options on what the scores mean and what is checked: orientation per
    metric, bounds, the scale check, missing cells."""
    p.add_argument("--higher-is-better", nargs="*", default=None, metavar="METRIC",
                   help="larger scores are better (the default): with no METRIC for every "
                        "metric, else for the metrics named")
    p.add_argument("--lower-is-better", nargs="*", default=None, metavar="METRIC",
                   help="smaller scores are better (error rates, losses): with no METRIC for "
                        "every metric, else for the metrics named (e.g. --score accuracy "
                        "--score loss --lower-is-better loss; before FILE, end the list with --)")
    p.add_argument("--bounds", nargs=2, type=float, default=None, metavar=("LO", "HI"),
                   help="the metric's range, e.g. 0 1 or 0 100: a score outside it is refused "
                        "(exit 2, naming the rows), and resampling stays inside it")
    p.add_argument("--scale-check", action=argparse.BooleanOptionalAction, default=True,
                   help="look for models or languages on another scale (fractions among "
                        "percentages) and warn at the top of the page and here (default: "
                        "on; --no-scale-check silences it)")
    p.add_argument("--missing", choices=("drop", "raise"), default="drop",
                   help="(model, language) cells with no score: drop (default) leaves out the "
                        "languages (or models) holding them and says so; raise stops. With "
                        "--from, items some model lacks are dropped or refused alike. Runs "
                        "missing from a cell are never dropped: each cell uses its own")


def _add_bayes_arguments(p: argparse.ArgumentParser) -> None:
    """``--bayes`` and the options of its fit."""
    p.add_argument("--bayes", action=argparse.BooleanOptionalAction, default=False,
                   help="also fit the hierarchical model and add the posterior sections "
                        "(with --from: the item model, fit_items, on the per-item scores, "
                        "with its LOO comparison and predictive checks)")
    p.add_argument("--error-correlation", type=float, default=None, metavar="RHO",
                   help="with --bayes: the correlation in [0, 1] of the models' test-set "
                        "errors, for a summary file (a cube from predictions shows it)")
    p.add_argument("--draws", type=int, default=None, metavar="N",
                   help="with --bayes: posterior draws per chain (default: the fit's)")
    p.add_argument("--tune", type=int, default=None, metavar="N",
                   help="with --bayes: tuning steps per chain (default: the fit's); raise it "
                        "(e.g. --tune 2000) when the sampler reports divergences")
    p.add_argument("--prior", action="append", default=None, metavar="NAME=SCALE",
                   help="with --bayes: a prior scale of the fit, repeatable (e.g. --prior "
                        "tau_m_sigma=0.05)")


HARNESS_FORMATS = ("inspect", "lm-eval", "lighteval")
RESULTS_ONLY_NOTE = (
    "built from {tool}'s results files (no {per_item} files: {tool} ran without {flag}): "
    "each model's score on each task with its standard error over the documents (the "
    "test-set noise), one run (no run-to-run spread is measured, as with the {per_item}). "
    "The models' errors on the same documents are not paired, so intervals of differences "
    "are wider than the {per_item} would give; rerun {tool} with {flag} for the paired item "
    "bootstrap, the item means and the item model")
"""What the page and the terminal say of a report on a harness's results files alone."""
RESULTS_ONLY = {"lm-eval": {"tool": "lm-eval", "per_item": "samples", "flag": "--log_samples"},
                "lighteval": {"tool": "lighteval", "per_item": "details",
                              "flag": "--save-details"}}
"""The words of :data:`RESULTS_ONLY_NOTE` per harness."""


def _results_cubes(args: argparse.Namespace) -> dict[str, xr.Dataset]:
    """The summary cubes of a harness's results files alone (lm-eval, lighteval): per --score
    (default: each task's first metric), the score per model and task with its standard
    error as the test-set SD, one seed."""
    from evaluq.cube import from_summary
    from evaluq.io import read_lighteval_results, read_lm_eval_results

    per_item = [f for f in ("--item", "--judge", "--gold", "--cluster", "--item-distribution")
                if getattr(args, f[2:].replace("-", "_"), None) is not None]
    words = RESULTS_ONLY[args.source_format]
    if per_item:
        raise ValueError(f"{per_item[0]} needs {words['tool']}'s per-item {words['per_item']} "
                         f"({words['tool']} run with {words['flag']}); the paths hold only "
                         f"its results files")
    reader = read_lm_eval_results if args.source_format == "lm-eval" else read_lighteval_results
    table = reader(args.files)
    metrics = list(dict.fromkeys(table["metric"]))
    present = table.assign(has=table["score"].notna()).pivot_table(
        index="task", columns="metric", values="has", aggfunc="any", sort=False,
        fill_value=False)[metrics]
    chosen = args.score or _first_scores(present)
    unknown = [c for c in chosen if c not in metrics]
    if unknown:
        raise ValueError(f"--score {unknown} not among the metrics of the results: {metrics}")
    cubes = {}
    for col in chosen:
        # one run per model: no run-to-run spread is measured (no sd_seed: not identified);
        # the test-set noise is the standard error
        rows = table[table["metric"] == col]
        has_se = bool(rows["stderr"].notna().all())
        cube = from_summary(rows, model="model", language="task", mean="score", sd_seed=None,
                            sd_boot="stderr" if has_se else None, n_seeds=1, metric=col,
                            higher_is_better=_higher_is_better(args, col, chosen),
                            outlier_threshold=None)
        cube.attrs[LANGUAGE_LABEL] = _task_word(args)
        elsewhere = _tasks_elsewhere(present, col, chosen)
        cube.attrs[DATA_NOTE] = RESULTS_ONLY_NOTE.format(**words) + (
            "" if has_se else f". {words['tool']} gave no standard error of {col!r} (N/A) for some "
                              f"tasks: the test-set noise is not in the intervals") + (
            f". The {elsewhere}" if elsewhere else "")
        cube.attrs["source"] = table.attrs["source"]
        cubes[col] = cube
    return cubes


def _harness_table(args: argparse.Namespace) -> pd.DataFrame:
    """The per-item table of the harness logs named on the command line (with --gold, the
    gold scorer's samples without a label are expected: not warned about)."""
    import warnings

    from evaluq.io import read_inspect_logs, read_lighteval_details, read_lm_eval_samples

    if args.mean is not None or args.bootstrap is not None:
        flag = "--item" if args.item else "--from"
        raise ValueError(f"{flag} reads per-item scores: --mean / --bootstrap do not apply")
    if args.item is not None:
        return _item_table(args)
    metadata = [args.cluster] if args.cluster else None
    readers: dict[str, Callable[..., pd.DataFrame]] = {
        "inspect": read_inspect_logs, "lm-eval": read_lm_eval_samples,
        "lighteval": read_lighteval_details}
    reader = readers[args.source_format]
    with warnings.catch_warnings():
        if getattr(args, "gold", None):     # human labels on some samples only, by design
            warnings.filterwarnings("ignore", message=f".*score {args.gold!r} is missing")
        return reader(args.files, metadata=metadata)


def _item_table(args: argparse.Namespace) -> pd.DataFrame:
    """--item: the user's per-item tables as the harness readers' table (model, task, item,
    epoch, then the scores, the judge's and gold scores and the cluster column). --language
    names the task column (not given: a column 'language', or one named as tasks, 'task',
    'subject', ..., as the long format reads them (:func:`_default_keys`); none: one task,
    "all"), --seed the epoch column (absent: one epoch); without --score (or --judge), the
    table's one numeric column besides the keys is the score (:func:`_default_score`)."""
    import pandas as pd

    _default_keys(args)         # 'Model', 'seed', 'task' read as their flags, as without --item
    if args.score is None and args.judge is None:
        offered = _default_score(args)
        if args.score is None:
            raise ValueError("--item needs the per-item score column(s): --score COL (or "
                             "--judge COL with --gold COL)" + _score_hint(args, offered))
    scores = list(dict.fromkeys([*(args.score or []), *filter(None, (args.judge, args.gold))]))
    given = args.language if args.language != "language" else None   # not the default
    needed: dict[str, str | None] = {"--model": args.model, "--item": args.item,
                                     "--language": given, "--seed": args.seed,
                                     "--cluster": args.cluster, "--judge": args.judge}
    needed |= {f"--score ({i + 1})": c for i, c in enumerate(args.score or [])}
    needed["--gold"] = args.gold                     # on some items only, by design: no warning
    data = _read_files(args.files, needed,
                       empty_is="that model's item left out of that score's analysis",
                       options=_read_options(args), labels=_label_scores(args),
                       keys=(args.model, given, args.item, args.seed))
    task = given or ("language" if "language" in data.columns else None)
    args.task_word = task or "task"                  # what the report calls a task
    table = pd.DataFrame({"model": data[args.model],
                          "task": data[task] if task else "all",
                          "item": data[args.item],
                          "epoch": data[args.seed] if args.seed else 0})
    for col in [*scores, *([args.cluster] if args.cluster else [])]:
        table[col] = data[col]
    table.attrs["source"] = ", ".join(args.files)
    _refuse_repeated_items(table, data, args)
    return table


def _refuse_repeated_items(table: pd.DataFrame, data: pd.DataFrame,
                           args: argparse.Namespace) -> None:
    """--item: rows repeating a (model, task, item, epoch) are refused, naming the columns of
    the files that tell them apart (repeated scorings: the one to give as --seed)."""
    keys = ["model", "task", "item", "epoch"]
    repeated = table.duplicated(keys, keep=False).to_numpy()
    if not repeated.any():
        return
    used = {args.model, args.item, args.language, args.seed, args.cluster, args.judge,
            args.gold, *(args.score or [])}
    rows = data[repeated]
    group = table[repeated].groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    apart = [str(c) for c in data.columns if c not in used
             and (rows.groupby(group)[c].nunique(dropna=False) > 1).all()]
    hint = (f"repeated scorings of an item (epochs, samples): name the column that numbers "
            f"them as --seed (--seed {shlex.quote(apart[0])}?)" if apart else
            "repeated scorings of an item: name the column that numbers them as --seed")
    first = rows.index[0]
    raise ValueError(f"{int(repeated.sum())} rows repeat a (model, {_task_word(args)}, item"
                     f"{', epoch' if args.seed else ''}): e.g. row {first} and others with "
                     f"model {table.loc[first, 'model']!r}, item {table.loc[first, 'item']!r}. "
                     f"If they are {hint}; copies of one row: drop them")


def _first_scores(present: pd.DataFrame) -> list[str]:
    """Without --score: each task's first score (the harness's primary metric of the task),
    once each, in the order of the tasks, so that every task is reported. ``present``: task
    x score, True where the task has the score."""
    out: list[str] = []
    for task in present.index:
        first = next((c for c in present.columns if present.loc[task, c]), None)
        if first is not None and first not in out:
            out.append(str(first))
    return out or [str(present.columns[0])]


def _tasks_elsewhere(present: pd.DataFrame, score: str, chosen: Sequence[str]) -> str | None:
    """The note on the tasks that a score's section leaves out (they have no such score):
    where they are reported, or the scores they have (--score)."""
    without = present.index[~present[score].astype(bool)]
    if not len(without):
        return None
    parts = []
    for task in without:
        have = [str(c) for c in present.columns if present.loc[task, c]]
        shown = [c for c in have if c in chosen]
        where = (f"reported under {shown[0]!r}" if shown else
                 f"its scores: {', '.join(map(repr, have))}; give --score NAME for them")
        parts.append(f"{task!s} ({where})")
    return f"task(s) without score {score!r}, not in its section: {'; '.join(parts)}"


def _scores_present(table: pd.DataFrame, scores: Sequence[str]) -> pd.DataFrame:
    """Task x score of a per-item table: True where some item of the task has the score."""
    has = table[list(scores)].notna().assign(task=table["task"])
    return has.groupby("task", sort=False).any()


def _score_rows(table: pd.DataFrame, score: str) -> pd.DataFrame:
    """The rows of the tasks that have the score, without the rows where it is missing (the
    reader has warned about each, naming the log and the samples)."""
    has = table.groupby("task", sort=False)[score].transform(lambda c: c.notna().any())
    rows = table[has.astype(bool) & table[score].notna()].reset_index(drop=True)
    rows.attrs = dict(table.attrs)
    return rows


def _absent_models(table: pd.DataFrame, rows: pd.DataFrame, score: str, missing: str
                   ) -> str | None:
    """Models of the logs with no row holding ``score`` (no log of the tasks that have it):
    refused (--missing raise), else the note that they are left out of that score's analysis
    (the report shows it and warns, as for the other missing data)."""
    absent = sorted(set(table["model"].unique()) - set(rows["model"].unique()), key=str)
    if not absent:
        return None
    tasks = sorted(map(str, rows["task"].unique()))
    text = (f"model(s) {[str(m) for m in absent]} have no score {score!r} in the logs (no log "
            f"of its task(s) {tasks}, or the score missing in every sample)")
    if missing == "raise":
        raise ValueError(f"{text}; give their logs, or --missing drop to leave them out of "
                         f"the analysis of {score!r}")
    return f"{text}: left out of the analysis of {score!r}"


def _harness_cubes(args: argparse.Namespace) -> tuple[dict[str, xr.Dataset],
                                                       dict[str, xr.Dataset],
                                                       dict[str, xr.DataArray],
                                                       dict[str, Any]]:
    """One cube (and one item_means result and the per-item scores, which --bayes fits the
    item model to) per score of the harness logs; with --judge and --gold, the judge's
    scores corrected by the gold labels (``reporting._judges.judge_analysis``)."""
    import warnings

    from evaluq.item_stats import item_means
    from evaluq.items import MissingItemsWarning, from_items, item_scores

    table = _harness_table(args)
    scores = [str(c) for c in table.columns[4:] if c not in (args.cluster, args.gold)]
    present = _scores_present(table, scores)
    chosen = args.score or ([args.judge] if args.judge else _first_scores(present))
    unknown = [c for c in chosen if c not in scores]
    if unknown:
        raise ValueError(f"--score {unknown} not among the scores of the logs: {scores}")
    if args.judge is not None and args.gold is not None and args.judge not in chosen:
        raise ValueError(f"--judge {args.judge!r} must be one of the --score columns (the "
                         f"report analyses the judge's scores as a score too, beside their "
                         f"correction): add --score {args.judge}, or leave out --score "
                         f"(the judge's score is then the one analysed)")
    cubes, items, per_item = {}, {}, {}
    for col in chosen:
        rows = _score_rows(table, col)
        note = "; ".join(filter(None, [_absent_models(table, rows, col, args.missing),
                                       _tasks_elsewhere(present, col, chosen)]))
        columns = {"model": "model", "item": "item", "score": col, "language": "task",
                   "seed": "epoch", "cluster": args.cluster, "missing": args.missing}
        cubes[col] = from_items(rows, n_boot=args.n_boot, rng=args.rng,
                                higher_is_better=_higher_is_better(args, col, chosen),
                                **columns)
        cubes[col].attrs[LANGUAGE_LABEL] = _task_word(args)
        if note:
            cubes[col].attrs[DATA_NOTE] = note
        with warnings.catch_warnings():     # from_items has said which items it dropped
            warnings.simplefilter("ignore", MissingItemsWarning)
            items[col] = item_means(rows, **columns)
            per_item[col] = item_scores(rows, **{k: v for k, v in columns.items()
                                                 if k != "cluster"})
    return cubes, items, per_item, _judged(args, table)


def _task_word(args: argparse.Namespace) -> str:
    """What the per-item report calls a language: with --item the name of the task column
    (given as --language, or a column named 'language'), else (harness logs, or no such
    column) "task"."""
    if getattr(args, "item", None) is None:
        return "task"
    given = args.language if args.language != "language" else None
    return str(getattr(args, "task_word", None) or given or "task")


def _judged(args: argparse.Namespace, table: pd.DataFrame) -> dict[str, Any]:
    """--judge SCORER --gold SCORER: the judge's scores corrected by the gold labels."""
    if args.judge is None and args.gold is None:
        return {}
    if args.judge is None or args.gold is None:
        raise ValueError("--judge and --gold go together: --judge names the model-graded "
                         "scorer, --gold the human one (scored on some samples)")
    from evaluq.reporting._judges import judge_analysis

    return {args.judge: judge_analysis(table, judge=args.judge, gold=args.gold,
                                       cluster=args.cluster, rng=args.rng,
                                       missing=args.missing)}


def _add_harness_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``evaluq report --from inspect|lm-eval`` (evaluation harness logs)."""
    logs = p.add_argument_group(
        "evaluation harness logs",
        "With --from, FILE... are the logs of an evaluation harness (files or folders): per-item "
        "scores become a cube (evaluq.from_items: one language per task, one seed per epoch, "
        "paired item bootstrap) and the report adds the per-item means and paired differences "
        "with their analytic SEs (evaluq.item_means). --score names the harness's score "
        "columns (default: each task's first score, its primary metric, so that every task is "
        "reported; one section per score). --replication auto then means nonparametric (the "
        "paired item bootstrap replicates, epochs redrawn) and --resample-languages auto "
        "means fixed (the tasks given).")
    logs.add_argument("--from", dest="source_format", choices=HARNESS_FORMATS, default=None,
                      help="inspect (Inspect AI .eval / .json logs), lm-eval "
                           "(lm-evaluation-harness output: --log_samples, or its results "
                           "files alone) or lighteval (its --save-details output); "
                           "default: guessed when every FILE is (or holds) one harness's logs")
    logs.add_argument("--cluster", default=None, metavar="KEY",
                      help="sample metadata key (Inspect) or document field (lm-eval) grouping "
                           "the items (e.g. passage): cluster bootstrap and clustered SEs")
    logs.add_argument("--n-boot", type=int, default=1000,
                      help="bootstrap replicates of the items (default 1000)")
    logs.add_argument("--judge", default=None, metavar="SCORER",
                      help="the model-graded (LLM judge) score; with --gold the report adds "
                           "its means corrected by the human labels (prediction-powered "
                           "inference or the Bayesian chain rule), the transport check and "
                           "the labels to buy (default --score: this one)")
    logs.add_argument("--gold", default=None, metavar="SCORER",
                      help="the human (gold) score, present on the samples that were "
                           "labelled; with --judge")
    logs.add_argument("--item-distribution", choices=("normal", "learned"), default=None,
                      help="with --bayes: the item model's distribution of item difficulty, "
                           "normal (default) or learned (a smooth density learned from the "
                           "items, binomial family; use it when the predictive checks say the "
                           "items' shape is off)")


def _parse_formats(text: str) -> list[str]:
    chosen = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in REPORT_FORMATS]
    if bad or not chosen:
        raise ValueError(f"--format must list some of {','.join(REPORT_FORMATS)}; got {text!r}")
    return chosen


def _read_files(files: Sequence[str], needed: dict[str, str | None],
                empty_is: str | None = "a run that is missing",
                reshape: Any = None, options: Mapping[str, Any] | None = None,
                labels: Mapping[str, float] | None = None,
                keys: Sequence[str | None] = ()) -> pd.DataFrame:
    """Read and concatenate the files; every named column must be in every file. An empty
    --score cell is warned about, saying it is read as ``empty_is`` (None: not warned).
    ``reshape(df, path)``, if given, turns each file's table into the long one (--wide);
    ``options`` (:func:`_read_options`) go to the reader of each file; ``labels``
    (--label-score) are read as the scores of the --score, --judge and --gold columns. A
    row of ``keys`` (the columns that name a run) in two files is refused, naming them."""
    import pandas as pd

    from evaluq._validation import closest_column
    from evaluq.io import read_table

    twice = [p for i, p in enumerate(files)
             if Path(p).resolve() in {Path(q).resolve() for q in files[:i]}]
    if twice:
        raise ValueError(f"{twice[0]} is given twice (a shell pattern and its name?): give each "
                         f"file once")
    frames = []
    for path in files:
        _refuse_a_log(path, _log_format(Path(path)))
        if Path(path).is_dir():
            raise ValueError(f"{path} is a folder: give the table's file(s), or --from inspect "
                             f"or --from lm-eval for a folder of harness logs")
        df = read_table(path, **_file_options(path, options or {}))
        if len(df) == 0:
            raise ValueError(f"{path} has no rows")
        present = [str(c) for c in df.columns]
        if {"doc_id", "resps"} <= set(present):
            _refuse_a_log(path, "lm-eval")
        for option, column in needed.items():
            if column is not None and column not in df.columns:
                close = closest_column(column, present)
                flag = option.split(" (")[0]               # '--score (1)': the flag
                hint = f" (did you mean {flag} {shlex.quote(close)}?)" if close else ""
                if not hint and option == "--language":
                    hint = _wide_hint(df, needed)
                raise ValueError(f"column {column!r} (given as {option}) is not in {path}; "
                                 f"its columns are: {', '.join(present)}{hint}")
        if reshape is not None:
            df = reshape(df, path)
        df = _scored_labels(df, [c for o, c in needed.items() if o.startswith(_SCORED)],
                            labels or {})
        if reshape is None and empty_is is not None:
            _say_empty_scores(df, path, needed, empty_is)
        frames.append(df)
    _runs_in_two_files(frames, files, [k for k in keys if k is not None])
    return pd.concat(frames, ignore_index=True)


def _runs_in_two_files(frames: Sequence[pd.DataFrame], files: Sequence[str],
                       keys: Sequence[str]) -> None:
    """Refuse a run (a combination of the ``keys`` columns) that is in more than one file:
    the same run given twice, named with its files (one file's own repeats are the cube's
    to name, by row)."""
    import pandas as pd

    keys = [k for k in dict.fromkeys(keys) if all(k in f.columns for f in frames)]
    if len(frames) < 2 or not keys:
        return
    both = pd.concat([f[keys].assign(_file=i) for i, f in enumerate(frames)],
                     ignore_index=True).drop_duplicates()
    repeated = both[both.duplicated(subset=keys, keep=False)]
    if repeated.empty:
        return
    first = repeated.iloc[0]
    same = repeated[keys].map(repr).agg("\x1f".join, axis=1)      # an empty key cell too
    where = repeated.loc[same == same.iloc[0], "_file"]
    names = " and ".join(files[int(i)] for i in where.iloc[:2])
    n_runs = len(repeated.drop_duplicates(subset=keys))
    plain = {k: first[k].item() if hasattr(first[k], "dtype") else first[k] for k in keys}
    key = ", ".join(f"{k} {v!r}" for k, v in plain.items())
    raise ValueError(f"{n_runs} run(s) are in more than one file, e.g. {key} in {names}: "
                     f"give each run once (remove the copies from one file), or report the "
                     f"files one at a time")


_SCORED = ("--score", "--judge", "--gold")
"""The flags whose columns --label-score reads."""


def _label_scores(args: argparse.Namespace) -> dict[str, float]:
    """--label-score LABEL=NUMBER flags as a mapping (a malformed one refused)."""
    out: dict[str, float] = {}
    for flag in getattr(args, "label_score", None) or []:
        label, sep, number = flag.rpartition("=")
        try:
            value = float(number)
        except ValueError:
            value = float("nan")
        if not sep or not label or value != value:
            raise ValueError(f"--label-score takes LABEL=NUMBER (e.g. C=1); got {flag!r}")
        if out.get(label, value) != value:
            raise ValueError(f"--label-score gives {label!r} two scores")
        out[label] = value
    return out


def _scored_labels(df: pd.DataFrame, columns: Sequence[str | None],
                   labels: Mapping[str, float]) -> pd.DataFrame:
    """The table with each text column among ``columns`` read through --label-score: a
    label it maps becomes its number; an empty cell stays empty, another value stays (and
    is refused, named, where a number is needed)."""
    import pandas as pd

    if not labels:
        return df
    df = df.copy()
    for column in dict.fromkeys(c for c in columns if c is not None and c in df.columns):
        values = df[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        mapped = values.astype(object).map(
            lambda v: labels.get(v.strip(), v) if isinstance(v, str) else v)
        text_left = bool(mapped.map(lambda v: isinstance(v, str)).any())
        df[column] = mapped if text_left else mapped.astype("float64")
    return df


def _read_options(args: argparse.Namespace) -> dict[str, Any]:
    """``read_table``'s options from --na-value (pandas' ``na_values``) and --encoding."""
    out: dict[str, Any] = {}
    if getattr(args, "na_value", None):
        out["na_values"] = list(args.na_value)
    if getattr(args, "encoding", None):
        out["encoding"] = args.encoding
    return out


def _file_options(path: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options for one file: --na-value and --encoding read text files; a parquet file
    is refused with them (its cells are typed, its text is UTF-8 already)."""
    text = {".csv", ".txt", ".tsv", ".tab", ".json", ".jsonl", ".ndjson"} & {
        s.lower() for s in Path(path).suffixes[-2:]}
    if options.get("na_values") and not text - {".json", ".jsonl", ".ndjson"}:
        raise ValueError(f"--na-value reads CSV / TSV files; {path} is another format, whose "
                         f"empty cells are read as missing already")
    if options.get("encoding") and not text:
        raise ValueError(f"--encoding reads text files (CSV, TSV, JSON); {path} is another "
                         f"format, whose text is UTF-8 already")
    return dict(options)


def _languages_kept(data: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """The rows of the languages analysed: without those of --exclude-language (said on
    stderr). Without the flag, a --language label named as an aggregate of the others
    (``_validation.AGGREGATE_NAMES``: 'Average', 'overall', ...) beside two or more languages is
    refused, naming the flag: it would be read as one more language, counted again in every
    aggregate over them."""
    from evaluq._validation import aggregate_labels

    column = args.language
    if column not in data.columns:
        return data
    labels = data[column].astype("string").str.strip()      # a missing label stays missing
    seen = [str(x) for x in labels.dropna().unique()]        # (refused later, named)
    if args.exclude_language:
        unknown = [x for x in args.exclude_language if x.strip() not in seen]
        if unknown:
            raise ValueError(f"--exclude-language {unknown[0]!r} is not a label of column "
                             f"{column!r} (given as --language); its labels are: "
                             f"{', '.join(seen[:20])}{' ...' if len(seen) > 20 else ''}")
        left_out = labels.isin([x.strip() for x in args.exclude_language]).to_numpy(
            dtype=bool, na_value=False)
        if not args.quiet:
            print(f"evaluq report: leaving out {int(left_out.sum())} row(s) of "
                  f"{', '.join(map(repr, args.exclude_language))} (--exclude-language)",
                  file=sys.stderr)
        return data[~left_out]
    aggregates = aggregate_labels(seen)
    if aggregates:
        raise ValueError(
            f"column {column!r} (given as --language) has the label {aggregates[0]!r} beside "
            f"{len(seen) - len(aggregates)} other languages: read as a language, an aggregate "
            f"of them (a paper's average) would be counted again in every aggregate over "
            f"the languages. Leave its rows out with --exclude-language "
            f"{shlex.quote(aggregates[0])} (if it is a language, rename it in the file)")
    return data


def _numeric_columns(df: pd.DataFrame, skip: Sequence[str | None]) -> list[str]:
    """The columns of ``df`` (not in ``skip``) that hold numbers, in the file's order."""
    import pandas as pd

    return [str(c) for c in df.columns if c not in skip
            and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]


def _wide_hint(df: pd.DataFrame, needed: dict[str, str | None]) -> str:
    """When a file has neither the --language column nor a --score column, but two or more
    numeric columns besides the named ones: the --wide flag that reads them as the
    languages."""
    scores = [c for k, c in needed.items() if k.startswith("--score") and c is not None]
    numbers = _numeric_columns(df, list(needed.values()))
    if len(numbers) < 2 or any(c in df.columns for c in scores):
        return ""                          # a wide table has no score column
    shown = " ".join(map(shlex.quote, numbers[:6])) + (" ..." if len(numbers) > 6 else "")
    return (f" (is it a wide table, one column per language? --wide {shown} --score NAME "
            f"reads those columns as the languages)")


def _melt_wide(df: pd.DataFrame, path: str, args: argparse.Namespace) -> pd.DataFrame:
    """A wide table (one column per language) as the long one: a row per model (seed,
    replicate) and language, the language in column --language, the score in --score.
    Every cell is kept; an empty one is a run that is missing, said once per file."""
    from evaluq._validation import AGGREGATE_NAMES, closest_column
    from evaluq.errors import MissingDataWarning

    keys = [c for c in (args.model, args.seed, args.bootstrap) if c is not None]
    score = args.score[0]
    if args.wide:
        for column in args.wide:
            if column not in df.columns:
                close = closest_column(column, df.columns)
                hint = f" (did you mean --wide {shlex.quote(close)}?)" if close else ""
                raise ValueError(f"column {column!r} (given as --wide) is not in {path}; its "
                                 f"columns are: {', '.join(map(str, df.columns))}{hint}")
        languages = list(dict.fromkeys(args.wide))
    else:
        languages = _numeric_columns(df, keys)
        aggregates = [c for c in languages
                      if c.strip().lower() in AGGREGATE_NAMES | {"score"}]
        if aggregates:
            rest = " ".join(shlex.quote(c) for c in languages if c not in aggregates)
            raise ValueError(f"{path}: column {aggregates[0]!r} looks like an aggregate of the "
                             f"languages, not a language: name the language columns, "
                             f"--wide {rest}")
        if not languages:
            raise ValueError(f"{path} has no numeric column besides --model / --seed / "
                             f"--bootstrap: name the language columns with --wide COL ...")
    clash = [c for c in (args.language, score) if c in df.columns and c not in languages]
    if clash:
        raise ValueError(f"{path} already has a column {clash[0]!r}, which --wide would "
                         f"write the {'languages' if clash[0] == args.language else 'scores'} "
                         f"to: name another with --language / --score")
    long = df.melt(id_vars=keys, value_vars=languages, var_name=args.language,
                   value_name=score)
    empty = long[score].isna().to_numpy()
    if empty.any() and not empty.all():
        cells = long.loc[empty, [args.model, args.language]].astype(str).agg(" / ".join, axis=1)
        shown = ", ".join(cells.iloc[:4]) + (", ..." if len(cells) > 4 else "")
        n = int(empty.sum())
        warn(f"{path}: {n} of {len(long)} cells of the --wide columns "
             f"{'is' if n == 1 else 'are'} empty (model / {args.language}: {shown}): each is "
             f"read as a run that is missing", MissingDataWarning)
    return long


def _log_format(p: Path) -> str | None:
    """The --from a file or folder given without it needs, when it looks like a harness's
    log: an Inspect ``.eval`` (or JSON log), lm-eval's ``results_*.json`` or
    ``samples_*.jsonl``, or a folder holding them."""
    import json
    import re

    if p.is_dir():
        files = [f for _, f in zip(range(10_000), p.rglob("*"), strict=False) if f.is_file()]
        if any(f.suffix == ".eval" for f in files):
            return "inspect"
        if any(_log_format(f) == "lighteval" for f in files if f.suffix == ".parquet"):
            return "lighteval"
        found = {_log_format(f) for f in files[:1000] if f.suffix == ".jsonl"}
        found |= {_log_format(f) for f in [f for f in files if f.suffix == ".json"][:3]}
        return "lm-eval" if "lm-eval" in found else "inspect" if "inspect" in found else None
    suffix = p.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix == ".parquet" and re.fullmatch(r"details_.+_\d{4}-\d\d-\d\dT[\d.-]+\.parquet",
                                             p.name):   # lighteval's details_{task}_{date}
        return "lighteval"
    if suffix == ".jsonl" and re.fullmatch(r"samples_.+_\d{4}-\d\d-\d\dT[\d.-]+\.jsonl",
                                           p.name):      # lm-eval's samples_{task}_{date}
        return "lm-eval"
    if suffix != ".json" or not p.is_file() or p.stat().st_size > 1 << 28:
        return None
    try:
        keys = set(json.loads(p.read_bytes()))
    except (ValueError, TypeError):
        return None
    if {"results", "config_general"} <= keys:
        return "lighteval"
    if {"results", "versions"} <= keys or "lm_eval_version" in keys:
        return "lm-eval"
    return "inspect" if {"eval", "plan"} <= keys or {"eval", "status"} <= keys else None


def _refuse_a_log(path: str, source: str | None) -> None:
    if source is not None:
        name = {"inspect": "an Inspect AI log", "lm-eval": "an lm-evaluation-harness log",
                "lighteval": "a lighteval log"}
        raise ValueError(f"{path} looks like {name[source]}, not a table of scores: run with "
                         f"--from {source} (FILE... the log files or their folder; --score "
                         f"names the harness's score)")


def _say_empty_scores(df: pd.DataFrame, path: str, needed: dict[str, str | None],
                      empty_is: str) -> None:
    """Warn (naming the file and rows) when a --score column is empty in some rows: the cube
    reads each as ``empty_is`` (a run that is missing, like a row that is not there, and the
    report counts it so; with --item, an item left out); this says which rows they are."""
    from evaluq.errors import MissingDataWarning

    for option, column in needed.items():
        if not option.startswith(("--score", "--judge")) or column is None:
            continue
        empty = df.index[df[column].isna().to_numpy()]     # the file's rows (their labels)
        if 0 < len(empty) < len(df):
            shown = ", ".join(map(str, empty[:5].tolist())) + (", ..." if len(empty) > 5
                                                               else "")
            warn(f"{path}: column {column!r} (given as {option.split(' (')[0]}) has no "
                 f"value (empty or NA) in {len(empty)} of {len(df)} rows (rows {shown}, "
                 f"counted from 0): each is read as {empty_is}", MissingDataWarning)


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "metric"


def _offered_scores(args: argparse.Namespace) -> list[str]:
    """The first file's numeric columns other than the key columns given (empty when it
    cannot be read as a table). A column with no value at all (a spreadsheet's export often
    ends with an unnamed empty one, read as 'Unnamed: 4') is not offered: it holds no
    score."""
    import warnings

    import pandas as pd

    from evaluq.io import read_table

    path = args.files[0]
    if not Path(path).is_file():        # a missing path: said by the reader
        return []
    _refuse_a_log(path, _log_format(Path(path)))
    with warnings.catch_warnings():     # a look at the columns: the file's read says them
        warnings.simplefilter("ignore")
        df = read_table(path, **_file_options(path, _read_options(args)))  # errors: remedies
    named = {args.model, args.language, args.seed, args.bootstrap, args.item, args.cluster}
    return [str(c) for c in df.columns
            if c not in named and pd.api.types.is_numeric_dtype(df[c]) and df[c].notna().any()]


LANGUAGE_NAMES: Final = ("task", "tasks", "dataset", "data_set", "benchmark", "lang", "subject")
"""Column names read as --language when the table has no column 'language' and one of these
(case aside)."""


def _named_as(header: Sequence[str], names: Sequence[str]) -> str | None:
    """The one column of ``header`` named as one of ``names`` up to case and surrounding
    spaces ('Model', ' seed '), or None (none, or several)."""
    named = [c for c in header if c.strip().lower() in names]
    return named[0] if len(named) == 1 else None


def _default_keys(args: argparse.Namespace) -> None:
    """Columns with the cube's own names, read without their flag, each said on stderr: a
    column named 'seed' (up to case, as every name here) as ``--seed``; without a column
    'model' or 'language' (and no flag), one named so up to case ('Model', 'Language'), or
    for the language one named as tasks or data sets (:data:`LANGUAGE_NAMES`)."""
    header = _header(args)
    said = []
    if args.model == "model" and "model" not in header:
        named = _named_as(header, ("model",))
        if named is not None:
            args.model = named
            said.append(f"column {named!r} as --model {shlex.quote(named)}")
    if args.mean is None and args.seed is None:
        named = "seed" if "seed" in header else _named_as(header, ("seed",))
        if named is not None:
            args.seed = named
            said.append(f"column {named!r} as --seed {shlex.quote(named)}")
    if args.language == "language" and "language" not in header and args.wide is None:
        named = _named_as(header, ("language",)) or _named_as(header, LANGUAGE_NAMES)
        if named is not None:
            args.language = named
            said.append(f"column {named!r} as --language {shlex.quote(named)}")
    if said and not args.quiet:
        print(f"evaluq report: reading {args.files[0]}'s {' and '.join(said)}",
              file=sys.stderr)


def _header(args: argparse.Namespace) -> list[str]:
    """The first file's column names (none when it cannot be read as a table: said later).
    Text tables are read to their second row only."""
    import warnings

    from evaluq.io import read_table

    path = args.files[0]
    text = {".csv", ".txt", ".tsv", ".tab", ".jsonl", ".ndjson"} & {
        s.lower() for s in Path(path).suffixes[-2:]}
    try:
        with warnings.catch_warnings():     # a look at the columns: the file's read says them
            warnings.simplefilter("ignore")
            df = read_table(path, **_file_options(path, _read_options(args))
                            | ({"nrows": 2} if text else {}))
    except Exception:                   # a folder, a log, an unreadable file: said later
        return []
    return [str(c) for c in df.columns]


def _default_score(args: argparse.Namespace) -> list[str]:
    """Without --score or --mean, a column named 'score' (from_long's default) or the table's
    one numeric column besides the keys is read as --score, and the terminal says so; the
    numeric columns offered (for the error's hint when there are several). A column named
    'score' that holds text ("0,71") is read too: the reader's error names its values."""
    offered = _offered_scores(args) if args.score is None and args.mean is None else []
    named = "score" if "score" in offered else _named_as(offered, ("score",))
    if args.score is None and args.mean is None and not offered:
        text = _named_as(_header(args), ("score",))      # its values say what is wrong
        args.score = [text] if text is not None else None
        return offered
    if named is not None or len(offered) == 1:   # 'score': the column from_long reads
        args.score = [named] if named is not None else offered
        if offered != ["score"] and not args.quiet:
            print(f"evaluq report: reading {args.files[0]}'s column {args.score[0]!r} as "
                  f"--score {shlex.quote(args.score[0])} (its one numeric column besides the "
                  "keys)" if len(offered) == 1 else
                  f"evaluq report: reading {args.files[0]}'s column {named!r} as --score "
                  f"{shlex.quote(str(named))} (other numeric columns: "
                  f"{', '.join(c for c in offered if c != named)})"
                  + _error_column_hint(offered), file=sys.stderr)
    return offered


def _error_column_hint(columns: Sequence[str]) -> str:
    """'; stderr reads as a standard error: ...' for a column named like one (a leaderboard
    of one run per model and task with its standard error is the summary format)."""
    import re

    named = [c for c in columns if re.search(r"(^|_)(std|stderr|se|sd|sem|err|error)($|_)",
                                             c.lower())]
    if not named:
        return ""
    return (f"; {named[0]} reads as a standard error: for one run per model and task with its "
            f"standard error give --mean score --sd-boot {shlex.quote(named[0])} --n-seeds 1")


def _score_hint(args: argparse.Namespace, numeric: list[str]) -> str:
    """'; runs.csv's numeric columns: seed, score (e.g. --score score)': what the first file
    offers as --score, or nothing."""
    if not numeric:
        return ""
    example = next((c for c in numeric if c.lower() == "score"), numeric[-1])
    return (f"; {args.files[0]}'s numeric columns: {', '.join(numeric)} (e.g. --score "
            f"{shlex.quote(example)})")


def _report_cubes(args: argparse.Namespace) -> dict[str, xr.Dataset]:
    """The cubes of ``evaluq report``: one per ``--score`` column, or the summary cube."""
    from evaluq.cube import from_long, from_summary

    if args.wide is not None:
        if args.mean is not None:
            raise ValueError("--wide reads scores, one per row and language column: give "
                             "--score NAME (the metric's name), not --mean")
        if args.score is not None and len(args.score) > 1:
            raise ValueError("a wide table holds one metric: give one --score NAME (its name), "
                             "and one report per metric file")
        args.score = args.score or ["score"]
    _default_keys(args)
    offered = _default_score(args)
    if (args.score is None) == (args.mean is None):
        raise ValueError("give either --score COL (long format, repeatable) or --mean COL "
                         "(summary format), not both and not neither"
                         + ("" if args.score is not None else _score_hint(args, offered)))
    if args.mean is None and (args.sd_seed or args.sd_boot):
        raise ValueError("--sd-seed / --sd-boot belong to the summary format: give --mean too")
    n_seeds: int | str = int(args.n_seeds) if args.n_seeds.isdigit() else args.n_seeds
    needed: dict[str, str | None] = {"--model": args.model, "--language": args.language}
    if args.score is not None:
        needed |= {"--seed": args.seed, "--bootstrap": args.bootstrap}
        needed |= {f"--score ({i + 1})": c for i, c in enumerate(args.score)}
    else:
        needed |= {"--mean": args.mean, "--sd-seed": args.sd_seed, "--sd-boot": args.sd_boot,
                   "--n-seeds": n_seeds if isinstance(n_seeds, str) else None}
    reshape = None
    if args.wide is not None:
        needed = {k: v for k, v in needed.items() if k in ("--model", "--seed", "--bootstrap")}
        reshape = lambda df, path: _melt_wide(df, path, args)  # noqa: E731
    data = _languages_kept(_read_files(
        args.files, needed, reshape=reshape, options=_read_options(args),
        labels=_label_scores(args), keys=(args.model, args.language, args.seed, args.bootstrap)),
        args)
    # --bounds refuses scores outside the range (naming the rows); the scale verdict is the
    # report's (page and terminal alike), so the loaders' own outlier warning is off
    checks: dict[str, Any] = {"bounds": tuple(args.bounds) if args.bounds else None,
                              "outlier_threshold": None}
    cubes = {}
    if args.score is not None:
        for col in args.score:
            if data[col].isna().all():
                raise ValueError(f"column {col!r} (given as --score) has no values: no rows "
                                 "left to analyse")
            cubes[col] = from_long(data, model=args.model, language=args.language,
                                   seed=args.seed, bootstrap=args.bootstrap, score=col,
                                   higher_is_better=_higher_is_better(args, col, args.score),
                                   **checks)
    else:
        name = args.metric or args.mean
        cubes[name] = from_summary(data, model=args.model, language=args.language,
                                   mean=args.mean, sd_seed=args.sd_seed, sd_boot=args.sd_boot,
                                   n_seeds=n_seeds, metric=name,
                                   higher_is_better=_higher_is_better(args, name, [name]),
                                   **checks)
    for cube in cubes.values():
        cube.attrs[LANGUAGE_LABEL] = args.language
        cube.attrs["source"] = "; ".join(map(str, args.files))   # not the merged DataFrame
    return cubes


def _higher_is_better(args: argparse.Namespace, metric: str, metrics: Sequence[str]) -> bool:
    """The orientation of one metric: ``--lower-is-better`` / ``--higher-is-better`` with no
    METRIC set every metric's, with METRICs the named ones'; higher is better otherwise."""
    named = {"--lower-is-better": args.lower_is_better or [],
             "--higher-is-better": args.higher_is_better or []}
    for flag, names in named.items():
        unknown = [n for n in names if n not in metrics]
        if unknown:
            raise ValueError(f"{flag} names {unknown}, which are not among the metrics "
                             f"({', '.join(metrics)}); name the --score columns")
    both = set(named["--lower-is-better"]) & set(named["--higher-is-better"])
    if both:
        raise ValueError(f"{sorted(both)} given to both --lower-is-better and "
                         f"--higher-is-better")
    if metric in named["--lower-is-better"]:
        return False
    if metric in named["--higher-is-better"]:
        return True
    every_lower = args.lower_is_better == []
    if every_lower and args.higher_is_better == []:
        raise ValueError("--lower-is-better and --higher-is-better both given without a "
                         "METRIC: name the metrics each applies to")
    return not every_lower


def _write_report_files(rep: Report, out: Path, formats: Sequence[str],
                        command: str) -> list[Path]:
    """Write each metric's cube and tables (and ``analysis.json``); the paths written."""
    from evaluq import tables
    from evaluq._atomic import atomic_file, write_text

    written = [] if rep.path is None else [rep.path]
    table_formats = [f for f in formats if f in tables.FORMATS]
    built = {}                                    # each analysis' tables, built once for both
    for name, analysis in rep.analyses.items():
        stem = _slug(name)
        path = out / f"{stem}_cube.nc"
        with atomic_file(path) as tmp:                # atomic: temp file, then rename
            analysis.cube.to_netcdf(tmp, encoding={str(v): {"fletcher32": True}  # checksums
                                                   for v in analysis.cube.data_vars})
        written.append(path)
        built[name] = analysis.tables()
        for table_name, table in built[name].items():
            written += tables.write(table, out / f"{stem}_{table_name}", formats=table_formats)
    if "json" in formats:
        path = out / "analysis.json"
        payload = {"command": command, "metrics": {n: a.to_dict(tables=built[n])
                                                   for n, a in rep.analyses.items()}}
        write_text(path, _json_text(payload))
        written.append(path)
    return written


def _json_text(value: Any, key: str | None = None, depth: int = 0) -> str:
    """``json.dumps(value, indent=2)``, but each record of a table's ``rows`` on one line:
    200 models' 60,000 records were 21 MB of one value per line, now 12 MB, one per line."""
    import json

    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k))}: {_json_text(v, str(k), depth + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        items = [inner + (json.dumps(v, default=str) if key == "rows"
                          else _json_text(v, None, depth + 1)) for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value, default=str)


def _guessed_harness(files: list[str], quiet: bool) -> str | None:
    """The harness whose logs the files or folders given without ``--from`` all are or hold
    (:func:`_log_format`), said on stderr; None for tables. A folder of no harness's logs is
    refused naming ``--from``."""
    formats = {_log_format(Path(f)) for f in files}
    guessed = formats.pop() if len(formats) == 1 else None
    if guessed is None:
        folders = [f for f in files if Path(f).is_dir()]
        if folders and _log_format(Path(folders[0])) is None:
            raise ValueError(f"{folders[0]} is a folder: give the table's file(s), or --from "
                             "inspect|lm-eval|lighteval for a folder of harness logs (it "
                             "holds no harness logs evaluq knows by their names)")
        return None
    if not quiet:
        print(f"evaluq report: reading {', '.join(files)} as {guessed} logs (--from "
              f"{guessed})", file=sys.stderr)
    return guessed


def _record_scale_check(cubes: Any, scale_check: bool) -> None:
    """The loaders ran with their scale check off (the report's verdict is the one the
    command prints), which they record as ``attrs["scale_check"] = 0``: the cubes, saved
    with the report, record the user's choice instead (0 only with --no-scale-check), so that
    ``eq.resample`` on a saved cube checks its scale unless the user said not to."""
    for cube in cubes.values() if isinstance(cubes, Mapping) else [cubes]:
        cube.attrs.pop(SCALE_CHECK, None)
        if not scale_check:
            cube.attrs[SCALE_CHECK] = 0


def _run_report(args: argparse.Namespace) -> int:
    import shlex

    from evaluq._harness.lighteval import lighteval_results_only
    from evaluq._harness.lm_eval_results import results_only
    from evaluq.reporting import report

    formats = _parse_formats(args.format)
    items = scores = judged = None
    missing = [f for f in args.files if not Path(f).exists()]
    if missing:                         # before any flag is asked for: the file is not there
        raise FileNotFoundError(f"no such file: {missing[0]!r}")
    if args.source_format is None and args.item is None and args.wide is None:
        args.source_format = _guessed_harness(args.files, args.quiet)
    if args.source_format is not None and args.item is not None:
        raise ValueError("--from reads harness logs and --item per-item tables: give one")
    if args.wide is not None and (args.source_format is not None or args.item is not None):
        raise ValueError("--wide reads a table of one score per model and language column; "
                         "harness logs (--from) and per-item tables (--item) are long")
    reading = [flag for flag, value in (("--na-value", args.na_value),
                                         ("--encoding", args.encoding),
                                         ("--label-score", args.label_score)) if value]
    if args.source_format is not None and reading:
        raise ValueError(f"{reading[0]} reads table files; harness logs (--from) are read in "
                         f"their harness's own format (their scores are numbers already)")
    if args.source_format is None and args.item is None and (args.judge or args.gold):
        raise ValueError("--judge and --gold read per-item scores: add --item COL (a table "
                         "of one row per model and item) or --from inspect|lm-eval|lighteval "
                         "(logs)")
    if (args.source_format == "lm-eval" and results_only(args.files)) or (
            args.source_format == "lighteval" and lighteval_results_only(args.files)):
        cubes = _results_cubes(args)
    elif args.source_format is not None or args.item is not None:
        cubes, items, scores, judged = _harness_cubes(args)
        args.replication = "nonparametric" if args.replication == "auto" else args.replication
        args.resample_languages = ("fixed" if args.resample_languages == "auto"
                                   else args.resample_languages)
    else:
        cubes = _report_cubes(args)
    _record_scale_check(cubes, args.scale_check)
    out = _out_folder(args.out)
    command = "evaluq " + shlex.join(args.argv)
    rep = report(cubes, out / "report.html" if "html" in formats else None,
                 n_resamples=args.n_resamples, replication=args.replication,
                 languages=args.resample_languages, how=args.how, rng=args.rng,
                 bayes=args.bayes, bounds=tuple(args.bounds) if args.bounds else None,
                 bayes_options=_bayes_options(args), command=command,
                 progress=not args.quiet, items=items, item_scores=scores,
                 missing=args.missing, scale_check=args.scale_check, judged=judged or None)
    written = _write_report_files(rep, out, formats, command)
    print(f"evaluq report: wrote {len(written)} files to {out}/")
    for path in written:
        print(f"  {path.name}")
    return 0


def _add_ratings_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ratings", help="ratings from pairwise votes (Bradley-Terry, Davidson ties)",
        description="Rate models from a file of pairwise votes (CSV, TSV, JSON lines, "
                    "parquet, or a compressed text file: votes.csv.gz; one row per vote): "
                    "Bradley-Terry with Davidson ties (or ties as half a win), cluster-robust "
                    "intervals, ranks, win probabilities and tiers. Writes to --out: "
                    "ratings.html, ratings.csv and win_probability.csv; prints the ratings.")
    p.add_argument("files", nargs="+", metavar="VOTES", help="vote files (rows concatenated)")
    p.add_argument("--model-a", default="model_a", metavar="COL",
                   help="column of the first model (default 'model_a')")
    p.add_argument("--model-b", default="model_b", metavar="COL",
                   help="column of the second model (default 'model_b')")
    p.add_argument("--winner", default="winner", metavar="COL",
                   help="column of the outcome: model_a / model_b / tie (also a / b, draw), "
                        "the winning model's name, the name of its column, or other labels "
                        "mapped with --outcome (default 'winner')")
    p.add_argument("--outcome", action="append", default=None, metavar="LABEL=ROLE",
                   help="map a label of --winner to model_a, model_b or tie, on top of the "
                        "built-in labels (model_a / a, model_b / b, tie, draw, bothbad, ...); "
                        "repeat (e.g. --outcome left=model_a --outcome right=model_b)")
    p.add_argument("--encoding", default=None, metavar="NAME",
                   help="the text encoding of vote files that are not UTF-8 (e.g. cp1252)")
    p.add_argument("--cluster", default=None, metavar="COL",
                   help="votes sharing this column (prompt, voter) are not independent: "
                        "cluster-robust intervals and a cluster bootstrap")
    p.add_argument("--covariate", action="append", default=None, metavar="SPEC",
                   help="style control: a per-vote covariate fitted with the ratings; COL (a "
                        "column holding an a-vs-b value) or NAME=COL_A,COL_B (counts of each "
                        "side's answer, e.g. length=len_a,len_b: LMArena's relative "
                        "difference); repeat for several")
    p.add_argument("--no-standardize-covariates", action="store_true",
                   help="use the covariates' raw values (default: mean 0, SD 1 over the votes)")
    _add_judged_vote_flags(p)
    p.add_argument("--ties", choices=("auto", "davidson", "half", "drop"), default="auto",
                   help="auto (default: davidson when the votes hold a tie, else plain "
                        "Bradley-Terry), davidson (a fitted tie parameter), half (a tie is "
                        "half a win each) or drop")
    p.add_argument("--interval", choices=("sandwich", "bootstrap"), default="sandwich",
                   help="sandwich (default) or bootstrap intervals")
    p.add_argument("--n-resamples", type=int, default=None,
                   help="bootstrap resamples (default 1000), or draws of the sandwich's normal "
                        "approximation for the ranks and tiers (default: enough for the "
                        "tiers' tests, 40 per pair of models, 1000 to 20000)")
    p.add_argument("--scale", choices=("elo", "logit"), default="elo",
                   help="elo (default: 400 points = odds of 10 to 1, mean 1000) or logit")
    p.add_argument("--prior-sd", type=float, default=None, metavar="SD",
                   help="a Gaussian prior N(0, SD^2) on each model's logit strength (a "
                        "ridge, stated in the output): keeps the ratings finite when a model "
                        "won or lost every vote (default: none, maximum likelihood)")
    p.add_argument("--reference", default=None, metavar="MODEL",
                   help="pin this model at 0 logits (Elo 1000) instead of a sum-zero scale")
    p.add_argument("--confidence-level", type=float, default=0.95,
                   help="level of the intervals (default 0.95)")
    p.add_argument("--rng", type=int, default=0, help="random seed (default 0)")
    p.add_argument("-o", "--out", default="evaluq-ratings", metavar="DIR",
                   help="output folder (default ./evaluq-ratings)")
    p.set_defaults(func=_run_ratings)


def _add_judged_vote_flags(p: argparse.ArgumentParser) -> None:
    """``evaluq ratings``' judge-assisted flags (--judge, --gold, --lam)."""
    p.add_argument("--judge", default=None, metavar="COL",
                   help="judge-assisted ratings: the column of a judge's verdict on every "
                        "vote, corrected by the human verdicts in --gold (PPI++); replaces "
                        "--winner")
    p.add_argument("--gold", default=None, metavar="COL",
                   help="with --judge: the column of the human (gold) verdict, empty where "
                        "no person voted")
    p.add_argument("--lam", type=float, default=None,
                   help="with --judge: PPI's weight on the judge in [0, 1] (default: tuned)")


def _outcomes(texts: Sequence[str] | None) -> dict[str, str] | None:
    """``--outcome LABEL=ROLE`` pairs as ``fit_ratings``' ``outcomes``."""
    if not texts:
        return None
    out = {}
    for text in texts:
        label, sep, role = text.partition("=")
        if not sep or not label:
            raise ValueError(f"--outcome takes LABEL=ROLE (e.g. --outcome left=model_a); got "
                             f"{text!r}")
        out[label] = role
    return out


def _covariates(texts: Sequence[str] | None) -> dict[str, Any] | None:
    """``--covariate COL`` / ``--covariate NAME=COL_A,COL_B`` as ``fit_ratings``'
    ``covariates`` (a mapping from a name to a column or a pair of columns)."""
    if not texts:
        return None
    out: dict[str, Any] = {}
    for text in texts:
        name, sep, columns = text.partition("=")
        if not sep:
            out[text] = text
            continue
        pair = tuple(columns.split(","))
        if not name or len(pair) != 2 or not all(pair):
            raise ValueError(f"--covariate takes COL or NAME=COL_A,COL_B (e.g. --covariate "
                             f"length=len_a,len_b); got {text!r}")
        out[name] = pair
    return out


def _ratings_options(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    """The fit's keyword arguments from the command line, and whether it is judge-assisted
    (``--judge`` with ``--gold``)."""
    judged = args.judge is not None or args.gold is not None
    if judged and (args.judge is None or args.gold is None):
        raise ValueError("--judge and --gold go together: the judge's verdict on every vote "
                         "and the human verdict where there is one")
    if not judged and args.lam is not None:
        raise ValueError("--lam is PPI's weight on the judge: give it with --judge and --gold")
    if judged and args.prior_sd is not None:
        raise ValueError("--prior-sd is not available with --judge: the judge-assisted "
                         "ratings are PPI++ estimates without a prior")
    if judged and args.covariate:
        raise ValueError("--covariate (style control) is not available with --judge: fit the "
                         "style-controlled ratings on the human votes, or drop --covariate")
    options: dict[str, Any] = {
        "model_a": args.model_a, "model_b": args.model_b, "outcomes": _outcomes(args.outcome),
        "ties": args.ties, "cluster": args.cluster, "interval": args.interval,
        "confidence_level": args.confidence_level, "n_resamples": args.n_resamples,
        "scale": args.scale, "reference": args.reference, "rng": args.rng}
    if judged:
        return options | {"judge": args.judge, "gold": args.gold, "lam": args.lam}, True
    options["winner"] = args.winner
    if args.prior_sd is not None:
        options["prior_sd"] = args.prior_sd
    if args.covariate:
        options |= {"covariates": _covariates(args.covariate),
                    "standardize_covariates": not args.no_standardize_covariates}
    return options, False


def _run_ratings(args: argparse.Namespace) -> int:
    import shlex

    import pandas as pd

    from evaluq._atomic import write_text
    from evaluq.io import read_table
    from evaluq.ratings import fit_judged_ratings, fit_ratings
    from evaluq.reporting._ratings import ratings_report

    options, judged = _ratings_options(args)
    frames = [read_table(f, **_file_options(f, _read_options(args))) for f in args.files]
    if len(frames) > 1:     # a row a message names: its own file's row, as with one file
        frames = [df.set_axis([f"{i} of {path}" for i in range(len(df))])
                  for path, df in zip(args.files, frames, strict=True)]
    votes = pd.concat(frames, ignore_index=len(frames) == 1)
    result = (fit_judged_ratings if judged else fit_ratings)(votes, **options)
    out = _out_folder(args.out)
    command = "evaluq " + shlex.join(args.argv)
    ratings_report(result, out=out / "ratings.html", settings=options, command=command)
    write_text(out / "ratings.csv", result.to_dataframe().to_csv())
    write_text(out / "win_probability.csv",
               result.win_probability.to_pandas().to_csv())
    written = ["ratings.html", "ratings.csv", "win_probability.csv"]
    if result.covariate_coefficient is not None:
        write_text(out / "covariates.csv", result.covariate_table().to_csv())
        written.append("covariates.csv")
    print(result)
    print(f"evaluq ratings: wrote {', '.join(written[:-1])} and {written[-1]} to {out}/")
    return 0


def _out_folder(text: str) -> Path:
    """The --out folder, made if missing; an existing file there is refused (not overwritten)."""
    from pathlib import Path

    out = Path(text)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {text!r} is a file; --out names the folder the outputs go to "
                         f"(e.g. --out {out.with_suffix('')}-report)")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _bayes_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The fit's options from --error-correlation, --draws, --tune and --prior."""
    options: dict[str, Any] = {}
    if args.error_correlation is not None:
        options["error_correlation"] = args.error_correlation
    for name in ("draws", "tune"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    priors = {}
    for text in args.prior or []:
        name, sep, value = text.partition("=")
        try:
            priors[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--prior takes NAME=SCALE with a number (e.g. --prior "
                             f"tau_m_sigma=0.05); got {text!r}") from None
        if not sep or not name.strip():
            raise ValueError(f"--prior takes NAME=SCALE (e.g. --prior tau_m_sigma=0.05); got "
                             f"{text!r}")
    if priors:
        options["priors"] = priors
    if getattr(args, "item_distribution", None) is not None:
        if args.source_format is None and args.item is None:
            raise ValueError("--item-distribution sets the item model, which needs per-item "
                             "scores: --item COL (a per-item table) or harness logs with --from "
                             "inspect|lm-eval (and add --bayes)")
        options["item_distribution"] = args.item_distribution
    if options and not args.bayes:
        raise ValueError("--draws, --tune, --prior, --error-correlation and "
                         "--item-distribution set the Bayesian fit: add --bayes")
    return options or None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``evaluq`` command."""
    from evaluq._version import __version__

    parser = argparse.ArgumentParser(
        prog="evaluq",
        description="Uncertainty quantification for model evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"evaluq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_demo_parser(sub)
    _add_test_parser(sub)
    _add_report_parser(sub)
    _add_ratings_parser(sub)
    return parser


REMEDIES: tuple[tuple[str, str], ...] = (
    # the library names its Python keywords; a command-line user is told the flag instead
    (r"pass `skipna=True`[^;.)]*", "pass --missing drop"),
    (r"`?missing='raise'`?", "--missing raise"),
    (r"`?missing='drop'`?", "--missing drop"),
    (r"`?scale_check=False`?", "--no-scale-check"),
    (r"`?outlier_threshold=None`?", "--no-scale-check"),
    (r"the declared `bounds`", "the --bounds"),
    (r"`bounds=`?[^`\s]*`?", "--bounds LO HI"),
    (r"refit with `?tune=(\d+)`?", r"rerun with --tune \1"),
    (r"\(tune=(\d+), draws=(\d+)\)", r"(--tune \1 --draws \2)"),
    (r"\(tune=(\d+)\)", r"(--tune \1)"),
    (r"refit with", "rerun with"),
    (r"priors=\{'(\w+)': \.\.\., '(\w+)': \.\.\.\}", r"--prior \1=... --prior \2=..."),
    (r"increase `?draws`?", "increase --draws"),
    (r"`bayes_options=\{'draws': \.\.\.\}` sets them", "--draws N sets them"),
    (r"lower `draws` \(or `chains`\)", "lower --draws"),
    (r"`draws` would need", "--draws would need"),
    (r"`?error_correlation=`?", "--error-correlation "),
    (r"`?replication='(\w+)'`?", r"--replication \1"),
    (r"`?languages='(\w+)'`?", r"--resample-languages \1"),
    (r"`?n_resamples`?", "--n-resamples"),
    (r"(add them to|map them with) `outcomes=?`(?!, e\.g\.)",
     "map them with --outcome LABEL=ROLE (ROLE model_a, model_b or tie)"),
    (r"read the file with na_values=\[('[^']*')\] \(eq\.read_table\)", r"pass --na-value \1"),
    (r"read the file with eq\.read_table\(path, keep_default_na=False, na_values=\[''\]\) "
     r"and pass the table", "rename it in the file (e.g. 'NA' to 'N.A.')"),
    (r"read it with encoding='(\w+)'", r"pass --encoding \1"),
    (r"`judge` column", "--judge column"),
    (r"`gold` column", "--gold column"),
    (r"`covariates`", "--covariate"),
    (r"`cluster`", "--cluster"),
    (r"pass `lam=None`", "leave out --lam"),
    (r"drop them first: `votes\.drop_duplicates\(\)`",
     "remove the repeated lines from the file first"),
    (r"`lam=([\d.]+)`", r"--lam \1"),
    (r"`lam`=([\d.]+)", r"--lam \1"),
    (r"`lam`", "--lam"),
    (r"`gold` votes", "--gold votes"),
    (r"`seed=`", "--seed"),
    (r"`bootstrap=`", "--bootstrap"),
    (r"give it as `item=` to evaluq\.from_items", "give it as --item"),
    (r"`item=`", "--item"),
    (r"`n_seeds`", "--n-seeds"),
    (r"use ties='(\w+)' \(or '(\w+)'\)", r"use --ties \1 (or --ties \2)"),
    (r"use ties='(\w+)'", r"use --ties \1"),
    (r"`?interval='(\w+)'`?", r"--interval \1"),
    (r"pass `prior_sd`", "pass --prior-sd SD"),
    (r"fit_ratings_bayes\(\.\.\., prior_sd=([^)]+)\) gives the posterior, which says how far the "
     r"votes leave them free",
     r"rerun with a --prior-sd larger than \1: ratings that move with it are held by the "
     r"prior, not the votes (evaluq ratings has no posterior; in Python "
     r"eq.fit_ratings_bayes(votes, prior_sd=\1) gives it)"),
)
"""(pattern, replacement) pairs that turn a Python remedy in a message into the command
line's flag (``tests/test_cli_shapes.py`` checks every flag named exists)."""


_NOT_OPTIONS = frozenset({"files", "func", "command", "argv", "language", "model", "score",
                          "seed", "bootstrap", "item"})
"""Namespace entries that are no option of a library message's name (the column arguments
are named by "(given as ...)")."""


def cli_message(text: str, args: argparse.Namespace | None = None) -> str:
    """A library message as a command-line user should read it: Python keywords replaced
    by the flags that do the same, the cube's ``language`` by the user's own column name.

    Examples
    --------
    >>> cli_message("aggregates do not drop them silently: pass `skipna=True` to aggregate")
    'aggregates do not drop them silently: pass --missing drop'
    """
    import re

    for pattern, replacement in REMEDIES:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"`outcomes=`, e\.g\. \{([^}]*)\}", _outcome_flags, text)
    text = re.sub(r"map each label to its score first, e\.g\. table\['[^']*'\]\.map\("
                  r"\{([^}]*)\}\)", _label_flags, text)
    text = re.sub(r"\(given as `(\w+)`\)",          # a column argument: its flag
                  lambda m: f"(given as --{m.group(1).replace('_', '-')})", text)
    # "`path`: 'runs.csv' is ...": the file is named, the keyword means nothing here
    text = re.sub(r"(^|: )`(?:path|paths|data)`: ", r"\1", text)
    if args is not None:                          # "`rng` must be ...": the flag that set it
        options = {dest for dest in vars(args) if dest not in _NOT_OPTIONS}
        text = re.sub(r"`(\w+)`(?= must )", lambda m: (
            f"--{m.group(1).replace('_', '-')}" if m.group(1) in options else m.group(0)),
            text)
    if getattr(args, "func", None) is _run_test:   # evaluq test's own options
        text = re.sub(r"\b(method|kind)='([\w-]+)'", r"--\1 \2", text)
        text = re.sub(r"`(sample_size|labels|metrics|method|kind|n_resamples)`",
                      lambda m: f"--{m.group(1).replace('_', '-')}", text)
        text = re.sub(r"pass `kind`", "pass --kind", text)
        text = text.replace("regression metrics", "regression metrics (--metrics mse mae)")
    if getattr(args, "func", None) is _run_ratings:   # rows of several files: "0, 1 of a.csv"
        text = re.sub(r"\b(\d+) of ([^\s,;()]+\.\w+)((?:, \d+ of \2(?=[\s,;)]|$))+)",
                      lambda m: ", ".join([m.group(1), *re.findall(r"(\d+) of ", m.group(3))])
                      + f" of {m.group(2)}", text)
    files = getattr(args, "files", None) or []
    if getattr(args, "func", None) is _run_test and getattr(args, "columns", 1) is None \
            and len(files) == 3:                  # evaluq test's three files, by name
        names = dict(zip(("targets", "h0", "h1"), files, strict=True))
        text = re.sub(r"`(targets|h0|h1)`",
                      lambda m: f"{m.group(1).upper()} ({names[m.group(1)]})", text)
    column = getattr(args, "language", None) if args is not None else None
    if args is not None and (getattr(args, "source_format", None) is not None
                             or getattr(args, "item", None)):
        column = _task_word(args)
    if column and column != "language":            # not in a list of the file's own columns
        head, listed, tail = _split_columns(text)
        text = re.sub(r"\blanguage(?=[=,' ])", column, head) + listed + tail
    return text


def _split_columns(text: str) -> tuple[str, str, str]:
    """A message cut before a list of a file's own column names ('its columns are: ...',
    'numeric columns: ...'): (before, the words that open the list, the list and after)."""
    import re

    found = re.search(r"columns(?: are)?: ", text)
    if found is None:
        return text, "", ""
    return text[:found.start()], found.group(0), text[found.end():]


def _label_flags(match: Any) -> str:
    """A label map of a message, ``{'C': 1, 'I': 0}``, as --label-score flags."""
    import re
    import shlex

    pairs = re.findall(r"'([^']*)': ([^,]+)", match.group(1))
    flags = " ".join(f"--label-score {shlex.quote(f'{label}={value.strip()}')}"
                     for label, value in pairs)
    return f"read each label as its score: {flags}"


def _outcome_flags(match: Any) -> str:
    """``outcomes=`` example of a message, ``{'left': 'model_a', ...}``, as --outcome flags."""
    import re

    pairs = re.findall(r"'([^']*)': '([^']*)'", match.group(1))
    return "--outcome, e.g. " + " ".join(f"--outcome {a}={b}" for a, b in pairs)


def _show_warnings(args: argparse.Namespace) -> Any:
    """A ``warnings.showwarning`` that prints ``evaluq report: ScaleWarning: ...`` with the
    message in command-line words (no Python source line)."""
    def show(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        print(f"evaluq {args.command}: {category.__name__}: "
              f"{cli_message(str(message), args)}", file=sys.stderr)
    return show


def _refuse_standard_input(args: argparse.Namespace) -> None:
    """'-' for a file (standard input, as many tools read it) is refused with the remedy: the
    readers pick the format from the file's suffix, and the report names its files."""
    if "-" in (getattr(args, "files", None) or []):
        kind = {"report": "runs.csv", "ratings": "votes.csv"}.get(args.command, "scores.txt")
        raise ValueError(f"'-' (standard input) is not read: evaluq {args.command} reads "
                         f"files, whose suffix names their format; save the table first (e.g. "
                         f"`... > {kind}`) and give its name")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evaluq`` console script."""
    import warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from evaluq.errors import EvaluqWarning

    with warnings.catch_warnings():
        # evaluq's own warnings are the command's messages: always shown, never errors
        warnings.filterwarnings("default", category=EvaluqWarning)
        warnings.showwarning = _show_warnings(args)
        try:
            _refuse_standard_input(args)
            return int(args.func(args))
        except (ValueError, TypeError, FileNotFoundError, KeyError, ImportError) as err:
            print(f"evaluq {args.command}: error: {cli_message(str(err), args)}",
                  file=sys.stderr)
            return 2
        except OSError as err:            # a folder that cannot be made, a full disk
            print(f"evaluq {args.command}: error: {err.strerror or err}"
                  f"{f': {err.filename!r}' if err.filename else ''} (any output written "
                  f"before it is whole: each is written to a temporary file, then renamed)",
                  file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"\nevaluq {args.command}: interrupted; any output written before it is "
                  f"whole (each is written to a temporary file, then renamed)",
                  file=sys.stderr)
            return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
