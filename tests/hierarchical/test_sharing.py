"""``test_set_errors="auto"`` pairs replicates shared across models whatever loader built the
cube (issue 30 item 8): a cube that does not mark its replicates is paired when their
correlation across models is beyond their noise, and kept independent when it is not.

The slow test is the CI-sized run of ``python tests/hierarchical/paired_sim.py sharing``
(the rows of docs/calibration.md): cubes built from shared per-item resamples
(``paired_sim.shared_cube``), marked as ``from_predictions`` marks them, and the same
replicates unmarked through ``from_arrays`` and through a long table with a bootstrap column
(``from_long``); 12 cubes at error correlation 0.9 and 12 at 0, 4 chains x 250 draws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.hierarchical import cube_statistics

from .paired_sim import Setting, long_cube, shared_cube, sharing_lines, sharing_study

pytestmark = pytest.mark.filterwarnings("ignore::evaluq.hierarchical.ConvergenceWarning")

def _unmarked(rho: float, seed: int = 0) -> tuple[xr.Dataset, xr.Dataset]:
    marked = shared_cube(np.random.default_rng(seed), Setting(rho=rho, n_boot=60))[0]
    unmarked = marked.copy()
    del unmarked.attrs["shared_bootstrap"]
    return marked, unmarked


def test_unmarked_correlated_replicates_are_paired_as_the_marked_ones() -> None:
    marked, unmarked = _unmarked(0.9)
    reference, data = cube_statistics(marked), cube_statistics(unmarked)
    assert data.paired
    assert data.pairing.startswith("paired: bootstrap replicates correlated across models "
                                   "beyond their noise (1 factor(s))")
    assert data.sharing == {"source": "read from the replicates", "models": True,
                            "seeds": True}
    assert reference.sharing == {"source": "cube attribute shared_bootstrap", "models": True,
                                 "seeds": True}
    np.testing.assert_allclose(data.loadings, reference.loadings)
    np.testing.assert_allclose(data.v_fixed, reference.v_fixed)
    from_long = cube_statistics(long_cube(marked))
    assert from_long.pairing == data.pairing
    np.testing.assert_allclose(from_long.v_fixed, data.v_fixed)


def test_unmarked_uncorrelated_replicates_stay_independent() -> None:
    _, unmarked = _unmarked(0.0)
    data = cube_statistics(unmarked)
    assert not data.paired
    assert data.sharing == {"source": "read from the replicates", "models": False,
                            "seeds": True}
    assert "show no correlation across models beyond their noise" in data.pairing_note


def test_the_keyword_of_the_loaders_overrides_what_the_replicates_show() -> None:
    marked, _ = _unmarked(0.9)
    arrays = {"score": marked.score.values, "boot_score": marked.boot_score.values,
              "outlier_threshold": None}
    kept_apart = eq.from_arrays(**arrays, shared_bootstrap=False)
    data = cube_statistics(kept_apart)
    assert not data.paired
    assert data.sharing["source"] == "cube attribute shared_bootstrap"
    with pytest.raises(CubeError, match="marked as not shared across models"):
        cube_statistics(kept_apart, "paired")
    assert cube_statistics(eq.from_arrays(**arrays, shared_bootstrap=True)).paired


def test_the_fit_says_what_it_chose_and_why() -> None:
    _, unmarked = _unmarked(0.9)
    fit = eq.fit_hierarchical(unmarked, draws=100, tune=100, chains=2, retry=False, rng=0)
    assert fit.config["shared_bootstrap"] == {"source": "read from the replicates",
                                              "models": True, "seeds": True}
    assert fit.config["pairing"].startswith("paired: bootstrap replicates correlated")
    text = repr(fit)
    assert "test_set_errors='paired', error_factors=1" in text
    assert "test-set errors paired: bootstrap replicates correlated across models" in text


def test_the_sharing_survives_a_save(tmp_path) -> None:
    _, unmarked = _unmarked(0.9)
    fit = eq.fit_hierarchical(unmarked, draws=100, tune=100, chains=2, retry=False, rng=0)
    fit.save(tmp_path / "fit.nc")
    assert eq.load_fit(tmp_path / "fit.nc").data.sharing == fit.data.sharing


@pytest.mark.slow
@pytest.mark.parametrize("rho", [0.9, 0.0])
def test_auto_is_calibrated_on_cubes_that_do_not_mark_their_replicates(rho: float) -> None:
    """Unmarked cubes (from_arrays, from_long) get the marked cubes' posterior: the same
    pairing, the 95% width within 1.10x of the paired resampling's and the 90% coverage
    within 3 binomial SEs counted per cube; at rho 0 'auto' keeps them independent in most
    cubes."""
    n_cubes = 12
    out = sharing_study(Setting(rho=rho), n_cubes, seed=int(10 * rho) + 31)
    for line in sharing_lines(f"5x8x5 B=200 rho={rho} ({n_cubes} cubes)", out, rho):
        print(line)
    ref = out["resampling"]
    band = 3 * np.sqrt(0.9 * 0.1 / n_cubes)
    for name in ("from_arrays", "from_long"):
        row = out[name]
        assert row["width95"] <= 1.10 * ref["width95"], (name, row["width95"], ref["width95"])
        assert abs(row["cover90"] - 0.90) <= band, (name, row["cover90"])
        assert row["cover90"] == pytest.approx(out["marked"]["cover90"], abs=1 / 40)
        assert row["width95"] == pytest.approx(out["marked"]["width95"], rel=0.02)
        if rho > 0:
            assert row["paired_share"] == 1.0
        else:
            assert row["paired_share"] <= 0.25
    frame = pd.DataFrame(out).T
    assert np.isfinite(frame["cover90"].to_numpy(dtype=float)).all()
