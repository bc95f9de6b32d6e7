r"""Regression and classification metrics when the targets carry measurement error.

formulas.md section 4 (Michelucci & Venturini). Item ``i`` of ``M`` has a measured target
``y_i ~ N(ybar_i, sigma_i^2)`` and a prediction ``yhat_i``; ``d_i = ybar_i - yhat_i``. The
metric computed on the measured targets is then a random variable; this module gives its mean,
variance and full distribution:

- MSE: ``E = (1/M) sum (d_i^2 + sigma_i^2)``,
  ``Var = (1/M^2) sum (2 sigma_i^4 + 4 d_i^2 sigma_i^2)``;
  a scaled noncentral chi-square for equal sigma, a generalized chi-square otherwise.
- MAE: ``|y_i - yhat_i|`` is folded normal.
- Accuracy when each observed label differs from the true one with a known probability
  (a flip probability ``q`` for binary labels, or a ``K x K`` transition matrix): a sum of
  independent Bernoulli variables (Poisson-binomial), so the exact distribution is available.

Inputs
------
``targets`` (the means ``ybar_i``), ``predictions`` and ``sigma`` are 1-D arrays over items, or
DataArrays with an ``item`` dim (other dims such as ``model`` are kept); ``sigma`` may also be a
scalar or lack the ``item`` dim (the same SD for every item). Results are DataArrays without the
``item`` dim (0-d for 1-D inputs: use ``float(result)``). ``dim=`` names the item dim(s) when
they are not ``item`` (several dims are reduced together). On dask-backed inputs the means and
variances are lazy: per-item terms chunk by chunk and per-chunk sums combined by dask, equal to
the in-memory values up to the order of additions (~1e-16 relative); the values are checked
inside the graph. The distributions (:func:`mse_distribution`, :func:`accuracy_distribution`)
hold every item's terms and load their input.

References
----------
Michelucci, U., Venturini, F. (2021). Estimating neural network's performance with measurement
errors on the labels (metric formulas with measurement errors). Errata in ``formulas.md``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from scipy import optimize, stats
from scipy.special import ndtr

from evaluq._apply import as_dims, as_item_array, check_values, is_lazy, sum_items
from evaluq._deprecation import renamed_method
from evaluq._dims import (
    ACCURACY,
    ACCURACY_INTERVAL,
    CDF,
    CI_BOUND,
    COVERAGE,
    DIST_INTERVAL,
    DIST_MEAN,
    DIST_SD,
    DIST_VARIANCE,
    EVAL_POINT,
    EXPECTED_ACCURACY,
    EXPECTED_MAE,
    EXPECTED_MSE,
    ITEM,
    LOWER,
    MSE_INTERVAL,
    MSE_QUANTILE,
    N_CORRECT,
    PDF,
    PMF,
    QUANTILE,
    ROUTE,
    UPPER,
    VAR_ACCURACY,
    VAR_MAE,
    VAR_MSE,
)
from evaluq._imhof import cornish_fisher, edgeworth_cdf, edgeworth_pdf, imhof_cdf, imhof_pdf
from evaluq._imhof import moments as mse_moments
from evaluq._imhof import route as mse_route
from evaluq._intervals import interval_from_bounds
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_rng,
)

__all__ = [
    "AccuracyDistribution",
    "MSEDistribution",
    "accuracy_distribution",
    "expected_accuracy",
    "expected_mae",
    "expected_mse",
    "mse_distribution",
    "var_accuracy",
    "var_mae",
    "var_mse",
]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# --- input plumbing -----------------------------------------------------------------------------

def _n_items(da: xr.DataArray, dims: tuple[Hashable, ...]) -> int:
    return math.prod(int(da.sizes[d]) for d in dims)


def _broadcast(dims: tuple[Hashable, ...], **arrays: xr.DataArray) -> list[xr.DataArray]:
    for d in dims:
        sizes = {name: da.sizes[d] for name, da in arrays.items() if d in da.dims}
        if len(set(sizes.values())) > 1:
            shown = ", ".join(f"`{k}` {v}" for k, v in sizes.items())
            raise ValueError(f"shape mismatch: the inputs have different numbers of items "
                             f"along {d!r} ({shown})")
    try:
        aligned = xr.align(*arrays.values(), join="exact")
    except ValueError as err:
        raise ValueError(f"the inputs' coordinates differ: {err}") from err
    return list(xr.broadcast(*aligned))


def _check_sigma(values: np.ndarray) -> None:
    if values.size and bool((values < 0).any()):
        raise ValueError(f"`sigma` must be >= 0 (a standard deviation); got {values.min():g}")


def _regression_inputs(targets: Any, predictions: Any, sigma: Any, dims: tuple[Hashable, ...]
                       ) -> tuple[xr.DataArray, xr.DataArray]:
    """``d = targets - predictions`` and ``sigma`` broadcast against each other (with the item
    dims); values checked at once, or chunk by chunk inside the graph on dask."""
    t = as_item_array(targets, "targets", dims=dims)
    p = as_item_array(predictions, "predictions", dims=dims)
    s = as_item_array(sigma, "sigma", dims=dims, allow_scalar=True, check=_check_sigma)
    t, p, s = _broadcast(dims, targets=t, predictions=p, sigma=s)
    return t - p, s


def _finish(da: xr.DataArray, name: str, attrs: dict[str, Any]) -> xr.DataArray:
    da = da.rename(name)
    da.attrs = attrs
    return da


# --- MSE ----------------------------------------------------------------------------------------

def expected_mse(targets: Any, predictions: Any, sigma: Any, *,
                 dim: Hashable | Sequence[Hashable] = ITEM) -> xr.DataArray:
    r"""Expected MSE when each target is measured with Gaussian error ``sigma_i``.

    .. math:: E[\mathrm{MSE}] = \frac1M \sum_i (d_i^2 + \sigma_i^2),
              \qquad d_i = \bar y_i - \hat y_i

    Parameters
    ----------
    targets
        Mean measured targets ``ybar_i`` (1-D, or a DataArray with an ``item`` dim).
    predictions
        Predictions ``yhat_i`` (same items; a DataArray may add dims such as ``model``).
    sigma
        Measurement SDs ``sigma_i >= 0``: a scalar, 1-D over items, or a DataArray.
    dim
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once (e.g. ``("document", "sentence")``).

    Returns
    -------
    xarray.DataArray
        The expectation, reduced over the item dim(s). On dask-backed input: lazy, per-chunk
        sums over items combined by dask (equal to the in-memory value to ~1e-15 relative).

    Examples
    --------
    >>> import evaluq as eq
    >>> float(eq.measurement_error.expected_mse([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.5))
    0.6666666666666666

    See Also
    --------
    var_mse, mse_distribution
    """
    dims = as_dims(dim)
    d, s = _regression_inputs(targets, predictions, sigma, dims)
    return _finish(_mse_sums(d, s, dims)[0] / _n_items(d, dims), EXPECTED_MSE,
                   {"metric": "E[MSE]"})


def _mse_terms(d: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item: ``E[(d + s Z)^2] = d^2 + s^2`` and ``Var = 2 s^4 + 4 d^2 s^2``."""
    s2 = s * s
    d2 = d * d
    return d2 + s2, 2.0 * s2 * s2 + 4.0 * d2 * s2


def _mse_sums(d: xr.DataArray, s: xr.DataArray, dims: tuple[Hashable, ...]
              ) -> list[xr.DataArray]:
    return sum_items(_mse_terms, d, s, dims=dims, n_outputs=2)


def var_mse(targets: Any, predictions: Any, sigma: Any, *,
            dim: Hashable | Sequence[Hashable] = ITEM) -> xr.DataArray:
    r"""Variance of the MSE under Gaussian measurement error (equal or unequal ``sigma_i``).

    .. math:: \mathrm{Var}[\mathrm{MSE}] = \frac{1}{M^2}\sum_i (2\sigma_i^4 + 4 d_i^2 \sigma_i^2)

    (for equal sigma: ``2 sigma^4 / M + 4 sigma^2 sum d_i^2 / M^2``, the variance of the scaled
    noncentral chi-square).

    Parameters
    ----------
    targets : array_like or DataArray
        Mean measured targets ``ybar_i`` (1-D over items, or a DataArray with an ``item``
        dim).
    predictions : array_like or DataArray
        Predictions ``yhat_i`` (same items; a DataArray may add dims such as ``model``).
    sigma : float, array_like or DataArray
        Measurement SDs ``sigma_i >= 0``: a scalar, 1-D over items, or a DataArray.
    dim : str or sequence of str, optional
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once (e.g. ``("document", "sentence")``).

    Returns
    -------
    xarray.DataArray
        Reduced over the item dim(s) (0-d for 1-D inputs); lazy on dask-backed input.

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.measurement_error.var_mse([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.5)), 6)
    0.180556
    """
    dims = as_dims(dim)
    d, s = _regression_inputs(targets, predictions, sigma, dims)
    m = _n_items(d, dims)
    return _finish(_mse_sums(d, s, dims)[1] / m**2, VAR_MSE, {"metric": "Var[MSE]"})


@dataclass(frozen=True)
class _MSECells:
    """The numerics of an :class:`MSEDistribution`, cell by cell (a cell is one combination
    of the dims other than the items): the generalized chi-square's terms, each cell's route,
    and the CDF, density and quantile on that route."""

    method: str
    lam: np.ndarray  # (cells,) object: 1-D weights of the items with sigma > 0
    delta2: np.ndarray  # (cells,) object: their noncentralities
    shift: np.ndarray  # (cells,)
    draws: np.ndarray | None = None  # (cells, n_draws)
    routes: np.ndarray | None = None  # (cells,) str
    moments: np.ndarray | None = None  # (cells, 4): mean, sd, skewness, excess kurtosis

    @property
    def count(self) -> int:
        return self.shift.shape[0]

    def route_names(self) -> np.ndarray:
        """The route of every cell (``method`` where no cell switched)."""
        names = (np.full(self.count, self.method, dtype=object) if self.routes is None
                 else self.routes)
        return names.astype(str)

    def route(self, cell: int) -> str:
        if self.draws is not None:
            return "monte_carlo"
        return self.method if self.routes is None else str(self.routes[cell])

    def cell_moments(self, cell: int) -> tuple[float, float, float, float]:
        assert self.moments is not None
        mean, sd, g1, g2 = (float(v) for v in self.moments[cell])
        return mean, sd, g1, g2

    def point(self, cell: int) -> float:
        """Where a cell without representable spread sits: its mean."""
        return float(self.shift[cell]) if self.moments is None else \
            float(self.moments[cell, 0])

    def cdf(self, cell: int, x: np.ndarray) -> np.ndarray:
        """``P(MSE <= x)`` for a 1-D array ``x`` in one cell."""
        lam, d2, shift = self.lam[cell], self.delta2[cell], self.shift[cell]
        if self.draws is not None:
            draws = np.sort(self.draws[cell])
            return np.searchsorted(draws, x, side="right") / draws.size
        route = self.route(cell)
        if lam.size == 0 or route == "point":
            return (x >= self.point(cell)).astype(np.float64)
        if route == "normal":
            return np.where(x < shift, 0.0, edgeworth_cdf(x, *self.cell_moments(cell)))
        if route == "ncx2":
            scale = lam[0]
            return stats.ncx2.cdf((x - shift) / scale, df=lam.size, nc=d2.sum())
        # Imhof: one numerical inversion per distinct x (the Fourier weight of the tail
        # integral depends on x, so the QUADPACK calls cannot share work)
        values, inverse = np.unique(x, return_inverse=True)
        out = np.array([imhof_cdf(float(v) - shift, lam, d2) for v in values])
        return out[inverse].reshape(x.shape)

    def pdf(self, cell: int, x: np.ndarray) -> np.ndarray:
        """Density of the MSE at a 1-D array ``x`` in one cell."""
        lam, d2, shift = self.lam[cell], self.delta2[cell], self.shift[cell]
        if self.draws is not None:
            draws = self.draws[cell]
            if np.ptp(draws) == 0:
                return np.where(x == draws[0], np.inf, 0.0)
            return stats.gaussian_kde(draws)(x)
        route = self.route(cell)
        if lam.size == 0 or route == "point":
            return np.where(x == self.point(cell), np.inf, 0.0)
        if route == "normal":
            return np.where(x < shift, 0.0, edgeworth_pdf(x, *self.cell_moments(cell)))
        if route == "ncx2":
            scale = lam[0]
            return stats.ncx2.pdf((x - shift) / scale, df=lam.size, nc=d2.sum()) / scale
        values, inverse = np.unique(x, return_inverse=True)
        out = np.array([imhof_pdf(float(v) - shift, lam, d2) for v in values])
        return out[inverse].reshape(x.shape)

    def quantile(self, cell: int, prob: float) -> float:
        """The ``prob`` quantile of the MSE in one cell."""
        lam, d2, shift = self.lam[cell], self.delta2[cell], self.shift[cell]
        if self.draws is not None:
            return float(np.quantile(self.draws[cell], prob))
        route = self.route(cell)
        if lam.size == 0 or route == "point":
            return self.point(cell)
        if route == "normal":
            return max(float(shift), cornish_fisher(prob, *self.cell_moments(cell)))
        if route == "ncx2":
            return float(shift + lam[0] * stats.ncx2.ppf(prob, df=lam.size, nc=d2.sum()))
        return _imhof_quantile(lam, d2, float(shift), prob)


def _imhof_quantile(lam: np.ndarray, d2: np.ndarray, shift: float, prob: float) -> float:
    """The ``prob`` quantile of ``shift + sum lam (Z + delta)^2`` by Brent's root finding on
    the Imhof CDF, bracketed from the mean in steps of 10 SDs."""
    mean = shift + float(np.sum(lam * (1.0 + d2)))
    sd = math.sqrt(float(np.sum(lam**2 * (2.0 + 4.0 * d2))))
    lo, hi = shift, mean + 10.0 * sd
    while imhof_cdf(hi - shift, lam, d2) < prob:
        hi += 10.0 * sd
    return float(optimize.brentq(lambda x: imhof_cdf(x - shift, lam, d2) - prob, lo, hi,
                                 xtol=1e-10 * max(1e-300, mean), rtol=1e-10))


def _on_cells(template: xr.DataArray, values: np.ndarray,
              extra: dict[str, Any] | None = None) -> xr.DataArray:
    """Values of shape (cells, *extra) back onto the dims of ``template``."""
    extra = extra or {}
    shape = template.shape + tuple(len(v) for v in extra.values())
    dims = template.dims + tuple(extra)
    coords = dict(template.coords)
    coords.update(extra)
    return xr.DataArray(values.reshape(shape), dims=dims, coords=coords)


def _as_points(x: Any) -> xr.DataArray:
    """``x`` of :meth:`MSEDistribution.cdf` as a float DataArray (a 1-D array gets an ``x``
    dim with its values as coordinate), checked numeric and free of NaN."""
    if isinstance(x, xr.DataArray):
        xa = x
    else:
        arr = np.asarray(x)
        if arr.ndim > 1:
            raise ValueError(f"`x` must be a scalar, a 1-D array or a DataArray; got shape "
                             f"{arr.shape}")
        xa = xr.DataArray(arr, dims=(EVAL_POINT,), coords={EVAL_POINT: arr}) if arr.ndim else \
            xr.DataArray(arr)
    if xa.dtype.kind not in "biuf":
        raise TypeError(f"`x` must be numeric; got dtype {xa.dtype}")
    xa = xa.astype(np.float64)
    if np.isnan(xa.values).any():
        raise ValueError("`x` contains NaN")
    return xa


def _evaluate(template: xr.DataArray, n_cells: int, x: Any, kernel: Any,
              name: str) -> xr.DataArray:
    """A per-cell kernel ``kernel(cell, x_1d)`` at ``x`` broadcast against ``template``."""
    xa = _as_points(x)
    try:
        xb, _ = xr.broadcast(xa, template)
    except ValueError as err:
        raise ValueError(f"`x` cannot be broadcast against the result dims "
                         f"{dict(template.sizes)}: {err}") from err
    extra = [d for d in xb.dims if d not in template.dims]
    xb = xb.transpose(*template.dims, *extra)
    flat = xb.values.reshape(n_cells, -1)
    vals = np.stack([kernel(c, flat[c]) for c in range(n_cells)])
    return xb.copy(data=vals.reshape(xb.shape)).rename(name)


@dataclass(frozen=True)
class MSEDistribution:
    """Distribution of the MSE under Gaussian measurement error on the targets.

    ``MSE = sum_j lam_j (Z_j + delta_j)^2 + shift`` with ``lam_j = sigma_j^2 / M``,
    ``delta_j = d_j / sigma_j`` (items with ``sigma_j = 0`` add the constant ``d_j^2 / M`` to
    ``shift``). Equal sigma: ``M MSE / sigma^2 ~ ncx2(df=M, nc=sum d_j^2 / sigma^2)``.

    Attributes
    ----------
    mean, variance
        Exact moments (DataArrays over the inputs' dims other than ``item``).
    method
        ``"ncx2"`` (exact, equal sigma), ``"imhof"`` (exact generalized chi-square by numerical
        inversion of the characteristic function, Imhof 1961) or ``"monte_carlo"``.
    """

    mean: xr.DataArray
    variance: xr.DataArray
    method: str
    _cells: _MSECells = field(repr=False)

    @property
    def routes(self) -> xr.DataArray:
        """How each cell is evaluated: ``"ncx2"`` or ``"imhof"`` (exact), ``"normal"`` (the
        Edgeworth limit where the skewness is below 1e-2: huge ``|d| / sigma``, or very many
        items; CDF error below ~1e-6), ``"point"`` (SD 0, or below float64's range) or
        ``"monte_carlo"``."""
        return _on_cells(self.mean, self._cells.route_names()).rename(ROUTE)

    def cdf(self, x: Any) -> xr.DataArray:
        """``P(MSE <= x)``.

        ``x`` may be a scalar (result: the dims of :attr:`mean`), a 1-D array (an extra ``x``
        dim with the values as coordinate) or a DataArray (broadcast by dim name, so ``x`` may
        differ per model). The ``ncx2`` and Monte Carlo routes evaluate all ``x`` in one
        vectorised call per cell. The Imhof route inverts the characteristic function once per
        distinct ``x`` (QUADPACK; about 1-5 ms per point and cell): no vectorised route keeps
        its accuracy, because the Fourier weight of the tail integral depends on ``x``.

        Parameters
        ----------
        x : float, array_like (1-D) or DataArray
            Where to evaluate, in MSE units (numeric, no NaN).

        Returns
        -------
        xarray.DataArray
            Named ``cdf``: the dims of :attr:`mean`, plus ``x`` for a 1-D array or the
            DataArray's own dims.
        """
        return _evaluate(self.mean, self._cells.count, x, self._cells.cdf, CDF)

    def pdf(self, x: Any) -> xr.DataArray:
        r"""Density of the MSE at ``x`` (``x`` as in :meth:`cdf`).

        - ``ncx2`` (equal sigma): exact, ``f(x) = f_{\chi'^2}((x - s) / \lambda) / \lambda``
          with ``lambda = sigma^2 / M`` and the shift ``s`` of items with ``sigma = 0``.
        - ``imhof``: the inversion formula of the density (Imhof 1961, the derivative of his
          CDF formula), ``f(x) = (1 / 2 pi) int_0^inf cos(theta(u)) / rho(u) du``, with the same
          split into adaptive quadrature and a Fourier-integral tail as the CDF (one
          inversion per distinct ``x``). At ``x = s`` the density is ``inf`` for one item,
          ``exp(-sum delta^2 / 2) / (2 sqrt(lam_1 lam_2))`` for two and 0 for more. One item
          is evaluated as the exact scaled ``ncx2(1)``; for 2-40 items below
          ``x - s = 1e-3 max(lam)`` (where QAWF fails) the small-x form
          ``x^(k/2-1) (h0 + slope x)`` is used, with the exact limit ``h0`` (and, up to four
          items, a slope matched to the inversion at ``1e-3 max(lam)``; relative error
          ~1e-7); the CDF there integrates the same form.
        - ``monte_carlo``: a Gaussian kernel density estimate of the draws (Scott's
          bandwidth; smoothed, and biased near the lower end of the support).

        Points below the support (``x < s``) have density 0.

        Parameters
        ----------
        x : float, array_like (1-D) or DataArray
            Where to evaluate, in MSE units (as in :meth:`cdf`).

        Returns
        -------
        xarray.DataArray
            Named ``pdf``, dims as in :meth:`cdf`.
        """
        return _evaluate(self.mean, self._cells.count, x, self._cells.pdf, PDF)

    def quantile(self, q: float | list[float] | np.ndarray) -> xr.DataArray:
        """Quantiles of the MSE (a ``quantile`` dim).

        Parameters
        ----------
        q : float or array_like
            Probability levels, each in (0, 1).

        Returns
        -------
        xarray.DataArray
            Named ``mse_quantile``: the dims of :attr:`mean` plus ``quantile``.
        """
        probs = np.atleast_1d(np.asarray(q, dtype=np.float64))
        if np.any((probs <= 0) | (probs >= 1)):
            raise ValueError(f"`q`: quantile levels must be in (0, 1); got {q!r}")
        vals = np.array([[self._cells.quantile(c, float(p)) for p in probs]
                         for c in range(self._cells.count)])
        return _on_cells(self.mean, vals, {QUANTILE: probs}).rename(MSE_QUANTILE)

    def confidence_interval(self, confidence_level: float = 0.95) -> xr.DataArray:
        """Equal-tailed interval holding the MSE with probability ``confidence_level``.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.

        Returns
        -------
        xarray.DataArray
            Named ``mse_interval``: the dims of :attr:`mean` plus ``ci_bound``.
        """
        level = check_confidence_level(confidence_level)
        tail = (1.0 - level) / 2.0
        vals = np.array([[self._cells.quantile(c, tail), self._cells.quantile(c, 1.0 - tail)]
                         for c in range(self._cells.count)])
        out = interval_from_bounds(
            vals.reshape((*self.mean.shape, 2)), dims=self.mean.dims,
            coords=dict(self.mean.coords), kind="equal-tailed", confidence_level=level,
            name=MSE_INTERVAL)
        out.attrs.update(method=self.method,
                         routes=", ".join(sorted(set(self.routes.values.ravel().tolist()))))
        return out

    interval = renamed_method("interval", "confidence_interval")

    def to_dataset(self, confidence_level: float = 0.95) -> xr.Dataset:
        """Mean, variance, SD and the interval as one Dataset.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.
            Level of ``interval``.
        """
        return xr.Dataset({
            DIST_MEAN: self.mean, DIST_VARIANCE: self.variance, DIST_SD: self.variance ** 0.5,
            DIST_INTERVAL: self.confidence_interval(confidence_level),
        }, attrs={"method": self.method})

    def to_dataframe(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """Mean, variance, SD and interval bounds (one row per cell of the other dims).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.
            Level of ``lower`` / ``upper``.
        """
        ds = self.to_dataset(confidence_level)
        frame = ds[[DIST_MEAN, DIST_VARIANCE, DIST_SD]].to_dataframe() if ds[DIST_MEAN].ndim else \
            pd.DataFrame({k: [float(ds[k])] for k in (DIST_MEAN, DIST_VARIANCE, DIST_SD)})
        iv = ds[DIST_INTERVAL]
        frame[LOWER] = iv.sel({CI_BOUND: LOWER}).values.reshape(-1)
        frame[UPPER] = iv.sel({CI_BOUND: UPPER}).values.reshape(-1)
        return frame

    def _repr_html_(self) -> str:
        return f"<p>MSEDistribution(method={self.method!r})</p>" + self.to_dataframe().to_html()

    def __repr__(self) -> str:
        if self.mean.ndim == 0:
            iv = self.confidence_interval().values
            return (f"MSEDistribution(method={self.method!r}, mean={float(self.mean):.6g}, "
                    f"sd={math.sqrt(float(self.variance)):.6g}, "
                    f"95% interval=[{iv[0]:.6g}, {iv[1]:.6g}])")
        return f"MSEDistribution(method={self.method!r}, dims={dict(self.mean.sizes)})"


def mse_distribution(
    targets: Any,
    predictions: Any,
    sigma: Any,
    *,
    method: Literal["auto", "ncx2", "imhof", "monte_carlo"] = "auto",
    n_draws: int = 100_000,
    rng: RNGLike = None,
    dim: Hashable | Sequence[Hashable] = ITEM,
) -> MSEDistribution:
    r"""Full distribution of the MSE when the targets carry Gaussian measurement error.

    ``MSE = (1/M) sum_i (d_i + sigma_i Z_i)^2``, a weighted sum of noncentral chi-squares:

    - equal sigma (``method="ncx2"``, chosen by ``"auto"``): exact,
      ``M MSE / sigma^2 ~ chi'^2(df=M, nc=sum_i d_i^2 / sigma^2)`` (scipy's ``ncx2``);
    - unequal sigma (``method="imhof"``, chosen by ``"auto"``): exact generalized chi-square,
      its CDF by numerical inversion of the characteristic function (Imhof 1961; QUADPACK
      adaptive and Fourier-integral rules; agrees with ``ncx2`` to ~1e-14 when the sigmas are
      equal, from 1 to 3000 items) and quantiles by root finding (Brent);
    - ``method="monte_carlo"``: ``n_draws`` simulated MSE values with ``rng`` (a cross-check).

    Where the exact routes are ill-posed, a cell switches route (see
    :attr:`MSEDistribution.routes`): with skewness below 1e-2 (``|d| / sigma`` above ~300, or
    ~80,000 items) to the normal limit, an Edgeworth expansion to second order (CDF error
    below 5e-9 at the switch against the exact ncx2; there QUADPACK's integrand oscillates
    ~``|d| / sigma`` times and scipy's ncx2 returns NaN); with no representable spread (sigma 0, or
    skewed with every sigma^2 / M below 1e-290) to a point mass at the mean.

    Parameters
    ----------
    targets, predictions, sigma
        As in :func:`expected_mse`.
    method
        ``"auto"``, ``"ncx2"`` (requires equal sigma), ``"imhof"`` or ``"monte_carlo"``.
    n_draws, rng
        For ``method="monte_carlo"`` only.
    dim
        The item dim(s) (default ``"item"``), as in :func:`expected_mse`. A dask-backed
        input is loaded (checked chunk by chunk on the way): the distribution keeps every
        item's weight and noncentrality in memory.

    Returns
    -------
    MSEDistribution
        ``mean``, ``variance``, ``quantile(q)``, ``confidence_interval(confidence_level)``,
        ``cdf(x)`` and ``pdf(x)`` (``x`` a scalar, an array or a DataArray).

    Examples
    --------
    >>> import evaluq as eq
    >>> dist = eq.measurement_error.mse_distribution([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.5)
    >>> dist.method, round(float(dist.mean), 6)
    ('ncx2', 0.666667)
    >>> dist.confidence_interval(0.95).round(4).values.tolist()
    [0.0824, 1.6942]
    >>> dist.cdf([0.5, 1.0]).round(4).values.tolist()
    [0.4101, 0.8063]
    >>> round(float(dist.pdf(0.5)), 4)
    1.0464
    """
    check_choice("method", method, ("auto", "ncx2", "imhof", "monte_carlo"))
    dims = as_dims(dim)
    d, s = _regression_inputs(targets, predictions, sigma, dims)
    d, s = d.compute(), s.compute()  # the distribution holds every item's terms
    m = _n_items(d, dims)
    sums = _mse_sums(d, s, dims)
    mean = _finish(sums[0] / m, DIST_MEAN, {"metric": "E[MSE]"})
    variance = _finish(sums[1] / m**2, DIST_VARIANCE, {"metric": "Var[MSE]"})
    other = [x for x in d.dims if x not in dims]
    dv = d.transpose(*other, *dims).values.reshape(-1, m)
    sv = s.transpose(*other, *dims).values.reshape(-1, m)
    route = _mse_method(method, sv)
    lam, delta2, shift, routes, cell_moments = _mse_cells(dv, sv, route == "ncx2")
    draws = _mse_draws(dv, sv, n_draws, rng) if route == "monte_carlo" else None
    cells = _MSECells(route, lam, delta2, shift, draws, routes, cell_moments)
    return MSEDistribution(mean=mean, variance=variance, method=route, _cells=cells)


def _mse_method(method: str, sv: np.ndarray) -> str:
    """The method "auto" stands for, checked against the sigmas (cells, items)."""
    equal = bool(np.all(sv == sv[:, :1]))
    if method == "auto":
        return "ncx2" if equal else "imhof"
    if method == "ncx2" and not equal:
        raise ValueError("`method='ncx2'` needs the same sigma for every item; use 'imhof'")
    return method


_NEGLIGIBLE = 1e-10
"""An item whose SD is below this share of its cell's SD is treated as a constant."""


def _mse_cells(dv: np.ndarray, sv: np.ndarray, equal: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: the generalized chi-square's weights ``lam`` and noncentralities ``delta^2``
    over the items with sigma > 0 (ragged: object arrays of 1-D arrays), the constant
    ``shift`` of the items with sigma = 0, the route and the moments (mean, sd, skewness,
    excess kurtosis)."""
    cells, m = dv.shape
    # an item whose own SD is below 1e-10 of its cell's SD is a constant to that accuracy:
    # it joins the shift with its mean (a weight ~1e-10 of the largest defeats the inversion)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        item_sd = sv * np.sqrt(2.0 * sv * sv + 4.0 * dv * dv)
        cell_sd = np.sqrt(np.sum(item_sd**2, axis=1, keepdims=True))
        positive = (sv > 0) & ~(item_sd < _NEGLIGIBLE * cell_sd)
    lam = np.zeros((cells, m))
    delta2 = np.zeros((cells, m))
    with np.errstate(over="ignore", under="ignore"):   # such cells take the normal route
        lam[positive] = sv[positive] ** 2 / m
        delta2[positive] = (dv[positive] / sv[positive]) ** 2
    shift = np.where(positive, 0.0, dv**2 + sv**2).sum(axis=1) / m
    lam_list = np.empty(cells, dtype=object)
    d2_list = np.empty(cells, dtype=object)
    routes = np.empty(cells, dtype=object)
    cell_moments = np.zeros((cells, 4))
    for c in range(cells):
        lam_list[c] = lam[c, positive[c]]
        d2_list[c] = delta2[c, positive[c]]
        cell_moments[c] = mse_moments(dv[c], sv[c], m)
        routes[c] = mse_route(dv[c], sv[c], m, equal)
    return lam_list, d2_list, shift, routes, cell_moments


def _mse_draws(dv: np.ndarray, sv: np.ndarray, n_draws: Any, rng: RNGLike) -> np.ndarray:
    """Monte Carlo MSE values (cells, n_draws), in blocks of about 2e6 normal draws."""
    n = check_int("n_draws", n_draws, minimum=100)
    gen = check_rng(rng)
    cells, m = dv.shape
    # the draws are kept (cells x n_draws) for the quantiles, plus one sorted copy
    check_memory("n_draws", 2 * 8 * cells * n, hint=" (or use method='imhof' or 'ncx2', "
                 "which draw nothing)")
    draws = np.empty((cells, n))
    step = max(1, 2_000_000 // m)
    for start in range(0, n, step):
        k = min(step, n - start)
        z = gen.standard_normal((cells, k, m))
        draws[:, start:start + k] = ((dv[:, None, :] + sv[:, None, :] * z) ** 2).mean(-1)
    return draws


# --- MAE ----------------------------------------------------------------------------------------

def _folded_normal_moments(d: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``|d + s Z|`` elementwise; ``s = 0`` gives ``|d|`` and 0 exactly.

    ``mu = s sqrt(2/pi) exp(-d^2/(2 s^2)) + |d| (1 - 2 Phi(-|d|/s))``; the variance
    ``d^2 + s^2 - mu^2`` is computed as ``s^2 - e (2|d| + e)`` with ``e = mu - |d|`` (no
    cancellation when ``s << |d|``).
    """
    ad = np.abs(d)
    with np.errstate(over="ignore"):  # |d|/s = inf for tiny s: exp(-inf) = 0, as it should
        z = np.divide(ad, s, out=np.full(np.broadcast(ad, s).shape, np.inf), where=s > 0)
        excess = s * _SQRT_2_OVER_PI * np.exp(-0.5 * z * z) - 2.0 * ad * ndtr(-z)
    mu = ad + excess
    var = np.maximum(s * s - excess * (2.0 * ad + excess), 0.0)
    return mu, var


def expected_mae(targets: Any, predictions: Any, sigma: Any, *,
                 dim: Hashable | Sequence[Hashable] = ITEM) -> xr.DataArray:
    r"""Expected MAE when each target is measured with Gaussian error (folded normal).

    .. math::

        E|y_i - \hat y_i| = \mu_i = \sigma_i\sqrt{2/\pi}\, e^{-d_i^2/(2\sigma_i^2)}
            + d_i\,(1 - 2\Phi(-d_i/\sigma_i)), \qquad E[\mathrm{MAE}] = \frac1M\sum_i \mu_i

    ``sigma_i = 0`` gives ``mu_i = |d_i|`` exactly (no division by zero). (The paper's eq. 37 and
    Table 1 write ``erfc(|d|/(sqrt(2) d))``; the denominator is sigma.)

    Parameters
    ----------
    targets : array_like or DataArray
        Mean measured targets ``ybar_i`` (1-D over items, or a DataArray with an ``item``
        dim).
    predictions : array_like or DataArray
        Predictions ``yhat_i`` (same items; a DataArray may add dims such as ``model``).
    sigma : float, array_like or DataArray
        Measurement SDs ``sigma_i >= 0``: a scalar, 1-D over items, or a DataArray.
    dim : str or sequence of str, optional
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once (e.g. ``("document", "sentence")``).

    Returns
    -------
    xarray.DataArray
        Reduced over the item dim(s) (0-d for 1-D inputs); lazy on dask-backed input.

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.measurement_error.expected_mae([0.0, 1.0], [0.0, 0.0], [1.0, 0.0])), 6)
    0.898942
    """
    dims = as_dims(dim)
    d, s = _regression_inputs(targets, predictions, sigma, dims)
    total = sum_items(_folded_normal_moments, d, s, dims=dims, n_outputs=2)[0]
    return _finish(total / _n_items(d, dims), EXPECTED_MAE, {"metric": "E[MAE]"})


def var_mae(targets: Any, predictions: Any, sigma: Any, *,
            dim: Hashable | Sequence[Hashable] = ITEM) -> xr.DataArray:
    r"""Variance of the MAE under Gaussian measurement error.

    .. math:: \mathrm{Var}[\mathrm{MAE}] = \frac1{M^2}\sum_i (d_i^2 + \sigma_i^2 - \mu_i^2)

    with ``mu_i`` the folded-normal mean of :func:`expected_mae`. (The paper's eqs. 41-42
    subtract ``d sqrt(2/pi) exp(.) + d erf(.)`` instead of ``mu_i^2``: wrong.)

    Parameters
    ----------
    targets : array_like or DataArray
        Mean measured targets ``ybar_i`` (1-D over items, or a DataArray with an ``item``
        dim).
    predictions : array_like or DataArray
        Predictions ``yhat_i`` (same items; a DataArray may add dims such as ``model``).
    sigma : float, array_like or DataArray
        Measurement SDs ``sigma_i >= 0``: a scalar, 1-D over items, or a DataArray.
    dim : str or sequence of str, optional
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once (e.g. ``("document", "sentence")``).

    Returns
    -------
    xarray.DataArray
        Reduced over the item dim(s) (0-d for 1-D inputs); lazy on dask-backed input.

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.measurement_error.var_mae([0.0, 1.0], [0.0, 0.0], [1.0, 0.0])), 6)
    0.090845
    """
    dims = as_dims(dim)
    d, s = _regression_inputs(targets, predictions, sigma, dims)
    var = sum_items(_folded_normal_moments, d, s, dims=dims, n_outputs=2)[1]
    return _finish(var / _n_items(d, dims)**2, VAR_MAE, {"metric": "Var[MAE]"})


# --- accuracy under label noise -----------------------------------------------------------------

def _check_flip(values: np.ndarray) -> None:
    if values.size and bool(((values < 0) | (values > 1)).any()):
        raise ValueError(f"`q` must be a probability in [0, 1]; got values in "
                         f"[{values.min():g}, {values.max():g}]")


def _distinct(da: xr.DataArray) -> np.ndarray:
    """The distinct values of ``da`` (on dask: per-chunk uniques combined, then computed)."""
    if is_lazy(da):
        import dask.array as dsa

        return np.asarray(dsa.unique(da.data.ravel()).compute())
    return np.unique(da.values)


def _agreement_probs(targets: Any, predictions: Any, q: Any, transition: Any,
                     dims: tuple[Hashable, ...]) -> xr.DataArray:
    """``pi_i``: probability that the observed (noisy) label equals the prediction."""
    if (q is None) == (transition is None):
        raise ValueError("give exactly one of `q` (binary flip probability) or `transition`")
    labels_any = q is not None
    t = as_item_array(targets, "targets", dims=dims, numeric=not labels_any)
    p = as_item_array(predictions, "predictions", dims=dims, numeric=not labels_any)
    if q is not None:
        qa = as_item_array(q, "q", dims=dims, allow_scalar=True, check=_check_flip)
        t, p, qa = _broadcast(dims, targets=t, predictions=p, q=qa)
        labels = np.union1d(_distinct(t), _distinct(p))
        if labels.size > 2:
            raise ValueError(
                f"a flip probability `q` needs binary labels; got {labels.size} distinct labels "
                "(use `transition=` for K classes)"
            )
        correct = t == p
        return xr.where(correct, 1.0 - qa, qa)
    tm = np.asarray(transition, dtype=np.float64)
    if tm.ndim != 2 or tm.shape[0] != tm.shape[1] or tm.shape[0] < 2:
        raise ValueError(f"`transition` must be a square K x K matrix (K >= 2); got {tm.shape}")
    if not np.all(np.isfinite(tm)) or np.any(tm < 0) or np.any(np.abs(tm.sum(1) - 1) > 1e-9):
        raise ValueError(
            "`transition` must hold probability distributions: non-negative rows summing to 1 "
            f"(row sums {np.round(tm.sum(1), 6).tolist()})"
        )
    k = tm.shape[0]

    def labels_check(name: str) -> Any:
        def check(v: np.ndarray) -> None:
            if np.any(v != np.round(v)) or np.any((v < 0) | (v >= k)):
                raise ValueError(f"`{name}` must hold integer labels in [0, {k - 1}] for a "
                                 f"{k} x {k} `transition` matrix")
        return check

    t, p = _broadcast(dims, targets=check_values(t, labels_check("targets")),
                      predictions=check_values(p, labels_check("predictions")))
    return xr.apply_ufunc(lambda a, b: tm[a.astype(np.intp), b.astype(np.intp)], t, p,
                          dask="parallelized", output_dtypes=[np.float64])


def _pi_terms(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the Bernoulli mean ``pi`` and variance ``pi (1 - pi)``."""
    return pi + 0.0, pi * (1.0 - pi)


def expected_accuracy(targets: Any, predictions: Any, *, q: Any = None,
                      transition: Any = None, dim: Hashable | Sequence[Hashable] = ITEM
                      ) -> xr.DataArray:
    r"""Expected accuracy measured against noisy labels.

    Item ``i``'s observed label agrees with the prediction with probability ``pi_i``:

    - binary labels, each flipped with probability ``q`` (scalar or per item ``q_i``):
      ``pi_i = 1 - q_i`` if the prediction matches the true label, else ``q_i``, so
      ``E[a_r] = a + q (1 - 2a)`` for a constant ``q``;
    - K classes with a label-noise transition matrix ``T[j, l] = P(observed l | true j)``
      (rows sum to 1): ``pi_i = T[y_i, yhat_i]``.

    ``E[a_r] = (1/M) sum_i pi_i``.

    Parameters
    ----------
    targets
        True labels (1-D or DataArray with ``item``): any two values with ``q`` (e.g.
        ``"pos"`` / ``"neg"``), integers ``0..K-1`` with ``transition``.
    predictions
        Predicted labels.
    q
        Flip probability in [0, 1] (binary labels only): scalar, per item, or DataArray.
    transition
        ``K x K`` row-stochastic matrix (instead of ``q``).
    dim
        The item dim(s) reduced (default ``"item"``); on dask-backed input the result is
        lazy (per-chunk sums over items).

    Examples
    --------
    The measurement-error paper's example: a = 0.85, q = 0.05 gives 0.815 (not "0.815%").

    >>> import evaluq as eq
    >>> y = [1] * 20
    >>> yhat = [1] * 17 + [0] * 3
    >>> round(float(eq.measurement_error.expected_accuracy(y, yhat, q=0.05)), 6)
    0.815
    """
    dims = as_dims(dim)
    pi = _agreement_probs(targets, predictions, q, transition, dims)
    total = sum_items(_pi_terms, pi, dims=dims, n_outputs=2)[0]
    return _finish(total / _n_items(pi, dims), EXPECTED_ACCURACY, {"metric": "E[accuracy]"})


def var_accuracy(targets: Any, predictions: Any, *, q: Any = None,
                 transition: Any = None, dim: Hashable | Sequence[Hashable] = ITEM
                 ) -> xr.DataArray:
    r"""Variance of the accuracy measured against noisy labels.

    .. math:: \mathrm{Var}[a_r] = \frac1{M^2}\sum_i \pi_i (1 - \pi_i)
              \;=\; \frac{q(1-q)}{M} \text{ for a constant flip probability}

    (The paper's ``q (1 - q)`` is missing the ``1/M``.)

    Parameters
    ----------
    targets : array_like or DataArray
        True labels (1-D or DataArray with ``item``): any two values with ``q``, integers
        ``0..K-1`` with ``transition``.
    predictions : array_like or DataArray
        Predicted labels (same items; a DataArray may add dims such as ``model``).
    q : float, array_like or DataArray, optional
        Flip probability in [0, 1] (binary labels only): scalar, per item, or DataArray.
        Exactly one of ``q`` and ``transition`` is given.
    transition : array_like, optional
        ``K x K`` row-stochastic matrix ``T[j, l] = P(observed l | true j)`` (instead of
        ``q``).
    dim : str or sequence of str, optional
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once.

    Returns
    -------
    xarray.DataArray
        Reduced over the item dim(s) (0-d for 1-D inputs); lazy on dask-backed input.

    Examples
    --------
    >>> import evaluq as eq
    >>> y = [1] * 200
    >>> yhat = [1] * 170 + [0] * 30
    >>> round(float(eq.measurement_error.var_accuracy(y, yhat, q=0.05)), 8)
    0.0002375
    """
    dims = as_dims(dim)
    pi = _agreement_probs(targets, predictions, q, transition, dims)
    total = sum_items(_pi_terms, pi, dims=dims, n_outputs=2)[1]
    return _finish(total / _n_items(pi, dims)**2, VAR_ACCURACY,
                   {"metric": "Var[accuracy]"})


def _poisson_binomial_pmf(pi: np.ndarray) -> np.ndarray:
    """pmf of ``sum_i Bernoulli(pi_i)`` on ``0..M``: exact, through the characteristic function.

    Items with equal ``pi`` are grouped (a constant q gives two groups: exactly
    ``Bin(M a, 1 - q) + Bin(M (1 - a), q)``); ``phi(w) = prod_g (1 - pi_g + pi_g e^{iw})^{n_g}``
    on the ``M + 1`` Fourier frequencies, inverted by an FFT (absolute error ~1e-15).
    """
    m = pi.size
    values, counts = np.unique(pi, return_counts=True)
    if values.size > 64:  # many distinct pi: the product tree is O(M log^2 M)
        return _poisson_binomial_tree(pi)
    omega = 2.0 * np.pi * np.arange(m + 1) / (m + 1)
    e = np.exp(1j * omega)[:, None]
    log_phi = np.zeros(m + 1, dtype=np.complex128)
    step = max(1, 4_000_000 // (m + 1))
    for start in range(0, values.size, step):
        v = values[None, start:start + step]
        n = counts[None, start:start + step]
        log_phi += (n * np.log(1.0 - v + v * e)).sum(axis=1)
    pmf = np.fft.fft(np.exp(log_phi)).real / (m + 1)
    pmf = np.maximum(pmf, 0.0)
    return pmf / pmf.sum()


def _poisson_binomial_tree(pi: np.ndarray) -> np.ndarray:
    """pmf of ``sum_i Bernoulli(pi_i)`` as the product of the polynomials ``1 - pi_i + pi_i z``.

    The product is taken pairwise, level by level (all pairs of a level in one batched FFT
    convolution), so M items with distinct ``pi_i`` cost O(M log^2 M) instead of the
    O(M * distinct values) of the characteristic-function route.
    """
    m = pi.size
    size = 1 << max(0, int(np.ceil(np.log2(m))))
    polys = np.zeros((size, 2))
    polys[:, 0] = 1.0  # padding items are Bernoulli(0): the polynomial 1
    polys[:m, 0] = 1.0 - pi
    polys[:m, 1] = pi
    while polys.shape[0] > 1:
        n, length = polys.shape
        nfft = 2 * length
        prod = np.fft.rfft(polys[0::2], nfft, axis=1) * np.fft.rfft(polys[1::2], nfft, axis=1)
        out = np.zeros((n // 2, nfft))
        out[:, :nfft - 1] = np.maximum(np.fft.irfft(prod, nfft, axis=1)[:, :nfft - 1], 0.0)
        polys = out
    pmf = polys[0, :m + 1]
    return pmf / pmf.sum()


@dataclass(frozen=True)
class AccuracyDistribution:
    """Exact distribution of the accuracy against noisy labels (a Poisson-binomial / M).

    Attributes
    ----------
    pmf
        DataArray over ``n_correct`` (0..M), coordinate ``accuracy`` = n_correct / M, plus the
        inputs' other dims.
    mean, variance
        Exact moments.
    """

    pmf: xr.DataArray
    mean: xr.DataArray
    variance: xr.DataArray

    def cdf(self) -> xr.DataArray:
        return self.pmf.cumsum(N_CORRECT).rename(CDF)

    def confidence_interval(self, confidence_level: float = 0.95) -> xr.DataArray:
        """Exact equal-tailed interval (each tail at most ``(1 - level)/2``; coverage >= level).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.

        Returns
        -------
        xarray.DataArray
            Accuracies (n_correct / M) over the inputs' other dims plus ``ci_bound``.
        """
        level = check_confidence_level(confidence_level)
        tail = (1.0 - level) / 2.0
        cdf = self.cdf().transpose(..., N_CORRECT).values
        m = cdf.shape[-1] - 1
        lower = np.argmax(cdf >= tail - 1e-12, axis=-1) / m
        upper = np.argmax(cdf >= 1.0 - tail - 1e-12, axis=-1) / m
        template = self.mean
        return interval_from_bounds(
            np.stack([lower, upper], axis=-1).reshape((*template.shape, 2)), dims=template.dims,
            coords=dict(template.coords), kind="equal-tailed", confidence_level=level,
            name=ACCURACY_INTERVAL)

    interval = renamed_method("interval", "confidence_interval")

    def coverage(self, confidence_level: float = 0.95) -> xr.DataArray:
        """Exact probability that the accuracy falls inside :meth:`confidence_interval`
        (>= the level).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.

        Returns
        -------
        xarray.DataArray
            Named ``coverage``, over the inputs' other dims.
        """
        iv = self.confidence_interval(confidence_level)
        acc = self.pmf[ACCURACY]
        inside = (acc >= iv.sel({CI_BOUND: LOWER}) - 1e-12) & (
            acc <= iv.sel({CI_BOUND: UPPER}) + 1e-12)
        return self.pmf.where(inside, 0.0).sum(N_CORRECT).rename(COVERAGE)

    def to_dataset(self, confidence_level: float = 0.95) -> xr.Dataset:
        """pmf, mean, variance, SD and the exact interval as one Dataset.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.
            Level of ``interval``.
        """
        return xr.Dataset({PMF: self.pmf, DIST_MEAN: self.mean, DIST_VARIANCE: self.variance,
                           DIST_SD: np.sqrt(self.variance),
                           DIST_INTERVAL: self.confidence_interval(confidence_level)})

    def to_dataframe(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """Mean, variance, SD and interval bounds (one row per cell of the other dims).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default 0.95.
            Level of ``lower`` / ``upper``.
        """
        iv = self.confidence_interval(confidence_level)
        cols: dict[str, xr.DataArray] = {
                DIST_MEAN: self.mean, DIST_VARIANCE: self.variance, DIST_SD: self.variance ** 0.5,
                LOWER: iv.sel({CI_BOUND: LOWER}, drop=True),
                UPPER: iv.sel({CI_BOUND: UPPER}, drop=True)}
        if self.mean.ndim == 0:
            return pd.DataFrame({k: [float(v)] for k, v in cols.items()})
        return xr.Dataset({k: v.rename(k) for k, v in cols.items()}).to_dataframe()

    def _repr_html_(self) -> str:
        return f"<p>{self!r}</p>" + self.to_dataframe().to_html()

    def __repr__(self) -> str:
        if self.mean.ndim == 0:
            iv = self.confidence_interval().values
            return (f"AccuracyDistribution(M={self.pmf.sizes[N_CORRECT] - 1}, "
                    f"mean={float(self.mean):.6g}, sd={math.sqrt(float(self.variance)):.6g}, "
                    f"95% interval=[{iv[0]:.6g}, {iv[1]:.6g}])")
        return f"AccuracyDistribution(dims={dict(self.mean.sizes)})"


def accuracy_distribution(targets: Any, predictions: Any, *, q: Any = None,
                          transition: Any = None, dim: Hashable | Sequence[Hashable] = ITEM
                          ) -> AccuracyDistribution:
    r"""Exact distribution of the accuracy against noisy labels, with exact intervals.

    ``M a_r = sum_i B_i``, ``B_i ~ Bernoulli(pi_i)`` independent (see
    :func:`expected_accuracy` for ``pi_i``); for a constant ``q``,
    ``M a_r ~ Bin(M a, 1 - q) + Bin(M (1 - a), q)``. The pmf is computed exactly (grouped
    characteristic function, FFT inversion).

    Parameters
    ----------
    targets : array_like or DataArray
        True labels (1-D or DataArray with ``item``): any two values with ``q``, integers
        ``0..K-1`` with ``transition``.
    predictions : array_like or DataArray
        Predicted labels (same items; a DataArray may add dims such as ``model``).
    q : float, array_like or DataArray, optional
        Flip probability in [0, 1] (binary labels only): scalar, per item, or DataArray.
        Exactly one of ``q`` and ``transition`` is given.
    transition : array_like, optional
        ``K x K`` row-stochastic matrix ``T[j, l] = P(observed l | true j)`` (instead of
        ``q``).
    dim : str or sequence of str, optional
        The item dim(s) reduced (default ``"item"``): items under another name, or several
        dims reduced at once.
        A dask-backed input is loaded (checked chunk by chunk on the way): the pmf needs
        every item's ``pi_i`` at once.

    Returns
    -------
    AccuracyDistribution

    Examples
    --------
    >>> import evaluq as eq
    >>> dist = eq.measurement_error.accuracy_distribution([1] * 200, [1] * 170 + [0] * 30, q=0.05)
    >>> round(float(dist.mean), 4), round(float(dist.variance), 7)
    (0.815, 0.0002375)
    >>> dist.confidence_interval(0.95).values.tolist()
    [0.785, 0.845]
    """
    dims = as_dims(dim)
    pi = _agreement_probs(targets, predictions, q, transition, dims).compute()
    m = _n_items(pi, dims)
    other = [x for x in pi.dims if x not in dims]
    arr = pi.transpose(*other, *dims).values.reshape(-1, m)
    pmfs = np.stack([_poisson_binomial_pmf(row) for row in arr])
    template = pi.isel({x: 0 for x in dims}, drop=True)
    coords: dict[Hashable, Any] = dict(template.coords)
    coords[N_CORRECT] = np.arange(m + 1)
    coords[ACCURACY] = (N_CORRECT, np.arange(m + 1) / m)
    pmf = xr.DataArray(pmfs.reshape((*template.shape, m + 1)),
                       dims=(*template.dims, N_CORRECT), coords=coords, name=PMF)
    sums = sum_items(_pi_terms, pi, dims=dims, n_outputs=2)
    mean = _finish(sums[0] / m, DIST_MEAN, {"metric": "E[accuracy]"})
    var = _finish(sums[1] / m**2, DIST_VARIANCE, {"metric": "Var[accuracy]"})
    return AccuracyDistribution(pmf=pmf, mean=mean, variance=var)
