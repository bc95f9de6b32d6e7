"""Structure of the fit on tiny cubes of every shape (few draws; one compiled graph per model)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning, HierarchicalFit

pytestmark = pytest.mark.filterwarnings("ignore::evaluq.hierarchical.ConvergenceWarning")
FEW = {"draws": 100, "tune": 100, "chains": 2, "retry": False}  # short: would retry


def _cube(**kw: object) -> xr.Dataset:
    args = {"n_models": 3, "n_languages": 5, "n_seeds": 3, "n_boot": 20, "sigma_language": 1.0,
            "model_means": [0.0, 0.5, 2.0], "rng": 0, **kw}
    return eq.simulate_cube(**args)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cube() -> xr.Dataset:
    return _cube()


@pytest.fixture(scope="module")
def fit(cube: xr.Dataset) -> HierarchicalFit:
    return eq.fit_hierarchical(cube, rng=0, **FEW)


def test_idata_has_the_cube_dims(fit: HierarchicalFit, cube: xr.Dataset) -> None:
    assert {"posterior", "sample_stats", "observed_data", "constant_data"} <= set(fit.idata)
    post = fit.posterior
    assert dict(post["theta"].sizes) == {"chain": 2, "draw": 100, "model": 3, "language": 5}
    assert list(post["model"].values) == list(cube["model"].values)
    assert list(post["language"].values) == list(cube["language"].values)
    for name in ("mu", "benchmark_mean", "sigma_between", "tau_m", "sigma_seed"):
        assert post[name].dims == ("chain", "draw", "model")
    assert post["tau_lang"].dims == ("chain", "draw")
    assert fit.sampler == ("nutpie" if eq.hierarchical.nutpie_available() else "pymc")


def test_derived_quantities_are_consistent(fit: HierarchicalFit) -> None:
    post = fit.posterior
    np.testing.assert_allclose(post["sigma_between"],
                               np.sqrt(post["tau_lang"] ** 2 + post["tau_m"] ** 2))
    np.testing.assert_allclose(post["benchmark_mean"], post["theta"].mean("language"))
    np.testing.assert_allclose(post["mu"].mean("model"), post["alpha"], atol=1e-10)


def test_variance_components_names_and_dims(fit: HierarchicalFit) -> None:
    vc = fit.variance_components()
    freq = eq.variance_components(fit.cube)
    assert {"sigma_between", "sigma_seed", "sigma_boot"} <= set(vc) & set(freq)
    assert vc["sigma_boot"].dims == ("chain", "draw", "model", "language")
    assert np.isfinite(vc["sigma_boot"]).all()
    # the same draws on every call (their own seed)
    xr.testing.assert_equal(vc, fit.variance_components())


def test_posterior_differences_go_through_the_shared_kernel(fit: HierarchicalFit) -> None:
    for level, var in (("population", "mu"), ("benchmark", "benchmark_mean")):
        got = fit.pairwise_differences(level, rope=0.3, confidence_level=0.9)
        ref = eq.pairwise_differences(fit.posterior[var], sample_dims=("chain", "draw"),
                                      confidence_level=0.9)
        xr.testing.assert_allclose(got[list(ref.data_vars)].drop_attrs(), ref.drop_attrs())
        draws = fit.posterior[var].stack(s=("chain", "draw")).values
        diff = draws[0] - draws[2]
        assert float(got.p_below.sel(model="m0", model_b="m2")) == np.mean(diff < -0.3)
        assert float(got.p_rope.sel(model="m0", model_b="m2")) == np.mean(np.abs(diff) <= 0.3)
        total = got.p_below + got.p_rope + got.p_above
        np.testing.assert_allclose(total, 1.0)
        ranks = fit.rank_probabilities(level)
        ref_ranks = eq.rank_distribution(fit.posterior[var], sample_dims=("chain", "draw"))
        xr.testing.assert_allclose(ranks.drop_attrs(), ref_ranks.drop_attrs())


def test_diagnostics_table(fit: HierarchicalFit) -> None:
    table = fit.diagnostics()
    assert list(table.columns) == ["r_hat", "ess_bulk", "ess_tail", "mcse_mean"]
    assert ("tau_lang", "") in table.index
    assert ("mu", "m2") in table.index
    assert table.attrs["divergences"] >= 0
    assert len(table.attrs["bfmi"]) == 2


def test_few_draws_warn_with_advice(cube: xr.Dataset) -> None:
    with pytest.warns(ConvergenceWarning, match="increase draws"):
        eq.fit_hierarchical(cube, rng=1, draws=30, tune=100)


def test_save_load_round_trip_and_hash_guard(fit: HierarchicalFit, cube: xr.Dataset,
                                             tmp_path: pd.DataFrame) -> None:
    path = tmp_path / "fit.nc"
    fit.save(path)
    loaded = eq.load_fit(path, cube)
    xr.testing.assert_allclose(loaded.posterior.drop_attrs(), fit.posterior.drop_attrs())
    assert loaded.config == fit.config
    assert loaded.sampler == fit.sampler
    xr.testing.assert_equal(loaded.variance_components(), fit.variance_components())
    with pytest.raises(ValueError, match="`cube` is not the cube this fit was made from"):
        eq.load_fit(path, _cube(rng=5))
    alone = eq.load_fit(path)                    # from the statistics saved with the fit
    for name in ("ybar", "v_fixed", "vbar", "boot_dof", "seed_ss", "observed"):
        np.testing.assert_array_equal(getattr(alone.data, name), getattr(fit.data, name))
    assert alone.data.digest == fit.data.digest
    xr.testing.assert_equal(alone.variance_components(), fit.variance_components())
    xr.testing.assert_allclose(alone.pairwise_differences(), fit.pairwise_differences())
    with pytest.raises(ValueError, match="compare_frequentist needs the cube"):
        alone.compare_frequentist()


def test_same_rng_same_fit(cube: xr.Dataset, fit: HierarchicalFit) -> None:
    again = eq.fit_hierarchical(cube, rng=0, **FEW)
    xr.testing.assert_equal(again.posterior.drop_attrs(), fit.posterior.drop_attrs())


def test_repr_and_html(fit: HierarchicalFit) -> None:
    text = repr(fit)
    assert text.startswith("HierarchicalFit(model='crossed'")
    assert "mu_mean" in text
    assert "<table" in fit._repr_html_()


@pytest.mark.parametrize(
    ("cube_kw", "unidentified"),
    [({"n_boot": None}, "sigma_boot"), ({"n_seeds": 1}, "sigma_seed")],
)
def test_cube_shapes_fit_and_report_what_is_not_identified(cube_kw: dict[str, object],
                                                           unidentified: str) -> None:
    fit = eq.fit_hierarchical(_cube(**cube_kw), rng=0, **FEW)
    vc = fit.variance_components()
    assert np.isnan(vc[unidentified]).all()
    assert f"{unidentified} is not identified" in vc.attrs[unidentified]
    assert f"{unidentified} is not identified" in repr(fit)
    other = "sigma_seed" if unidentified == "sigma_boot" else "sigma_boot"
    assert np.isfinite(vc[other]).all()


def test_summary_cube_and_missing_cells() -> None:
    cube = _cube()
    vc = eq.variance_components(cube)
    table = pd.DataFrame({"model": np.repeat(cube.model.values, 5),
                          "language": np.tile(cube.language.values, 3),
                          "mean": cube.score.mean("seed").values.ravel(),
                          "sd_seed": vc.sigma_seed.values.ravel(),
                          "sd_boot": vc.sigma_boot.values.ravel()}).drop(index=[4])
    summary = eq.from_summary(table, n_seeds=3)
    fit = eq.fit_hierarchical(summary, rng=0, **FEW)
    assert not fit.data.observed[0, 4]
    assert np.isnan(fit.variance_components()["sigma_boot"].sel(model="m0", language="l04")).all()
    assert np.isfinite(fit.posterior["theta"]).all()      # drawn for the missing cell too


def test_one_model_cube_fits_and_says_what_is_not_separable() -> None:
    fit = eq.fit_hierarchical(eq.simulate_cube(n_models=1, n_languages=5, rng=0), rng=0, **FEW)
    assert "not separately identified" in fit.data.reasons["tau_lang"]
    assert fit.posterior["mu"].sizes["model"] == 1
    np.testing.assert_allclose(fit.posterior["mu"].isel(model=0), fit.posterior["alpha"])


def test_independent_model_has_no_language_effect(cube: xr.Dataset) -> None:
    fit = eq.fit_hierarchical(cube, model="independent", rng=0, **FEW)
    post = fit.posterior
    assert "tau_lang" not in post
    assert "a" not in post
    np.testing.assert_allclose(post["sigma_between"], post["tau_m"])


def test_compare_frequentist_table(fit: HierarchicalFit) -> None:
    table = fit.compare_frequentist(rng=0)
    assert set(table["quantity"]) == {"sigma_between", "sigma_seed", "sigma_boot", "mean",
                                      "difference", "p_best"}
    assert len(table[table.quantity == "difference"]) == 3
    assert (table.loc[~table.agree, "driver"] != "").all()
    assert (table.loc[table.agree, "driver"] == "").all()
    agg = eq.aggregate(eq.resample(fit.cube, n_resamples=4000, replication="parametric",
                                   languages="fixed", rng=np.random.default_rng(0)))
    means = table[table.quantity == "mean"]
    np.testing.assert_allclose(means["frequentist"], agg["observed"].values)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"model": "nested"}, ValueError, "`model` must be one of"),
     ({"draws": 0}, ValueError, "`draws` must be >= 1"),
     ({"tune": 1.5}, TypeError, "`tune` must be an integer"),
     ({"chains": 0}, ValueError, "`chains` must be >= 1"),
     ({"sampler": "stan"}, ValueError, "`sampler` must be one of"),
     ({"progressbar": 1}, TypeError, "`progressbar` must be True or False"),
     ({"rng": -1}, ValueError, "`rng` must be a non-negative"),
     ({"priors": {"bad": 1.0}}, ValueError, "`priors` has an unknown key")],
)
def test_bad_arguments_are_named(cube: xr.Dataset, kwargs: dict[str, object],
                                 error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        eq.fit_hierarchical(cube, **kwargs)  # type: ignore[arg-type]


def test_bad_method_arguments_are_named(fit: HierarchicalFit) -> None:
    with pytest.raises(ValueError, match="`scope` must be one of"):
        fit.pairwise_differences("language")
    with pytest.raises(ValueError, match="`rope` must be a finite number >= 0"):
        fit.pairwise_differences(rope=-0.1)
    with pytest.raises(ValueError, match="`scope` must be one of"):
        fit.rank_probabilities("new")
    with pytest.raises(eq.CubeError):
        eq.fit_hierarchical(xr.Dataset())


@pytest.mark.slow
def test_pymc_sampler_gives_the_same_posterior_as_nutpie(cube: xr.Dataset,
                                                         fit: HierarchicalFit) -> None:
    other = eq.fit_hierarchical(cube, rng=0, sampler="pymc", draws=500, tune=500)
    assert other.sampler == "pymc"
    a, b = other.posterior["mu"], fit.posterior["mu"]
    sd = b.std(("chain", "draw"))
    np.testing.assert_array_less(np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw"))),
                                 sd)


def test_level_is_the_deprecated_name_of_scope(fit: HierarchicalFit) -> None:
    with pytest.warns(DeprecationWarning, match="`level` is deprecated; use `scope`"):
        old = fit.rank_probabilities(level="benchmark")
    xr.testing.assert_identical(old, fit.rank_probabilities(scope="benchmark"))
    with pytest.warns(DeprecationWarning, match="`level` is deprecated; use `scope`"):
        old_pairs = fit.pairwise_differences(level="benchmark")
    xr.testing.assert_identical(old_pairs, fit.pairwise_differences("benchmark"))
    with pytest.raises(TypeError, match="got both `level` and `scope`"):
        fit.rank_probabilities(level="benchmark", scope="benchmark")


def test_a_fit_without_posterior_is_not_fitted(fit: HierarchicalFit, tmp_path) -> None:
    bare = xr.DataTree.from_dict({"observed_data": fit.idata["observed_data"].to_dataset()})
    with pytest.raises(eq.errors.NotFittedError, match="`idata` has no posterior group"):
        HierarchicalFit(idata=bare, sampler="nutpie", config=fit.config, data=fit.data,
                        cube=None)
    bare.attrs = dict(fit.idata.attrs)
    bare.to_netcdf(tmp_path / "bare.nc")
    with pytest.raises(eq.errors.NotFittedError, match="holds no posterior"):
        eq.load_fit(tmp_path / "bare.nc")


def test_orientation_is_read_by_the_one_parser() -> None:
    """A saved fit's ``higher_is_better`` goes through ``_schema.orientation``, the rule every
    module uses (its cases are in tests/test_schema.py)."""
    from evaluq import _schema
    from evaluq.hierarchical import _data, _fit

    assert _fit.orientation is _schema.orientation
    assert _data.parse_orientation is _schema.parse_orientation


def test_a_saved_lower_is_better_fit_stays_lower_is_better(tmp_path) -> None:
    cube = _cube()
    cube.attrs["higher_is_better"] = 0
    fit = eq.fit_hierarchical(cube, rng=0, **FEW)
    fit.save(tmp_path / "fit.nc")
    assert eq.load_fit(tmp_path / "fit.nc").data.higher_is_better is False


def test_compare_frequentist_on_a_one_seed_cube_uses_the_replicates() -> None:
    cube = _cube(n_seeds=1)
    table = eq.fit_hierarchical(cube, rng=0, **FEW).compare_frequentist(rng=0)
    assert table.attrs["resampling"].startswith("the bootstrap replicates redrawn")
    assert table.attrs["posterior_scope"] == "benchmark"
    means = table[table.quantity == "mean"]
    assert (means.freq_upper > means.freq_lower).all()


def test_the_fit_records_how_the_test_set_errors_were_paired(fit: HierarchicalFit) -> None:
    """A simulated cube's replicates are drawn separately for each model and not marked:
    'auto' reads no correlation across models in them, resolves to independent, and the fit
    says so and that its posterior is then conservative."""
    assert fit.config["test_set_errors"] == "auto"
    assert fit.config["pairing"].startswith("independent: the cube does not say whether its "
                                            "bootstrap replicates are shared")
    assert fit.config["shared_bootstrap"] == {"source": "read from the replicates",
                                              "models": False, "seeds": False}
    assert fit.idata["observed_data"].attrs["pairing"] == fit.config["pairing"]
    text = repr(fit)
    assert "test_set_errors='independent'" in text
    assert "note: test-set errors taken as independent" in text
    assert "conservative" in fit._repr_html_()


def test_a_failing_fit_is_retried_once_with_more_draws_and_smaller_steps(
        cube: xr.Dataset) -> None:
    """30 draws per chain cannot reach 400 effective draws: the retry samples 60 at target
    acceptance 0.95, still fails and warns; the first run is recorded."""
    with pytest.warns(ConvergenceWarning, match="increase draws"):
        fit = eq.fit_hierarchical(cube, rng=1, draws=30, tune=100, chains=2)
    retried = fit.config["retried"]
    assert retried["draws"] == 30
    assert any("ESS" in text for text in retried["problems"])
    assert fit.posterior.sizes["draw"] == 60
    assert fit.config["draws"] == 60
    assert fit.config["target_accept"] == 0.95
    assert fit.config["seed"] != retried["seed"]
    assert "retried with target_accept=0.95 after" in repr(fit)
    with pytest.warns(ConvergenceWarning):
        once = eq.fit_hierarchical(cube, rng=1, draws=30, tune=100, chains=2, retry=False)
    assert "retried" not in once.config
    assert once.posterior.sizes["draw"] == 30
    assert once.config["seed"] == retried["seed"]          # the same first run
    with pytest.raises(TypeError, match="`retry` must be True or False"):
        eq.fit_hierarchical(cube, retry="yes")  # type: ignore[arg-type]


def test_a_clean_fit_is_not_retried(cube: xr.Dataset) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = eq.fit_hierarchical(cube, rng=0)
    assert "retried" not in fit.config
    assert fit.posterior.sizes["draw"] == 1000
