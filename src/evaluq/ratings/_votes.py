"""Pairwise votes to the counts a rating fit needs: validated, canonical, order-free.

A vote is one row (``model_a``, ``model_b``, ``winner`` [, ``cluster``]). Every vote is
canonicalised to its unordered pair ``(i, j)`` with ``i < j`` in the sorted model labels and an
outcome relative to ``i`` (0: ``i`` wins, 1: ``j`` wins, 2: tie), so that the counts, and every
result, do not depend on the rows' order or on which side a model was shown. The cells of the
fit are the unique (pair, outcome) combinations; with clusters, the (cluster, pair, outcome)
counts are a sparse (cluster, cell) matrix.

With covariates (``_covariates``: style control), a vote's covariate row is negated when its
sides are swapped (it is an a-vs-b difference), and the cells are the unique (pair, covariate
row, outcome) combinations: the fit's rows are the unique (pair, covariate row) combinations,
``row_pair`` naming each one's pair (with continuous covariates, about one row per vote).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from evaluq._validation import check_columns, check_label_spacing, named_rows
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.io import TableLike, as_table
from evaluq.ratings import _covariates
from evaluq.ratings._covariates import Covariates

A_WINS, B_WINS, TIE = 0, 1, 2
OUTCOME_NAMES = ("model_a", "model_b", "tie")
DEFAULT_OUTCOMES: dict[Any, str] = {
    "model_a": "model_a", "a": "model_a", "model_b": "model_b", "b": "model_b",
    "tie": "tie", "tie (bothbad)": "tie", "both_bad": "tie", "bothbad": "tie", "draw": "tie",
}
"""Winner labels always understood: ``"model_a"`` / ``"a"``, ``"model_b"`` / ``"b"``, and
``"tie"`` with Chatbot Arena's ``"tie (bothbad)"`` (``"bothbad"`` in its released battles),
arena-rank's ``"both_bad"`` and ``"draw"`` (all read as ties), in any case (``"A"``,
``"Tie"``) and with spaces around them; ``outcomes=`` adds labels to them (its own read first,
exactly as given). Without ``outcomes=`` a winner may also be the name of the model A or B
column (``"left"`` in a column ``left``), or the name of the model that won in that row
(:func:`_implicit_winners`)."""


@dataclass(frozen=True)
class Votes:
    """The votes as counts over unique cells (row, outcome).

    ``pair_i`` / ``pair_j`` (P,) index the sorted ``models`` with ``pair_i < pair_j``. Without
    covariates the rows are the pairs: ``counts`` (P, 3) holds per pair the votes ``i`` won,
    ``j`` won and tied. With covariates the rows are the unique (pair, covariate row)
    combinations: ``row_pair`` (R,) names each row's pair, ``features`` (R, q) its covariates
    (oriented from ``i``), ``counts`` (R, 3). With clusters, ``cluster_counts`` is a sparse
    (G, 3 R) matrix: votes of cluster g in cell ``3 r + o``.
    """

    models: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    counts: np.ndarray
    clusters: np.ndarray | None
    cluster_counts: sp.csr_matrix | None
    n_votes: int
    n_ties_dropped: int
    source: str
    row_pair: np.ndarray | None = None
    features: np.ndarray | None = None
    covariates: Covariates | None = None

    @property
    def n_models(self) -> int:
        return int(self.models.size)

    @property
    def n_pairs(self) -> int:
        return int(self.pair_i.size)

    @property
    def n_rows(self) -> int:
        return int(self.counts.shape[0])

    @property
    def pair_counts(self) -> np.ndarray:
        """Counts per pair (P, 3) (the rows' counts summed over their covariate rows)."""
        return pair_counts(self.counts, self.row_pair, self.n_pairs)

    def per_model(self) -> dict[str, np.ndarray]:
        """Each model's votes, wins, losses and ties (over its pairs)."""
        m = self.n_models
        counts = self.pair_counts
        w, lost, t = counts[:, A_WINS], counts[:, B_WINS], counts[:, TIE]
        wins = np.bincount(self.pair_i, w, m) + np.bincount(self.pair_j, lost, m)
        losses = np.bincount(self.pair_i, lost, m) + np.bincount(self.pair_j, w, m)
        ties = np.bincount(self.pair_i, t, m) + np.bincount(self.pair_j, t, m)
        return {"n_votes": wins + losses + ties, "wins": wins, "losses": losses, "ties": ties}


def pair_counts(counts: np.ndarray, row_pair: np.ndarray | None, n_pairs: int) -> np.ndarray:
    """Counts (..., R, 3) of rows summed to their pairs (..., P, 3) (unchanged without
    covariate rows)."""
    if row_pair is None:
        return counts
    moved = np.moveaxis(counts, -2, 0)                        # (R, ..., 3)
    out = np.zeros((n_pairs, *moved.shape[1:]))
    np.add.at(out, row_pair, moved)
    return np.moveaxis(out, 0, -2)


def _check_missing(df: pd.DataFrame, columns: Mapping[str, str | None]) -> None:
    """NaN in a used column is refused with its rows (nothing is dropped silently)."""
    for arg, col in columns.items():
        if col is None:
            continue
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise ValueError(
                f"column {col!r} (given as `{arg}`) has {int(missing.sum())} missing value(s) at "
                f"row(s) {named_rows(missing, df.index)}; remove or fill these votes explicitly")


def _hashable_columns(df: pd.DataFrame) -> list[str]:
    """The columns whose values can be compared row to row (not lists / dicts: an arena
    file's conversations)."""
    out = []
    for col in df.columns:
        values = df[col]
        if values.dtype == object and values.map(
                lambda v: isinstance(v, list | dict | set | np.ndarray)).any():
            continue
        out.append(col)
    return out


def _repeated(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Rows (mask) repeating an earlier row in ``columns``; a row can only if each of its
    values occurs twice in its column, checked column by column first (an id column ends it
    in one pass over millions of votes)."""
    candidate = np.ones(len(df), dtype=bool)
    for col in columns:
        candidate &= df[col].duplicated(keep=False).to_numpy()
        if not candidate.any():
            return candidate
    repeated = np.zeros(len(df), dtype=bool)
    repeated[candidate] = df.loc[candidate, columns].duplicated().to_numpy()
    return repeated


ID_ROWS = 20
"""A column unique over at least this many distinct rows is an id (a battle's, a vote's)."""
COPIES_P = 1e-3
"""Repeated rows are taken for copies when independent votes on their pairs would agree as
often with a probability below this."""


def _copies_evident(df: pd.DataFrame, repeated: np.ndarray, sides: list[str], own: list[str],
                    extra: list[str]) -> bool:
    """Whether rows sharing the models and the ``extra`` columns (all identical: checked
    before) are evidently copies: an ``extra`` column is an id (not a float, unique over at
    least :data:`ID_ROWS` distinct rows), or independent votes on each pair, with the
    verdict shares of that pair, would all agree with a probability below :data:`COPIES_P`
    (a verdict column that is constant, all ties, is no evidence)."""
    distinct = df.loc[~repeated, extra]
    if len(distinct) >= ID_ROWS and any(distinct[c].dtype.kind != "f" and distinct[c].is_unique
                                        for c in extra):
        return True
    pair = df.groupby(sides, sort=False, dropna=False).ngroup().to_numpy()
    verdict = df.groupby(own, sort=False, dropna=False).ngroup().to_numpy()
    shares = np.zeros((pair.max() + 1, verdict.max() + 1))
    np.add.at(shares, (pair, verdict), 1.0)
    shares /= shares.sum(axis=1, keepdims=True)
    key = df.groupby([*sides, *extra], sort=False, dropna=False).ngroup().to_numpy()
    size = np.bincount(key)
    first = np.unique(key, return_index=True)[1]
    shared = size >= 2
    agree = (shares[pair[first[shared]]] ** size[shared][:, None]).sum(axis=1)
    return bool(np.log(agree).sum() < np.log(COPIES_P))


def _verdict_like(values: pd.Series, labels: set[str]) -> bool:
    """Whether a column holds verdicts (every value a winner label or a model's name): another
    judge's votes, which say nothing about which vote a row is."""
    seen = pd.unique(values.dropna())
    return bool(seen.size) and all(str(v).strip().casefold() in labels for v in seen[:1000])


def check_repeated_rows(df: pd.DataFrame, own: Sequence[str], sides: tuple[str, str],
                        models: np.ndarray, outcomes: Mapping[Any, str] | None) -> None:
    """Warn when rows repeat another row in every column while the columns beyond the vote's
    (``sides``, the verdict columns ``own`` and other columns of verdicts) identify a vote
    together with the two models (no two different rows share them: an id, a timestamp,
    prompt and annotator): the repeats are then copies (a file read twice, two overlapping
    files concatenated), counted as more votes. Without such columns repeated votes are
    ordinary (the same pair, the same verdict) and nothing is said. No row is dropped.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evaluq.ratings._votes import check_repeated_rows
    >>> votes = pd.DataFrame({"id": [1, 2], "model_a": ["x", "y"], "model_b": ["y", "x"],
    ...                       "winner": ["model_a", "tie"]})
    >>> check_repeated_rows(votes, ["winner"], ("model_a", "model_b"), np.array(["x", "y"]),
    ...                     None)    # no repeated row: silent
    """
    columns = _hashable_columns(df)
    repeated = _repeated(df, sorted(columns, key=lambda c: c in (*own, *sides)))
    if not repeated.any():
        return
    labels = {str(k).strip().casefold() for k in [*DEFAULT_OUTCOMES, *(outcomes or {}),
                                                  *models, *sides]}
    extra = [c for c in columns if c not in (*own, *sides)
             and not _verdict_like(df[c], labels)]
    if (not extra or df.loc[~repeated].duplicated(subset=[*sides, *extra]).any()
            or not _copies_evident(df, repeated, [*sides], [*own], extra)):
        return
    n = int(repeated.sum())
    warn(f"`votes` has {n} row(s) that repeat an earlier row in every column (row(s) "
         f"{named_rows(repeated, df.index)}), and its columns {[str(c) for c in extra[:6]]} "
         f"identify a vote together with the two models (no two different rows share them, "
         f"and rows that do always agree): the repeats look like copies (a file read twice, "
         f"or concatenated with an "
         f"overlapping one). They are counted as {n} more vote(s), which narrows the "
         f"intervals; if they are copies, drop them first: `votes.drop_duplicates()`",
         EvaluqWarning)


def _outcome_map(outcomes: Mapping[Any, str] | None) -> dict[Any, int]:
    if outcomes is None:
        return {k: OUTCOME_NAMES.index(v) for k, v in DEFAULT_OUTCOMES.items()}
    if not isinstance(outcomes, Mapping) or not outcomes:
        raise TypeError(f"`outcomes` must be a non-empty mapping from winner labels to "
                        f"'model_a', 'model_b' or 'tie'; got {outcomes!r}")
    bad = {k: v for k, v in outcomes.items() if v not in OUTCOME_NAMES}
    if bad:
        raise ValueError(f"`outcomes` must map labels to 'model_a', 'model_b' or 'tie'; got "
                         f"{bad!r}")
    return {k: OUTCOME_NAMES.index(v) for k, v in outcomes.items()}


def _implicit_winners(df: pd.DataFrame, winner: str, model_a: str, model_b: str,
                      codes: np.ndarray) -> np.ndarray:
    """The winner codes without ``outcomes=``: ``codes`` (the default labels' codes, NaN
    elsewhere) completed by the two readings users' files have, a winner naming the column
    of model A or B (``"left"`` for a column ``left``) or naming the model that won in its
    row (``"gpt-4o"``). A row both readings give different winners is refused."""
    column_labels = {model_a: A_WINS, model_b: B_WINS}
    by_label = codes.copy()
    unset = np.isnan(by_label)
    for label, code in column_labels.items():
        if label not in DEFAULT_OUTCOMES:
            by_label[unset & (df[winner] == label).to_numpy()] = code
    values = df[winner].to_numpy(dtype=object)
    text = df[winner].astype(str).to_numpy()   # as text: a CSV's "2" among "tie" names model 2
    by_name = np.select([text == df[model_a].astype(str).to_numpy(),
                         text == df[model_b].astype(str).to_numpy()],
                        [float(A_WINS), float(B_WINS)], np.nan)
    clash = ~np.isnan(by_label) & ~np.isnan(by_name) & (by_label != by_name)
    if clash.any():
        raise ValueError(
            f"`winner` column {winner!r} is ambiguous in {int(clash.sum())} vote(s) (row(s) "
            f"{named_rows(clash, df.index)}): a label such as {values[clash][0]!r} names one side "
            f"as a winner label and the model of the other side by its name; say which with "
            f"`outcomes=`, e.g. {{'model_a': 'model_a', 'model_b': 'model_b', 'tie': 'tie'}}")
    return np.where(np.isnan(by_label), by_name, by_label)


def outcome_codes(series: pd.Series, outcomes: Mapping[Any, str] | None) -> np.ndarray:
    """Codes (float, NaN for a label not understood) of a verdict column: the labels of
    ``outcomes`` exactly as given, then the default labels in any case."""
    default = _folded(series).map(_outcome_map(None)).to_numpy(dtype=np.float64,
                                                                na_value=np.nan)
    if outcomes is None:
        return default
    mapping = _outcome_map(outcomes)
    own = series.map(mapping).to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isnan(own).any() and not pd.api.types.is_string_dtype(series):
        # a number read from a file (1.0) under a label given as text ("1", --outcome 1=...)
        text = series.map(lambda v: f"{v:g}" if isinstance(v, float | np.floating) else str(v))
        own = np.where(np.isnan(own), text.map(mapping).to_numpy(dtype=np.float64,
                                                                 na_value=np.nan), own)
    return np.where(np.isnan(own), default, own)


def understood_labels(outcomes: Mapping[Any, str] | None) -> list[str]:
    """The labels a verdict column may hold (for a refusal's message)."""
    own = [] if outcomes is None else sorted(map(str, outcomes))
    return own + [k for k in sorted(map(str, DEFAULT_OUTCOMES)) if k not in own]


def _folded(series: pd.Series) -> pd.Series:
    """Labels stripped and case-folded, as the default winner labels are matched (vectorised
    for a column of text: an arena's millions of votes)."""
    if pd.api.types.is_string_dtype(series):
        return series.str.strip().str.casefold()
    return series.map(lambda v: v.strip().casefold() if isinstance(v, str) else v)


def _winner_codes(df: pd.DataFrame, winner: str, model_a: str, model_b: str,
                  outcomes: Mapping[Any, str] | None) -> np.ndarray:
    series = df[winner]
    codes = outcome_codes(series, outcomes)  # the default labels in any case: 'A', 'Tie'
    if outcomes is None:
        codes = _implicit_winners(df, winner, model_a, model_b, codes)
    unknown = np.isnan(codes)
    if unknown.any():
        seen = sorted(map(str, series.unique()))
        bad = sorted(map(str, series[unknown].unique()))
        understood = understood_labels(outcomes)
        if outcomes is None:
            understood += [f"the columns' names {model_a!r} / {model_b!r}",
                           "the name of either model of the row"]
        how = ("map them with `outcomes=`, e.g. {'left': 'model_a', 'right': 'model_b', "
               "'tie': 'tie'}" if outcomes is None else "add them to `outcomes`")
        raise ValueError(
            f"`winner` column {winner!r} holds label(s) {bad} that are not a winner "
            f"(row(s) {named_rows(unknown, series.index)}); the values seen are {seen[:20]}; "
            f"understood: {understood}; {how}")
    return codes.astype(np.int64)


def _factorize(values: pd.Series, arg: str,
               columns: str | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Codes and sorted labels of ``values`` (the argument ``arg``'s, from ``columns``)."""
    try:
        codes, labels = pd.factorize(values, sort=True)
    except TypeError as err:
        raise TypeError(f"the labels of `{arg}` cannot be sorted (mixed types?): {err}") from None
    check_label_spacing(np.asarray(labels, dtype=object), columns)
    return codes.astype(np.int64), np.asarray(labels, dtype=object)


def _model_codes(df: pd.DataFrame, model_a: str, model_b: str) -> tuple[np.ndarray, np.ndarray,
                                                                          np.ndarray]:
    both = pd.concat([df[model_a], df[model_b]], ignore_index=True)
    codes, models = _factorize(both, "model_a / model_b", (model_a, model_b))
    a, b = codes[:len(df)], codes[len(df):]
    same = a == b
    if same.any():
        who = sorted(map(str, set(models[a[same]])))
        raise ValueError(
            f"`model_a` and `model_b` name the same model in {int(same.sum())} vote(s) (row(s) "
            f"{named_rows(same, df.index)}; model(s) {who[:10]}): a vote of a model against itself "
            f"says nothing about ratings; remove these rows")
    return a, b, models


def _cells(a: np.ndarray, b: np.ndarray, code: np.ndarray,
           m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Canonical (pair, outcome) per vote: pair (min, max), outcome relative to the min."""
    i, j = np.minimum(a, b), np.maximum(a, b)
    swapped = a > b
    out = np.where(swapped & (code != TIE), 1 - code, code)
    pair_key, pair_of_vote = np.unique(i * m + j, return_inverse=True)
    return pair_key // m, pair_key % m, pair_of_vote.ravel(), out


def _covariate_rows(pair_of_vote: np.ndarray, swapped: np.ndarray,
                    values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of unique (pair, covariate row), covariates oriented from the pair's ``i``:
    each vote's row, each row's pair and covariates."""
    oriented = np.where(swapped[:, None], -values, values)
    keys = np.column_stack([pair_of_vote.astype(np.float64), oriented])
    unique, row_of_vote = np.unique(keys, axis=0, return_inverse=True)
    return row_of_vote.ravel(), unique[:, 0].astype(np.int64), np.ascontiguousarray(unique[:, 1:])


def read_votes(votes: TableLike, *, model_a: str, model_b: str, winner: str,
               outcomes: Mapping[Any, str] | None, cluster: str | None,
               drop_ties: bool, covariates: Any = None,
               standardize_covariates: bool = True) -> Votes:
    """Validate the vote table and count it over cells (see the module docstring)."""
    specs = _covariates.parse(covariates)
    df, source = as_table(votes, "votes")
    columns = {"model_a": model_a, "model_b": model_b, "winner": winner, "cluster": cluster}
    for arg, col in columns.items():
        if col is not None and not isinstance(col, str):
            raise TypeError(f"`{arg}` must be a column name (str); got {col!r}")
    check_columns("`votes`", df.columns, columns)
    if len(df) == 0:
        raise ValueError("`votes` has no rows")
    _check_missing(df, columns)
    code = _winner_codes(df, winner, model_a, model_b, outcomes)
    a, b, models = _model_codes(df, model_a, model_b)
    check_repeated_rows(df, [winner], (model_a, model_b), models, outcomes)
    keep = code != TIE if drop_ties else np.ones(len(df), dtype=bool)
    n_dropped = int((~keep).sum())
    if not keep.any():
        raise ValueError("`ties`='drop' leaves no votes: every vote is a tie")
    g = labels = None
    if cluster is not None:
        g, labels = _factorize(df[cluster][keep], "cluster", cluster)
    i, j, pair_of_vote, out = _cells(a[keep], b[keep], code[keep], models.size)
    row_of_vote, row_pair, features, cov = pair_of_vote, None, None, None
    if specs is not None:
        cov = _covariates.read(df, specs, keep, standardize_covariates)
        _covariates.check_identified(cov, a[keep], b[keep], models.size)
        row_of_vote, row_pair, features = _covariate_rows(pair_of_vote, a[keep] > b[keep],
                                                          cov.values)
    n_rows = int(row_of_vote.max()) + 1
    cell = row_of_vote * 3 + out
    counts = np.bincount(cell, minlength=3 * n_rows).reshape(n_rows, 3).astype(np.float64)
    cluster_counts = None
    if g is not None and labels is not None:
        cluster_counts = sp.csr_matrix((np.ones(cell.size), (g, cell)),
                                       shape=(labels.size, 3 * n_rows))
        cluster_counts.sum_duplicates()
    return Votes(models=models, pair_i=i, pair_j=j, counts=counts, clusters=labels,
                 cluster_counts=cluster_counts, n_votes=int(keep.sum()),
                 n_ties_dropped=n_dropped, source=source, row_pair=row_pair,
                 features=features, covariates=cov)
