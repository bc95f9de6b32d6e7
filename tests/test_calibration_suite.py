"""Calibration studies that complete the suite of issue 10, item 3 (``pytest -m slow``).

Each study simulates many data sets with a known truth, prints one line
``CALIBRATION | study | kind | nominal x | measured y | n N | binomial SE s`` (collected by
``scripts/calibration_table.py`` into ``docs/calibration.md``) and asserts the measured rate
within 4 binomial standard errors of nominal, ``|hits - n p| <= 4 sqrt(n p (1 - p))``, or, where
the interval is conservative by construction, ``hits >= n p - 4 sqrt(n p (1 - p))``.

- resampling intervals for the (replication, languages) modes not studied elsewhere:
  nonparametric replication with bootstrapped languages, and the three replications with
  subsampled languages; ``replication="none"`` with fixed languages is a point (width 0),
  tabulated as documented;
- Krippendorff's alpha and the six ICC forms (percentile bootstrap over items; Cohen's kappa is
  in ``test_agreement.py``);
- ``eq.dirichlet.model_ranking``: the per-model percentile intervals and ``p_best``.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evaluq as eq

K_SE = 4.0


def report(study: str, hits: int, n: int, nominal: float, kind: str = "coverage") -> None:
    """One line of the calibration table."""
    se = np.sqrt(nominal * (1 - nominal) / n)
    print(f"\nCALIBRATION | {study} | {kind} | nominal {nominal:.3f} | measured {hits / n:.4f} "
          f"| n {n} | binomial SE {se:.4f}")


def bound(n: int, p: float) -> float:
    return K_SE * np.sqrt(n * p * (1 - p))


def _covered(agg: xr.Dataset, target: np.ndarray) -> int:
    ci = agg.ci
    lo, hi = ci.sel(ci_bound="lower").values, ci.sel(ci_bound="upper").values
    return int(((lo <= target) & (target <= hi)).sum())


def _paired_sets(gen: np.random.Generator, theta: np.ndarray, n_seeds: int, n_boot: int,
                 sigma_seed: float, sigma_boot: float) -> xr.Dataset:
    """Independent data sets as the 'models' of one cube, with bootstrap replicates shaped the
    way eq.from_predictions shapes them: replicate b is one resampled test set, the same
    deviation for every seed of a cell. y[m,l,s] = theta[m,l] + e[m,l] + z[m,l,s]."""
    n_m, n_l = theta.shape
    y = theta + gen.normal(0, sigma_boot, (n_m, n_l))
    score = y[..., None] + gen.normal(0, sigma_seed, (n_m, n_l, n_seeds))
    dev = gen.normal(0, sigma_boot, (n_m, n_l, n_boot))
    return eq.from_arrays(score, score[..., None] + dev[:, :, None, :])


# --- resampling: the remaining (replication, languages) modes ---------------------------------

@pytest.mark.slow
def test_nonparametric_language_bootstrap_covers_the_population_mean():
    """Bootstrapped languages with paired nonparametric replication (seeds='rescaled'): the
    interval targets the population mean over languages (0). The replication noise already in
    the observed scores is drawn again on top, so it is conservative: at least nominal."""
    gen = np.random.default_rng(9101)
    n, n_lang, level = 1000, 40, 0.9
    theta = gen.normal(0, 2.0, (n, n_lang))
    cube = _paired_sets(gen, theta, 3, 40, sigma_seed=0.5, sigma_boot=0.5)
    plan = eq.resample(cube, n_resamples=2000, replication="nonparametric", seeds="rescaled",
                       languages="bootstrap", rng=11, lazy=True)
    hits = _covered(eq.aggregate(plan, confidence_level=level), np.zeros(n))
    report("resample nonparametric (rescaled), languages bootstrap (population mean; "
           "conservative)", hits, n, level)
    assert hits >= n * level - bound(n, level), hits
    assert hits <= n * 0.97                     # conservative by the noise, not degenerate


def _random_subset_means(gen: np.random.Generator, values: np.ndarray, k: int) -> np.ndarray:
    """Mean over a uniform k-subset (without replacement) of each row's languages: a fresh
    smaller benchmark drawn from these languages, one per data set."""
    order = np.argsort(gen.random(values.shape), axis=1)[:, :k]
    return np.take_along_axis(values, order, axis=1).mean(axis=1)


@pytest.mark.slow
def test_language_subsample_none_is_nominal():
    """languages='subsample' without replication noise shows the spread of a benchmark of
    k of these L languages: its interval holds the observed mean of a fresh uniform k-subset
    of them at the nominal rate."""
    gen = np.random.default_rng(9102)
    n, n_lang, k, level = 1000, 20, 8, 0.9
    theta = gen.normal(0, 2.0, (n, n_lang))
    cube = _paired_sets(gen, theta, 2, 10, sigma_seed=0.5, sigma_boot=0.5)
    plan = eq.resample(cube, n_resamples=2000, replication="none", languages="subsample",
                       n_languages=k, rng=12, lazy=True)
    observed = cube.score.mean("seed").values
    hits = _covered(eq.aggregate(plan, confidence_level=level),
                    _random_subset_means(gen, observed, k))
    report(f"resample none, languages subsample ({k} of {n_lang}; observed mean of a fresh "
           "subset)", hits, n, level)
    assert abs(hits - n * level) <= bound(n, level), hits


@pytest.mark.slow
@pytest.mark.parametrize("replication", ["parametric", "nonparametric"])
def test_language_subsample_with_noise_is_conservative(replication: str):
    """languages='subsample' with replication noise: the interval holds the true mean of a
    fresh uniform k-subset of these languages at least at the nominal rate (the observed
    scores' noise is counted twice, so it is conservative)."""
    gen = np.random.default_rng(9103 + (replication == "parametric"))
    n, n_lang, k, level = 1000, 20, 8, 0.9
    theta = gen.normal(0, 2.0, (n, n_lang))
    cube = _paired_sets(gen, theta, 3, 40, sigma_seed=0.5, sigma_boot=0.5)
    plan = eq.resample(cube, n_resamples=2000, replication=replication, languages="subsample",
                       n_languages=k, rng=13, lazy=True)
    hits = _covered(eq.aggregate(plan, confidence_level=level),
                    _random_subset_means(gen, theta, k))
    report(f"resample {replication}, languages subsample ({k} of {n_lang}; true mean of a "
           "fresh subset, conservative)", hits, n, level)
    assert hits >= n * level - bound(n, level), hits


def test_no_replication_fixed_languages_is_no_interval():
    """replication='none' with fixed languages redraws nothing: instead of an interval of width
    0 (coverage 0 of the true mean of these languages), the SD and interval are NaN with a
    reason, and pairwise differences and ranks refuse such resamples."""
    gen = np.random.default_rng(9104)
    theta = gen.normal(0, 2.0, (3, 8))
    cube = _paired_sets(gen, theta, 2, 10, sigma_seed=0.5, sigma_boot=0.5)
    agg = eq.aggregate(eq.resample(cube, n_resamples=20, replication="none", rng=14))
    assert "not included" in agg.attrs["test_set_noise"]
    for name in ("sd", "ci"):
        assert np.isnan(agg[name].values).all()
        assert "redraws nothing" in agg[name].attrs["nan_reason"]
    with pytest.raises(eq.CubeError, match="redraws nothing"):
        eq.rank_distribution(agg)
    with pytest.raises(eq.CubeError, match="redraws nothing"):
        eq.pairwise_differences(agg)


# --- agreement ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_krippendorff_alpha_interval_coverage():
    """Two raters copy a true label with probability 0.7, else a uniform label (3 labels):
    with uniform marginals the population alpha is (P_o - 1/K) / (1 - 1/K), P_o = keep^2 +
    (1 - keep^2) / K. Nominal scale, percentile bootstrap over items."""
    gen = np.random.default_rng(9201)
    n, n_items, n_labels, keep, level = 300, 150, 3, 0.7, 0.9
    p_o = keep**2 + (1 - keep**2) / n_labels
    alpha_true = (p_o - 1 / n_labels) / (1 - 1 / n_labels)
    truth = gen.integers(0, n_labels, (n, n_items, 1))
    copy = gen.random((n, n_items, 2)) < keep
    ratings = np.where(copy, truth, gen.integers(0, n_labels, (n, n_items, 2))).astype(float)
    hits = 0
    for s in range(n):   # each bootstrap is vectorised over its resamples
        lo, hi = eq.agreement.krippendorff_alpha(ratings[s], n_resamples=999, rng=s,
                                                 confidence_level=level).interval.values
        hits += int(lo <= alpha_true <= hi)
    report("agreement.krippendorff_alpha percentile interval (nominal, 2 raters, "
           f"{n_items} items)", hits, n, level)
    assert abs(hits - n * level) <= bound(n, level), hits


@pytest.mark.slow
def test_icc_interval_coverage():
    """ratings = item effect (SD 1) + noise (SD 1), 3 raters without rater effects: every
    single-rater ICC is rho = 1/2 and every average-of-k ICC is k rho / (1 + (k-1) rho) = 3/4.
    Percentile bootstrap over 100 items; each of the six forms is tabulated."""
    gen = np.random.default_rng(9202)
    n, n_items, k, level = 400, 100, 3, 0.9
    ratings = gen.normal(0, 1, (n, n_items, 1)) + gen.normal(0, 1, (n, n_items, k))
    rho = 0.5
    truth = np.array([rho] * 3 + [k * rho / (1 + (k - 1) * rho)] * 3)
    hits = np.zeros(6, dtype=int)
    forms: list[str] = []
    for s in range(n):
        res = eq.agreement.icc(ratings[s], n_resamples=999, rng=s, confidence_level=level)
        lo, hi = res.interval.values.T
        hits += (lo <= truth) & (truth <= hi)
        forms = [str(f) for f in res.estimate.coords["form"].values]
    for form, h in zip(forms, hits, strict=True):
        report(f"agreement.icc {form} percentile interval ({n_items} items x {k} raters)",
               int(h), n, level)
    for h in hits:
        assert abs(h - n * level) <= bound(n, level), hits


# --- Dirichlet model ranking --------------------------------------------------------------------

N_CLASSES, N_ANNOTATORS, PRIOR = 3, 5, 1.0


def _annotations(gen: np.random.Generator, n_items: int) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """Items with true class distributions p ~ Dirichlet(1), 5 annotations each, and two
    exchangeable models: q = 0.6 p + 0.4 (an independent Dirichlet(1) draw)."""
    p = gen.dirichlet(np.ones(N_CLASSES), n_items)
    counts = np.stack([gen.multinomial(N_ANNOTATORS, row) for row in p])
    q = 0.6 * p[None] + 0.4 * gen.dirichlet(np.ones(N_CLASSES), (2, n_items))
    return counts, q[0], q[1]


def _per_item_ce(counts: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Independent per-item values: CE against the annotation frequencies, and its posterior
    expectation -sum_k (n_k + prior) / (n + K prior) log q_k."""
    n0 = counts.sum(axis=-1, keepdims=True)
    empirical = -(counts / n0 * np.log(q)).sum(axis=-1)
    expected = -((counts + PRIOR) / (n0 + N_CLASSES * PRIOR) * np.log(q)).sum(axis=-1)
    return empirical, expected


@pytest.mark.slow
def test_dirichlet_model_ranking_intervals_and_p_best():
    """Items drawn from a population: the percentile interval of each model's mean over items
    covers the population mean (computed from 400,000 fresh items, independently of evaluq's
    code) at the nominal rate, for 'CE empirical' and 'E[CE]'. The two models are exchangeable,
    so p_best >= 0.95 (the observed best stays best in 95% of resamples: its one-sided 5%
    bootstrap test, in either direction) happens on 10% of data sets."""
    gen = np.random.default_rng(9301)
    n, n_items, level = 250, 100, 0.9
    big_counts, big_a, big_b = _annotations(gen, 400_000)
    emp_a, exp_a = _per_item_ce(big_counts, big_a)
    emp_b, exp_b = _per_item_ce(big_counts, big_b)
    truth = {"CE empirical": (emp_a.mean(), emp_b.mean()),
             "E[CE]": (exp_a.mean(), exp_b.mean())}
    hits = {row: 0 for row in truth}
    confident = {row: 0 for row in truth}
    for s in range(n):
        counts, qa, qb = _annotations(gen, n_items)
        table = eq.dirichlet.model_ranking(counts, {"A": qa, "B": qb}, prior=PRIOR,
                                           metrics=["cross_entropy"], n_resamples=999,
                                           confidence_level=level, rng=s)
        if s == 0:   # the point values are the independent per-item means
            np.testing.assert_allclose(table.loc["CE empirical", "A"],
                                       _per_item_ce(counts, qa)[0].mean(), rtol=1e-12)
            np.testing.assert_allclose(table.loc["E[CE]", "B"],
                                       _per_item_ce(counts, qb)[1].mean(), rtol=1e-12)
        for row, (true_a, _) in truth.items():
            hits[row] += int(table.loc[row, "A lower"] <= true_a <= table.loc[row, "A upper"])
            confident[row] += int(table.loc[row, "p_best"] >= 0.95)
    for row in truth:
        report(f"dirichlet.model_ranking {row} percentile interval ({n_items} items)",
               hits[row], n, level)
        report(f"dirichlet.model_ranking {row} p_best >= 0.95, two exchangeable models",
               confident[row], n, 0.10, "share of null data sets")
    for row in truth:
        assert abs(hits[row] - n * level) <= bound(n, level), hits
        assert abs(confident[row] - n * 0.10) <= bound(n, 0.10), confident
