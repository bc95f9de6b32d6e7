"""The report says ``scope`` for population / benchmark (``level`` is a confidence level only):
``_posterior_section(level=...)`` still works, with a DeprecationWarning (issue 23)."""

from __future__ import annotations

import pandas as pd
import pytest

import evaluq as eq
from evaluq.reporting import sections


class _Fit:
    """The hierarchical fit's contract, the scope passed by position."""

    def __init__(self) -> None:
        cube = eq.simulate_cube(n_models=3, n_boot=5, rng=0)
        self.aggregated = eq.aggregate(eq.resample(cube, n_resamples=50, rng=0))
        self.scopes: list[str] = []

    def pairwise_differences(self, scope: str = "population", rope=None):
        self.scopes.append(scope)
        return eq.pairwise_differences(self.aggregated)

    def compare_frequentist(self) -> pd.DataFrame:
        return pd.DataFrame({"posterior": [0.0]})

    def diagnostics(self) -> pd.DataFrame:
        return pd.DataFrame({"r_hat": [1.0]})


def test_posterior_section_takes_scope():
    fit = _Fit()
    section = sections._posterior_section(fit, scope="population")
    assert fit.scopes == ["population"]
    assert (section.id, section.figures) == ("posterior", 1)


def test_level_is_the_deprecated_name_of_scope():
    fit = _Fit()
    with pytest.warns(DeprecationWarning, match=r"`level` is deprecated; use `scope`"):
        sections._posterior_section(fit, level="benchmark")
    assert fit.scopes == ["benchmark"]
    with pytest.raises(TypeError, match="got both `level` and `scope`"):
        sections._posterior_section(fit, level="benchmark", scope="population")
