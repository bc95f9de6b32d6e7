"""Ratings from pairwise votes (issue 33): Bradley-Terry with Davidson ties or ties as half a
win, cluster-robust sandwich and cluster-bootstrap intervals, draws for ranks and tiers.

:func:`fit_ratings` reads the votes (``_votes``), checks that the ratings exist (``_checks``),
fits them by a batched Newton method (``_newton``), estimates their uncertainty
(``_uncertainty``) and returns a :class:`RatingsResult` (``_result``).
"""

from evaluq.ratings._fit import fit_ratings
from evaluq.ratings._judged import fit_judged_ratings
from evaluq.ratings._result import RatingsResult

__all__ = ["RatingsResult", "fit_judged_ratings", "fit_ratings"]
