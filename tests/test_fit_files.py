"""Saved fits are read back by their own loader; another fit's loader names the right one
(issue 35: load_item_fit on a HierarchicalFit file raised KeyError)."""

from __future__ import annotations

import warnings

import pytest

import evaluq as eq
from evaluq.errors import ConvergenceWarning


@pytest.fixture(scope="module")
def hierarchical_file(tmp_path_factory):
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # a short run: not the point
        fit = eq.fit_hierarchical(cube, draws=200, tune=200, rng=0)
    path = tmp_path_factory.mktemp("fits") / "hierarchical.nc"
    fit.save(path)
    return fit, path


def test_the_file_names_its_class_and_loader(hierarchical_file):
    fit, path = hierarchical_file
    loaded = eq.load_fit(path)
    assert type(loaded).__name__ == "HierarchicalFit"
    assert loaded.idata.attrs["evaluq_fit"] == "HierarchicalFit"
    assert loaded.idata.attrs["evaluq_fit_loader"] == "evaluq.load_fit"
    assert "evaluq_fit" not in fit.idata.attrs          # saving does not change the fit


def test_another_fits_loader_names_the_right_one(hierarchical_file):
    _, path = hierarchical_file
    with pytest.raises(ValueError, match=r"written by HierarchicalFit.save, not by "
                                         r"ItemFit.save; read it with evaluq.load_fit"):
        eq.load_item_fit(path)


def test_a_file_from_before_the_class_attribute_is_still_refused_clearly(hierarchical_file,
                                                                       tmp_path):
    _, path = hierarchical_file
    tree = eq.load_fit(path).idata.copy(deep=False)
    tree.attrs = {k: v for k, v in tree.attrs.items() if not k.startswith("evaluq_fit")}
    old = tmp_path / "old.nc"
    tree.to_netcdf(old)
    with pytest.raises(ValueError, match="not a file written by ItemFit.save.*load_fit"):
        eq.load_item_fit(old)
