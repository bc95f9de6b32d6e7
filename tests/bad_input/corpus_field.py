"""Bad-input corpus entries of the field's comparison methods (Demšar, baycomp; issue 19)."""

from __future__ import annotations

import numpy as np

import evaluq as eq
from evaluq import plots

from .corpus import Case, cube


def _holes() -> object:
    """A cube whose model m1 has no score on one language."""
    c = cube()
    c["score"][1, 2, :] = np.nan
    return c


def _tied() -> object:
    """Three identical models on 7 languages (fewer warn: the signed-rank and Wilcoxon-Holm
    tests cannot tell models apart over so few)."""
    return eq.from_arrays(np.ones((3, 7, 2)), models=["m0", "m1", "m2"])


def field_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    add(Case("evaluq.friedman_test", "a model missing a language",
             lambda: eq.friedman_test(_holes()), "no score for 1"))
    add(Case("evaluq.friedman_test", "one model",
             lambda: eq.friedman_test(cube(n_models=1)), "at least 2 models"))
    add(Case("evaluq.friedman_test", "not a cube", lambda: eq.friedman_test([1, 2]), "cube"))
    add(Case("evaluq.FriedmanResult", "every language a tie (NaN with a reason)",
             lambda: eq.friedman_test(_tied()).to_dataset()))
    add(Case("evaluq.critical_difference", "alpha 1.5",
             lambda: eq.critical_difference(cube(), alpha=1.5), "`alpha`"))
    add(Case("evaluq.critical_difference", "unknown test",
             lambda: eq.critical_difference(cube(), test="bonferroni"), "`test`"))
    add(Case("evaluq.critical_difference", "every language a tie, Wilcoxon-Holm",
             lambda: eq.critical_difference(_tied(), test="wilcoxon-holm")))
    add(Case("evaluq.bayesian_signed_rank", "unknown model",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "zz"), "`model_b`"))
    add(Case("evaluq.bayesian_signed_rank", "negative rope",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", rope=-0.1), "`rope`"))
    add(Case("evaluq.bayesian_signed_rank", "a model missing a language",
             lambda: eq.bayesian_signed_rank(_holes(), "m0", "m1"), "no score for 1"))
    add(Case("evaluq.BayesianComparison", "identical models on every language",
             lambda: eq.bayesian_signed_rank(_tied(), "m0", "m1", rope=0.1, n_samples=500,
                                             rng=0).to_dataset()))
    add(Case("evaluq.correlated_t_test", "NaN fold",
             lambda: eq.correlated_t_test([0.1, np.nan, 0.3], [0.1, 0.2, 0.3]), "`scores_a`"))
    add(Case("evaluq.correlated_t_test", "runs not dividing the folds",
             lambda: eq.correlated_t_test(np.ones(5), np.ones(5), runs=2), "`runs`"))
    add(Case("evaluq.correlated_t_test", "identical scores (zero variance)",
             lambda: eq.correlated_t_test(np.ones(5), np.ones(5), rope=0.1).to_dataset()))
    add(Case("evaluq.hierarchical_t_test", "runs not dividing the folds",
             lambda: eq.hierarchical_t_test(cube(), "m0", "m1", runs=2), "`runs`"))
    add(Case("evaluq.hierarchical_t_test", "a model missing a language",
             lambda: eq.hierarchical_t_test(_holes(), "m0", "m1"), "NaN fold"))
    add(Case("evaluq.plots.critical_difference_diagram", "a cube instead of a result",
             lambda: plots.critical_difference_diagram(cube()), "`result`"))
    add(Case("evaluq.plots.bayesian_comparison", "a Dataset instead of a result",
             lambda: plots.bayesian_comparison(cube()), "`result`"))
    return c
