"""Bad-input cases for rliable's analyses, ASO and their figures (issue 19)."""

from __future__ import annotations

import numpy as np
import xarray as xr

import evaluq as eq

from .corpus import Case, cube

NAN = float("nan")


def _scores(nan_at: tuple[int, int, int] | None = None, runs: int = 4) -> xr.Dataset:
    x = np.random.default_rng(0).normal(0.8, 0.2, size=(3, 4, runs))
    if nan_at is not None:
        x[nan_at] = NAN
    return eq.from_arrays(x, models=["a", "b", "c"], outlier_threshold=None)


def _missing_task() -> xr.Dataset:
    x = np.random.default_rng(0).normal(0.8, 0.2, size=(3, 4, 4))
    x[1, 2] = NAN
    return eq.from_arrays(x, models=["a", "b", "c"], outlier_threshold=None)


def field_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    plots = eq.plots
    for name in ("interval_estimates", "probability_of_improvement"):
        fn = getattr(eq, name)
        add(Case(f"evaluq.{name}", "NaN run", lambda fn=fn: fn(_scores((0, 1, 2))),
                 "NaN run"))
        add(Case(f"evaluq.{name}", "a model missing a task",
                 lambda fn=fn: fn(_missing_task()), "has no score on language"))
        add(Case(f"evaluq.{name}", "one run", lambda fn=fn: fn(_scores(runs=1),
                                                                 n_resamples=20, rng=0)))
        add(Case(f"evaluq.{name}", "n_resamples 0", lambda fn=fn: fn(_scores(), n_resamples=0),
                 "`n_resamples`"))
        add(Case(f"evaluq.{name}", "not a cube", lambda fn=fn: fn(np.ones((2, 3, 4))),
                 "`cube`"))
    add(Case("evaluq.interval_estimates", "unknown aggregate",
             lambda: eq.interval_estimates(cube(), aggregates=("max",)), "`aggregates`"))
    add(Case("evaluq.interval_estimates", "infinite gamma",
             lambda: eq.interval_estimates(cube(), gamma=np.inf), "`gamma`"))
    add(Case("evaluq.probability_of_improvement", "every score tied",
             lambda: eq.probability_of_improvement(eq.from_arrays(np.ones((2, 3, 4))),
                                                   n_resamples=20, rng=0)))
    add(Case("evaluq.performance_profile", "NaN threshold",
             lambda: eq.performance_profile(_scores(), [0.5, NAN]), "`thresholds`"))
    add(Case("evaluq.performance_profile", "unknown kind",
             lambda: eq.performance_profile(_scores(), [0.5], kind="task"), "`kind`"))
    add(Case("evaluq.performance_profile", "a model missing a task",
             lambda: eq.performance_profile(_missing_task(), [0.5]), "has no score"))
    add(Case("evaluq.aso", "one score", lambda: eq.aso([1.0], [1.0, 2.0]), "`scores_a`"))
    add(Case("evaluq.aso", "NaN score", lambda: eq.aso([1.0, 2.0], [NAN, 2.0]), "`scores_b`"))
    add(Case("evaluq.aso", "2-D scores", lambda: eq.aso(np.ones((2, 2)), [1.0, 2.0]),
             "`scores_a`"))
    add(Case("evaluq.aso", "dt 0", lambda: eq.aso([1.0, 2.0], [2.0, 3.0], dt=0.0), "`dt`"))
    add(Case("evaluq.aso", "ties", lambda: eq.aso([1.0, 1.0, 2.0], [1.0, 2.0, 2.0], rng=0)))
    add(Case("evaluq.ASOResult", "confidence_interval level 1",
             lambda: eq.aso([1.0, 2.0, 3.0], [0.0, 1.0, 1.5], rng=0).confidence_interval(1.0),
             "`confidence_level`"))
    add(Case("evaluq.multi_aso", "NaN run", lambda: eq.multi_aso(_scores((0, 1, 2))),
             "NaN score"))
    add(Case("evaluq.multi_aso", "one seed", lambda: eq.multi_aso(_scores(runs=1)),
             "at least 2 models and 2 seeds"))
    add(Case("evaluq.multi_aso", "unknown language",
             lambda: eq.multi_aso(_scores(), language="xx"), "`language`"))
    add(Case("evaluq.multi_aso", "use_bonferroni not bool",
             lambda: eq.multi_aso(_scores(), use_bonferroni="yes"), "`use_bonferroni`"))
    add(Case("evaluq.multi_aso", "a model missing a task, one language selected",
             lambda: eq.multi_aso(_missing_task(), language=0, rng=0)))
    add(Case("evaluq.plots.interval_estimates_panel", "a cube instead of estimates",
             lambda: plots.interval_estimates_panel(cube()), "`estimates`"))
    add(Case("evaluq.plots.performance_profile_plot", "a cube instead of a profile",
             lambda: plots.performance_profile_plot(cube()), "`profile`"))
    add(Case("evaluq.plots.probability_of_improvement_plot", "a cube instead of P(X > Y)",
             lambda: plots.probability_of_improvement_plot(cube()), "`poi`"))
    return c
