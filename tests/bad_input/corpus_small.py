"""Bad-input corpus entries of the exact small-sample answers (issue 22, part 4): proportion
intervals, McNemar, the paired Bayesian comparison, the design effect, pass@k and pass^k."""

from __future__ import annotations

import numpy as np

import evaluq as eq

from .corpus import Case

ATTEMPTS = np.array([[1, 0], [0, 1]])


def small_sample_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    add(Case("evaluq.proportion_interval", "successes > trials",
             lambda: eq.proportion_interval([5], [3]), "`successes` exceeds `trials`"))
    add(Case("evaluq.proportion_interval", "negative successes",
             lambda: eq.proportion_interval([-1], [3]), "`successes` must be non-negative"))
    add(Case("evaluq.proportion_interval", "unknown method",
             lambda: eq.proportion_interval([1], [3], method="agresti"), "`method`"))
    add(Case("evaluq.proportion_interval", "zero trials",
             lambda: eq.proportion_interval([0], [0]), "`trials` must be positive"))
    add(Case("evaluq.mcnemar_test", "a score of 0.5",
             lambda: eq.mcnemar_test([0, 1, 0.5], [0, 1, 1]), "`correct_a` must hold 0/1"))
    add(Case("evaluq.mcnemar_test", "NaN score",
             lambda: eq.mcnemar_test([0, 1, np.nan], [0, 1, 1]), "`correct_a` contains 1 NaN"))
    add(Case("evaluq.mcnemar_test", "different item counts",
             lambda: eq.mcnemar_test([0, 1], [0, 1, 1]), "`correct_b` 3"))
    add(Case("evaluq.mcnemar_test", "no discordant items (NaN with a reason)",
             lambda: eq.mcnemar_test([0, 1, 1], [0, 1, 1], exact=False)))
    add(Case("evaluq.bayes_paired_comparison", "a score of 2",
             lambda: eq.bayes_paired_comparison([0, 1, 2], [0, 1, 1]), "`correct_a`"))
    add(Case("evaluq.bayes_paired_comparison", "too few draws",
             lambda: eq.bayes_paired_comparison([0, 1, 1], [0, 1, 1], n_draws=0),
             "`n_draws` must be >= 100"))
    add(Case("evaluq.design_effect", "NaN score",
             lambda: eq.design_effect([1.0, np.nan, 2.0], [0, 0, 1]), "`scores` contains 1 NaN"))
    add(Case("evaluq.design_effect", "labels of the wrong length",
             lambda: eq.design_effect([1.0, 2.0, 3.0], [0, 0]), "`clusters`"))
    add(Case("evaluq.design_effect", "one cluster (NaN with a reason)",
             lambda: eq.design_effect([1.0, 2.0, 3.0], [0, 0, 0])))
    add(Case("evaluq.pass_at_k", "k above the attempts",
             lambda: eq.pass_at_k(ATTEMPTS, 3), "`k` must be at most"))
    add(Case("evaluq.pass_at_k", "a score of 2",
             lambda: eq.pass_at_k(np.array([[1, 2], [0, 1]]), 1), "`correct` must hold 0/1"))
    add(Case("evaluq.pass_hat_k", "k of 0",
             lambda: eq.pass_hat_k(ATTEMPTS, 0), "`k` must be >= 1"))
    add(Case("evaluq.pass_hat_k", "NaN attempt",
             lambda: eq.pass_hat_k(np.array([[1, np.nan], [0, 1]]), 1), "`correct` contains"))
    return c
