"""Many systems and runs: BooStSa's feed / run / save / load pipeline on evaluq's tests.

An :class:`Experiment` collects predictions while they are produced, per baseline (``h0``) and
treatment (``h1``, always attached to one baseline) with a run index; it saves them to disk
(BooStSa's ``outcomes.json`` layout, so a study can stop and resume, and BooStSa's own files
load too), and :meth:`Experiment.run` tests every treatment against its baseline with
:func:`evaluq.bootstrap_test`, writing ``results.tsv`` and ``outcomes.json``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluq._atomic import atomic_file, write_text
from evaluq._results import N_RESAMPLES_TEST
from evaluq._validation import RNGLike, check_bool, check_choice, check_rng
from evaluq.metrics._base import Metric
from evaluq.metrics._inputs import align_by_name, read_input_files
from evaluq.metrics._text_labels import type_label_texts
from evaluq.significance._bootstrap import METHODS, RUNS, compare_runs
from evaluq.significance._result import BootstrapTestResult

OUTCOMES_FILE = "outcomes.json"
RESULTS_FILE = "results.tsv"
_FIELDS = ("exp_idxs", "preds", "targs", "idxs", "epochs")
_Registry = dict[str, dict[str, Any]]
"""baseline -> its runs and its treatments' runs (BooStSa's ``outcomes.json`` layout)."""


def _empty_condition(with_h1: bool) -> dict[str, Any]:
    cond: dict[str, Any] = {f: [] for f in _FIELDS}
    if with_h1:
        cond["h1"] = {}
    return cond


def _check_path(name: str, value: Any) -> Path:
    """A path from a ``str`` or ``os.PathLike``; any other type raises ``TypeError``."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"`{name}` must be a str or os.PathLike (a file or directory path); "
                        f"got {value!r} of type {type(value).__name__}")
    return Path(value)


def _to_list(name: str, value: Any) -> list[Any]:
    """JSON-ready list from a list, array or DataArray (file paths are read before:
    :func:`_validated_run`)."""
    if hasattr(value, "values") and not isinstance(value, dict | list):
        value = value.values
    arr = np.asarray(value)
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError(f"`{name}` must be a non-empty array of per-item values")
    return arr.tolist()


class Experiment:
    """A registry of baseline and treatment predictions, run by run.

    Parameters
    ----------
    path
        Where the registry lives: a directory (holding ``outcomes.json``) or a ``.json``
        file. If it exists, it is loaded (the study resumes); with ``autosave`` every
        :meth:`feed` writes it back.
    autosave
        Save after every :meth:`feed` (only when ``path`` is given).

    Notes
    -----
    Storage is BooStSa's ``outcomes.json`` layout::

        {h0: {"exp_idxs": [...], "preds": [[...], ...], "targs": [[...], ...],
              "idxs": [[...], ...], "epochs": [...],
              "h1": {h1: {"exp_idxs": ..., "preds": ..., "targs": ..., "idxs": ...,
                          "epochs": ...}}}}

    so files written by BooStSa load here and the other way round.

    Runs of a treatment are paired with runs of its baseline by run index when both have the
    same set of indices, otherwise by feeding order (as BooStSa does); paired runs must
    have the same targets.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> rng = np.random.default_rng(0)
    >>> exp = eq.Experiment()
    >>> for run in range(2):
    ...     y = rng.integers(0, 2, 500)
    ...     exp.feed("base", run=run, targets=y,
    ...              predictions=np.where(rng.random(500) < 0.7, y, 1 - y))
    ...     exp.feed("base", h1="new", run=run, targets=y,
    ...              predictions=np.where(rng.random(500) < 0.8, y, 1 - y))
    >>> res = exp.run(metrics=["accuracy"], method="paired", n_resamples=500, rng=0)
    >>> res.comparisons
    [('base', 'new')]
    >>> res[("base", "new")].significance
    ('**',)
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 autosave: bool = True) -> None:
        self.path = None if path is None else _check_path("path", path)
        self.autosave = check_bool("autosave", autosave)
        self.data: _Registry = {}
        if self.path is not None and (file := _outcomes_file(self.path)).exists():
            self.data = _read_outcomes(file)

    # --- storage --------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, autosave: bool = True) -> Experiment:
        """Load a registry (a directory with ``outcomes.json`` or a ``.json`` file).

        Parameters
        ----------
        path : str or os.PathLike
            A directory holding ``outcomes.json`` or a ``.json`` file, which must exist
            (else ``FileNotFoundError``).
        autosave : bool, optional
            Save after every :meth:`feed`; default True.

        Returns
        -------
        Experiment
        """
        file = _outcomes_file(_check_path("path", path))
        if not file.exists():
            raise FileNotFoundError(f"no outcomes file at {str(file)!r}")
        return cls(path, autosave=autosave)

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the registry (``outcomes.json`` in a directory, or a ``.json`` file).

        Parameters
        ----------
        path : str or os.PathLike, optional
            A directory (created if needed; the file is ``outcomes.json`` in it) or a
            ``.json`` file. Default None: the experiment's own ``path`` (``ValueError`` when
            it was created without one).

        Returns
        -------
        pathlib.Path
            The file written (atomically: through a temporary file).
        """
        target = _check_path("path", path) if path is not None else self.path
        if target is None:
            raise ValueError("`path` is required: this Experiment was created without one")
        return _write_outcomes(_outcomes_file(target), self.data)

    # --- feeding --------------------------------------------------------------------------------

    def feed(self, h0: str, *, h1: str | None = None, run: Hashable | None = None,
             predictions: Any, targets: Any, idxs: Any = None,
             epochs: float | None = None, kind: str | None = None) -> None:
        """Add one run of a baseline (``h1=None``) or of a treatment of baseline ``h0``.

        Parameters
        ----------
        h0
            Baseline (control) name; treatments name the baseline they are compared with.
        h1
            Treatment name, or None to feed the baseline itself.
        run
            Run index (seed, fold); default: the next integer of that condition.
        predictions, targets
            Per-item predictions and targets (lists, arrays, pandas Series, DataArrays or
            file paths). A pandas Series of predictions is put in the order of the targets'
            index (different labels are an error), as :func:`evaluq.bootstrap_test` pairs
            them. ``.txt`` files are read as :func:`evaluq.bootstrap_test` reads them: as
            text, the targets' and the predictions' lines typed together (integers only
            when every line of both is a plain integer; one number written two ways, "01"
            and "1", is refused), never file by file.
        idxs
            Optional item ids (kept, e.g. to link shuffled items back to the data set).
        epochs
            Optional number of training epochs (reported as ``mean_epochs``).
        kind
            How ``.txt`` files are typed: ``"hard"`` keeps their labels as written (text),
            ``"regression"`` reads numbers; default None, as :func:`evaluq.bootstrap_test`
            detects it. Feed every run of a study alike (the runs of a baseline and of its
            treatments must hold the same targets).
        """
        _check_condition_names(h0, h1)
        if kind is not None:
            check_choice("kind", kind, ("hard", "soft", "regression"))
        preds, targs, ids = _validated_run(predictions, targets, idxs, kind)
        cond = _condition(self.data, h0, h1)
        run_id = len(cond["exp_idxs"]) if run is None else run
        if run_id in cond["exp_idxs"]:
            who = h0 if h1 is None else f"{h1} (baseline {h0})"
            raise ValueError(f"run {run_id!r} of {who!r} was already fed")
        for key, value in zip(_FIELDS, (run_id, preds, targs, ids, epochs), strict=True):
            cond[key].append(value)
        if self.path is not None and self.autosave:
            self.save()

    # --- inspection -----------------------------------------------------------------------------

    @property
    def comparisons(self) -> list[tuple[str, str]]:
        """Every (baseline, treatment) pair, in feeding order."""
        return [(h0, h1) for h0, c in self.data.items() for h1 in c["h1"]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.comparisons)

    def __repr__(self) -> str:
        lines = [f"Experiment ({len(self.data)} baseline(s), {len(self.comparisons)} "
                 f"comparison(s){'' if self.path is None else ', at ' + str(self.path)})"]
        for h0, c in self.data.items():
            lines.append(f"  h0 {h0!r}: {len(c['exp_idxs'])} run(s)")
            for h1, t in c["h1"].items():
                lines.append(f"    h1 {h1!r}: {len(t['exp_idxs'])} run(s)")
        return "\n".join(lines)

    # --- running --------------------------------------------------------------------------------

    def run(self, *, metrics: Sequence[str | Metric] | str | Metric | None = None,
            method: str = "berg-kirkpatrick", runs: str = "pooled",
            n_resamples: int = N_RESAMPLES_TEST, sample_size: float | None = None,
            confidence_level: float = 0.95, rng: RNGLike = None, kind: str | None = None,
            labels: Sequence[Any] | None = None,
            out_dir: str | os.PathLike[str] | None = None) -> ExperimentResult:
        """Test every treatment against its baseline.

        Parameters
        ----------
        runs
            ``"pooled"``: concatenate the runs of h0 and of h1 against the repeated targets
            (BooStSa). ``"two-level"``: resample runs, then items within each drawn run
            (``berg-kirkpatrick`` and ``paired``), so that run-to-run variation widens the
            resample distribution. ``"crossed"``: the runs (seeds) all score one test set
            (checked: the same targets in the same order); each resample draws the items
            once for every run of both systems and, crossed with them, the runs (the same
            run draw for h0 and h1: runs are paired by run id). See the significance
            guide for choosing between the three.
        out_dir
            If given, write ``results.tsv`` and ``outcomes.json`` there.
        metrics, method, n_resamples, sample_size, confidence_level, kind, labels
            As in :func:`evaluq.bootstrap_test`.
        rng
            Seed or Generator. Each comparison gets its own stream, spawned in sorted
            (h0, h1) order, so results do not depend on the feeding order.

        Returns
        -------
        ExperimentResult
        """
        check_choice("method", method, METHODS)
        check_choice("runs", runs, RUNS)
        if out_dir is not None:
            _check_path("out_dir", out_dir)
        if not self.comparisons:
            raise ValueError("the experiment has no treatment to compare: feed runs with `h1`")
        options: dict[str, Any] = {
            "metrics": metrics, "method": method, "runs": runs, "n_resamples": n_resamples,
            "sample_size": sample_size, "confidence_level": confidence_level, "kind": kind,
            "labels": labels}
        results = {pair: _test_pair(self.data, *pair, rng=stream, **options)
                   for pair, stream in _comparison_streams(rng, sorted(self.comparisons))}
        ordered = {pair: results[pair] for pair in self.comparisons}
        out = ExperimentResult(ordered, _mean_epochs_by_condition(self.data))
        if out_dir is not None:
            out.save(out_dir)
            self.save(out_dir)
        return out


# --- storage: BooStSa's outcomes.json -----------------------------------------------------------

def _outcomes_file(path: Path) -> Path:
    """The outcomes file of a registry path: the path itself if ``.json``, else in it."""
    return path if path.suffix == ".json" else path / OUTCOMES_FILE


def _read_outcomes(file: Path) -> _Registry:
    """The registry held in an outcomes file, every field checked present and a list (a
    truncated or corrupted file raises ``ValueError`` naming it)."""
    try:
        raw = json.loads(file.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{str(file)!r} is not a valid outcomes JSON file (truncated or "
                         f"corrupted?): {err}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{str(file)!r} must hold a mapping baseline -> runs")
    data: _Registry = {}
    for h0, cond in raw.items():
        entry = _outcome_entry(file, f"baseline {h0!r}", cond, (*_FIELDS, "h1"))
        if not isinstance(cond["h1"], dict):
            raise ValueError(f"`path`: baseline {h0!r} in {str(file)!r}: 'h1' must be a mapping "
                             f"treatment -> runs; got {type(cond['h1']).__name__}")
        data[h0] = entry
        data[h0]["h1"] = {h1: _outcome_entry(file, f"treatment {h1!r} of baseline {h0!r}", c,
                                             _FIELDS) for h1, c in cond["h1"].items()}
    return data


def _outcome_entry(file: Path, who: str, cond: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """One condition of an outcomes file: a mapping with a list per field."""
    if not isinstance(cond, dict):
        raise ValueError(f"`path`: {who} in {str(file)!r} must be a mapping of {list(fields)}; got "
                         f"{type(cond).__name__} {cond!r:.60}")
    missing = [f for f in fields if f not in cond]
    if missing:
        raise ValueError(f"`path`: {who} in {str(file)!r} lacks {missing}")
    bad = [f for f in _FIELDS if not isinstance(cond[f], list)]
    if bad:
        raise ValueError(f"`path`: {who} in {str(file)!r}: {bad} must be lists (one entry per "
                         f"run); got {[type(cond[f]).__name__ for f in bad]}")
    return {f: list(cond[f]) for f in _FIELDS}


def _write_outcomes(file: Path, data: _Registry) -> Path:
    """Write the registry to ``file`` (its directory created), atomically: a temporary file
    flushed to disk, then renamed over ``file`` (an interrupted save leaves the previous
    file whole)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    return write_text(file, json.dumps(data))


def _condition(data: _Registry, h0: str, h1: str | None) -> dict[str, Any]:
    """The registry entry of baseline ``h0`` or of its treatment ``h1`` (created empty)."""
    base = data.setdefault(h0, _empty_condition(True))
    return base if h1 is None else base["h1"].setdefault(h1, _empty_condition(False))


# --- comparisons --------------------------------------------------------------------------------

def _paired_runs(data: _Registry, h0: str, h1: str, kind: str | None = None
                 ) -> tuple[list[Any], list[Any], list[Any]]:
    """Targets and the predictions of h0 and h1, run by run (runs paired by id; labels
    typed together, :func:`_typed_together`)."""
    base, treat = _typed_together(data[h0], data[h0]["h1"][h1], kind)
    if not base["exp_idxs"]:
        raise ValueError(f"baseline {h0!r} has no runs: feed it before running")
    order = _run_order(base["exp_idxs"], treat["exp_idxs"], h0, h1)
    targets, p0, p1 = [], [], []
    for i, j in enumerate(order):
        t0, t1 = base["targs"][i], treat["targs"][j]
        if t0 != t1:
            raise ValueError(f"run {base['exp_idxs'][i]!r} of {h0!r} and run "
                             f"{treat['exp_idxs'][j]!r} of {h1!r} have different targets: "
                             "paired runs must score the same items in the same order")
        targets.append(t0)
        p0.append(base["preds"][i])
        p1.append(treat["preds"][j])
    return targets, p0, p1


def _typed_together(base: dict[str, Any], treat: dict[str, Any], kind: str | None
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A comparison's runs with hard labels that mix numbers and text (``.txt`` files are
    typed when fed, with the predictions fed alongside: the baseline's as integers, a
    treatment's as text when one of its labels is not an integer) typed again together, as
    :func:`evaluq.bootstrap_test` types its files (:mod:`evaluq.metrics._text_labels`)."""
    lists = [(f"{who} run {r!r} {what}", values) for who, cond in (("h0", base), ("h1", treat))
             for what, key in (("targets", "targs"), ("predictions", "preds"))
             for r, values in zip(cond["exp_idxs"], cond[key], strict=True)]
    flat = [x for _, values in lists for x in values]
    plain = all(isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool))
                for x in flat)          # labels (no None, floats or probability rows)
    if not plain or len({isinstance(x, str) for x in flat}) < 2:
        return base, treat
    typed = iter(type_label_texts([n for n, _ in lists],
                                  [np.array(list(map(str, v)), dtype=str) for _, v in lists],
                                  kind=kind, unit="item"))
    out = [dict(cond) for cond in (base, treat)]
    for cond in out:
        for key in ("targs", "preds"):
            cond[key] = [next(typed).tolist() for _ in cond[key]]
    return out[0], out[1]


def _test_pair(data: _Registry, h0: str, h1: str, *, rng: np.random.Generator,
               **options: Any) -> BootstrapTestResult:
    """One treatment against its baseline (errors name the pair)."""
    try:
        targets, p0, p1 = _paired_runs(data, h0, h1, options.get("kind"))
        return compare_runs(targets, p0, p1, rng=rng, h0_name=h0, h1_name=h1,
                            run_names=list(data[h0]["exp_idxs"]), **options)
    except ValueError as err:
        raise ValueError(f"{h0!r} vs {h1!r}: {err}") from None


def _mean_epochs_by_condition(data: _Registry) -> dict[str, float]:
    """Mean epochs per baseline and per treatment (named as in ``results.tsv``)."""
    epochs = {h0: c["epochs"] for h0, c in data.items()}
    names = _condition_names([(h0, h1) for h0, c in data.items() for h1 in c["h1"]])
    epochs.update({names[(h0, h1)]: t["epochs"] for h0, c in data.items()
                   for h1, t in c["h1"].items()})
    return {k: _mean_epochs(v) for k, v in epochs.items()}


# --- steps --------------------------------------------------------------------------------------

def _check_condition_names(h0: Any, h1: Any) -> None:
    if not isinstance(h0, str) or not h0:
        raise TypeError(f"`h0` must be a non-empty string; got {h0!r}")
    if h1 is not None and (not isinstance(h1, str) or not h1):
        raise TypeError(f"`h1` must be a non-empty string or None; got {h1!r}")
    if h1 == h0:
        raise ValueError(f"`h1` must differ from `h0`; both are {h0!r}")


def _validated_run(predictions: Any, targets: Any, idxs: Any, kind: str | None = None
                   ) -> tuple[list[Any], list[Any], list[Any]]:
    """Predictions, targets and item ids of one run as JSON-ready lists of one length
    (files read and ``.txt`` files typed together, pandas predictions put in the order of
    the targets' index, as ``bootstrap_test`` reads and pairs them)."""
    (targets, predictions), _ = read_input_files(
        [("targets", targets), ("predictions", predictions)], kind=kind)
    preds = _to_list("predictions", align_by_name(targets, predictions))
    targs = _to_list("targets", targets)
    if len(preds) != len(targs):
        raise ValueError(f"`predictions` has {len(preds)} items but `targets` has "
                         f"{len(targs)}")
    ids = list(range(len(preds))) if idxs is None else _to_list("idxs", idxs)
    if len(ids) != len(preds):
        raise ValueError(f"`idxs` has {len(ids)} items but `predictions` has {len(preds)}")
    return preds, targs, ids


def _run_order(ids0: list[Any], ids1: list[Any], h0: str, h1: str) -> list[int]:
    """For each run of h0, the index of its partner run of h1: by run id when both have the
    same ids, else by position (same number of runs)."""
    if sorted(map(str, ids0)) == sorted(map(str, ids1)):
        where = {str(r): i for i, r in enumerate(ids1)}
        return [where[str(r)] for r in ids0]
    if len(ids0) == len(ids1):
        return list(range(len(ids1)))
    raise ValueError(f"baseline {h0!r} has {len(ids0)} run(s) but treatment {h1!r} "
                     f"has {len(ids1)}: runs are paired one to one")


def _comparison_streams(rng: RNGLike, pairs: list[tuple[str, str]]
                        ) -> Iterator[tuple[tuple[str, str], np.random.Generator]]:
    """One independent Generator per comparison, spawned in the given (sorted) order."""
    root = check_rng(rng)
    streams = np.random.SeedSequence(
        int(root.integers(0, 2**63 - 1, dtype=np.int64))).spawn(len(pairs))
    for pair, stream in zip(pairs, streams, strict=True):
        yield pair, np.random.default_rng(stream)


def _condition_names(pairs: Any) -> dict[tuple[str, str], str]:
    """Row name of each treatment: its own name, or ``"h1 (vs h0)"`` when the same treatment
    (or a baseline's name) appears under several baselines."""
    pairs = list(pairs)
    baselines = {h0 for h0, _ in pairs}
    counts: dict[str, int] = {}
    for _, h1 in pairs:
        counts[h1] = counts.get(h1, 0) + 1
    return {(h0, h1): h1 if counts[h1] == 1 and h1 not in baselines else f"{h1} (vs {h0})"
            for h0, h1 in pairs}


def _mean_epochs(values: list[Any]) -> float:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else float("nan")


@dataclass(frozen=True)
class ExperimentResult:
    """The tests of an :class:`Experiment`: one :class:`BootstrapTestResult` per comparison.

    Made by :meth:`Experiment.run`.

    Attributes
    ----------
    results : dict
        ``(h0, h1)`` -> :class:`BootstrapTestResult`, in feeding order.
    mean_epochs : dict of str to float
        Mean ``epochs`` fed per condition (baseline name, or the treatment's row name in
        :meth:`results_table`); NaN when no epochs were fed.
    """

    results: dict[tuple[str, str], BootstrapTestResult]
    mean_epochs: dict[str, float]

    @property
    def comparisons(self) -> list[tuple[str, str]]:
        return list(self.results)

    def __getitem__(self, pair: tuple[str, str]) -> BootstrapTestResult:
        return self.results[pair]

    def to_dataframe(self) -> pd.DataFrame:
        """Long table: one row per (h0, h1, metric) with values, delta, p, interval, marks."""
        frames = []
        for (h0, h1), res in self.results.items():
            df = res.to_dataframe().reset_index()
            df.insert(0, "h1_name", h1)
            df.insert(0, "h0_name", h0)
            df["method"] = res.method
            df["runs"] = res.runs
            df["n_runs"] = res.n_runs
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def results_table(self) -> pd.DataFrame:
        """BooStSa's ``results.tsv``: one row per condition.

        Columns: ``role`` (h0 / h1), ``baseline``, ``mean_epochs``, and per metric its value,
        ``diff_<metric>`` (oriented: positive = h1 better), ``p_<metric>`` and
        ``sign_<metric>`` (``*`` / ``**``). Values are not rounded (BooStSa rounds to
        percentages with 2 decimals).
        """
        rows: dict[str, dict[str, Any]] = {}
        names = _condition_names(self.results)
        for (h0, h1), res in self.results.items():
            if h0 not in rows:
                rows[h0] = {"role": "h0", "baseline": "", "mean_epochs": self.mean_epochs[h0]}
                for i, m in enumerate(res.metrics):
                    rows[h0].update({m: res.h0_value[i], f"diff_{m}": np.nan,
                                     f"p_{m}": np.nan, f"sign_{m}": ""})
            name = names[(h0, h1)]
            row: dict[str, Any] = {"role": "h1", "baseline": h0,
                                   "mean_epochs": self.mean_epochs[name]}
            for i, m in enumerate(res.metrics):
                row.update({m: res.h1_value[i], f"diff_{m}": res.delta[i],
                            f"p_{m}": res.pvalue[i], f"sign_{m}": res.significance[i]})
            rows[name] = row
        table = pd.DataFrame.from_dict(rows, orient="index")
        table.index.name = "condition"
        return table

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``results.tsv`` (tab-separated) into ``out_dir``; returns its path.

        Parameters
        ----------
        out_dir : str or os.PathLike
            The directory (created if needed); an existing ``results.tsv`` is overwritten.

        Returns
        -------
        pathlib.Path
            The file written: :meth:`results_table` as tab-separated values.
        """
        path = _check_path("out_dir", out_dir)
        path.mkdir(parents=True, exist_ok=True)
        file = path / RESULTS_FILE
        with atomic_file(file) as tmp:
            self.results_table().to_csv(tmp, sep="\t")
        return file

    def summary(self) -> str:
        parts = [res.summary() for res in self.results.values()]
        parts.append(self.results_table().to_string())
        return ("\n" + "#" * 80 + "\n").join(parts)

    def __repr__(self) -> str:
        return self.summary()
