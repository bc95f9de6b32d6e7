"""Slow: sigma_item's posterior covers the population SD of the item difficulties (issue 36
item 4), a smaller version of ``benchmarks/calibration_item_sigma.py``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nutpie")

N_SETS = 45
SIZE = (200, 2)


@pytest.mark.slow
def test_sigma_item_interval_covers_the_population_value():
    """45 data sets of 5 models x 200 items x 2 epochs, sigma_item = 1.5: the 90% interval
    covers the population sigma_item (the parameter) at least 0.80 of the time (nominal
    0.90, binomial SE 0.045: a calibrated posterior fails with probability ~1.5%), and the
    errors of the posterior mean in posterior SDs have mean square in [0.55, 1.6] (1 when
    the posterior's width is right; the benchmark's 70 data sets at this size measured z
    SD 0.99). The realised SD of the simulated items is covered more often than the
    population value (it is nearer the data: the benchmark measured 0.971 against 0.914),
    which is why a study that scores against it would read too-wide intervals, never
    too-narrow ones. Fixed seeds: deterministic."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import calibration_item_sigma as cis

    comp = cis.compiled(cis.simulate(0, *SIZE, 1.0)[0], "grid")
    rows = [cis.one(comp, 40_000 + i, SIZE, "fixed", 500, 500) for i in range(N_SETS)]
    cover = np.mean([r["cover"] for r in rows])
    cover_realised = np.mean([r["cover_realised"] for r in rows])
    z = np.array([(r["mean"] - r["truth"]) / r["sd"] for r in rows])
    assert cover >= 0.80, cover
    assert 0.55 <= np.mean(z**2) <= 1.6, np.mean(z**2)
    assert cover_realised >= cover, (cover_realised, cover)
