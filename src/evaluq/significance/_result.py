"""The result object of :func:`evaluq.bootstrap_test`."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import METRIC, NAN_REASON, RESAMPLE
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import percentile_interval
from evaluq._results import ResultBase
from evaluq._validation import check_confidence_level, check_real
from evaluq.significance import _engine
from evaluq.significance._methods import METHODS

IntervalKind = Literal["percentile", "bca"]


def significance_mark(p: float) -> str:
    """BooStSa's marks: ``**`` for p <= .01, ``*`` for p <= .05, else empty.

    Parameters
    ----------
    p : float
        A p-value in [0, 1]; NaN, infinity or a value outside [0, 1] raises ``ValueError``.

    Returns
    -------
    str
        ``"**"``, ``"*"`` or ``""``.

    Examples
    --------
    >>> from evaluq.significance import significance_mark
    >>> significance_mark(0.003), significance_mark(0.03), significance_mark(0.2)
    ('**', '*', '')
    """
    p = check_real("p", p, low=0.0, high=1.0)
    return "**" if p <= 0.01 else "*" if p <= 0.05 else ""


_CLIPPABLE = ("cross_entropy", "kl")
"""The metrics that are ``+inf`` at a predicted probability 0 and take ``eps``."""


_UNDEFINED = {
    "entropy_correlation": "the normalized entropies of the targets or of the predictions are "
                           "constant: one prediction row, or one target row, for every item",
    "entropy_similarity": "the normalized entropies of the targets or of the predictions are "
                          "all zero: one-hot rows",
}
"""Why a metric is NaN on a set of items, for the metrics that say."""


def _values_reason(name: str, values: Sequence[tuple[str, float]]) -> list[str]:
    """Why the systems' values of metric ``name`` are not finite (one entry per value)."""
    systems: dict[float | str, list[str]] = {}       # +inf, -inf or "nan": the systems
    for w, v in values:
        if not np.isfinite(v):
            systems.setdefault("nan" if np.isnan(v) else v, []).append(w)
    parts = []
    for value, names in systems.items():
        who = " and ".join(names)
        if value == "nan":
            parts.append(f"{name} of {who} is undefined (NaN) on these items ("
                         + _UNDEFINED.get(name, "no value is defined there") + ")")
            continue
        cause = (f": a prediction gives probability 0 to a class the target supports (the exact "
                 f"value; the metric '{name}[eps=1e-12]' clips the probabilities at eps, "
                 f"eq.metrics.{name}_metric(eps=1e-12) in Python)" if name in _CLIPPABLE else "")
        parts.append(f"{name} of {who} is {value:+g}{cause}")
    return parts


def _nan_reason(res: BootstrapTestResult, i: int) -> str | None:
    """:attr:`BootstrapTestResult.nan_reason` of metric ``i``."""
    lo, hi = res.interval.values[i]
    delta, p = float(res.delta[i]), float(res.pvalue[i])
    values = ((res.h0_name, float(res.h0_value[i])), (res.h1_name, float(res.h1_value[i])))
    if np.isfinite([v for _, v in values] + [delta, p, lo, hi]).all():
        return None
    parts = _values_reason(res.metrics[i], values)
    if np.isinf(delta):
        better = res.h1_name if delta > 0 else res.h0_name
        parts.append(f"delta is {delta:+g} ({better} better by an infinite margin)")
    elif np.isnan(delta):
        parts.append("delta is undefined (NaN)")
    parts += _resamples_reason(res, i, p, lo + hi, delta)
    return "; ".join(parts)


def _resamples_reason(res: BootstrapTestResult, i: int, p: float, bounds: float,
                      delta: float) -> list[str]:
    """Why metric ``i``'s p-value or interval is NaN: an infinite or undefined delta, or
    resampled deltas that are undefined (how many)."""
    undefined = [what for what, v in (("the p-value", p), ("the interval", bounds))
                 if np.isnan(v)]
    if not undefined:
        return []
    bad = sorted({int(np.sum(~np.isfinite(d[i]))) for what, d in (
        ("the p-value", res.distribution), ("the interval", res.bootstrap_distribution))
        if what in undefined} - {0})
    draws = (f"{' / '.join(map(str, bad))} of {res.n_resamples} resampled deltas are not "
             "finite" if bad else "")
    if not np.isfinite(delta):
        why = "they compare resampled deltas with delta" + (f"; {draws}" if draws else "")
    elif draws:
        why = (f"{draws}: the metric is undefined on those resamples (e.g. entropy "
               "correlation of a sub-sample whose entropies are constant), and counting them "
               "as not extreme would make p too small; a larger sample_size, or "
               "method='paired' (every resample the size of the test set), draws fewer")
    else:
        why = "the resampled deltas do not define it"
    are = "are" if len(undefined) > 1 else "is"
    return [f"{' and '.join(undefined)} {are} undefined (NaN): {why}"]


@dataclass(frozen=True, repr=False, eq=False)
class BootstrapTestResult(ResultBase):
    """Outcome of a two-system significance test (one entry per metric).

    Every difference is oriented so that a positive value means *h1 is better*:
    ``delta = M(h1) - M(h0)`` for higher-is-better metrics and ``M(h0) - M(h1)`` otherwise.

    Attributes
    ----------
    metrics, higher_is_better
        Metric names and orientations.
    h0_value, h1_value, delta, pvalue
        Arrays ``(M,)``: the metric of each system on all items, the oriented difference and
        the p-value of the chosen ``method``.
    count
        Resamples counted in the p-value (for ``berg-kirkpatrick``:
        ``#{delta*_b > 2 delta}``, BooStSa's "count sample diff is twice tot diff").
    distribution
        ``(M, B)`` resample distribution the p-value comes from: sub-sample deltas
        (``berg-kirkpatrick``), bootstrap deltas (``paired``) or permutation deltas
        (``permutation``, a null distribution centred on 0).
    bootstrap_distribution
        ``(M, B)`` bootstrap deltas the intervals come from (the same array as
        ``distribution`` except for ``permutation``, which draws a paired bootstrap for them).
    acceleration
        ``(M,)`` jackknife acceleration of the BCa interval (NaN for ``berg-kirkpatrick``).
    h0_name, h1_name
        Names of the two systems (default ``"h0"`` and ``"h1"``).
    method, n_resamples, sample_size, sample_n, n_items, n_runs, runs, confidence_level
        The settings (default ``confidence_level`` 0.95, ``n_runs`` 1, ``runs`` "pooled").
        ``sample_n`` is the number of items drawn per resample (summed over runs
        for two-level resampling, where it is the expected number; for crossed runs, ``R s``
        (run, item) pairs from ``s`` items drawn once for all runs). ``runs`` is
        ``"pooled"``, ``"two-level"`` or ``"crossed"``.
    """

    metrics: tuple[str, ...]
    higher_is_better: tuple[bool, ...]
    h0_value: np.ndarray
    h1_value: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    count: np.ndarray
    distribution: np.ndarray
    bootstrap_distribution: np.ndarray
    acceleration: np.ndarray
    method: str
    n_resamples: int
    sample_size: float
    sample_n: int
    n_items: int
    confidence_level: float = 0.95
    n_runs: int = 1
    runs: str = "pooled"
    h0_name: str = "h0"
    h1_name: str = "h1"
    _cache: dict[Any, Any] = field(default_factory=dict, compare=False)

    # --- derived quantities ---------------------------------------------------------------------

    @property
    def significance(self) -> tuple[str, ...]:
        """``**`` (p <= .01), ``*`` (p <= .05) or ``""`` per metric."""
        return tuple("" if np.isnan(p) else significance_mark(float(p)) for p in self.pvalue)

    @property
    def nan_reason(self) -> tuple[str | None, ...]:
        """Per metric, why its values, delta, p-value or interval are not all finite
        numbers (None when they are). A metric value may be infinite (the cross-entropy and
        the KL divergence of a prediction that gives probability 0 to a class the target
        supports are ``+inf``, the exact value): delta is then infinite (undefined when both
        systems are), and the p-value and the interval, which compare resampled deltas
        with it, are undefined (NaN). A value that is NaN is undefined on these items
        (entropy correlation of constant entropies, e.g. one prediction row for every
        item)."""
        return tuple(_nan_reason(self, i) for i in range(len(self.metrics)))

    @property
    def resamples(self) -> xr.DataArray:
        """The resample distribution the p-value comes from, dims ``(metric, resample)``."""
        what = METHODS[self.method].distribution
        return xr.DataArray(self.distribution, dims=(METRIC, RESAMPLE),
                            coords={METRIC: list(self.metrics)},
                            attrs={"description": what, **self._settings()})

    @property
    def estimate(self) -> xr.DataArray:
        """The oriented difference delta per metric (positive: h1 better)."""
        return xr.DataArray(self.delta, dims=(METRIC,), coords={METRIC: list(self.metrics)},
                            name="delta")

    def _default_kind(self) -> IntervalKind:
        return METHODS[self.method].intervals[0]  # type: ignore[return-value]

    def confidence_interval(self, confidence_level: float | None = None,
                            kind: IntervalKind | None = None) -> xr.DataArray:
        """Interval for the oriented difference, computed from the stored distribution.

        Parameters
        ----------
        confidence_level
            Default: the level given to :func:`~evaluq.bootstrap_test`.
        kind
            ``"bca"`` (bias-corrected and accelerated; default for ``paired`` and
            ``permutation``) or ``"percentile"``. For ``berg-kirkpatrick`` only
            ``"percentile"`` exists, and it is rescaled from the sub-sample size to the full
            test set as an m-out-of-n bootstrap: the quantiles of
            ``delta + sqrt(s / N) (delta*_b - delta)``.

        Returns
        -------
        xarray.DataArray
            Dims ``(metric, ci_bound)``.
        """
        level = (self.confidence_level if confidence_level is None
                 else check_confidence_level(confidence_level))
        spec = METHODS[self.method]
        chosen = spec.check_interval_kind(self._default_kind() if kind is None else kind)
        key = (level, chosen)
        if key not in self._cache:
            dist = self.bootstrap_distribution
            if spec.subsample:  # m-out-of-n: rescale the sub-sample deltas to N items
                scale = np.sqrt(self.sample_n / self.n_items)
                dist = self.delta[:, None] + scale * (dist - self.delta[:, None])
                bounds = percentile_interval(dist, level)
            elif chosen == "percentile":
                bounds = percentile_interval(dist, level)
            else:
                bounds = _engine.bca_interval(dist, self.delta, self.acceleration, level)
            ci = interval_from_bounds(bounds, dims=(METRIC,),
                                      coords={METRIC: list(self.metrics)}, kind=chosen,
                                      confidence_level=level)
            ci.attrs["description"] = "interval for delta (positive: h1 better)"
            self._cache[key] = ci
        return self._cache[key]

    # --- conversions ----------------------------------------------------------------------------

    def to_dataset(self) -> xr.Dataset:
        """All results as a Dataset with dims ``metric``, ``resample`` and ``ci_bound``."""
        coords = {METRIC: list(self.metrics)}
        ds = xr.Dataset(
            {
                "h0": ((METRIC,), self.h0_value),
                "h1": ((METRIC,), self.h1_value),
                "delta": ((METRIC,), self.delta),
                "pvalue": ((METRIC,), self.pvalue),
                "count": ((METRIC,), self.count),
                "significance": ((METRIC,), np.array(self.significance, dtype=object)),
                "higher_is_better": ((METRIC,), np.array(self.higher_is_better)),
                "interval": self.interval,
                "distribution": self.resamples,
            },
            coords=coords,
        )
        if METHODS[self.method].permutation_null:
            ds["bootstrap_distribution"] = ((METRIC, RESAMPLE), self.bootstrap_distribution)
        ds.attrs = self._settings()
        reasons = {m: r for m, r in zip(self.metrics, self.nan_reason, strict=True) if r}
        if reasons:   # per metric, as a str (netCDF attrs hold no mapping)
            ds.attrs[NAN_REASON] = "; ".join(f"{m}: {r}" for m, r in reasons.items())
        return ds

    def _settings(self) -> dict[str, Any]:
        return {"method": self.method, "n_resamples": self.n_resamples,
                "sample_size": self.sample_size, "sample_n": self.sample_n,
                "n_items": self.n_items, "n_runs": self.n_runs, "runs": self.runs,
                "confidence_level": self.confidence_level,
                "h0_name": self.h0_name, "h1_name": self.h1_name}

    def to_dataframe(self) -> pd.DataFrame:
        """One row per metric: h0, h1, delta, p, interval bounds and the marks."""
        ci = self.interval.values
        return pd.DataFrame(
            {"h0": self.h0_value, "h1": self.h1_value, "delta": self.delta,
             "pvalue": self.pvalue, "ci_lower": ci[:, 0], "ci_upper": ci[:, 1],
             "significance": list(self.significance),
             "higher_is_better": list(self.higher_is_better)},
            index=pd.Index(list(self.metrics), name=METRIC),
        )

    # --- printing -------------------------------------------------------------------------------

    def _p_text(self, i: int) -> str:
        p = float(self.pvalue[i])
        if not np.isfinite(p):
            reason = ("infinite delta" if np.isinf(self.delta[i]) else "undefined delta"
                      if np.isnan(self.delta[i]) else "undefined resamples")
            return f"p undefined ({reason})"
        return f"p = {p:.4f}"

    def summary(self) -> str:
        """A printout in the style of BooStSa's ``test`` output."""
        pct = f" ({self.sample_size:.0%})" if METHODS[self.method].subsample else ""
        lines = [
            f"Bootstrap significance test: method {self.method!r}, "
            f"h0 = {self.h0_name!r}, h1 = {self.h1_name!r}",
            f"{'items':.<22} {self.n_items}"
            + (f" ({self.n_runs} runs, {self.runs})" if self.n_runs > 1 else ""),
            f"{'sample size':.<22} {self.sample_n}{pct}",
            f"{'resamples':.<22} {self.n_resamples}",
            "delta is oriented: positive means h1 is better",
        ]
        ci = self.interval
        width = max(len(m) for m in self.metrics) + 3
        level = f"{self.confidence_level:.0%} CI ({ci.attrs['ci_kind']})"
        for i, name in enumerate(self.metrics):
            lo, hi = ci.values[i]
            lines.append(
                f"{name + ' ':.<{width}} h0: {self.h0_value[i]:.4f}  h1: {self.h1_value[i]:.4f}"
                f"  delta: {self.delta[i]:+.4f}  {level}: [{lo:+.4f}, {hi:+.4f}]")
        what = METHODS[self.method].count_rule
        labels = [f"{what} ({name}) " for name in self.metrics]
        col = max(50, *(len(label) + 3 for label in labels))
        for i, label in enumerate(labels):
            lines.append(f"{label:.<{col}} {int(self.count[i]):>6} / "
                         f"{self.n_resamples:<7} {self._p_text(i):<12} {self.significance[i]}")
        lines.append("** p <= .01   * p <= .05")
        lines += [f"{name}: {reason}" for name, reason in zip(self.metrics, self.nan_reason,
                                                              strict=True) if reason]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        ci = self.interval.values
        rows = "".join(
            f"<tr><td>{html.escape(m)}</td><td>{self.h0_value[i]:.4f}</td>"
            f"<td>{self.h1_value[i]:.4f}</td><td>{self.delta[i]:+.4f}</td>"
            f"<td>[{ci[i, 0]:+.4f}, {ci[i, 1]:+.4f}]</td>"
            f"<td>{html.escape(self._p_text(i))}</td><td>{self.significance[i]}</td></tr>"
            for i, m in enumerate(self.metrics))
        head = (f"<p><b>Bootstrap significance test</b> ({html.escape(self.method)}): "
                f"h0 = {html.escape(self.h0_name)}, h1 = {html.escape(self.h1_name)}; "
                f"{self.n_items} items, sample size {self.sample_n}, "
                f"{self.n_resamples} resamples. Positive delta: h1 better.</p>")
        return (head + "<table><thead><tr><th>metric</th><th>h0</th><th>h1</th><th>delta</th>"
                f"<th>{self.confidence_level:.0%} CI</th><th>p</th><th></th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")
