"""Per-vote covariates of a contextual Bradley-Terry fit (style control): read, checked,
standardised.

A covariate is a number per vote that says how the two answers differ in something other than
quality (length, markdown), oriented from ``model_a``'s side: it enters the log-odds that
``model_a`` wins with a coefficient ``beta``. It is given either as

* a column already holding that a-vs-b number (what arena-rank's ``feature_cols`` take), or
* a pair of columns ``(col_a, col_b)`` holding a non-negative count or size of each answer,
  turned into LMArena's relative difference ``(x_a - x_b) / (x_a + x_b)`` (0 when both are 0;
  LMArena's ``add_style_feature_cols``), which lies in [-1, 1].

With ``standardize=True`` (arena-rank's ``normalize_features``, its default) each covariate is
centred and divided by its standard deviation over the votes (ddof 0), so its coefficient is
per standard deviation; the means and SDs are recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from evaluq._validation import check_columns, named_rows

ARG = "covariates"
CONSTANT_TOL = 1e-12
"""A covariate whose SD over the votes is at most this times its largest absolute value
is constant: standardised, it is 0 in every vote and its coefficient is not identified."""


@dataclass(frozen=True)
class CovariateSpec:
    """One covariate: its name and its column, or its two columns (a, b)."""

    name: str
    column: str | None
    pair: tuple[str, str] | None

    @property
    def how(self) -> str:
        if self.pair is not None:
            a, b = self.pair
            return f"({a} - {b}) / ({a} + {b}), 0 when both are 0"
        return f"column {self.column!r} (a-vs-b, as given)"

    @property
    def columns(self) -> tuple[str, ...]:
        return self.pair if self.pair is not None else (str(self.column),)


@dataclass(frozen=True)
class Covariates:
    """The covariates of the votes used: ``values`` (N, q) in the votes' orientation (a vs
    b), after standardisation if asked; ``mean`` / ``sd`` the raw values' (ddof 0)."""

    specs: tuple[CovariateSpec, ...]
    values: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    standardized: bool
    raw: np.ndarray

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.specs]

    def describe(self) -> dict[str, Any]:
        """What ``details["covariates"]`` holds."""
        unit = "per SD of the covariate" if self.standardized else "per unit of the covariate"
        return {
            "names": self.names, "definition": {s.name: s.how for s in self.specs},
            "standardized": self.standardized, "coefficient_unit": unit,
            "mean": dict(zip(self.names, self.mean.tolist(), strict=True)),
            "sd": dict(zip(self.names, self.sd.tolist(), strict=True)),
        }


def _pair(name: str, value: Any) -> CovariateSpec:
    if isinstance(value, str):
        return CovariateSpec(name=name, column=value, pair=None)
    if (isinstance(value, tuple | list) and len(value) == 2
            and all(isinstance(c, str) for c in value)):
        return CovariateSpec(name=name, column=None, pair=(value[0], value[1]))
    raise TypeError(f"`{ARG}`[{name!r}] must be a column name (a per-vote a-vs-b value) or a "
                    f"pair of column names (col_a, col_b); got {value!r}")


def parse(covariates: Any) -> tuple[CovariateSpec, ...] | None:
    """The covariates argument as specs (None: no covariate)."""
    if covariates is None:
        return None
    if isinstance(covariates, str):
        covariates = [covariates]
    if isinstance(covariates, Mapping):
        if not all(isinstance(k, str) for k in covariates):
            raise TypeError(f"`{ARG}` must map covariate names (str) to columns; got keys "
                            f"{list(covariates)!r}")
        specs = tuple(_pair(k, v) for k, v in covariates.items())
    elif isinstance(covariates, Sequence) and all(isinstance(c, str) for c in covariates):
        specs = tuple(CovariateSpec(name=c, column=c, pair=None) for c in covariates)
    else:
        raise TypeError(
            f"`{ARG}` must be a list of columns (each a per-vote a-vs-b value) or a mapping "
            f"name -> column or (col_a, col_b), e.g. {{'length': ('tokens_a', 'tokens_b')}}; "
            f"got {covariates!r}")
    if not specs:
        raise ValueError(f"`{ARG}` is empty; pass None for no covariate")
    names = [s.name for s in specs]
    if len(set(names)) < len(names):
        raise ValueError(f"`{ARG}` names a covariate twice: {names}")
    return specs


def _numbers(df: pd.DataFrame, column: str, name: str) -> np.ndarray:
    series = df[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise TypeError(f"column {column!r} (`{ARG}`, covariate {name!r}) must be numeric; it "
                        f"has dtype {series.dtype} (e.g. {series.iloc[0]!r}): convert it first")
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"column {column!r} (`{ARG}`, covariate {name!r}) has "
                         f"{int(bad.sum())} missing or infinite value(s) at row(s) "
                         f"{named_rows(bad, df.index)}; remove or fill these votes explicitly")
    return values


def _value(df: pd.DataFrame, spec: CovariateSpec) -> np.ndarray:
    if spec.pair is None:
        return _numbers(df, str(spec.column), spec.name)
    a, b = (_numbers(df, c, spec.name) for c in spec.pair)
    negative = (a < 0) | (b < 0)
    if negative.any():
        raise ValueError(f"`{ARG}`[{spec.name!r}] = {spec.pair!r} is a pair of counts or sizes "
                         f"(relative difference (a - b) / (a + b)), but has negative values at "
                         f"row(s) {named_rows(negative, df.index)}; pass a precomputed a-vs-b "
                         f"column instead")
    total = a + b
    return (a - b) / np.where(total == 0, 1.0, total)


def read(df: pd.DataFrame, specs: tuple[CovariateSpec, ...], keep: np.ndarray,
         standardize: bool) -> Covariates:
    """The covariates of the votes ``keep`` (N, q), checked and standardised if asked."""
    check_columns("`votes`", df.columns,
                  {f"{ARG}[{s.name!r}]": c for s in specs for c in s.columns})
    kept = df[keep]
    raw = np.column_stack([_value(kept, s) for s in specs])
    mean, sd = raw.mean(axis=0), raw.std(axis=0)
    scale = np.abs(raw).max(axis=0)
    constant = ~(sd > CONSTANT_TOL * scale)
    zero = scale == 0
    bad = constant if standardize else zero
    if bad.any():
        which = [s.name for s, c in zip(specs, bad, strict=True) if c]
        why = ("it is 0 in every vote: it says nothing" if not standardize else
               "centred it is 0 in every vote, so its coefficient is not identified (a "
               "constant a-vs-b value is a side advantage of model_a: to fit one, pass "
               "standardize_covariates=False)")
        raise ValueError(f"`{ARG}`: covariate(s) {which} take one value in every vote "
                         f"({raw[0, bad].tolist()}): {why}; remove it")
    values = (raw - mean) / sd if standardize else raw
    return Covariates(specs=specs, values=values, mean=mean, sd=sd, standardized=standardize,
                      raw=raw)


def check_identified(cov: Covariates, a: np.ndarray, b: np.ndarray, n_models: int) -> None:
    """Refuse covariates that are linear combinations of the model identities (+1 for
    ``model_a``, -1 for ``model_b``) or of each other: their coefficients and the ratings
    cannot be told apart. Checked on the raw values (divided by their SD), so that centring
    (whose constant shift is a side advantage, identified by itself) cannot hide a covariate
    that is a fixed property of each model; on the Gram matrix of the votes' design columns
    (the models' block made full rank along its null direction ``(1, ..., 1)``)."""
    n, m = a.size, n_models
    incidence = sp.csr_matrix((np.r_[np.ones(n), -np.ones(n)],
                               (np.r_[np.arange(n), np.arange(n)], np.r_[a, b])), shape=(n, m))
    z = cov.raw / cov.sd if cov.standardized else cov.raw
    q = z.shape[1]
    gram = np.zeros((m + q, m + q))
    gram[:m, :m] = (incidence.T @ incidence).toarray() + 1.0 / m
    cross = np.asarray(incidence.T @ z)
    gram[:m, m:], gram[m:, :m] = cross, cross.T
    gram[m:, m:] = z.T @ z
    scale = np.sqrt(np.diag(gram))
    vals, vecs = np.linalg.eigh(gram / np.outer(scale, scale))
    null = vals < 1e-10 * vals.max()
    if not null.any():
        return
    loading = np.abs(vecs[m:, null]).max(axis=1)
    which = [name for name, w in zip(cov.names, loading, strict=True) if w > 1e-6]
    raise ValueError(
        f"`{ARG}`: {which} are collinear with the models compared (a covariate that is a fixed "
        f"property of each model, such as its typical length, is the same as the models' "
        f"strengths) or with each other, so their coefficients and the ratings cannot be told "
        f"apart; use per-vote differences that vary within model pairs, or remove one")
