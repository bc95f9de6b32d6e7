r"""Almost Stochastic Order (ASO) of two models' score distributions, as deep-significance
(``deepsig``) computes it, with the bootstrap vectorised.

Scores of model A with quantile function :math:`F^{-1}` and of B with :math:`G^{-1}`
(empirical: :math:`F^{-1}(t) = a_{(\lceil n t \rceil)}`, the order statistics, index clipped
to 1..n). On the grid :math:`t = dt, 2dt, \dots < 1` the **violation ratio**

.. math:: \varepsilon_{W_2}(F, G) = \frac{\sum_{t \in V} (G^{-1}(t) - F^{-1}(t))^2\,dt}
          {\sum_t (G^{-1}(t) - F^{-1}(t))^2\,dt},
          \qquad V = \{t : F^{-1}(t) < G^{-1}(t)\},

is the share of the squared Wasserstein distance where A is *worse* than B (1/2 when the
two quantile functions are equal). The bootstrap redraws each model's scores with replacement
(deepsig samples :math:`F^{-1}(U)`, U uniform, which is the same thing), giving
:math:`\varepsilon^{(b)}`; with :math:`c = \sqrt{n_A n_B / (n_A + n_B)}` and
:math:`\hat\sigma = \mathrm{SD}_b\, c\,(\varepsilon^{(b)} - \varepsilon)` (ddof 0),

.. math:: \varepsilon_{\min} = \mathrm{clip}\!\left(\varepsilon - \frac{\hat\sigma}{c}\,
          \Phi^{-1}(1 - \text{confidence\_level}),\; 0,\; 1\right),

the upper one-sided confidence bound on the violation ratio (del Barrio et al. 2018; Dror
et al. 2019). Every step is deepsig's (``deepsig/aso.py``, version 1.2.8), including a quirk:
deepsig's numerator drops the first grid point (``diff[1:]``, commented "ignore t = 0",
though the grid starts at ``dt``), so its violation ratios of (A, B) and (B, A) do not sum
exactly to 1. evaluq keeps it, so that its violation ratios are deepsig's to the last digit.

Two models may have different numbers of scores (runs): :func:`aso` takes samples of any
sizes, as deepsig does, and :func:`multi_aso` compares each model's own runs (a cube with NaN
at a model's missing seeds), :math:`c` from the pair's two sizes.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import numpy as np
import xarray as xr
from scipy.stats import norm

from evaluq._deprecation import renamed_argument
from evaluq._dims import LANGUAGE, MODEL, MODEL_B, NAN_REASON, RESAMPLE, SCORE, SEED
from evaluq._intervals import interval_from_bounds
from evaluq._results import ResultBase
from evaluq._validation import (
    RNGLike,
    as_float_array,
    check_bool,
    check_confidence_level,
    check_int,
    check_memory,
    check_real,
    check_rng,
)
from evaluq._warn import warn
from evaluq.cube import higher_is_better
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.field.rliable import _check_runs_cube

N_BOOTSTRAP: Final = 1000
"""deepsig's default number of bootstrap iterations."""
DT: Final = 0.005
"""deepsig's default step of the grid over (0, 1)."""
SELF_REASON: Final = "a model against itself"


class ASOWarning(EvaluqWarning):
    """The two score distributions are identical: the violation ratio is set to 1/2."""


# --- kernels ------------------------------------------------------------------------------------

def _grid(dt: float) -> np.ndarray:
    """deepsig's integration grid ``np.arange(dt, 1, dt)``."""
    return np.arange(dt, 1, dt)


def _quantile_index(n: int, t: np.ndarray) -> np.ndarray:
    """Index into the sorted scores of deepsig's empirical quantile function at ``t``."""
    return np.clip(np.ceil(n * t).astype(np.int64) - 1, 0, n - 1)


def _unit_scale(f: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f`` and ``g`` divided by one power of two when their squared differences could
    overflow (scores beyond 2^500 in magnitude, e.g. near 1e300): the violation ratio is
    scale-free and a power of two is exact, so the ratio is unchanged; other scores are
    returned as they are (their numbers stay deepsig's to the last digit)."""
    top = max(float(np.max(np.abs(f), initial=0.0)), float(np.max(np.abs(g), initial=0.0)))
    if not top > 2.0 ** 500:
        return f, g
    scale = np.ldexp(1.0, -int(np.frexp(top)[1]))
    return f * scale, g * scale


def _violation_ratio(f: np.ndarray, g: np.ndarray, dt: float,
                     scale: bool = True) -> np.ndarray:
    """deepsig's ``compute_violation_ratio`` on quantile values ``f``, ``g`` (..., grid);
    1/2 where the two are identical (zero Wasserstein distance). ``scale=False``: the
    caller has checked that no score needs :func:`_unit_scale` (it scans every value)."""
    if scale:
        f, g = _unit_scale(f, g)
    diff = g - f
    squared_wasserstein = np.sum(diff ** 2 * dt, axis=-1)
    diff = np.where(f >= g, 0.0, diff)
    violation = np.sum(diff[..., 1:] ** 2 * dt, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(squared_wasserstein == 0, 0.5, violation / squared_wasserstein)


def _bootstrap_quantiles(scores: np.ndarray, t: np.ndarray, n_boot: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Quantile functions of ``n_boot`` resamples of ``scores`` (..., n) on the grid:
    (..., n_boot, grid); leading dims (e.g. simulated data sets) are resampled independently."""
    n = scores.shape[-1]
    idx = rng.integers(0, n, size=(*scores.shape[:-1], n_boot, n))
    drawn = np.sort(np.take_along_axis(scores[..., None, :], idx, axis=-1), axis=-1)
    return drawn[..., _quantile_index(n, t)]


def _eps_min_from(ratio: Any, boot: np.ndarray, n_a: int | np.ndarray, n_b: int | np.ndarray,
                 level: float) -> tuple[np.ndarray, np.ndarray]:
    """deepsig's final step: (eps_min, sigma_hat) from the violation ratio and its
    bootstrap values (bootstrap on the last axis); the numbers of scores ``n_a``, ``n_b``
    are scalars or arrays over the leading dims of ``ratio`` (one per pair)."""
    const = np.sqrt(np.multiply(n_a, n_b) / np.add(n_a, n_b))
    sigma_hat = np.std(np.asarray(const)[..., None] * (boot - np.asarray(ratio)[..., None]),
                       axis=-1)
    eps = np.clip(ratio - (1 / const) * sigma_hat * norm.ppf(1 - level), 0, 1)
    return eps, sigma_hat


def _bonferroni_level(level: float, n_comparisons: int) -> float:
    """Bonferroni's level ``1 - (1 - level) / n_comparisons``.

    deepsig (1.2.8) instead raises the level to ``level + (1 - level) / n_comparisons`` (=
    ``1 - (1 - level)(1 - 1 / n_comparisons)``), which equals Bonferroni's for two comparisons
    only and tends to ``level`` (no correction) as the comparisons grow.
    """
    return 1.0 - (1.0 - level) / n_comparisons


# --- the two-model test -------------------------------------------------------------------------

class ASOResult(ResultBase):
    """ASO of ``scores_a`` over ``scores_b`` (:func:`aso`).

    ``estimate`` is the violation ratio :math:`\\varepsilon_{W_2}`; :attr:`eps_min` its
    upper confidence bound (``float(result)`` gives it); ``distribution`` the bootstrap
    violation ratios (``resample`` last); ``confidence_interval(level)`` the one-sided
    interval ``[0, eps_min(level)]`` (``ci_kind`` ``"normal"``: the bound is the estimate
    plus a normal quantile times the bootstrap SE).

    Parameters
    ----------
    ratio
        The violation ratio of the observed scores.
    boot
        The bootstrap violation ratios.
    n_a, n_b
        The numbers of scores of A and B.
    level
        The confidence level of ``eps_min`` (Bonferroni-corrected where asked).
    dt
        The grid step.
    """

    def __init__(self, ratio: float, boot: np.ndarray, n_a: int, n_b: int, level: float,
                 dt: float) -> None:
        self.estimate = xr.DataArray(ratio, name="violation_ratio")
        self.distribution = xr.DataArray(boot, dims=(RESAMPLE,), name="violation_ratio")
        self.n_a, self.n_b, self.dt = n_a, n_b, dt
        self.confidence_level = level
        eps, sigma = _eps_min_from(ratio, boot, n_a, n_b, level)
        self.eps_min = float(eps)
        self.sigma_hat = float(sigma)

    def __float__(self) -> float:
        return self.eps_min

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """``[0, eps_min]`` at ``confidence_level``.

        Parameters
        ----------
        confidence_level
            Level of the bound (default: the level the result was built with).
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(
            confidence_level)
        eps, _ = _eps_min_from(float(self.estimate), self.distribution.values, self.n_a,
                              self.n_b, level)
        return interval_from_bounds(np.array([0.0, float(eps)]), dims=(), kind="normal",
                                    confidence_level=level)

    def to_dataset(self) -> xr.Dataset:
        """violation_ratio, eps_min, sigma_hat and the interval."""
        return xr.Dataset({"violation_ratio": self.estimate, "eps_min": self.eps_min,
                           "sigma_hat": self.sigma_hat, "ci": self.confidence_interval()})

    def to_dataframe(self) -> Any:
        """One row: violation_ratio, eps_min, sigma_hat, lower, upper."""
        import pandas as pd

        ci = self.confidence_interval().values
        return pd.DataFrame({"violation_ratio": [float(self.estimate)],
                             "eps_min": [self.eps_min], "sigma_hat": [self.sigma_hat],
                             "lower": [ci[0]], "upper": [ci[1]]})

    def _fields(self) -> dict[str, Any]:
        return {"eps_min": self.eps_min, "violation_ratio": self.estimate,
                "confidence_level": self.confidence_level}


def _check_scores(name: str, scores: Any) -> np.ndarray:
    x = as_float_array(name, scores)
    if x.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one score per run); got shape {x.shape}")
    if x.size < 2:
        raise ValueError(f"`{name}` must hold at least 2 scores (ASO bootstraps their "
                         f"distribution); got {x.size}")
    if not np.isfinite(x).all():
        raise ValueError(f"`{name}` contains {int((~np.isfinite(x)).sum())} NaN or infinite "
                         f"value(s); remove them explicitly")
    return x


def _aso_args(confidence_level: Any, n_resamples: Any, dt: Any,
              rng: RNGLike) -> tuple[float, int, float, np.random.Generator]:
    dt = check_real("dt", dt, low=0.0, high=0.5, low_inclusive=False)
    # the grid alone, before any resample: 1/dt points, 5 arrays of them (8 bytes a point)
    check_memory("dt", 40 / dt, remedy="raise `dt`", hint=" (deepsig's default is 0.005)")
    return (check_confidence_level(confidence_level),
            check_int("n_resamples", n_resamples, minimum=2), dt, check_rng(rng))


def _check_bootstrap_memory(n_boot: int, n_scores: int, n_grid: int, n_models: int) -> None:
    """Refuse a bootstrap above the memory budget: per resample and model, the drawn indices,
    scores and their sort (3 x 8 bytes a score) and the quantiles on the grid (4 x 8 bytes
    a point)."""
    check_memory("n_resamples", n_boot * n_models * (24 * n_scores + 32 * n_grid),
                 hint=" (deepsig's default is 1000; the alias num_bootstrap_iterations is the "
                      "same argument)")


def _warn_identical(where: str) -> None:
    warn(f"{where}: the two score distributions are identical (zero Wasserstein "
         f"distance); the violation ratio is set to 1/2, as deepsig does",
         ASOWarning)


@renamed_argument("num_bootstrap_iterations", "n_resamples",
                  meaning="deep-significance's name of the bootstrap resamples")
def aso(scores_a: Any, scores_b: Any, *, confidence_level: float = 0.95,
        num_comparisons: int = 1, n_resamples: int = N_BOOTSTRAP,
        dt: float = DT, rng: RNGLike = None) -> ASOResult:
    r"""Almost Stochastic Order of model A over model B: :math:`\varepsilon_{\min}`.

    deepsig's ``aso(scores_a, scores_b)`` (see the module docstring for every formula) with
    the bootstrap as one array operation. ``scores_a`` are the scores of the model suspected
    better (higher is better), e.g. one score per training seed.

    **What** :math:`\varepsilon_{\min} < 0.5` **means.** :math:`\varepsilon_{\min}` is an
    upper confidence bound (at ``confidence_level``) on the violation ratio: the share of
    the squared quantile-function distance between the two score distributions where A is
    below B. :math:`\varepsilon_{\min} < 0.5` says that, at that confidence, A's score
    distribution is *more often above than below* B's in this sense (deepsig's rule for
    "A is better"); :math:`\varepsilon_{\min}` near 0 says A is almost stochastically
    dominant. It does **not** mean that A's mean is higher with significance ``1 - level``,
    that A beats B with probability :math:`1 - \varepsilon_{\min}`, or that the difference
    is large or matters; it says nothing about other tasks, seeds not run, or test sets;
    and :math:`\varepsilon_{\min} \ge 0.5` is not evidence that the models are equal. With
    few scores (5-10 seeds) the bootstrap SD is itself noisy, so the bound is rough: when A
    and B have the *same* distribution, the rule :math:`\varepsilon_{\min} < 0.5` declares
    A better in about 20 % of data sets of 10 vs 10 scores (17 % when the true violation
    ratio is 1/2 with crossing quantile functions), not 5 %; :math:`\varepsilon_{\min} < 0.2`,
    deepsig's recommendation, does so in about 3-4 % (``tests/test_field_calibration.py``,
    ``docs/calibration.md``).

    Parameters
    ----------
    scores_a, scores_b
        1-D scores (at least 2 each, finite; lengths may differ).
    confidence_level
        Level of the upper bound (deepsig's default 0.95).
    num_comparisons
        Number of comparisons for a Bonferroni correction: the level becomes
        ``1 - (1 - confidence_level) / num_comparisons`` (deepsig uses
        ``confidence_level + (1 - confidence_level) / num_comparisons``; see
        ``_bonferroni_level``).
    n_resamples
        Bootstrap resamples for :math:`\hat\sigma` (deepsig's default 1000; deepsig's
        name ``num_bootstrap_iterations`` is accepted as a deprecated alias).
    dt
        Step of the grid over (0, 1) (deepsig's default 0.005).
    rng
        Random state.

    Returns
    -------
    ASOResult
        ``.eps_min`` (also ``float(result)``), ``.estimate`` (the violation ratio),
        ``.sigma_hat``, ``.distribution`` (bootstrap violation ratios).

    Warns
    -----
    ASOWarning
        When the two score distributions are identical (violation ratio 1/2).

    References
    ----------
    Dror, Shlomov, Reichart (2019), Deep dominance, ACL; del Barrio, Cuesta-Albertos, Matrán
    (2018), An optimal transportation approach for assessing almost stochastic order;
    Ulmer, Hardmeier, Frellsen (2022), deep-significance.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(1.0, 0.3, 20), rng.normal(0.0, 0.3, 20)
    >>> res = eq.aso(a, b, rng=0)
    >>> res.eps_min < 0.5, float(res) == res.eps_min
    (True, True)
    """
    a, b = _check_scores("scores_a", scores_a), _check_scores("scores_b", scores_b)
    level, n_boot, dt, gen = _aso_args(confidence_level, n_resamples, dt, rng)
    k = check_int("num_comparisons", num_comparisons, minimum=1)
    if k > 1:
        level = _bonferroni_level(level, k)
    t = _grid(dt)
    _check_bootstrap_memory(n_boot, max(a.size, b.size), t.size, 2)
    f = np.sort(a)[_quantile_index(a.size, t)]
    g = np.sort(b)[_quantile_index(b.size, t)]
    ratio = float(_violation_ratio(f, g, dt))
    if np.array_equal(f, g):
        _warn_identical("aso")
    boot = _violation_ratio(_bootstrap_quantiles(a, t, n_boot, gen),
                           _bootstrap_quantiles(b, t, n_boot, gen), dt)
    return ASOResult(ratio, boot, a.size, b.size, level, dt)


# --- every pair of a cube -----------------------------------------------------------------------

def _model_scores(cube: Any, language: Hashable | None) -> xr.DataArray:
    """Each model's runs: seed scores averaged over languages, or of one language."""
    _check_runs_cube(cube)      # rliable's score dict (with the call), summary-only refused
    score = cube[SCORE]
    if set(score.dims) != {MODEL, LANGUAGE, SEED}:
        raise CubeError(f"`cube.score` must have dims (model, language, seed); got "
                        f"{score.dims}")
    if language is not None:
        if language not in score[LANGUAGE].values:
            raise ValueError(f"`language` must be one of the cube's languages "
                             f"{list(score[LANGUAGE].values)}; got {language!r}")
        score = score.sel({LANGUAGE: language})
    else:
        _check_runs(score.transpose(MODEL, LANGUAGE, SEED))
        score = score.mean(LANGUAGE)   # a run missing on every language stays NaN
    if not higher_is_better(cube):
        score = -score        # ASO reads higher as better: orient an error rate
    return score.transpose(MODEL, SEED)


def _check_runs(score: xr.DataArray) -> None:
    """A run (model, seed) must be on every language or on none (a model with fewer runs):
    its score is the mean over languages."""
    nan = np.isnan(score.values)                          # (model, language, seed)
    partial = nan & ~nan.all(axis=1, keepdims=True)
    if not partial.any():
        return
    k, _, s = np.argwhere(partial)[0]
    model, seed = score[MODEL].values.tolist()[k], score[SEED].values.tolist()[s]
    languages = score[LANGUAGE].values[partial[k, :, s]].tolist()
    raise CubeError(
        f"`cube` has {int(partial.sum())} NaN score(s) in runs present on other languages, "
        f"for example model {model!r}, seed {seed!r}, on language(s) {languages}: ASO's "
        f"per-run scores (the mean over languages) would mix different languages. Models may "
        f"have different numbers of runs (a run NaN on every language is left out), but each "
        f"run needs every language: drop the seed of that model, the language, or select one "
        f"`language`")


def _model_runs(score: xr.DataArray) -> list[np.ndarray]:
    """Each model's scores, its missing (NaN) runs left out: at least 2 runs each."""
    x = np.asarray(score.values, dtype=np.float64)
    runs = [row[~np.isnan(row)] for row in x]
    n_runs = [r.size for r in runs]
    if len(runs) < 2 or min(n_runs) < 2:
        few = (f"{n_runs[0] if runs else 0} seed(s)" if len(set(n_runs)) <= 1 else
               ", ".join(f"{m!r}: {n} run(s)" for m, n in zip(score[MODEL].values.tolist(),
                                                             n_runs, strict=True)))
        raise CubeError(f"`cube`: multi_aso needs at least 2 models and 2 seeds (runs) per "
                        f"model; got {len(runs)} model(s) and {few}")
    return runs


@renamed_argument("num_bootstrap_iterations", "n_resamples",
                  meaning="deep-significance's name of the bootstrap resamples")
def multi_aso(cube: xr.Dataset, *, language: Hashable | None = None,
              confidence_level: float = 0.95, use_bonferroni: bool = True,
              n_resamples: int = N_BOOTSTRAP, dt: float = DT,
              rng: RNGLike = None) -> xr.DataArray:
    r""":math:`\varepsilon_{\min}` of every model over every other (deepsig's ``multi_aso``).

    Each model's scores are its runs (``seed``): the seed's score averaged over languages,
    or on ``language`` if one is selected (negated for a cube with
    ``higher_is_better=False``, so "better" follows the cube). Entry (``model``, ``model_b``) is
    :math:`\varepsilon_{\min}` of ``model`` over ``model_b`` (below 0.5: ``model`` is
    better, see :func:`aso` for what this does and does not mean). As in deepsig, each
    unordered pair is bootstrapped once, its reverse entry uses :math:`1 - \varepsilon`
    with the same :math:`\hat\sigma`, and with ``use_bonferroni`` the level is corrected for
    the :math:`K(K-1)/2` pairs, here by Bonferroni's ``1 - (1 - level) / (K(K-1)/2)``
    (deepsig 1.2.8's adjustment is weaker for more than two pairs: see
    ``_bonferroni_level``). Each model's runs are resampled once per bootstrap iteration
    and shared by its pairs (each pair's two models independently, as deepsig).

    **Ragged runs.** Models may have different numbers of runs (NaN at a model's missing
    seeds): each model's scores are its own runs, as deepsig's ``multi_aso`` on a dict of
    lists of different lengths, and each pair's :math:`c = \sqrt{n_A n_B / (n_A + n_B)}`
    uses the two models' own sizes. Averaged over languages, a run must be on every language
    or on none (a run missing on only some raises); with ``language`` only that language's
    NaN runs are left out.

    Parameters
    ----------
    cube
        Evaluation cube (``score`` (model, language, seed)); at least 2 runs (non-NaN
        seeds) per model.
    language
        One language to compare on (default: the mean over languages of each seed).
    confidence_level, n_resamples, dt, rng
        As in :func:`aso` (``num_bootstrap_iterations`` is a deprecated alias of
        ``n_resamples``).
    use_bonferroni
        Correct the level for the number of pairs.

    Returns
    -------
    xarray.DataArray
        ``eps_min`` (model, model_b); the diagonal is NaN (``nan_reason``; deepsig puts 1).
        Attributes: ``confidence_level`` (as given), ``corrected_level`` (used) and
        ``n_runs`` (each model's number of runs).

    Raises
    ------
    CubeError
        Fewer than 2 models or a model with fewer than 2 runs; without ``language``, a run
        missing on only some languages (named).

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> score = np.random.default_rng(0).normal(size=(3, 4, 8)) + np.array([1, 0, 0])[:, None, None]
    >>> cube = eq.from_arrays(score, models=["a", "b", "c"])
    >>> eps = eq.multi_aso(cube, rng=0)
    >>> eps.dims, bool(eps.sel(model="a", model_b="b") < 0.5)
    (('model', 'model_b'), True)
    """
    level, n_boot, dt, gen = _aso_args(confidence_level, n_resamples, dt, rng)
    check_bool("use_bonferroni", use_bonferroni)
    score = _model_scores(cube, language)
    runs = _model_runs(score)
    n_models = len(runs)
    _check_bootstrap_memory(n_boot, max(r.size for r in runs), _grid(dt).size, n_models)
    used = _bonferroni_level(level, n_models * (n_models - 1) // 2) if use_bonferroni else level
    eps = _pair_eps(runs, n_boot, dt, used, gen)
    models = score[MODEL].values
    out = xr.DataArray(eps, dims=(MODEL, MODEL_B), coords={MODEL: models, MODEL_B: models},
                       name="eps_min")
    out.attrs = {"confidence_level": level, "corrected_level": used,
                 "use_bonferroni": use_bonferroni, "n_resamples": n_boot,
                 "dt": dt, NAN_REASON: SELF_REASON,
                 "n_runs": [int(r.size) for r in runs]}
    return out


def _pair_eps(runs: list[np.ndarray], n_boot: int, dt: float, level: float,
              gen: np.random.Generator) -> np.ndarray:
    """eps_min (model, model_b) of every ordered pair, each model on its own runs (pairs,
    not resamples, looped)."""
    n_models = len(runs)
    n = np.array([r.size for r in runs])
    t = _grid(dt)
    # (K, T), grid-major in memory as a sorted matrix indexed on its last axis is, so the
    # sums over the grid (hence the last digits) are those of a complete cube before
    observed = np.asfortranarray(np.stack([np.sort(r)[_quantile_index(r.size, t)]
                                           for r in runs]))
    boot = np.stack([_bootstrap_quantiles(r, t, n_boot, gen) for r in runs])    # (K, B, T)
    eps = np.full((n_models, n_models), np.nan)
    # one scan for _unit_scale, not one per model (at 200 models: 5.7 of 36 s)
    scale = _unit_scale(boot, observed)[0] is not boot
    if not scale:                       # the fused pass (field._aso_kernel): one read a value
        from evaluq.field._aso_kernel import violation_ratios

        boot = np.ascontiguousarray(boot)  # once: each model's slices are then views
    for i in range(n_models - 1):
        ratio = _violation_ratio(observed[i], observed[i + 1:], dt)          # (K - i - 1,)
        if np.any([np.array_equal(observed[i], o) for o in observed[i + 1:]]):
            _warn_identical("multi_aso")
        samples = (_violation_ratio(boot[i][None], boot[i + 1:], dt, scale) if scale
                   else violation_ratios(boot[i], boot[i + 1:], dt))       # (K - i - 1, B)
        ab, sigma = _eps_min_from(ratio, samples, n[i], n[i + 1:], level)
        const = np.sqrt(n[i] * n[i + 1:] / (n[i] + n[i + 1:]))
        ba = np.clip((1 - ratio) - (1 / const) * sigma * norm.ppf(1 - level), 0, 1)
        eps[i, i + 1:], eps[i + 1:, i] = ab, ba
    return eps


__all__ = ["ASOResult", "ASOWarning", "aso", "multi_aso"]
