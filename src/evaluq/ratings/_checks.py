"""When the ratings' maximum-likelihood estimate exists, and what to say when it does not.

Ford (1957) / Zermelo: the Bradley-Terry MLE exists (is finite) if and only if the directed
graph with an edge i -> j whenever i took something from j (a win, or a tie under ``"half"``
and ``"davidson"``) is strongly connected: otherwise a group of models never loses (or never
wins) against the rest and its ratings run off to infinity. A comparison graph that is not even
connected leaves the ratings of its parts with no common scale. Davidson's tie parameter
needs at least one tie and one decisive vote (``nu`` is 0 or infinite otherwise).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from evaluq.ratings._votes import Votes


def _names(models: np.ndarray, members: np.ndarray, limit: int = 8) -> str:
    shown = [str(models[k]) for k in members[:limit]]
    return repr(shown)[:-1] + (f", ... ({members.size} models)]" if members.size > limit else "]")


def took_from(counts: np.ndarray, ties_count: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: whether i took something from j, and j from i (batched over leading axes)."""
    ties = counts[..., 2] > 0 if ties_count else np.zeros(counts.shape[:-1], dtype=bool)
    return (counts[..., 0] > 0) | ties, (counts[..., 1] > 0) | ties


def _graph(votes: Votes, forward: np.ndarray, backward: np.ndarray) -> sp.csr_matrix:
    m = votes.n_models
    rows = np.r_[votes.pair_i[forward], votes.pair_j[backward]]
    cols = np.r_[votes.pair_j[forward], votes.pair_i[backward]]
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, m))


def check_connected(votes: Votes) -> None:
    """A comparison graph in several parts is refused, naming them."""
    m = votes.n_models
    present = votes.pair_counts.sum(axis=1) > 0
    has_votes = np.zeros(m, dtype=bool)
    has_votes[votes.pair_i[present]] = has_votes[votes.pair_j[present]] = True
    if not has_votes.all():
        raise ValueError(
            f"model(s) {_names(votes.models, np.flatnonzero(~has_votes))} have no vote left "
            f"(ties='drop' removed their only votes, which were ties): they cannot be rated; "
            f"use ties='davidson' or 'half', or remove them")
    graph = _graph(votes, present, present)
    n_parts, label = connected_components(graph, directed=False)
    if n_parts > 1:
        parts = "; ".join(_names(votes.models, np.flatnonzero(label == k))
                          for k in range(min(n_parts, 4)))
        raise ValueError(
            f"`votes` compare the {m} models in {n_parts} disconnected groups ({parts}"
            f"{'; ...' if n_parts > 4 else ''}): no vote links the groups, so their ratings "
            f"have no common scale. Fit each group on its own votes")


def check_finite_mle(votes: Votes, ties_count: bool) -> None:
    """Refuse data whose maximum-likelihood ratings are infinite, naming the models."""
    problem = infinite_mle(votes, ties_count)
    if problem is not None:
        raise ValueError(
            f"`votes`: the maximum-likelihood ratings are infinite: {problem}. Collect more "
            f"votes, remove these models, or pass `prior_sd` (a Gaussian prior on the logit "
            f"strengths, which keeps the ratings finite and is stated in the result)")


def infinite_mle(votes: Votes, ties_count: bool) -> str | None:
    """Why the maximum-likelihood ratings are infinite (the models that never win, or never
    lose, against the rest), or None when they are finite."""
    forward, backward = took_from(votes.pair_counts, ties_count)
    graph = _graph(votes, forward, backward)
    n_parts, label = connected_components(graph, directed=True, connection="strong")
    if n_parts == 1:
        return None
    coo = graph.tocoo()
    across = label[coo.row] != label[coo.col]
    has_out = np.zeros(n_parts, dtype=bool)
    has_in = np.zeros(n_parts, dtype=bool)
    has_out[label[coo.row[across]]] = True
    has_in[label[coo.col[across]]] = True
    never_win = np.flatnonzero(np.isin(label, np.flatnonzero(~has_out)))
    never_lose = np.flatnonzero(np.isin(label, np.flatnonzero(~has_in)))
    took = "won or tied" if ties_count else "won"
    return (f"model(s) {_names(votes.models, never_win)} never {took} against the models "
            f"outside their group and {_names(votes.models, never_lose)} never lost to them "
            f"(every model needs a path of {'wins or ties' if ties_count else 'wins'} to every "
            "other)")


TIES: Final = ("auto", "davidson", "half", "drop")
"""How the fits treat ties; ``"auto"`` resolves by :func:`resolve_ties`."""


def resolve_ties(ties: str, n_ties: float) -> str:
    """The tie model a fit uses: ``"auto"`` is Davidson's when the votes hold a tie and
    plain Bradley-Terry (``"drop"``: there is no tie to drop) when they hold none, where
    ``"davidson"`` would be refused (its tie parameter's estimate would be 0); any other
    choice is kept.

    Examples
    --------
    >>> from evaluq.ratings._checks import resolve_ties
    >>> resolve_ties("auto", 3), resolve_ties("auto", 0), resolve_ties("half", 0)
    ('davidson', 'drop', 'half')
    """
    if ties != "auto":
        return ties
    return "davidson" if n_ties > 0 else "drop"


def check_ties(votes: Votes) -> None:
    """Davidson's tie parameter needs ties and decisive votes."""
    ties = votes.counts[:, 2].sum()
    decisive = votes.counts[:, :2].sum()
    if ties == 0:
        raise ValueError("`ties`='davidson' fits a tie parameter, but `votes` hold no tie (its "
                         "estimate would be 0); use ties='drop' (or 'half')")
    if decisive == 0:
        raise ValueError("`votes` hold only ties: no vote says which model is better")


def strongly_connected(counts: np.ndarray, pair_i: np.ndarray, pair_j: np.ndarray,
                       n_models: int, ties_count: bool) -> np.ndarray:
    """For a batch of count arrays (B, P, 3): whether each one's graph is strongly connected,
    by the transitive closure (repeated squaring of the reachability matrices, batched)."""
    forward, backward = took_from(counts, ties_count)
    batch = counts.shape[0]
    reach = np.zeros((batch, n_models, n_models))
    reach[:, pair_i, pair_j] = forward
    reach[:, pair_j, pair_i] = backward
    reach[:, np.arange(n_models), np.arange(n_models)] = 1.0
    for _ in range(int(np.ceil(np.log2(max(n_models, 2))))):
        reach = np.minimum(reach @ reach, 1.0)
    return np.asarray((reach > 0).all(axis=(1, 2)))

