"""Intervals from scarce observations: Student-t with n >= 2, ARF with one (formulas.md §5).

Gladkoff et al. (2022) ask how reliable a human quality score is when there are only one or
two of them. With n >= 2 scores the Student-t interval and the probability that the true mean
passes a threshold answer it (:func:`t_interval`, :func:`prob_above`). With a single score y and
a fixed prior guess g (for instance the vendor's historical average) the ARF interval of
Abbott & Rosenblatt (1962) and Furnival et al. (1989) still gives guaranteed coverage
(:func:`arf_interval`, :func:`arf_k`).

Everything is vectorised: ``x`` may be an ``items x raters`` array or a DataArray with named
dims, ``y`` and ``guess`` broadcast against each other, ``alpha`` may be an array.

The numpy kernels (``_t_*``, ``_arf_*``) work on ``axis=-1`` and never touch xarray; the public
functions map named dims onto them and return small result objects.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import xarray as xr
from scipy import special, stats
from scipy.optimize import elementwise

from evaluq._apply import apply_reduce, as_dataarray, check_real_dtype, reduce_dim
from evaluq._deprecation import renamed_argument
from evaluq._intervals import interval_array
from evaluq._results import ResultBase
from evaluq._validation import check_choice, check_confidence_level, check_finite, check_real

# eq.intervals.proportion_interval too
from evaluq.small_samples.proportions import proportion_interval as proportion_interval

__all__ = [
    "ARFIntervalResult",
    "TIntervalResult",
    "arf_alpha",
    "arf_interval",
    "arf_k",
    "prob_above",
    "proportion_interval",
    "t_interval",
]

ArrayLike = Any
Distribution = Literal["normal", "unknown"]
DISTRIBUTIONS = ("normal", "unknown")
VERDICTS = ("pass", "borderline pass", "borderline fail", "fail")


# --- numpy kernels ------------------------------------------------------------------------------

def _t_summary(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Mean, sample SD (ddof=1) and n over the last axis."""
    n = x.shape[-1]
    return x.mean(axis=-1), x.std(axis=-1, ddof=1), n


def _t_margin(sd: np.ndarray, n: int, confidence_level: float) -> np.ndarray:
    """Margin of error ``t_{1-alpha/2, n-1} s / sqrt(n)``."""
    t_crit = stats.t.ppf(0.5 + confidence_level / 2, n - 1)
    return t_crit * sd / np.sqrt(n)


def _t_prob_above(mean: np.ndarray, sd: np.ndarray, n: int, threshold: np.ndarray) -> np.ndarray:
    """``P(mu > T) = 1 - F_t(n-1)((T - xbar) / (s / sqrt(n)))`` (flat prior on mu, log sigma)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (threshold - mean) / (sd / np.sqrt(n))
    # s = 0: the posterior is a point mass at xbar, so P(mu > T) = [xbar > T]
    # (no sign(T - xbar) * inf: it is NaN, with a warning, wherever T == xbar).
    z = np.where(sd > 0, z, np.where(threshold >= mean, np.inf, -np.inf))
    return stats.t.sf(z, n - 1)


def _arf_k_unknown(alpha: np.ndarray) -> np.ndarray:
    """``k = (1 - alpha + sqrt(1 - 2 alpha)) / (2 alpha)`` (symmetric unimodal errors)."""
    return (1 - alpha + np.sqrt(1 - 2 * alpha)) / (2 * alpha)


def _arf_alpha_unknown(k: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_arf_k_unknown`: ``alpha = 4k / (2k + 1)^2`` for k >= 1/2."""
    return 4 * k / (2 * k + 1) ** 2


def _arf_normal_noncoverage(k: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Non-coverage of the ARF interval under normal errors, as a function of k and d.

    With y = mu + sigma z and d = (g - mu) / sigma the interval misses mu iff
    ``|z + d| > 2k |z - d|``, i.e. iff the quadratic ``(4k^2 - 1) z^2 - 2d(4k^2 + 1) z +
    (4k^2 - 1) d^2`` is negative. For k > 1/2 its roots are ``d/a`` and ``d a`` with
    ``a = (2k + 1) / (2k - 1)``, so the non-coverage is ``|Phi(d a) - Phi(d / a)|``.
    """
    a = (2 * k + 1) / (2 * k - 1)
    return np.abs(special.ndtr(d * a) - special.ndtr(d / a))


def _arf_normal_worst_d(k: np.ndarray) -> np.ndarray:
    """The d > 0 that maximises the non-coverage (the only interior stationary point).

    Setting the derivative of ``Phi(d a) - Phi(d / a)`` to zero gives
    ``a phi(d a) = phi(d / a) / a``, i.e. ``d^2 = 4 ln a / (a^2 - a^-2)``; with
    ``x = ln a = 2 artanh(1 / 2k)`` this is ``d^2 = 2x / sinh(2x)``.
    """
    x = 2 * np.arctanh(1 / (2 * k))
    return np.sqrt(2 * x / np.sinh(2 * x))


def _arf_alpha_normal(k: np.ndarray) -> np.ndarray:
    """Worst-case non-coverage over d of the ARF interval with multiplier k (normal errors).

    The non-coverage is 0 at d = 0 and tends to 0 as d -> infinity, and it has a single
    stationary point in between, so the worst case is the larger of the interior value and
    the d -> 0 limit (kept explicit so that the maximum never relies on the interior alone).
    For k <= 1/2 the interval misses mu with probability >= 1/2 for some d: alpha = 1/2 at
    k = 1/2 (the interval then covers iff z and d have opposite signs).
    """
    k = np.asarray(k, dtype=np.float64)
    out = np.full(k.shape, 0.5)
    big = k > 0.5
    kb = k[big]
    interior = _arf_normal_noncoverage(kb, _arf_normal_worst_d(kb))
    at_zero = np.zeros_like(kb)  # lim_{d -> 0} of the non-coverage
    out[big] = np.maximum(interior, at_zero)
    return out


def _arf_k_normal(alpha: np.ndarray) -> np.ndarray:
    """Smallest k whose worst-case coverage under normal errors is ``1 - alpha``.

    Solved in ``x = ln a = 2 artanh(1/2k)`` (non-coverage increasing in x from 0 to 1/2) with
    scipy's vectorised bracketing root finder; ``k = 1 / (2 tanh(x / 2))``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    out = np.full(alpha.shape, 0.5)
    inner = alpha < 0.5
    a_in = alpha[inner]
    if a_in.size:

        def excess(x: np.ndarray, target: np.ndarray) -> np.ndarray:
            d = np.sqrt(2 * x / np.sinh(2 * x))
            return special.ndtr(d * np.exp(x)) - special.ndtr(d * np.exp(-x)) - target

        lo = np.full(a_in.shape, 1e-300)
        hi = np.full(a_in.shape, 40.0)  # excess(40) = 1/2 - Phi_c(2 sqrt(40)) - alpha > 0
        res = elementwise.find_root(excess, (lo, hi), args=(a_in,))
        if not np.all(res.success):  # pragma: no cover - the bracket always holds the root
            raise RuntimeError("the ARF multiplier k did not converge")
        out[inner] = 1 / (2 * np.tanh(res.x / 2))
    return out


@lru_cache(maxsize=512)
def _arf_k_normal_cached(alpha: float) -> float:
    """Scalar k (normal), cached: the root finder costs a few ms per call."""
    return float(_arf_k_normal(np.asarray(alpha)))


# --- validation ---------------------------------------------------------------------------------

def _real_values(name: str, x: Any) -> np.ndarray:
    """The values of ``x`` (array_like or DataArray) as float64; integers and reals only.

    A bool array is refused (True/False are not scores: ``t_interval([True, False])`` would
    silently be an interval for a proportion), and so are object and string arrays.
    """
    arr = np.asarray(x.values if isinstance(x, xr.DataArray) else x)
    check_real_dtype(name, arr.dtype)
    return arr.astype(np.float64)


def _check_alpha(alpha: ArrayLike) -> np.ndarray:
    a = _real_values("arf_alpha", alpha)
    check_finite("arf_alpha", a)
    bad = (a <= 0) | (a > 0.5)
    if bad.any():
        raise ValueError(f"`arf_alpha` must be in (0, 0.5] for an ARF interval; got "
                         f"{a[bad].ravel()[0]:g}")
    return a


def _check_k(k: ArrayLike) -> np.ndarray:
    kk = _real_values("k", k)
    check_finite("k", kk)
    if (kk < 0.5).any():
        raise ValueError(f"`k` must be >= 0.5 for an ARF interval (smaller k cover mu with "
                         f"probability < 1/2 for some mu); got {kk[kk < 0.5].ravel()[0]:g}")
    return kk


def _check_bounds(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    if bounds is None:
        return None
    if not (isinstance(bounds, tuple | list) and len(bounds) == 2):
        raise TypeError(f"`bounds` must be a (low, high) pair or None; got {bounds!r}")
    low, high = (check_real("bounds", b) for b in bounds)
    if not low < high:
        raise ValueError(f"`bounds` must satisfy low < high; got {bounds!r}")
    return low, high


def _verdict(estimate: xr.DataArray, lower: xr.DataArray, upper: xr.DataArray,
             threshold: float) -> xr.DataArray:
    """Read an interval against a PASS/FAIL threshold, as in Gladkoff et al. §4."""
    code = xr.where(lower > threshold, 0,
                    xr.where(upper < threshold, 3, xr.where(estimate >= threshold, 1, 2)))
    labels = np.asarray(VERDICTS, dtype=object)[np.asarray(code.values, dtype=int)]
    return xr.DataArray(labels, dims=code.dims, coords=code.coords, name="verdict")


# --- Student-t ----------------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class TIntervalResult(ResultBase):
    """Student-t interval for the mean of a few scores per item.

    Attributes
    ----------
    estimate : DataArray
        Sample mean per item.
    sd : DataArray
        Sample standard deviation (ddof=1) per item.
    n : int
        Number of scores per item.
    confidence_level : float
        Level of :attr:`interval`; :meth:`confidence_interval` gives any other level.
    bounds : (float, float) or None
        The interval is clipped to these (the ends of the score scale); :meth:`margin` and
        :meth:`unclipped_interval` stay unclipped.
    """

    estimate: xr.DataArray
    sd: xr.DataArray
    n: int
    confidence_level: float
    bounds: tuple[float, float] | None = None

    @property
    def df(self) -> int:
        """Degrees of freedom, n - 1."""
        return self.n - 1

    @property
    def standard_error(self) -> xr.DataArray:
        """``s / sqrt(n)``."""
        return self.sd / np.sqrt(self.n)

    def margin(self, confidence_level: float | None = None) -> xr.DataArray:
        """Margin of error ``E = t_{1 - alpha/2, n-1} s / sqrt(n)`` (never clipped).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default None: the level given at construction.

        Returns
        -------
        DataArray
            E per item (the dims of :attr:`sd`).
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(
            confidence_level)
        return xr.apply_ufunc(_t_margin, self.sd, kwargs={"n": self.n, "confidence_level": level})

    def unclipped_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """``estimate -+ margin`` at ``confidence_level``, ignoring :attr:`bounds`.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default None: the level given at construction.

        Returns
        -------
        DataArray
            The items' dims plus ``ci_bound`` (lower, upper).
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(
            confidence_level)
        e = self.margin(level)
        return interval_array(self.estimate - e, self.estimate + e, kind="t",
                              confidence_level=level)

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The interval at ``confidence_level`` (default: the level given at construction),
        clipped to :attr:`bounds` when they are set.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default None: the level given at construction.

        Returns
        -------
        DataArray
            The items' dims plus ``ci_bound`` (lower, upper).
        """
        ci = self.unclipped_interval(confidence_level)
        if self.bounds is not None:
            ci = ci.clip(*self.bounds)
        return ci

    def prob_above(self, threshold: float) -> xr.DataArray:
        """``P(mu > threshold)``; see :func:`prob_above`.

        Parameters
        ----------
        threshold : float or DataArray
            The pass mark, in score units (finite; a DataArray broadcasts against the
            items).

        Returns
        -------
        DataArray
            Named ``prob_above``, one value in [0, 1] per item.
        """
        t = _check_threshold(threshold)
        return xr.apply_ufunc(_t_prob_above, self.estimate, self.sd,
                              kwargs={"n": self.n, "threshold": t}).rename("prob_above")

    def verdict(self, threshold: float) -> xr.DataArray:
        """"pass" / "fail" when the interval lies above / below ``threshold``, else "borderline
        pass" or "borderline fail" by the side of the mean (the paper's "borderline FAIL").

        Parameters
        ----------
        threshold : float or DataArray
            The pass mark, in score units (finite; a DataArray broadcasts against the
            items).

        Returns
        -------
        DataArray
            One string per item.
        """
        t = _check_threshold(threshold)
        return _verdict(self.estimate, self.lower, self.upper, t)

    def to_dataset(self) -> xr.Dataset:
        """estimate, sd, margin (unclipped), lower and upper (clipped to ``bounds``) as one
        Dataset (attrs: n, level, bounds)."""
        ds = xr.Dataset({"estimate": self.estimate, "sd": self.sd, "margin": self.margin(),
                         "lower": self.lower, "upper": self.upper})
        ds.attrs = {"ci_kind": "t", "n": self.n, "confidence_level": self.confidence_level,
                    "bounds": "none" if self.bounds is None else list(self.bounds)}
        return ds

    def _fields(self) -> dict[str, Any]:
        fields = {"estimate": self.estimate, "lower": self.lower, "upper": self.upper,
                  "sd": self.sd, "n": self.n, "confidence_level": self.confidence_level}
        if self.bounds is not None:
            fields["bounds"] = self.bounds
        return fields


def _check_threshold(threshold: Any) -> Any:
    t = np.asarray(threshold.values if isinstance(threshold, xr.DataArray) else threshold)
    if t.dtype.kind not in "iuf":  # bool, str and object refused
        raise TypeError(f"`threshold` must be a real number; got {threshold!r}")
    check_finite("threshold", t.astype(np.float64))
    return threshold


def _t_iv(x: ArrayLike, dim: Hashable | None, axis: int) -> tuple[xr.DataArray, Hashable]:
    da = as_dataarray(x, "x", finite=True)
    rdim = reduce_dim(da, dim, axis, "x")
    n = da.sizes[rdim]
    if n < 2:
        raise ValueError(
            f"`x` holds {n} observation along {rdim!r}: a Student-t interval needs n >= 2 "
            "(s is undefined for one score); with a single observation use "
            "`arf_interval(y, guess, alpha=...)` with a fixed prior guess"
        )
    return da, rdim


def t_interval(x: ArrayLike, *, confidence_level: float = 0.95, dim: Hashable | None = None,
               axis: int = -1, bounds: tuple[float, float] | None = None) -> TIntervalResult:
    r"""Student-t interval for the true mean score from n >= 2 scores.

    .. math::

        \bar x \pm t_{1-\alpha/2,\,n-1}\, s / \sqrt{n}

    Parameters
    ----------
    x : array_like or DataArray
        Scores; the last axis (or ``dim``) holds the n >= 2 scores of one item (raters,
        repeated evaluations), other axes are items and are kept. No NaN.
    confidence_level : float
        1 - alpha.
    dim : hashable, optional
        For a DataArray: the dim holding the scores (default: ``axis``).
    axis : int
        For an array: the axis holding the scores.
    bounds : (low, high), optional
        Clip the interval to the score scale, e.g. ``(0, 100)``. When the true mean is known to
        lie in ``[low, high]`` (a mean of scores on that scale), clipping changes neither the
        coverage (the clipped interval contains mu exactly when the unclipped one does) nor the
        verdicts against a threshold inside the scale; it only stops the interval from
        reporting impossible values. The unclipped margin stays available as
        :meth:`~TIntervalResult.margin` and :meth:`~TIntervalResult.unclipped_interval`.

    Returns
    -------
    TIntervalResult
        ``estimate`` (mean), ``interval`` (``ci_bound`` dim), ``lower`` / ``upper``,
        :meth:`~TIntervalResult.prob_above` and :meth:`~TIntervalResult.verdict`.

    Raises
    ------
    ValueError
        If there is only one score per item (use :func:`arf_interval`), ``x`` has NaN, or a
        score lies outside ``bounds``.

    References
    ----------
    Gladkoff, S., Han, L., Nenadic, G. (2022). Measuring uncertainty in translation quality
    evaluation (TQE). LREC 2022, §4.

    See Also
    --------
    prob_above, arf_interval

    Examples
    --------
    Two quality scores of one translation (Gladkoff et al. §4.1), 80% confidence:

    >>> import evaluq as eq
    >>> res = eq.intervals.t_interval([76.85, 81.99], confidence_level=0.8)
    >>> round(float(res.estimate), 2), round(float(res.sd), 4), round(float(res.margin()), 4)
    (79.42, 3.6345, 7.9096)
    >>> [round(float(v), 2) for v in res.interval]
    [71.51, 87.33]
    >>> str(res.verdict(80).item())
    'borderline fail'

    Many items x raters at once:

    >>> import numpy as np
    >>> scores = np.array([[76.85, 81.99], [90.0, 92.0], [60.0, 64.0]])
    >>> eq.intervals.t_interval(scores, confidence_level=0.8).verdict(80).values.tolist()
    ['borderline fail', 'pass', 'fail']

    Two scores near the top of a 0-100 scale: clip the interval to the scale (the margin
    itself is unchanged):

    >>> res = eq.intervals.t_interval([78, 95], confidence_level=0.8, bounds=(0, 100))
    >>> [round(float(v), 2) for v in res.interval], round(float(res.margin()), 2)
    ([60.34, 100.0], 26.16)
    >>> [round(float(v), 2) for v in res.unclipped_interval()]
    [60.34, 112.66]
    """
    level = check_confidence_level(confidence_level)
    bounds = _check_bounds(bounds)
    da, rdim = _t_iv(x, dim, axis)
    if bounds is not None:
        low, high = float(da.min()), float(da.max())
        if low < bounds[0] or high > bounds[1]:
            raise ValueError(f"`x` holds scores outside `bounds` {bounds} (from {low:g} to "
                             f"{high:g}): a mean of scores on that scale cannot lie outside "
                             f"it; check the scores' scale or the bounds")
    mean = apply_reduce(lambda a: _t_summary(a)[0], da, (rdim,), name="estimate")
    sd = apply_reduce(lambda a: _t_summary(a)[1], da, (rdim,), name="sd")
    # on dask the scores stream chunk by chunk (the scores dim whole); the result holds one
    # value per item, computed here in one pass
    if mean.chunks is not None:
        both = xr.Dataset({"estimate": mean, "sd": sd}).compute()
        mean, sd = both["estimate"], both["sd"]
    return TIntervalResult(estimate=mean, sd=sd,
                           n=int(da.sizes[rdim]), confidence_level=level, bounds=bounds)


def prob_above(x: ArrayLike, threshold: float, *, dim: Hashable | None = None,
               axis: int = -1) -> xr.DataArray:
    r"""Probability that the true mean exceeds ``threshold``, from n >= 2 scores.

    .. math::

        P(\mu > T) = 1 - F_{t,\,n-1}\!\left(\frac{T - \bar x}{s / \sqrt{n}}\right)

    (the posterior of mu under a flat prior on mu and log sigma, a shifted and scaled t).

    Parameters
    ----------
    x : array_like or DataArray
        Scores, as in :func:`t_interval`.
    threshold : float or array_like
        The PASS threshold T (broadcast against the items).
    dim, axis
        As in :func:`t_interval`.

    Returns
    -------
    DataArray
        One probability per item.

    See Also
    --------
    t_interval

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.intervals.prob_above([76.85, 81.99], 80)), 4)
    0.4293
    """
    return t_interval(x, dim=dim, axis=axis).prob_above(threshold)


# --- ARF ----------------------------------------------------------------------------------------

@renamed_argument("alpha", "arf_alpha", meaning="the ARF worst-case non-coverage")
def arf_k(arf_alpha: ArrayLike, distribution: Distribution = "normal") -> Any:
    r"""Multiplier k of the ARF interval with coverage at least ``1 - arf_alpha`` for every mu,
    sigma.

    ``distribution="unknown"`` (any symmetric unimodal error, worst case uniform):

    .. math::

        k = \frac{1 - \alpha + \sqrt{1 - 2\alpha}}{2\alpha}, \qquad 0 < \alpha \le 1/2.

    This is the exact worst case over symmetric unimodal errors (a uniform error centred at mu
    with half-width ``|g - mu| a``, ``a = (2k+1)/(2k-1)``, attains it), which include
    heavy-tailed ones (Laplace, Student-t, Cauchy). It is not a guarantee for skewed errors:
    with k = 1/2 the interval covers iff y and g lie on opposite sides of mu, so its coverage is
    ``P(y < mu)`` for g > mu, 1/2 only when mu is the median; a strongly skewed error
    (exponential) undercovers at every alpha for some guesses.

    ``distribution="normal"``: with d = (g - mu)/sigma, the interval covers mu iff
    ``|z + d| <= 2k |z - d|`` for z ~ N(0, 1), i.e. iff z lies outside the roots ``d/a`` and
    ``d a`` of a quadratic, ``a = (2k+1)/(2k-1)``; the non-coverage
    ``Phi(d a) - Phi(d/a)`` is largest at ``d^2 = 4 ln a / (a^2 - a^{-2})``. k is the root of
    "worst-case non-coverage = alpha", found numerically (nothing is tabulated).

    Parameters
    ----------
    arf_alpha : float, array_like or DataArray
        The worst-case non-coverage, 1 - confidence level, in (0, 0.5].
    distribution : {"normal", "unknown"}, optional
        What is assumed about the error of the single observation; default ``"normal"``.

    Returns
    -------
    float, ndarray or DataArray
        k, with the shape of ``arf_alpha`` (a DataArray named "k" for a DataArray
        ``arf_alpha``).

    References
    ----------
    Abbott, J. H., Rosenblatt, J. I. (1962). Two stage estimation with one observation on the
    first stage. Ann. Inst. Stat. Math. 14, 229-235.
    Furnival, G. M., Gregoire, T. G., Valentine, H. T. (1989). Confidence intervals from a single
    observation. Commun. Stat. Theory Methods 18, 3749-3762.

    See Also
    --------
    arf_interval, arf_alpha

    Examples
    --------
    Table 1 of Gladkoff et al. (whose normal entry for alpha = 0.5 is a typo: 0.05 for 0.5):

    >>> import evaluq as eq
    >>> [round(float(k), 3) for k in eq.intervals.arf_k([0.5, 1/3, 0.25, 0.2, 0.1, 0.05, 0.01])]
    [0.5, 1.258, 1.799, 2.312, 4.787, 9.653, 48.389]
    >>> round(float(eq.intervals.arf_k(0.2, distribution="unknown")), 2)
    3.94
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    alpha = arf_alpha
    a = _check_alpha(alpha)
    if distribution == "unknown":
        k = _arf_k_unknown(a)
    elif a.ndim == 0:
        k = np.asarray(_arf_k_normal_cached(float(a)))
    else:
        k = _arf_k_normal(a)
    if isinstance(alpha, xr.DataArray):
        return alpha.copy(data=k).rename("k")
    return float(k) if k.ndim == 0 else k


def arf_alpha(k: ArrayLike, distribution: Distribution = "normal") -> Any:
    r"""Worst-case non-coverage alpha of an ARF interval with multiplier ``k`` (inverse of arf_k).

    ``"unknown"``: ``alpha = 4k / (2k + 1)^2``; ``"normal"``: ``Phi(d a) - Phi(d/a)`` at the
    worst d (see :func:`arf_k`).

    Parameters
    ----------
    k : float or array_like
        The multiplier, finite and >= 0.5 (k = 0.5 gives alpha = 0.5).
    distribution : {"normal", "unknown"}, optional
        What is assumed about the error of the single observation; default ``"normal"``.

    Returns
    -------
    float or ndarray
        alpha in (0, 0.5], with the shape of ``k``.

    Examples
    --------
    The paper's k = 1.8 and k = 2.31 give 75% and 80% intervals under normal errors:

    >>> import evaluq as eq
    >>> round(1 - float(eq.intervals.arf_alpha(1.8)), 3), round(1 - eq.intervals.arf_alpha(2.31), 3)
    (0.75, 0.8)
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    kk = _check_k(k)
    a = _arf_alpha_unknown(kk) if distribution == "unknown" else _arf_alpha_normal(kk)
    return float(a) if a.ndim == 0 else a


@dataclass(frozen=True, repr=False)
class ARFIntervalResult(ResultBase):
    """ARF interval ``(y + g)/2 +- k |y - g|`` from one observation y and a prior guess g.

    Attributes
    ----------
    observation, guess : DataArray
        y and g (broadcast).
    k : DataArray
        The multiplier.
    confidence_level : DataArray or float
        ``1 - alpha`` guaranteed for every mu and sigma under ``distribution``.
    distribution : str
    bounds : (float, float) or None
        The interval is clipped to these (the ends of the score scale).
    """

    observation: xr.DataArray
    guess: xr.DataArray
    k: xr.DataArray
    confidence_level: Any
    distribution: Distribution
    bounds: tuple[float, float] | None

    @property
    def estimate(self) -> xr.DataArray:
        """The centre ``(y + g) / 2``."""
        return ((self.observation + self.guess) / 2).rename("estimate")

    @property
    def half_width(self) -> xr.DataArray:
        """``k |y - g|`` (before clipping)."""
        return (self.k * np.abs(self.observation - self.guess)).rename("half_width")

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The (clipped) interval with a ``ci_bound`` dim: at the stored level by default, or
        at ``confidence_level`` with the multiplier ``arf_k(1 - confidence_level)`` for the same
        ``distribution``.

        Parameters
        ----------
        confidence_level : float, optional
            Level in [0.5, 1) (an ARF interval needs ``arf_alpha <= 0.5``); default None: the
            stored level and multiplier.

        Returns
        -------
        DataArray
            The items' dims plus ``ci_bound`` (lower, upper).
        """
        half = self.half_width
        level = self.confidence_level
        if confidence_level is not None:
            level = check_confidence_level(confidence_level)
            half = arf_k(1.0 - level, self.distribution) * np.abs(self.observation - self.guess)
        lo, hi = self.estimate - half, self.estimate + half
        if self.bounds is not None:
            lo, hi = lo.clip(*self.bounds), hi.clip(*self.bounds)
        level = float(level) if np.ndim(level) == 0 else None
        # a level that varies over items lives in the result object, not in the attrs
        ci = interval_array(lo, hi, kind="arf", confidence_level=level)
        ci.attrs["distribution"] = self.distribution
        return ci

    def verdict(self, threshold: float) -> xr.DataArray:
        """"pass" / "fail" when the interval lies above / below ``threshold``, else
        "borderline pass" / "borderline fail" by the side of the centre.

        Parameters
        ----------
        threshold : float or DataArray
            The pass mark, in score units (finite; a DataArray broadcasts against the
            items).

        Returns
        -------
        DataArray
            One string per item.
        """
        t = _check_threshold(threshold)
        return _verdict(self.estimate, self.lower, self.upper, t)

    def to_dataset(self) -> xr.Dataset:
        """observation, guess, estimate, half_width, k, lower and upper as one Dataset."""
        ds = xr.Dataset({"observation": self.observation, "guess": self.guess,
                         "estimate": self.estimate, "half_width": self.half_width,
                         "k": self.k, "lower": self.lower, "upper": self.upper})
        ds["confidence_level"] = xr.DataArray(self.confidence_level) if np.ndim(
            self.confidence_level) == 0 else self.confidence_level
        ds.attrs = {"ci_kind": "arf", "distribution": self.distribution,
                    "bounds": "none" if self.bounds is None else list(self.bounds)}
        return ds

    def _fields(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "half_width": self.half_width, "lower": self.lower,
                "upper": self.upper, "k": self.k,
                "confidence_level": xr.DataArray(self.confidence_level),
                "distribution": self.distribution, "bounds": self.bounds}


_worst_non_coverage = arf_alpha  # arf_interval's argument of that name shadows it


@renamed_argument("alpha", "arf_alpha", meaning="the ARF worst-case non-coverage")
def arf_interval(y: ArrayLike, guess: ArrayLike, *, arf_alpha: ArrayLike | None = None,
                 k: ArrayLike | None = None, distribution: Distribution = "normal",
                 bounds: tuple[float, float] | None = None) -> ARFIntervalResult:
    r"""ARF confidence interval for mu from ONE observation y and a fixed prior guess g.

    .. math::

        \frac{y + g}{2} \pm k\,|y - g|

    covers mu with probability >= 1 - alpha for every mu and sigma, provided g is fixed before
    y is observed (independent of it). k comes from :func:`arf_k` (``arf_alpha`` given) or is passed
    directly (``k`` given; the guaranteed level is then ``1 - arf_alpha(k)``).

    Parameters
    ----------
    y : float or array_like or DataArray
        The observation(s); any shape (items, raters, ...), broadcast against ``guess``
        (numpy broadcasting for arrays, by dim name for DataArrays; when any of ``y``,
        ``guess``, ``arf_alpha`` / ``k`` is a DataArray, the others must be DataArrays or scalars).
    guess : float or array_like or DataArray
        The prior guess g (e.g. a historical average).
    arf_alpha : float or array_like, optional
        The worst-case non-coverage, 1 - confidence level, in (0, 0.5]. Exactly one of
        ``arf_alpha`` and ``k``. (``alpha=`` is its deprecated spelling.)
    k : float or array_like, optional
        The multiplier, >= 0.5.
    distribution : {"normal", "unknown"}
        Error distribution of y: normal, or any symmetric unimodal one (see :func:`arf_k`).
    bounds : (low, high), optional
        Clip the interval to the score scale, e.g. ``(0, 100)``.

    Returns
    -------
    ARFIntervalResult

    References
    ----------
    Furnival et al. (1989); Gladkoff et al. (2022), §3.1.

    See Also
    --------
    arf_k, t_interval

    Examples
    --------
    A vendor's history averages 96.3; a new single score is 85.2 (Gladkoff et al. §3.1):

    >>> import evaluq as eq
    >>> res = eq.intervals.arf_interval(85.2, 96.3, k=1.8, bounds=(0, 100))
    >>> round(float(res.estimate), 2), round(float(res.half_width), 2)
    (90.75, 19.98)
    >>> [round(float(v), 2) for v in res.interval]
    [70.77, 100.0]
    >>> [round(float(v), 2) for v in eq.intervals.arf_interval(85.2, 96.3, k=2.31).interval]
    [65.11, 116.39]

    With k computed from alpha = 0.2 rather than the rounded table value:

    >>> res = eq.intervals.arf_interval(85.2, 96.3, arf_alpha=0.2, bounds=(0, 100))
    >>> round(float(res.k), 3), round(float(res.half_width), 2), res.confidence_level
    (2.312, 25.67, 0.8)
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    alpha = arf_alpha
    if (alpha is None) == (k is None):
        raise ValueError("pass exactly one of `arf_alpha` and `k` to arf_interval")
    given = {"y": y, "guess": guess, "arf_alpha" if k is None else "k": alpha if k is None else k}
    labelled = [n for n, v in given.items() if isinstance(v, xr.DataArray)]
    unlabelled = [n for n, v in given.items()
                  if not isinstance(v, xr.DataArray) and np.ndim(v) > 0]
    if labelled and unlabelled:  # the array would become a new dim: an outer product
        raise TypeError(f"`{unlabelled[0]}` must be a scalar or a DataArray when "
                        f"`{labelled[0]}` is a DataArray (an unlabelled array cannot be "
                        f"aligned with named dims); got shape {np.shape(given[unlabelled[0]])}")
    bounds = _check_bounds(bounds)
    k_raw: Any
    level_raw: Any
    if alpha is not None:
        k_raw = arf_k(alpha, distribution)
        level_raw = 1 - (alpha.values if isinstance(alpha, xr.DataArray) else np.asarray(alpha))
        if isinstance(alpha, xr.DataArray):
            level_raw = alpha.copy(data=level_raw)
    else:
        kk = _check_k(k.values if isinstance(k, xr.DataArray) else k)
        level_raw = 1 - _worst_non_coverage(kk, distribution)
        k_raw = k if isinstance(k, xr.DataArray) else kk
        if isinstance(k, xr.DataArray):
            level_raw = k.copy(data=np.asarray(level_raw))
    parts = [y, guess, k_raw, level_raw]
    names = ["y", "guess", "k", "confidence_level"]
    if not any(isinstance(p, xr.DataArray) for p in parts):
        # numpy broadcasting (trailing axes aligned), then one set of dims for all
        arrays = [np.asarray(p) for p in parts]
        try:
            broadcast = np.broadcast_arrays(*arrays)
        except ValueError as err:
            shapes = ", ".join(f"`{n}` {a.shape}" for n, a in zip(names, arrays, strict=True))
            raise ValueError(f"ARF inputs cannot be broadcast together: {shapes}") from err
        parts = [xr.DataArray(a) for a in broadcast]
    das = [as_dataarray(p, n, finite=True) for p, n in zip(parts, names, strict=True)]
    try:
        yy, gg, kd, lv = xr.broadcast(*das)
    except ValueError as err:
        raise ValueError(f"ARF inputs cannot be broadcast together: {err}") from None
    level: Any = float(lv.values.flat[0]) if np.unique(lv.values).size == 1 else lv.rename(
        "confidence_level")
    return ARFIntervalResult(observation=yy.rename("observation"), guess=gg.rename("guess"),
                             k=kd.rename("k"), confidence_level=level,
                             distribution=distribution, bounds=bounds)
