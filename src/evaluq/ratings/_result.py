"""The result of :func:`evaluq.fit_ratings`: ratings, their uncertainty, win probabilities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as st
import xarray as xr

from evaluq._dims import CI, MODEL, MODEL_B, NAN_REASON, RESAMPLE, SE
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import percentile_interval
from evaluq._results import ResultBase
from evaluq._validation import check_confidence_level
from evaluq.ratings import _newton

ELO_FACTOR = 400.0 / np.log(10.0)
"""Elo points per logit: ``rating = 400 / ln(10) * theta + 1000`` (arena-rank's scale)."""
ELO_OFFSET = 1000.0

COVARIATE = "covariate"
"""The dim of the covariates' coefficients (``fit_ratings(..., covariates=...)``)."""
NO_COVARIATES = "the fit has no covariates (fit_ratings(..., covariates=...))"
NO_TIE_MODEL = ("ties='{ties}' has no tie parameter (only ties='davidson' models ties)")
SELF_PAIR = "a model is not compared with itself"
BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Scale:
    """``rating = factor * theta + offset``."""

    name: str
    factor: float
    offset: float

    def to_rating(self, theta: np.ndarray) -> np.ndarray:
        return self.factor * theta + self.offset

    def to_logit(self, rating: np.ndarray) -> np.ndarray:
        return (rating - self.offset) / self.factor


def scale_of(name: str) -> Scale:
    """The Elo or the logit scale."""
    return Scale("elo", ELO_FACTOR, ELO_OFFSET) if name == "elo" else Scale("logit", 1.0, 0.0)


@dataclass(frozen=True, repr=False)
class RatingsResult(ResultBase):
    """Ratings from pairwise votes (:func:`evaluq.fit_ratings`).

    Attributes
    ----------
    rating : DataArray
        Each model's rating (``model``) on the result's scale (``details["scale"]``), under the
        identifiability stated in ``details["identifiability"]`` (also in every output's
        attributes).
    se : DataArray
        Standard error of each rating: from the (cluster-)robust sandwich covariance, or the
        SD of the bootstrap ratings.
    covariance : DataArray
        Covariance of the ratings (``model``, ``model_b``); the sandwich's, or the bootstrap
        ratings' covariance.
    draws : DataArray
        Ratings (``resample``, ``model``): the bootstrap fits, or draws from the normal
        approximation of the sandwich; ready for :func:`evaluq.rank_distribution`,
        :func:`evaluq.leaderboard`, :func:`evaluq.significance_groups` and
        :func:`evaluq.pairwise_differences` (pass ``observed=result.rating`` to rank by the
        estimates rather than the draws' mean).
    tie_parameter : DataArray
        Davidson's ``nu`` (0-d), NaN with a ``nan_reason`` unless ``ties="davidson"``;
        :attr:`tie_parameter_newman` is ``nu / 2``, the ``v`` that evalica's ``newman``
        reports.
    tie_se : DataArray
        Its standard error (delta method from ``log(nu)``, or the bootstrap SD).
    tie_draws : DataArray
        ``nu`` in every draw (``resample``); NaN unless ``ties="davidson"``.
    counts : Dataset
        Each model's ``n_votes``, ``wins``, ``losses`` and ``ties`` (after ``ties="drop"``).
    confidence_level : float
        Level of :attr:`interval`.
    details : dict
        How the fit was made: ties, interval, cluster, covariance kind, scale,
        identifiability, prior, votes, clusters, iterations, covariates (their definitions,
        means and SDs, whether standardised; None without covariates).
    covariate_coefficient : DataArray or None
        With ``covariates``: each covariate's coefficient (``covariate``) on the ratings'
        scale without its offset (Elo points, or logits, added to ``model_a``'s side per unit
        of the covariate; per SD when standardised); the ratings are then the
        covariate-controlled ones. None without covariates.
    covariate_se : DataArray or None
        Their standard errors (sandwich, or the bootstrap SD).
    covariate_draws : DataArray or None
        Their values in every draw (``resample``, ``covariate``).
    """

    rating: xr.DataArray
    se: xr.DataArray
    covariance: xr.DataArray
    draws: xr.DataArray
    tie_parameter: xr.DataArray
    tie_se: xr.DataArray
    tie_draws: xr.DataArray
    counts: xr.Dataset
    confidence_level: float
    details: dict[str, Any] = field(default_factory=dict)
    _params: np.ndarray = field(default_factory=lambda: np.zeros(0))
    _param_cov: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariate_coefficient: xr.DataArray | None = None
    covariate_se: xr.DataArray | None = None
    covariate_draws: xr.DataArray | None = None

    # --- ResultBase ------------------------------------------------------------------------------
    @property
    def estimate(self) -> xr.DataArray:
        """The ratings (:attr:`rating`)."""
        return self.rating

    @property
    def distribution(self) -> xr.DataArray:
        """:attr:`draws` with the ``resample`` dim last."""
        return self.draws.transpose(MODEL, RESAMPLE)

    def _every_model_draws(self) -> np.ndarray:
        """The draws (resample, model) over every rated model: NaN for a model without
        draws (a judge-assisted fit's model without a gold vote, whose rating is NaN)."""
        return np.asarray(self.draws.reindex({MODEL: self.rating[MODEL].values}).values)

    @property
    def ci(self) -> xr.DataArray:
        """The ratings' interval at the stored level (:meth:`confidence_interval`)."""
        return self.confidence_interval()

    @property
    def scale(self) -> Scale:
        return scale_of(self.details["scale"])

    @property
    def davidson(self) -> bool:
        return bool(self.details["ties"] == "davidson")

    def _level(self, confidence_level: float | None) -> float:
        return (self.confidence_level if confidence_level is None
                else check_confidence_level(confidence_level))

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The ratings' interval at ``confidence_level`` (default: the stored level).

        ``interval="sandwich"``: ``rating +- z * se`` (``ci_kind`` ``"normal"``);
        ``interval="bootstrap"``: the percentile interval of the bootstrap ratings.

        Parameters
        ----------
        confidence_level : float, optional
            In (0, 1); default the level given to :func:`evaluq.fit_ratings`.

        Returns
        -------
        xarray.DataArray
            (``model``, ``ci_bound``).
        """
        level = self._level(confidence_level)
        if self.details["interval"] == "bootstrap":
            draws = self._every_model_draws().T
            bounds = percentile_interval(draws, level, skipna=bool(np.isnan(draws).any()))
            kind = "percentile"
        else:
            z = st.norm.ppf(0.5 + level / 2.0)
            est, se = self.rating.values, self.se.values
            bounds, kind = np.stack([est - z * se, est + z * se], axis=-1), "normal"
        ci = interval_from_bounds(bounds, dims=(MODEL,), coords={MODEL: self.rating[MODEL]},
                                  kind=kind, confidence_level=level, name=CI)
        ci.attrs.update(self._attrs())
        return ci

    def covariate_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The covariates' coefficients' interval (``covariate``, ``ci_bound``).

        ``interval="sandwich"``: ``coefficient +- z * se``; ``interval="bootstrap"``: the
        percentile interval of the bootstrap coefficients.

        Parameters
        ----------
        confidence_level : float, optional
            In (0, 1); default the stored level.

        Returns
        -------
        xarray.DataArray

        Raises
        ------
        ValueError
            The fit has no covariates.
        """
        coef, se, draws = self.covariate_coefficient, self.covariate_se, self.covariate_draws
        if coef is None or se is None or draws is None:
            raise ValueError(f"covariate_interval: {NO_COVARIATES}")
        level = self._level(confidence_level)
        if self.details["interval"] == "bootstrap":
            bounds = percentile_interval(draws.transpose(COVARIATE, RESAMPLE).values, level)
            kind = "percentile"
        else:
            z = st.norm.ppf(0.5 + level / 2.0)
            bounds = np.stack([coef.values - z * se.values, coef.values + z * se.values], axis=-1)
            kind = "normal"
        ci = interval_from_bounds(bounds, dims=(COVARIATE,), coords={COVARIATE: coef[COVARIATE]},
                                  kind=kind, confidence_level=level, name="covariate_ci")
        ci.attrs.update({**self._attrs(), **coef.attrs})
        return ci

    @property
    def covariate_ci(self) -> xr.DataArray:
        """The covariates' interval at the stored level (:meth:`covariate_interval`)."""
        return self.covariate_interval()

    def covariate_table(self) -> pd.DataFrame:
        """The covariates' coefficients, SEs and interval (one row per covariate), with how
        each covariate was made, its mean and SD over the votes."""
        coef = self.covariate_coefficient
        if coef is None or self.covariate_se is None:
            raise ValueError(f"covariate_table: {NO_COVARIATES}")
        ci, info = self.covariate_ci, self.details["covariates"]
        names = [str(n) for n in coef[COVARIATE].values]
        table = pd.DataFrame({
            "coefficient": coef.values, "se": self.covariate_se.values,
            "lower": ci.sel(ci_bound="lower").values, "upper": ci.sel(ci_bound="upper").values,
            "definition": [info["definition"][n] for n in names],
            "mean": [info["mean"][n] for n in names], "sd": [info["sd"][n] for n in names],
        }, index=pd.Index(names, name=COVARIATE))
        table.attrs = {"unit": coef.attrs["unit"], "confidence_level": self.confidence_level}
        return table

    # --- pairwise probabilities -------------------------------------------------------------------
    def _pair_grid(self, theta: np.ndarray,
                   lam: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """P(model beats model_b), P(tie) and the logit difference on the (..., model,
        model_b) grid."""
        d = theta[..., :, None] - theta[..., None, :]
        lam_b = None if lam is None else np.asarray(lam)[..., None, None]
        with np.errstate(invalid="ignore"):          # a model without a rating: NaN
            pw, _, pt = _newton.pair_probabilities(d, lam_b)
        return pw, pt, d

    def _grid_array(self, values: np.ndarray, name: str, reason: str | None = None,
                    dims: tuple[str, ...] = (MODEL, MODEL_B)) -> xr.DataArray:
        models = self.rating[MODEL].values
        values = np.array(values, dtype=np.float64)
        eye = np.eye(models.size, dtype=bool)
        values[..., eye] = np.nan
        coords = {MODEL: models, MODEL_B: models}
        out = xr.DataArray(values, dims=dims, coords=coords, name=name)
        out.attrs = {**self._attrs(), NAN_REASON: reason or SELF_PAIR}
        return out

    @property
    def win_probability(self) -> xr.DataArray:
        """P(``model`` beats ``model_b``) in one vote (``model``, ``model_b``), from the
        estimates; NaN on the diagonal. With covariates: at covariates 0 (standardised: at
        the votes' mean a-vs-b difference)."""
        theta, lam = self._point()
        pw, _, _ = self._pair_grid(theta, lam)
        return self._grid_array(pw, "win_probability")

    @property
    def tie_probability(self) -> xr.DataArray:
        """P(tie) in one vote (``model``, ``model_b``) under Davidson's model; NaN with a
        ``nan_reason`` for the other tie rules."""
        theta, lam = self._point()
        if lam is None:
            nan = np.full((theta.size, theta.size), np.nan)
            return self._grid_array(nan, "tie_probability",
                                    NO_TIE_MODEL.format(ties=self.details["ties"]))
        _, pt, _ = self._pair_grid(theta, lam)
        return self._grid_array(pt, "tie_probability")

    def _point(self) -> tuple[np.ndarray, np.ndarray | None]:
        m = self.rating.sizes[MODEL]
        lam = self._params[m] if self.davidson else None
        return self._params[:m], lam

    def win_probability_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """Interval of P(``model`` beats ``model_b``) (``model``, ``model_b``, ``ci_bound``).

        Sandwich: a normal interval for ``logit P`` (delta method from the parameters'
        covariance) mapped back through the logistic function, so it stays in (0, 1);
        bootstrap: the percentile interval of P over the resamples.

        Parameters
        ----------
        confidence_level : float, optional
            In (0, 1); default the stored level.

        Returns
        -------
        xarray.DataArray
        """
        level = self._level(confidence_level)
        if self.details["interval"] == "bootstrap":
            bounds, kind = self._percentile_bounds(level), "percentile"
        else:
            bounds, kind = self._delta_bounds(level), "normal"
        bounds[np.eye(bounds.shape[0], dtype=bool)] = np.nan
        ci = interval_from_bounds(bounds, dims=(MODEL, MODEL_B),
                                  coords={MODEL: self.rating[MODEL].values,
                                          MODEL_B: self.rating[MODEL].values},
                                  kind=kind, confidence_level=level, name="win_probability_ci")
        ci.attrs.update(self._attrs())
        return ci

    def _percentile_bounds(self, level: float) -> np.ndarray:
        """Percentile bounds of P(win) over the resamples, a block of ``model`` rows at a
        time (at most ``BLOCK_ELEMENTS`` probabilities held at once)."""
        theta = self.scale.to_logit(self._every_model_draws())    # (resample, model)
        unrated = bool(np.isnan(theta).any())
        lam = np.log(self.tie_draws.values)[:, None] if self.davidson else None
        m = theta.shape[1]
        rows = max(1, BLOCK_ELEMENTS // max(theta.size, 1))
        bounds = np.empty((m, m, 2))
        for begin in range(0, m, rows):
            d = theta[:, begin:begin + rows, None] - theta[:, None, :]
            with np.errstate(invalid="ignore"):
                pw, _, _ = _newton.pair_probabilities(d, None if lam is None else lam[..., None])
            bounds[begin:begin + rows] = percentile_interval(np.moveaxis(pw, 0, -1), level,
                                                             skipna=unrated)
        return bounds

    def _delta_bounds(self, level: float) -> np.ndarray:
        """Normal bounds of logit P(win) by the delta method, mapped back."""
        theta, lam = self._point()
        m, cov = theta.size, self._param_cov
        var_d = (np.diag(cov)[:m, None] + np.diag(cov)[None, :m] - 2.0 * cov[:m, :m])
        d = theta[:, None] - theta[None, :]
        if lam is None:
            center, var = d, var_d
        else:
            nu = np.exp(lam)
            e = np.exp(-0.5 * d)
            center = 0.5 * d - np.log(e + nu)
            a = 0.5 + 0.5 * e / (e + nu)   # d logit / d d
            b = -nu / (e + nu)              # d logit / d lam
            cov_dl = cov[:m, m][:, None] - cov[:m, m][None, :]
            var = a ** 2 * var_d + 2.0 * a * b * cov_dl + b ** 2 * cov[m, m]
        z = st.norm.ppf(0.5 + level / 2.0)
        half = z * np.sqrt(np.clip(var, 0.0, None))
        lo, hi = center - half, center + half
        return np.stack([0.5 * (1 + np.tanh(0.5 * lo)), 0.5 * (1 + np.tanh(0.5 * hi))], axis=-1)

    @property
    def tie_parameter_newman(self) -> xr.DataArray:
        """``nu / 2``: the tie parameter ``v`` of Newman (2023) and evalica's ``newman``
        (``P(tie) = 2 v sqrt(pi_i pi_j) / (pi_i + pi_j + 2 v sqrt(pi_i pi_j))``)."""
        out = self.tie_parameter / 2.0
        out.attrs = {**self.tie_parameter.attrs, "parametrisation": "Newman (2023): v = nu / 2"}
        return out.rename("tie_parameter_newman")

    # --- conversions --------------------------------------------------------------------------
    def _attrs(self) -> dict[str, Any]:
        d = self.details
        return {"scale": d["scale"], "identifiability": d["identifiability"], "ties": d["ties"],
                "interval": d["interval"], "covariance_kind": d["covariance_kind"],
                "prior": d["prior"]}

    def to_dataset(self) -> xr.Dataset:
        """Ratings, SEs, interval, win (and tie) probabilities with intervals, draws."""
        variables: dict[Any, Any] = {
            "rating": self.rating, SE: self.se, CI: self.ci,
            "win_probability": self.win_probability,
            "win_probability_ci": self.win_probability_interval(),
            "tie_probability": self.tie_probability, "draws": self.draws,
            "tie_parameter": self.tie_parameter, "tie_se": self.tie_se,
            **{name: self.counts[name] for name in self.counts.data_vars},
        }
        if self.covariate_coefficient is not None:
            variables.update({"covariate_coefficient": self.covariate_coefficient,
                              "covariate_se": self.covariate_se,
                              "covariate_ci": self.covariate_ci,
                              "covariate_draws": self.covariate_draws})
        ds = xr.Dataset(variables)
        ds.attrs = {**self._attrs(), "confidence_level": self.confidence_level,
                    **{k: v for k, v in self.details.items() if isinstance(v, int | float | str)}}
        return ds

    def to_dataframe(self) -> pd.DataFrame:
        """The ratings table, best first: rating, se, lower, upper, rank, votes, wins, losses,
        ties."""
        ci = self.ci
        table = pd.DataFrame({
            "rating": self.rating.values, "se": self.se.values,
            "lower": ci.sel(ci_bound="lower").values, "upper": ci.sel(ci_bound="upper").values,
            **{str(name): self.counts[name].values.astype(np.int64)
               for name in self.counts.data_vars},
        }, index=pd.Index(self.rating[MODEL].values, name=MODEL))
        table = table.sort_values("rating", ascending=False, kind="stable")
        rated = table["rating"].notna().to_numpy()
        ranks = np.arange(1, len(table) + 1)
        table.insert(4, "rank", ranks if rated.all() else pd.Series(
            [int(r) if ok else pd.NA for r, ok in zip(ranks, rated, strict=True)],
            index=table.index, dtype="Int64"))
        attrs: dict[Any, Any] = {**self._attrs(), "confidence_level": self.confidence_level,
                                 "caption": self._caption()}
        reason = self.rating.attrs.get(NAN_REASON)
        if reason is not None:
            attrs["nan_reasons"] = {name: reason for name in ("rating", "se", "lower", "upper",
                                                              "rank")}
        table.attrs = attrs
        return table

    def _caption(self) -> str:
        d = self.details
        how = ("the (cluster-)robust sandwich (" + d["covariance_kind"] + ")"
               if d["interval"] == "sandwich" else f"{d['n_resamples']} bootstrap resamples")
        covariates = d.get("covariates")
        return (f"Ratings ({d['scale']} scale; {d['identifiability']}), ties {_ties_text(d)}, "
                f"{self.confidence_level:.0%} intervals from {how}"
                + (f" clustered by {d['cluster']!r}" if d["cluster"] else "")
                + (f", controlled for {', '.join(covariates['names'])}" if covariates else "")
                + ".")

    def __repr__(self) -> str:
        d = self.details
        head = (f"RatingsResult({d['n_models']} models, {d['n_votes']} votes"
                + (f", {d['n_clusters']} clusters of {d['cluster']!r}" if d["cluster"] else "")
                + f"; ties={_ties_text(d)}, interval={d['interval']!r}, scale={d['scale']!r})")
        lines = [head, f"  {d['identifiability']}"]
        if self.davidson:
            lines.append(f"  tie parameter nu = {float(self.tie_parameter):.4f} "
                         f"(se {float(self.tie_se):.4f}; Newman's v = nu/2 = "
                         f"{float(self.tie_parameter) / 2:.4f})")
        if d["prior"] != "none":
            lines.append(f"  prior: {d['prior']}")
        if "lam" in d:
            worth = (f"worth {d['effective_labels']:.0f} (gain {d['gain']:.2f})"
                     if np.isfinite(d["gain"]) else "(gain over gold-only not estimable)")
            lines.append(f"  judge-assisted (PPI++): lambda {d['lam']:.3g}; {d['n_labelled']} "
                         f"gold votes {worth}")
            if d.get("notes"):
                lines.append(f"  note: {d['notes']}")
        if self.covariate_coefficient is not None:
            coefs = self.covariate_table()
            lines.append(f"  covariates ({coefs.attrs['unit']}): " + "; ".join(
                f"{n} {r.coefficient:.2f} [{r.lower:.2f}, {r.upper:.2f}]"
                for n, r in coefs.iterrows()))
        table = self.to_dataframe().head(20).to_string(float_format=lambda v: f"{v:.2f}")
        more = (f"\n  ... {d['n_models'] - 20} more models" if d["n_models"] > 20 else "")
        return "\n".join(lines) + "\n" + table + more

    def _repr_html_(self) -> str:
        table = self.to_dataframe().to_html(float_format=lambda v: f"{v:.2f}")
        return f"<div><b>RatingsResult</b><p>{self._caption()}</p>{table}</div>"


def _ties_text(details: dict[str, Any]) -> str:
    """The tie rule used, and why when ``ties="auto"`` chose it."""
    used = repr(details["ties"])
    if details.get("ties_requested") != "auto":
        return used
    return used + (" (auto: the votes hold ties)" if details["ties"] == "davidson"
                   else " (auto: no tie in the votes)")
