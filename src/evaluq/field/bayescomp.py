r"""Bayesian tests of two models with a region of practical equivalence, as baycomp does them.

- :func:`bayesian_signed_rank`: Benavoli et al.'s (2014, 2017) Bayesian Wilcoxon signed-rank
  test over languages (data sets), the scores being seed means: baycomp's ``SignedRankTest``;
- :func:`correlated_t_test`: the Bayesian correlated t-test on the scores of k-fold cross
  validation (Corani & Benavoli 2015), with Nadeau and Bengio's correction: baycomp's
  ``CorrelatedTTest``;
- :func:`hierarchical_t_test`: baycomp's ``HierarchicalTest`` (Corani et al. 2017) over data
  sets evaluated by cross validation, the same model in PyMC instead of Stan (PyMC imported
  inside the function). evaluq's own hierarchical model (:func:`evaluq.fit_hierarchical` with
  a ROPE) answers a related question on the cube (see the guide "which comparison to use").

**One ROPE vocabulary, baycomp's names kept.** The result says ``p_below``, ``p_rope``,
``p_above`` as every fitted model's ``pairwise_differences(rope=...)`` does, of the difference
``model - model_b`` (evaluq's pairwise order): ``p_above`` is the posterior probability that
``model`` scores higher than ``model_b`` by more than the ROPE, ``p_below`` that ``model_b``
does, ``p_rope`` that they are practically equivalent. baycomp's tests take ``x`` (first
model, here ``model``) and ``y`` (second, ``model_b``) and work on ``y - x``, so baycomp's
``p_left`` (``y - x < -rope``) is ``p_above`` and its ``p_right`` is ``p_below``: both stay
available as aliases with baycomp's meaning (:attr:`BayesianComparison.p_left`,
:attr:`BayesianComparison.p_right`), and the ``region`` coordinate keeps baycomp's labels
(``left``, ``rope``, ``right``, in that order). "Scores higher" is literal: for a metric where
lower is better (an error rate) ``p_above`` is the probability that ``model`` is worse;
:attr:`BayesianComparison.p_model_better` reads the cube's ``higher_is_better`` for you.

"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from evaluq._dims import MODEL, MODEL_B, REGION, REGIONS, SAMPLE
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import percentile_interval
from evaluq._results import ResultBase
from evaluq._validation import (
    RNGLike,
    as_float_array,
    check_confidence_level,
    check_int,
    check_memory,
    check_orientation,
    check_real,
    check_rng,
)
from evaluq._warn import warn
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.field._blocks import block_scores

__all__ = ["BayesianComparison", "bayesian_signed_rank", "correlated_t_test",
           "hierarchical_t_test"]

SIGNED_RANK_MIN_BLOCKS = 6
"""Fewer languages warn in :func:`bayesian_signed_rank`: below 6 even the exact two-sided
Wilcoxon signed-rank test cannot reach p < 0.05 (its smallest p is 2 / 2^N)."""
_BLOCK = 10_000
"""Posterior samples evaluated at once by the signed-rank kernel (bounds the memory to
``_BLOCK x (n + 1)`` floats)."""


# --- kernels (numpy) ---------------------------------------------------------------------------


def _heaviside(a: np.ndarray, thresh: float) -> np.ndarray:
    """1 above ``thresh``, 1/2 at it, 0 below (baycomp's ``heaviside``)."""
    return (a > thresh).astype(float) + 0.5 * (a == thresh).astype(float)


def _signed_rank_samples(diff: np.ndarray, weights: np.ndarray, rope: float) -> np.ndarray:
    r"""Posterior samples of (left, rope, right) of the Bayesian signed-rank test.

    With :math:`z_0 = 0` the prior's pseudo-observation and :math:`z_1..z_n` the differences
    (``y - x``), a Dirichlet-process posterior draw puts weights :math:`w \sim
    \mathrm{Dir}(s, 1, \dots, 1)` on them, and

    .. math::
        \theta_{left} = \sum_{i,j} w_i w_j H(-z_i - z_j - 2r), \quad
        \theta_{right} = \sum_{i,j} w_i w_j H(z_i + z_j - 2r), \quad
        \theta_{rope} = 1 - \theta_{left} - \theta_{right}

    (H the Heaviside step with H(0) = 1/2): the posterior probability that the Walsh average
    of two differences lies left of, inside, or right of the ROPE ``[-r, r]``. With ``rope`` 0,
    :math:`\theta_{rope} = 0` and :math:`\theta_{left} = 1 - \theta_{right}`, as baycomp; but
    :math:`\theta_{left}` is summed as :math:`\theta_{right}` is, not taken as
    ``1 - right``: the two are then mirror images to the last bit (swapping the models swaps
    them exactly, and identical models give them equal), where baycomp's ``1 - right`` of a
    right of 0.5 up to rounding leaves the winner to the rounding (its left and right differ
    from these by about 1e-16).

    Parameters
    ----------
    diff : ndarray, shape (n,)
        ``y - x`` per data set.
    weights : ndarray, shape (n_samples, n + 1)
        Dirichlet weights, the pseudo-observation's first.
    rope : float

    Returns
    -------
    ndarray, shape (n_samples, 3)
    """
    z = np.concatenate(([0.0], np.asarray(diff, dtype=float)))
    sums = z[:, None] + z[None, :]
    above = _heaviside(sums, 2 * rope)
    below = _heaviside(-sums, 2 * rope)
    out = np.zeros((weights.shape[0], 3))
    for start in range(0, weights.shape[0], _BLOCK):     # blocks of samples, not one by one
        w = weights[start:start + _BLOCK]
        out[start:start + _BLOCK, 2] = np.sum((w @ above) * w, axis=1)
        out[start:start + _BLOCK, 0] = np.sum((w @ below) * w, axis=1)
    if rope > 0:
        out[:, 1] = -out[:, 0] - out[:, 2] + 1
    return out


def _winner_probabilities(samples: np.ndarray) -> np.ndarray:
    """baycomp's ``Posterior.probs``: the share of samples in which each region is the most
    probable (``argmax``), except that a tie is shared equally by the tied regions (baycomp
    gives it to the earlier region, ``left``: with rounding deciding the rest, two identical
    models without a ROPE came out "the first is better" with probability 0.75, in either
    order). Without ties, baycomp's numbers exactly."""
    top = samples == samples.max(axis=1, keepdims=True)
    return np.mean(top / top.sum(axis=1, keepdims=True), axis=0)


def _correlated_t_statistics(x: np.ndarray, y: np.ndarray, runs: int) -> tuple[float, float, int]:
    """baycomp's ``CorrelatedTTest.compute_statistics``: mean and Nadeau-Bengio-corrected
    variance of ``y - x``, and the degrees of freedom."""
    diff = y - x
    n = len(diff)
    nfolds = n / runs
    mean = np.mean(diff)
    var = np.var(diff, ddof=1)
    var *= 1 / n + 1 / (nfolds - 1)
    return float(mean), float(var), n - 1


def _t_probabilities(mean: float, var: float, df: int, rope: float) -> np.ndarray:
    """baycomp's single-data-set ``Posterior.probs`` as (left, rope, right); rope 0 gives
    p_rope = 0."""
    from scipy import stats

    scale = np.sqrt(var)
    if rope == 0:
        if var == 0:
            pr = float(mean > 0) + 0.5 * float(mean == 0)
        else:
            pr = 1 - stats.t.cdf(0, df, mean, scale)
        return np.array([1 - pr, 0.0, pr])
    if var == 0:
        pl, pr = float(mean < -rope), float(mean > rope)
    else:
        pl = stats.t.cdf(-rope, df, mean, scale)
        pr = 1 - stats.t.cdf(rope, df, mean, scale)
    return np.array([pl, 1 - pl - pr, pr])


# --- the result --------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class BayesianComparison(ResultBase):
    """A Bayesian comparison of ``model`` with ``model_b`` (baycomp's order).

    Attributes
    ----------
    probabilities : xarray.DataArray
        (region), baycomp's order and labels: ``left`` (:attr:`p_above`, baycomp's
        ``p_left``), ``rope`` (:attr:`p_rope`), ``right`` (:attr:`p_below`, baycomp's
        ``p_right``).
    distribution : xarray.DataArray
        Posterior samples, sample dim last: (region, sample) of the Dirichlet-process
        probabilities for the signed-rank test; (sample,) of the difference ``model_b - model``
        (baycomp's ``y - x``) for the correlated t-test.
    method : str
        ``"signed-rank"`` or ``"correlated-t"``.
    rope : float
    attrs : dict
        ``model``, ``model_b`` (the labels as the cube holds them, an integer label an
        integer, as the other pairwise results keep them in their coordinates; the given
        ``names`` for :func:`correlated_t_test`), ``higher_is_better``, the test's
        parameters (``prior``, ``runs``; the t posterior's ``mean``, ``var``, ``df``).
    """

    probabilities: xr.DataArray
    distribution: xr.DataArray
    method: str
    rope: float
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def p_below(self) -> float:
        """Probability that ``model - model_b`` is below ``-rope``: ``model_b`` scores higher
        than ``model`` by more than the ROPE (baycomp's ``p_right``)."""
        return float(self.probabilities.sel({REGION: "right"}))

    @property
    def p_rope(self) -> float:
        """Probability that the two are practically equivalent (0 when ``rope`` is 0)."""
        return float(self.probabilities.sel({REGION: "rope"}))

    @property
    def p_above(self) -> float:
        """Probability that ``model - model_b`` is above ``rope``: ``model`` scores higher
        than ``model_b`` by more than the ROPE (baycomp's ``p_left``)."""
        return float(self.probabilities.sel({REGION: "left"}))

    @property
    def p_left(self) -> float:
        """baycomp's name of :attr:`p_above` (``y - x < -rope`` with ``x`` = ``model``):
        ``model`` scores higher than ``model_b`` by more than the ROPE."""
        return self.p_above

    @property
    def p_right(self) -> float:
        """baycomp's name of :attr:`p_below`: ``model_b`` scores higher than ``model`` by
        more than the ROPE."""
        return self.p_below

    @property
    def p_model_better(self) -> float:
        """Probability that ``model`` is better (``p_above``, or ``p_below`` when lower is
        better)."""
        return self.p_above if self.attrs.get("higher_is_better", 1) else self.p_below

    @property
    def estimate(self) -> xr.DataArray:
        """The three probabilities (region)."""
        return self.probabilities

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """Equal-tailed credible interval of the posterior samples (per region for the
        signed-rank test; of the difference ``model_b - model`` for the t-test).

        Parameters
        ----------
        confidence_level : float, optional
            Default 0.95.
        """
        level = check_confidence_level(0.95 if confidence_level is None else confidence_level)
        bounds = percentile_interval(self.distribution.values, level, axis=-1)
        dims = self.distribution.dims[:-1]
        return interval_from_bounds(bounds, dims=dims,
                                    coords={d: self.distribution[d].values for d in dims},
                                    kind="percentile", confidence_level=level)

    def _named(self) -> dict[str, float]:
        """The three probabilities under their names, then baycomp's two aliases."""
        return {"p_below": self.p_below, "p_rope": self.p_rope, "p_above": self.p_above,
                "p_left": self.p_left, "p_right": self.p_right}

    def to_dataset(self) -> xr.Dataset:
        """``probability`` (region, baycomp's labels), the posterior ``samples``, and the
        scalars ``p_below``, ``p_rope``, ``p_above`` with baycomp's ``p_left`` (=
        ``p_above``) and ``p_right`` (= ``p_below``)."""
        scalars = {name: xr.DataArray(value) for name, value in self._named().items()}
        return xr.Dataset({"probability": self.probabilities, "samples": self.distribution,
                           **scalars},
                          attrs={**self.attrs, "method": self.method, "rope": self.rope})

    def to_dataframe(self) -> Any:
        """One row: ``model``, ``model_b``, ``p_below``, ``p_rope``, ``p_above``, baycomp's
        ``p_left`` (= ``p_above``) and ``p_right`` (= ``p_below``), ``rope``."""
        import pandas as pd

        return pd.DataFrame([{"model": self.attrs.get(MODEL), "model_b": self.attrs.get(MODEL_B),
                              **self._named(), "rope": self.rope}])

    def _fields(self) -> dict[str, Any]:
        return {"method": self.method, "model": self.attrs.get(MODEL),
                "model_b": self.attrs.get(MODEL_B), "rope": self.rope, "p_below": self.p_below,
                "p_rope": self.p_rope, "p_above": self.p_above}


def _probabilities(values: np.ndarray) -> xr.DataArray:
    return xr.DataArray(np.asarray(values, dtype=float), dims=(REGION,),
                        coords={REGION: list(REGIONS)}, name="probability")


def _simplex_comparison(samples: np.ndarray, method: str, rope: float, names: tuple[Any, Any],
                        higher_is_better: bool, extra: dict[str, Any]) -> BayesianComparison:
    """The result of a test whose posterior samples are points of the (left, rope, right)
    simplex (the signed-rank and hierarchical tests): P(each region wins) and the samples."""
    dist = xr.DataArray(samples.T, dims=(REGION, SAMPLE), coords={REGION: list(REGIONS)},
                        name="posterior")
    return BayesianComparison(
        probabilities=_probabilities(_winner_probabilities(samples)), distribution=dist,
        method=method, rope=rope,
        attrs={MODEL: names[0], MODEL_B: names[1],
               "higher_is_better": int(higher_is_better), **extra})


# --- public tests ------------------------------------------------------------------------------


def _check_pair(cube: xr.Dataset, model: Any, model_b: Any) -> xr.Dataset:
    """The validated cube reduced to the two models (checked to be two models of it)."""
    from evaluq.cube import validate

    cube = validate(cube)
    models = cube[MODEL].values.tolist()
    for name, value in (("model", model), ("model_b", model_b)):
        if value not in models:
            raise CubeError(f"`{name}` must be a model of the cube ({models}); got {value!r}")
    if model == model_b:
        raise ValueError(f"`model_b` must differ from `model`; got {model_b!r} for both")
    return cube.sel({MODEL: [model, model_b]})


def _pair_names(cube: xr.Dataset) -> tuple[Any, Any]:
    """The two models' labels as the cube holds them (Python scalars: an integer label stays
    an integer), for ``attrs["model"]`` / ``attrs["model_b"]``, as the other pairwise results
    keep the cube's labels in their ``model`` / ``model_b`` coordinates."""
    first, second = cube[MODEL].values.tolist()
    return first, second


def _pair_scores(cube: xr.Dataset, model: Any, model_b: Any
                 ) -> tuple[np.ndarray, np.ndarray, bool, tuple[Any, Any]]:
    """Seed means of the two models per language (other models' missing cells ignored), and
    the two labels as the cube holds them."""
    pair = _check_pair(cube, model, model_b)
    blocks = block_scores(pair, min_models=2, min_blocks=1)
    return blocks.scores[:, 0], blocks.scores[:, 1], blocks.higher_is_better, _pair_names(pair)


def _warn_few_blocks(n: int) -> None:
    """The signed-rank posterior over few languages: certain-looking, not informative."""
    if n >= SIGNED_RANK_MIN_BLOCKS:
        return
    warn(f"Bayesian signed-rank test over {n} language(s) (blocks): without a ROPE, "
         f"differences all of one sign give that side probability 1 whatever their number "
         f"(the prior's pseudo-observation never outweighs them), so p_above / p_below near "
         f"1 here is not certainty; the exact Wilcoxon signed-rank test cannot reach p < 0.05 "
         f"below {SIGNED_RANK_MIN_BLOCKS} languages (2/2^{n} = {2.0 ** (1 - n):.3g}). Use at "
         f"least {SIGNED_RANK_MIN_BLOCKS} languages", EvaluqWarning)


def bayesian_signed_rank(cube: xr.Dataset, model: Any, model_b: Any, *, rope: float = 0.0,
                         prior: float = 0.5, n_samples: int = 50_000,
                         rng: RNGLike = None) -> BayesianComparison:
    r"""Bayesian signed-rank test of ``model`` against ``model_b`` over the languages.

    baycomp's ``SignedRankTest`` (Benavoli et al. 2014): the differences of the seed means
    ``d_i = model_b - model`` on the N languages get a Dirichlet-process posterior whose base
    measure is a pseudo-observation at 0 of weight ``prior``; each posterior draw of the
    weights (:math:`\mathrm{Dir}(s, 1, \dots, 1)`) gives the probabilities that the Walsh
    average of two differences lies left of, inside or right of the ROPE
    (``_signed_rank_samples``). ``p_above`` / ``p_rope`` / ``p_below`` (baycomp's
    ``p_left`` / ``p_rope`` / ``p_right``) are, as baycomp's ``probs()``, the shares of draws
    in which each of the three is the largest.

    Parameters
    ----------
    cube : xarray.Dataset
        An evaluation cube; every language must have a score for both models (NaN runs are
        left out of a seed mean).
    model, model_b : label
        The two models; ``p_above`` (baycomp's ``p_left``) is the probability that
        ``model`` scores higher.
    rope : float
        Half-width of the region of practical equivalence, in the metric's units (>= 0).
    prior : float
        Weight of the pseudo-observation at 0 (> 0; baycomp's default 0.5).
    n_samples : int
        Posterior draws (Monte Carlo error of a probability p: sqrt(p (1 - p) / n_samples),
        at most 0.0022 for 50 000).
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    BayesianComparison
        ``p_below``, ``p_rope``, ``p_above`` (baycomp's ``p_right``, ``p_rope``,
        ``p_left``); ``distribution`` (region, sample) for
        :func:`evaluq.plots.bayesian_simplex`.

    Warns
    -----
    EvaluqWarning
        Fewer than 6 languages: without a ROPE, differences all of one sign give
        probability 1 to that side whatever their number (1 language included), and below 6
        even the exact Wilcoxon signed-rank test cannot reach p < 0.05.

    References
    ----------
    Benavoli, A., Corani, G., Mangili, F., Zaffalon, M. & Ruggeri, F. (2014). A Bayesian
    Wilcoxon signed-rank test based on the Dirichlet process. ICML. Benavoli, A., Corani, G.,
    Demšar, J. & Zaffalon, M. (2017). Time for a change: a tutorial for comparing multiple
    classifiers through Bayesian analysis. JMLR 18, 1-36.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=15, model_means=[0.0, 1.0],
    ...                         sigma_between=0.5, rng=0)
    >>> res = eq.bayesian_signed_rank(cube, "m1", "m0", rope=0.1, rng=0)
    >>> res.p_above > 0.99, res.p_left == res.p_above
    (True, True)
    """
    rope = check_real("rope", rope, low=0)
    prior = check_real("prior", prior, low=0, low_inclusive=False)
    n_samples = check_int("n_samples", n_samples, minimum=1)
    gen = check_rng(rng)
    x, y, hib, names = _pair_scores(cube, model, model_b)
    # the Dirichlet weights (n_samples, n + 1), the samples (n_samples, 3) and their argmax
    check_memory("n_samples", n_samples * (8 * (x.size + 1) + 8 * 3 + 8),
                 hint=" (baycomp's default is 50 000)")
    _warn_few_blocks(x.size)
    weights = gen.dirichlet(np.concatenate(([prior], np.ones(x.size))), n_samples)
    samples = _signed_rank_samples(y - x, weights, rope)
    return _simplex_comparison(samples, "signed-rank", rope, names, hib,
                               {"prior": prior, "n_samples": n_samples,
                                "n_blocks": int(x.size)})


def _fold_scores(name: str, values: Any) -> np.ndarray:
    arr = as_float_array(name, values.values if isinstance(values, xr.DataArray) else values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional (one score per fold); got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite; got {int((~np.isfinite(arr)).sum())} "
                         "NaN or infinite fold score(s)")
    return arr


def correlated_t_test(scores_a: Any, scores_b: Any, *, rope: float = 0.0, runs: int = 1,
                      n_samples: int = 50_000, rng: RNGLike = None,
                      higher_is_better: bool = True,
                      names: tuple[str, str] = ("a", "b")) -> BayesianComparison:
    r"""Bayesian correlated t-test of two models on the folds of (repeated) cross validation.

    baycomp's ``CorrelatedTTest`` (Corani & Benavoli 2015): with the n = k x runs fold
    differences :math:`d = b - a` (baycomp's ``y - x``), mean :math:`\bar d` and sample
    variance :math:`s^2`, the posterior of the mean difference is Student-t with n - 1
    degrees of freedom, location :math:`\bar d` and scale
    :math:`\sqrt{(1/n + \rho/(1-\rho)) s^2}`, :math:`\rho = 1/k` the correlation of folds
    sharing training data (Nadeau & Bengio's correction, :math:`\rho/(1-\rho) = 1/(k-1)`).
    The probabilities are closed form (Student-t CDF at :math:`\pm` ``rope``); the samples
    are only for plots.

    Parameters
    ----------
    scores_a, scores_b : array-like or xarray.DataArray, shape (n,)
        The two models' scores on the same folds, runs one after the other.
    rope : float
        Half-width of the ROPE (>= 0); 0 gives ``p_rope`` = 0.
    runs : int
        Repetitions of the cross validation; n must be a multiple, with at least 2 folds a run.
    n_samples : int
        Posterior samples stored for plotting.
    rng : int, Generator, SeedSequence or None
    higher_is_better : bool
        Orientation, only for :attr:`BayesianComparison.p_model_better`: True or False
        (a string such as ``"False"`` is refused).
    names : tuple of two str
        The two models' names (``attrs["model"]``, ``attrs["model_b"]``), for printing and
        plots.

    Returns
    -------
    BayesianComparison
        ``p_above`` (``a`` scores higher by more than ``rope``; baycomp's ``p_left``),
        ``p_rope``, ``p_below`` (baycomp's ``p_right``);
        ``distribution`` (sample) of the difference ``b - a``; ``attrs`` ``mean``, ``var``,
        ``df`` of the t posterior.

    References
    ----------
    Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine Learning
    52, 239-281. Corani, G. & Benavoli, A. (2015). A Bayesian approach for comparing
    cross-validated algorithms on multiple data sets. Machine Learning 100, 285-304.

    Examples
    --------
    >>> import evaluq as eq
    >>> a = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.78, 0.85, 0.81]
    >>> b = [0.79, 0.78, 0.80, 0.80, 0.80, 0.79, 0.78, 0.79, 0.81, 0.78]
    >>> res = eq.correlated_t_test(a, b, rope=0.01, rng=0)
    >>> round(res.p_above, 4), round(res.p_rope, 4), round(res.p_below, 4)
    (0.908, 0.0905, 0.0014)
    """
    rope = check_real("rope", rope, low=0)
    runs = check_int("runs", runs, minimum=1)
    n_samples = check_int("n_samples", n_samples, minimum=1)
    higher = check_orientation(higher_is_better)
    x, y = _fold_scores("scores_a", scores_a), _fold_scores("scores_b", scores_b)
    if x.size != y.size:
        raise ValueError(f"`scores_a` and `scores_b` must hold the same folds; got {x.size} "
                         f"and {y.size} scores")
    if x.size % runs or x.size // runs < 2:
        raise ValueError(f"`runs` must divide the {x.size} fold scores into runs of at least "
                         f"2 folds; got {runs}")
    mean, var, df = _correlated_t_statistics(x, y, runs)
    check_memory("n_samples", 16 * n_samples, hint=" (the samples are only for plots)")
    draws = np.full(n_samples, mean) if var == 0 else (
        mean + np.sqrt(var) * check_rng(rng).standard_t(df, n_samples))
    dist = xr.DataArray(draws, dims=(SAMPLE,), name="difference")
    return BayesianComparison(
        probabilities=_probabilities(_t_probabilities(mean, var, df, rope)), distribution=dist,
        method="correlated-t", rope=rope,
        attrs={MODEL: str(names[0]), MODEL_B: str(names[1]),
               "higher_is_better": int(higher), "runs": runs, "mean": mean,
               "var": var, "df": df, "n_samples": n_samples})





# --- baycomp's hierarchical test (PyMC in place of Stan) -----------------------------------------


def _hierarchical_data(diff: np.ndarray, rope: float, runs: int, gen: np.random.Generator,
                      upper_sigma: float = 1000.0) -> tuple[np.ndarray, float, dict[str, float]]:
    """baycomp's ``scaled_data`` and ``prepare_stan_data``: the differences (data sets x folds)
    and the ROPE divided by the mean within-data-set SD, a data set of constant differences
    replaced by symmetric uniform draws in (-rope, rope), and the bounds of the priors.

    Returns the scaled differences, the scaled ROPE and the constants (``rho``, ``delta_hi``,
    ``std_hi``, ``std0_hi``).
    """
    std_diff = float(np.mean(np.std(diff, axis=1)))
    rope, diff = rope / std_diff, diff / std_diff
    q, n = diff.shape
    half = n // 2
    for row in diff:                       # baycomp: "avoid numerical problems with zero variance"
        if np.var(row) == 0:
            row[:half] = gen.uniform(-rope, rope, half)
            row[half:] = -row[:half]
    std_within = float(np.mean(np.std(diff, axis=1)))
    std_among = float(np.std(np.mean(diff, axis=1))) if q > 1 else std_within
    return diff, rope, {"rho": 1 / (n / runs), "delta_hi": float(np.max(np.abs(diff))),
                        "std_hi": std_within * upper_sigma, "std0_hi": std_among * upper_sigma}


def _hierarchical_model(diff: np.ndarray, const: dict[str, float],
                        gamma_bounds: tuple[float, float, float, float]) -> Any:
    """baycomp's ``hierarchical-t-test.stan`` as a PyMC model (the per-data-set deltas
    non-centred, which leaves the posterior unchanged)."""
    import pymc as pm
    import pytensor.tensor as pt

    q = diff.shape[0]
    rho = const["rho"]
    lo_a, hi_a, lo_b, hi_b = gamma_bounds
    with pm.Model() as model:
        delta0 = pm.Uniform("delta0", -const["delta_hi"], const["delta_hi"])
        std0 = pm.Uniform("std0", 0.0, const["std0_hi"])
        gamma_alpha = pm.Uniform("gamma_alpha", lo_a, hi_a)
        gamma_beta = pm.Uniform("gamma_beta", lo_b, hi_b)
        nu = pm.Deterministic("nu", pm.Gamma("nu_minus_one", gamma_alpha, gamma_beta) + 1)
        z = pm.StudentT("z", nu=nu, mu=0.0, sigma=1.0, shape=q)
        delta = delta0 + std0 * z
        sigma = pm.Uniform("sigma", 0.0, const["std_hi"], shape=q)
        resid = pt.as_tensor_variable(diff) - delta[:, None]
        pm.Potential("loglik", pt.sum(_exchangeable_loglik(resid, sigma, rho, diff.shape[1])))
    return model


def _exchangeable_loglik(resid: Any, sigma: Any, rho: float, n: int) -> Any:
    r"""Log density of each row of ``resid`` under :math:`N(0, \sigma_i^2 M)`, with
    :math:`M = (1 - \rho) I + \rho \mathbf 1 \mathbf 1^\top` (the folds of one cross
    validation), term for term as baycomp's Stan program (its constant
    :math:`\log 6.283` included), with :math:`d^\top M^{-1} d = (\lVert d \rVert^2 -
    \rho (\sum d)^2 / (1 + (n-1)\rho)) / (1 - \rho)` and
    :math:`\det M = (1 + (n-1)\rho)(1-\rho)^{n-1}` in closed form. ``resid`` and ``sigma``
    are pytensor tensors (or arrays), ``n`` the number of folds (their last dim)."""
    import pytensor.tensor as pt

    log_det_m = np.log(1 + (n - 1) * rho) + (n - 1) * np.log(1 - rho)
    quad = (pt.sum(resid ** 2, axis=-1)
            - rho / (1 + (n - 1) * rho) * pt.sum(resid, axis=-1) ** 2) / (1 - rho)
    return (-0.5 * (2 * n * pt.log(sigma) + log_det_m) - 0.5 * n * np.log(6.283)
            - 0.5 * quad / sigma ** 2)


def _check_gamma_bounds(lower_alpha: float, upper_alpha: float, lower_beta: float,
                        upper_beta: float) -> tuple[float, float, float, float]:
    bounds = [check_real(name, value, low=0, low_inclusive=False) for name, value in
              (("lower_alpha", lower_alpha), ("upper_alpha", upper_alpha),
               ("lower_beta", lower_beta), ("upper_beta", upper_beta))]
    if bounds[0] >= bounds[1] or bounds[2] >= bounds[3]:
        raise ValueError(f"`lower_alpha` < `upper_alpha` and `lower_beta` < `upper_beta` are "
                         f"needed; got {bounds}")
    return bounds[0], bounds[1], bounds[2], bounds[3]


def _fold_table(cube: xr.Dataset, model: Any, model_b: Any
                ) -> tuple[np.ndarray, bool, tuple[Any, Any]]:
    """``model_b - model`` per (language, seed = fold), complete, and the two labels as the
    cube holds them."""
    from evaluq._dims import LANGUAGE, SCORE, SEED
    from evaluq.cube import higher_is_better

    cube = _check_pair(cube, model, model_b)
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED)
    diff = np.asarray(score.sel({MODEL: model_b}).values - score.sel({MODEL: model}).values,
                      dtype=float)
    if np.isnan(diff).any():
        raise CubeError(f"`cube` has {int(np.isnan(diff).sum())} NaN fold score(s) for "
                        f"{model!r} or {model_b!r}: the hierarchical test needs every fold of "
                        "every language")
    if diff.shape[1] < 2:
        raise CubeError(f"`cube` must hold at least 2 folds (seeds); got {diff.shape[1]}")
    if not np.std(diff, axis=1).any():
        raise CubeError(f"`model` {model!r} and `model_b` {model_b!r} differ by the same amount "
                        "on every fold of each language (identical models, or a constant "
                        "shift): no within-language variance, which the hierarchical test "
                        "scales the differences by, so it is undefined; the per-language "
                        "differences are exact, compare them directly")
    return diff, higher_is_better(cube), _pair_names(cube)


def hierarchical_t_test(cube: xr.Dataset, model: Any, model_b: Any, *, rope: float = 0.0,
                        runs: int = 1, draws: int = 2500, tune: int = 1000, chains: int = 4,
                        rng: RNGLike = None, lower_alpha: float = 1.0, upper_alpha: float = 2.0,
                        lower_beta: float = 0.01, upper_beta: float = 0.1,
                        upper_sigma: float = 1000.0) -> BayesianComparison:
    r"""baycomp's hierarchical test of two models over data sets evaluated by cross validation.

    Corani et al. (2017), baycomp's ``HierarchicalTest`` with PyMC in place of Stan. The
    cube's ``seed`` dim holds the folds of each language (data set): k folds x ``runs``
    repetitions. With :math:`x_{ij}` the difference ``model_b - model`` on fold j of data set
    i, scaled (with the ROPE) by the mean within-data-set SD:

    .. math::
        x_{i\cdot} \sim \mathrm{MVN}(\delta_i \mathbf 1, \sigma_i^2 M), \quad
        M = (1 - \rho) I + \rho \mathbf 1 \mathbf 1^\top, \quad \rho = 1 / k, \\
        \delta_i \sim t_\nu(\delta_0, \sigma_0), \quad \nu - 1 \sim \Gamma(a, b), \quad
        a \sim U(1, 2), \; b \sim U(0.01, 0.1),

    with uniform priors on :math:`\delta_0` (within the largest absolute difference),
    :math:`\sigma_0` and :math:`\sigma_i` (up to ``upper_sigma`` times the among- and
    within-data-set SDs).
    Each posterior draw gives the probabilities that the difference on a new data set,
    :math:`t_\nu(\delta_0, \sigma_0)`, lies left of, inside or right of the ROPE; ``p_above``
    (left), ``p_rope`` and ``p_below`` (right) are the shares of draws in which each is the
    largest (as baycomp's ``probs``).

    Parameters
    ----------
    cube : xarray.Dataset
        Languages = data sets, seeds = folds; complete for both models.
    model, model_b : label
        ``p_above`` (baycomp's ``p_left``) is the probability that ``model`` scores higher.
    rope : float
        Half-width of the ROPE in the metric's units (>= 0).
    runs : int
        Repetitions of the cross validation (the seeds are k x runs folds).
    draws, tune, chains : int
        NUTS settings (PyMC's sampler).
    rng : int, Generator, SeedSequence or None
    lower_alpha, upper_alpha, lower_beta, upper_beta, upper_sigma : float
        baycomp's prior bounds.

    Returns
    -------
    BayesianComparison
        ``method="hierarchical"``; ``distribution`` (region, sample) of the per-draw
        probabilities.

    References
    ----------
    Corani, G., Benavoli, A., Demšar, J., Mangili, F. & Zaffalon, M. (2017). Statistical
    comparison of classifiers through Bayesian hierarchical modelling. Machine Learning 106,
    1817-1837.

    Examples
    --------
    Eight data sets, 10-fold cross validation (the folds in the ``seed`` dim); sampling takes
    about a minute, so the doctest is skipped:

    >>> import numpy as np, evaluq as eq
    >>> gen = np.random.default_rng(0)
    >>> a = gen.normal(0.8, 0.02, (8, 10))
    >>> b = a + gen.normal(0.01, 0.01, (8, 10)) + gen.normal(0, 0.01, (8, 1))
    >>> cube = eq.from_arrays(np.stack([a, b]), models=["a", "b"])
    >>> res = eq.hierarchical_t_test(cube, "a", "b", rope=0.01, rng=0)  # doctest: +SKIP
    >>> round(res.p_below, 1)                                            # doctest: +SKIP
    0.5
    """
    from scipy import stats

    rope = check_real("rope", rope, low=0)
    runs = check_int("runs", runs, minimum=1)
    draws, tune = check_int("draws", draws, minimum=1), check_int("tune", tune, minimum=0)
    chains = check_int("chains", chains, minimum=1)
    gamma = _check_gamma_bounds(lower_alpha, upper_alpha, lower_beta, upper_beta)
    upper_sigma = check_real("upper_sigma", upper_sigma, low=0, low_inclusive=False)
    gen = check_rng(rng)
    diff, hib, names = _fold_table(cube, model, model_b)
    if diff.shape[1] % runs or diff.shape[1] // runs < 2:
        raise ValueError(f"`runs` must divide the {diff.shape[1]} folds into runs of at least 2 "
                         f"folds; got {runs}")
    # the trace: per draw and chain the data sets' deltas and sigmas and the scalars, plus the
    # (draw, 3) samples
    check_memory("draws", draws * chains * 8 * (2 * diff.shape[0] + 12),
                 hint=" (or `chains`; baycomp's default is 2500 draws)")
    scaled, srope, const = _hierarchical_data(diff.copy(), rope, runs, gen, upper_sigma)
    post = _sample_hierarchical(scaled, const, gamma, draws, tune, chains, gen)
    mu, std0, nu = (post[k] for k in ("delta0", "std0", "nu"))
    samples = np.empty((mu.size, 3))
    samples[:, 2] = 1 - stats.t.cdf(srope, nu, mu, std0)
    samples[:, 0] = stats.t.cdf(-srope, nu, mu, std0)
    samples[:, 1] = 1 - samples[:, 0] - samples[:, 2]
    return _simplex_comparison(samples, "hierarchical", rope, names, hib,
                               {"runs": runs, "draws": draws, "tune": tune, "chains": chains,
                                "n_blocks": int(diff.shape[0]),
                                "divergences": post["divergences"]})


def _sample_hierarchical(diff: np.ndarray, const: dict[str, float],
                         gamma: tuple[float, float, float, float], draws: int, tune: int,
                         chains: int, gen: np.random.Generator) -> dict[str, Any]:
    """NUTS draws of (delta0, std0, nu), chains x draws flattened, and the divergences."""
    import pymc as pm

    from evaluq._nutpie_cache import pymc_sampling

    with pymc_sampling(), _hierarchical_model(diff, const, gamma):
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1,
                          random_seed=int(gen.integers(2 ** 31)), nuts_sampler="pymc",
                          progressbar=False, compute_convergence_checks=False,
                          target_accept=0.95)
    post = idata["posterior"]
    out: dict[str, Any] = {k: np.asarray(post[k].values).reshape(-1)
                           for k in ("delta0", "std0", "nu")}
    out["divergences"] = int(np.asarray(idata["sample_stats"]["diverging"].values).sum())
    return out
