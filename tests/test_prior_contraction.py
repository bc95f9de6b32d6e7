"""A scale the data barely inform is named, with the scope that rests on its prior.

With a handful of items (``fit_items``' sigma_item) or of languages (the hierarchical model's
tau_lang and tau_m_scale), the posterior of a scale is mostly its prior. The fits' repr, their
``prior_contraction()`` and the report say so; with enough data they say nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
import xarray as xr

import evaluq as eq
from evaluq._fits import (
    HALF_NORMAL_SD,
    WEAK_CONTRACTION,
    contraction_table,
    weak_contraction_note,
)
from evaluq.item_model import simulate_items


def test_contraction_is_one_minus_the_variance_ratio():
    assert pytest.approx(st.halfnorm.std(), rel=1e-15) == HALF_NORMAL_SD
    gen = np.random.default_rng(0)
    post = xr.Dataset({
        "tau": (("chain", "draw"), gen.gamma(4.0, 0.1, (4, 300))),
        "sigma_seed": (("chain", "draw", "model"), gen.gamma(2.0, 0.5, (4, 300, 2))),
    }, coords={"model": ["a", "b"]})
    table = contraction_table(post, {"tau": ("tau_sigma", 2.0), "sigma_seed": ("seed", 0.5),
                                     "absent": ("absent_sigma", 1.0)})
    assert table.index.tolist() == [("tau", ""), ("sigma_seed", "a"), ("sigma_seed", "b")]
    prior_var = st.halfnorm(scale=2.0).var()
    expected = 1.0 - post["tau"].values.ravel().var(ddof=1) / prior_var
    assert table.loc[("tau", ""), "contraction"] == pytest.approx(expected, rel=1e-12)
    for m in "ab":
        draws = post["sigma_seed"].sel(model=m).values.ravel()
        assert table.loc[("sigma_seed", m), "posterior_sd"] == pytest.approx(draws.std(ddof=1))
    weak = table[table["contraction"] < WEAK_CONTRACTION]
    assert ("sigma_seed", "a") in weak.index
    assert ("tau", "") not in weak.index
    note = weak_contraction_note(table, "population", "languages")
    assert "sigma_seed (a)" in note
    assert "tau " not in note
    assert "the population intervals rest on those priors; more languages" in note
    assert "(prior HalfNormal(seed = 0.5))" in note
    assert note.endswith("or a considered prior scale (seed), would change them")
    empty = contraction_table(post, {})
    assert empty.empty
    assert list(empty.columns) == ["prior_key", "prior_sigma", "prior_sd", "posterior_sd",
                                   "contraction"]
    assert weak_contraction_note(empty, "population", "languages") == ""


def _item_fit(n_items: int):
    table = simulate_items(n_models=4, n_items=n_items, n_epochs=1, sigma_item=1.5,
                           model_sd=0.5, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eq.EvaluqWarning)     # convergence of tiny fits
        return eq.fit_items(table, model="model", item="item", score="score", draws=300,
                            tune=300, rng=0)


def test_an_item_fit_on_three_items_says_its_item_spread_is_the_priors():
    few, many = _item_fit(3), _item_fit(200)
    low = few.prior_contraction()
    assert float(low.loc[("sigma_item", ""), "contraction"]) < WEAK_CONTRACTION
    assert "the new_items intervals rest on those priors; more items" in repr(few)
    assert "sigma_item" in low.attrs["note"]
    high = many.prior_contraction()
    assert float(high.loc[("sigma_item", ""), "contraction"]) > 0.9
    assert high.attrs["note"] == ""
    assert "prior contraction" not in repr(many)


def _hierarchical_fit(n_languages: int):
    gen = np.random.default_rng(0)
    rows = [dict(model=m, language=f"l{lang}", seed=s,
                 score=0.7 + 0.02 * i + 0.03 * np.sin(lang) + gen.normal(0, 0.05))
            for i, m in enumerate("abcd") for lang in range(n_languages) for s in range(3)]
    cube = eq.from_long(pd.DataFrame(rows), model="model", language="language", seed="seed",
                        score="score")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eq.EvaluqWarning)
        return eq.fit_hierarchical(cube, rng=0, draws=300, tune=300)


def test_the_hierarchical_posterior_section_names_a_scale_few_languages_leave_to_the_prior():
    from evaluq.reporting.sections import _posterior_section

    fit = _hierarchical_fit(3)
    table = fit.prior_contraction()
    assert set(table.index.get_level_values("quantity")) == {"tau_lang", "tau_m_scale"}
    note = table.attrs["note"]
    assert "the population intervals rest on those priors; more languages" in note
    assert note in repr(fit)
    assert "the data barely move the prior of some scales" in _posterior_section(fit).body
