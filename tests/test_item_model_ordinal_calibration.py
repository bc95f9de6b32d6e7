"""Calibration of the ordinal item model's pairwise benchmark-scope intervals (issue 34 item 5).

A smaller version of ``benchmarks/calibration_item_ordinal.py`` (300 panels there, the
marginal form, 2026-11-27: pairwise 90% coverage 0.853, panel-clustered SE 0.014, per-model
0.871 at the simulator's fixed design, where the pooled model effects' shrinkage narrows the
intervals; 0.904 / 0.901 with panels drawn from the fit's priors): simulated judge panels
with known expected ratings, one compiled model refitted on each."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning
from evaluq.item_model._simulate import simulate_ratings

COLS = {"model": "model", "item": "item", "score": "score", "grader": "grader"}
PAIRS = ((0, 1), (0, 2), (1, 2))


@pytest.mark.slow
def test_pairwise_intervals_of_the_ordinal_model_are_calibrated():
    n_panels, level = 40, 0.9
    hits, z = [], []
    for rep in range(n_panels):
        t = simulate_ratings(n_models=3, n_items=15, n_graders=3, n_levels=5, rng=5000 + rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            f = eq.fit_items(t, **COLS, draws=300, tune=300, chains=2, rng=rep)
        truth = t.attrs["truth"]["benchmark"]
        s = f.scores().stack(s=("chain", "draw")).values                   # (model, sample)
        diff = np.stack([s[a] - s[b] for a, b in PAIRS])
        d_truth = np.array([truth[a] - truth[b] for a, b in PAIRS])
        lo, hi = np.quantile(diff, [(1 - level) / 2, (1 + level) / 2], axis=1)
        hits.append((lo <= d_truth) & (d_truth <= hi))
        z.append((d_truth - diff.mean(1)) / diff.std(1))
    hits_a, z_a = np.array(hits), np.array(z)
    cov = hits_a.mean()
    se = hits_a.mean(axis=1).std(ddof=1) / np.sqrt(n_panels)     # panels as clusters
    print(f"\nCALIBRATION | ordinal item model (3 models x 15 items x 3 graders, 5 levels; "
          f"{n_panels} simulated panels) benchmark difference | 90% credible interval "
          f"coverage | nominal {level:.3f} | measured {cov:.4f} | n {hits_a.size}")
    assert abs(cov - level) <= max(4 * se, 0.06)
    assert 0.75 < z_a.std() < 1.3                  # posterior SDs neither too small nor large
