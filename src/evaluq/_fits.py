"""What the fitted Bayesian models share (:mod:`evaluq.hierarchical`, :mod:`evaluq.item_model`):
the fit base :class:`PosteriorFit` (posterior differences with a ROPE, rank probabilities,
diagnostics, save, repr; a model supplies its draws at each scope and its extras), the one
``agree`` of the frequentist comparison tables, the convergence table of a posterior
(arviz-stats' statistics), and the merge of a user's prior scales into the model's defaults."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._atomic import atomic_file, netcdf_checksums
from evaluq._convergence import convergence_arrays
from evaluq._deprecation import renamed_argument
from evaluq._dims import MODEL, MODEL_B, POSTERIOR_SAMPLE_DIMS
from evaluq._kernels import percentile_interval
from evaluq._validation import check_choice, check_confidence_level
from evaluq._warn import warn
from evaluq.errors import ConvergenceWarning
from evaluq.pairwise import pairwise_differences
from evaluq.ranks import rank_distribution

SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
AGREE_TOLERANCE: Final = 0.1
"""Where neither side has an interval, the two estimates agree within this (a P(best))."""
HALF_NORMAL_SD: Final = math.sqrt(1.0 - 2.0 / math.pi)
"""The SD of HalfNormal(1): a HalfNormal(s) prior's SD is s times this."""
WEAK_CONTRACTION: Final = 0.5
"""A scale whose prior contraction is below this is mostly its prior: the data removed less
than half of its prior variance (the fit and the report say so). For ``fit_items``'
sigma_item (4 models, one epoch, HalfNormal(2.5)) it was 0.18, 0.24, 0.90, 0.95 and 0.99
with 2, 5, 10, 40 and 200 items."""


def contraction_table(post: xr.Dataset, scales: Mapping[str, tuple[str, float]],
                      sample_dims: Sequence[Hashable] = SAMPLE_DIMS) -> pd.DataFrame:
    """How far the data moved each scale parameter from its HalfNormal(sigma) prior.

    The prior contraction of a parameter theta (Betancourt 2018, "Calibrating model-based
    inferences and decisions", sec. 2.2; Schad, Betancourt and Vasishth 2021) is

    .. math:: c = 1 - \\operatorname{Var}(\\theta \\mid y) / \\operatorname{Var}(\\theta),
              \\qquad \\operatorname{Var}(\\theta) = \\sigma^2 (1 - 2 / \\pi)

    for a HalfNormal(sigma) prior: near 1, the data decide the parameter; near 0, the
    posterior is the prior (a scale of 2 items, or of 3 languages, is mostly its prior).

    Parameters
    ----------
    post
        The posterior draws (``sample_dims`` and, for a per-model scale, ``model``).
    scales
        {variable of ``post``: (the prior's key in ``priors=``, the sigma of its HalfNormal
        prior)}; a variable not in ``post`` is skipped.
    sample_dims
        The draws' dims.

    Returns
    -------
    pandas.DataFrame
        Indexed by (quantity, model) (model ``""`` for a scalar) as
        :func:`convergence_table`: ``prior_key``, ``prior_sigma``, ``prior_sd``,
        ``posterior_sd``, ``contraction``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from evaluq._fits import contraction_table
    >>> draws = np.random.default_rng(0).normal(1.0, 0.1, (2, 500))
    >>> post = xr.Dataset({"sigma_item": (("chain", "draw"), draws)})
    >>> table = contraction_table(post, {"sigma_item": ("sigma_item_sigma", 2.0)})
    >>> round(float(table["contraction"].iloc[0]), 3)
    0.993
    """
    rows: list[tuple[str, str, str, float, float, float]] = []
    for name, (key, sigma) in scales.items():
        if name not in post:
            continue
        sd = post[name].std(dim=list(sample_dims), ddof=1)
        models = sd[MODEL].values if MODEL in sd.dims else [""]
        rows += [(str(name), str(m), key, float(sigma), float(sigma) * HALF_NORMAL_SD,
                  float(v)) for m, v in zip(models, np.atleast_1d(sd.values), strict=True)]
    index = pd.MultiIndex.from_arrays([[r[0] for r in rows], [r[1] for r in rows]],
                                      names=["quantity", MODEL])
    table = pd.DataFrame([r[2:] for r in rows], index=index,
                         columns=["prior_key", "prior_sigma", "prior_sd", "posterior_sd"])
    table["contraction"] = 1.0 - (table["posterior_sd"] / table["prior_sd"]) ** 2
    return table


def weak_contraction_note(table: pd.DataFrame, scope: str, more: str) -> str:
    """The sentence a fit and its report give when some scale is mostly its prior (below
    :data:`WEAK_CONTRACTION`), naming the scale, the ``scope`` that rests on it and the data
    that would inform it (``more``); ``""`` when every scale is learned from the data."""
    weak = table[table["contraction"] < WEAK_CONTRACTION]
    if weak.empty:
        return ""
    named = ", ".join(
        f"{q}{f' ({m})' if m else ''} {c:.2f} (prior HalfNormal({k} = {s:.3g}))"
        for (q, m), c, k, s in zip(weak.index, weak["contraction"], weak["prior_key"],
                                   weak["prior_sigma"], strict=True))
    keys = ", ".join(dict.fromkeys(weak["prior_key"]))
    return (f"the data barely move the prior of some scales (prior contraction, 1 - posterior "
            f"/ prior variance, below {WEAK_CONTRACTION}: {named}): the {scope} intervals "
            f"rest on those priors; more {more}, or a considered prior scale ({keys}), would "
            f"change them")


def cells_as_models(post: xr.Dataset, *, skip_fixed: bool = False) -> xr.Dataset:
    """Variables over other dims than ``model`` (cutpoints, grader x model, judge level x gold
    level) with those dims stacked into one ``model`` dim labelled ``dim=value,...``, as
    :func:`convergence_table` takes; ``skip_fixed`` leaves out a variable constant over the
    draws (a scale fixed by the priors: no R-hat or ESS)."""
    out = {}
    for name, var in post.data_vars.items():
        if skip_fixed and float(var.std()) == 0.0:
            continue
        extra = [d for d in var.dims if d not in POSTERIOR_SAMPLE_DIMS]
        if not extra or extra == [MODEL]:
            out[name] = var
            continue
        stacked = var.stack(_cell=extra)
        labels = [",".join(f"{d}={v}" for d, v in zip(extra, np.atleast_1d(key), strict=True))
                  for key in stacked["_cell"].values]
        out[name] = xr.DataArray(stacked.values, dims=(*POSTERIOR_SAMPLE_DIMS, MODEL),
                                 coords={MODEL: labels})
    return xr.Dataset(out)


def convergence_table(ds: xr.Dataset, sample_dims: Sequence[Hashable]) -> pd.DataFrame:
    """R-hat, bulk and tail ESS and the MCSE of the mean of every variable of ``ds``.

    Rows are indexed by (quantity, model) (model ``""`` for a scalar; cells that are NaN in
    every draw, quantities the data cannot identify, are left out); columns ``r_hat``,
    ``ess_bulk``, ``ess_tail``, ``mcse_mean``: arviz-stats' rank-normalised split R-hat and
    ESS (Vehtari et al. 2021, tail quantiles from ``rcParams["stats.ci_prob"]``), computed
    for every cell at once by :func:`evaluq._convergence.convergence_arrays`.
    """
    from arviz_base import rcParams

    dims = list(sample_dims)
    if len(dims) != 2:
        raise ValueError(f"`sample_dims` must be (chain, draw); got {dims}")
    # every variable's cells side by side in one (chain, draw, cell) array
    labels: list[tuple[str, str]] = []
    columns = []
    for name, var in ds.data_vars.items():
        var = var.transpose(*dims, ...)
        models = var[MODEL].values if MODEL in var.dims else [""]
        labels += [(str(name), str(model)) for model in models]
        columns.append(var.values.reshape(*var.shape[:2], -1))
    stats = convergence_arrays(np.concatenate(columns, axis=-1),
                               tail_prob=float(rcParams["stats.ci_prob"]))
    index = pd.MultiIndex.from_tuples(labels, names=["quantity", MODEL])
    table = pd.DataFrame(stats, index=index)
    return table.dropna(how="all")          # a quantity the cube cannot identify (all NaN)


def merge_priors(defaults: Mapping[str, float], priors: Any, keys: Collection[str], *,
                 signed: Collection[str] = ("alpha_mu",)) -> dict[str, float]:
    """``defaults`` updated with the user's ``priors`` (a dict or None).

    Unknown keys raise naming them; every value must be finite, and every key but the
    ``signed`` ones (locations) positive (a scale).
    """
    out = dict(defaults)
    if priors is None:
        return out
    if not isinstance(priors, dict):
        raise TypeError(f"`priors` must be a dict or None; got {type(priors).__name__}")
    for key, value in priors.items():
        if key not in keys:
            raise ValueError(f"`priors` has an unknown key {key!r}; expected one of "
                             f"{list(keys)}")
        value = float(value)
        if not np.isfinite(value) or (key not in signed and value <= 0):
            raise ValueError(f"`priors[{key!r}]` must be finite"
                             + ("" if key in signed else " and > 0") + f"; got {value}")
        out[key] = value
    return out


# --- the fit base ---------------------------------------------------------------------------------

SAMPLER_STATS: Final = ("diverging", "energy", "step_size", "n_steps", "depth", "tree_depth",
                        "mean_tree_accept", "acceptance_rate", "logp", "lp")
"""The sampler statistics a fit keeps (nutpie's and PyMC's names; the others are dropped)."""


def sampler_stats(raw: xr.DataTree) -> xr.Dataset:
    """The ``sample_stats`` group of a sampler's output, cut to :data:`SAMPLER_STATS`."""
    stats = raw["sample_stats"].to_dataset()
    return stats[[v for v in SAMPLER_STATS if v in stats]]


def divergences(stats: xr.Dataset) -> int:
    """The number of divergent transitions in ``sample_stats`` (0 without the statistic)."""
    return int(stats["diverging"].sum()) if "diverging" in stats else 0


def _quantity(where: Any) -> str:
    """A row of a :func:`convergence_table` as words: the quantity, then its model or other
    coordinate when it has one (``"dev m1"``, ``"sigma_item"``)."""
    return " ".join(str(part) for part in where if str(part) != "")


def convergence_problems(table: pd.DataFrame, n_divergent: int, *, rhat_max: float,
                         ess_min: float, advice: Mapping[str, str]) -> list[str]:
    """The advice of a fit's convergence warning from its :func:`convergence_table`: the
    worst R-hat above ``rhat_max``, the least bulk / tail ESS below ``ess_min``, divergent
    transitions; each names the quantity and model and ends with the model's own
    ``advice[...]`` (keys ``"r_hat"``, ``"ess"``, ``"divergences"``)."""
    out = []
    worst = table["r_hat"].max()
    if worst > rhat_max:
        where: Any = table["r_hat"].idxmax()
        out.append(f"R-hat up to {worst:.3f} ({_quantity(where)}) > {rhat_max}: the chains "
                   f"disagree; {advice['r_hat']}")
    ess = table[["ess_bulk", "ess_tail"]].min(axis=1)
    if ess.min() < ess_min:
        where = ess.idxmin()
        out.append(f"ESS down to {ess.min():.0f} ({_quantity(where)}) < {ess_min}: "
                   f"{advice['ess']}")
    if n_divergent > 0:
        out.append(f"{n_divergent} divergent transitions: {advice['divergences']}")
    return out


def check_rope(rope: Any) -> float:
    """The half-width of a region of practical equivalence: a finite number >= 0."""
    if isinstance(rope, bool) or not isinstance(rope, int | float | np.integer | np.floating) \
            or not np.isfinite(rope) or rope < 0:
        raise ValueError(f"`rope` must be a finite number >= 0 or None; got {rope!r}")
    return float(rope)


def rope_probabilities(draws: xr.DataArray, width: float,
                       sample_dims: Sequence[Hashable] = SAMPLE_DIMS) -> dict[str, xr.DataArray]:
    """P(D < -width), P(\\|D\\| <= width) and P(D > width) of the differences D = ``model``
    minus ``model_b`` of ``draws`` (``p_below``, ``p_rope``, ``p_above``, baycomp's
    ``p_left``, ``p_rope``, ``p_right`` of a difference right minus left)."""
    dims = list(sample_dims)
    diff = draws - draws.rename({MODEL: MODEL_B})
    return {"p_below": (diff < -width).mean(dims), "p_rope": (abs(diff) <= width).mean(dims),
            "p_above": (diff > width).mean(dims)}


def agree(table: pd.DataFrame, tolerance: float = AGREE_TOLERANCE) -> np.ndarray:
    """The ``agree`` column of every fit's frequentist comparison table.

    Where both sides have an interval: each side's point estimate lies inside the other
    side's interval (``posterior_mean`` in [``freq_lower``, ``freq_upper``] and
    ``frequentist`` in [``post_lower``, ``post_upper``]); with only the posterior interval:
    the frequentist estimate inside it; with neither: the two estimates within
    ``tolerance``.
    """
    has_freq_ci = table["freq_lower"].notna()
    has_post_ci = table["post_lower"].notna()
    post_in_freq = ((table["posterior_mean"] >= table["freq_lower"])
                    & (table["posterior_mean"] <= table["freq_upper"]))
    freq_in_post = ((table["frequentist"] >= table["post_lower"])
                    & (table["frequentist"] <= table["post_upper"]))
    close = (table["frequentist"] - table["posterior_mean"]).abs() <= tolerance
    return np.where(has_freq_ci & has_post_ci, post_in_freq & freq_in_post,
                    np.where(has_post_ci, freq_in_post, close)).astype(bool)


def posterior_interval(draws: xr.DataArray, level: float,
                       sample_dims: Sequence[Hashable] = SAMPLE_DIMS) -> np.ndarray:
    """Equal-tailed interval of ``draws`` over ``sample_dims`` by
    :func:`evaluq._kernels.percentile_interval`: the other dims' shape, then (lower, upper)."""
    flat = draws.transpose(..., *sample_dims).values
    return percentile_interval(flat.reshape(*flat.shape[:flat.ndim - len(sample_dims)], -1),
                               level)


FIT_CLASS = "evaluq_fit"
"""The attribute of a saved fit naming its class (``PosteriorFit.save``)."""
FIT_LOADER = "evaluq_fit_loader"
"""The attribute of a saved fit naming the function that reads it back."""


def read_fit_tree(path: Any, *, writer: str, what: str = "fit"
                  ) -> tuple[xr.DataTree, dict[str, Any]]:
    """The DataTree and the configuration of a fit saved by :meth:`PosteriorFit.save`.

    ``path`` must be a str or os.PathLike naming a file (TypeError, FileNotFoundError naming
    ``what``); a file that is not a saved fit, or is truncated or corrupted, raises
    ValueError naming ``writer`` (the method that writes such files) and never half-reads.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"`path` must be a str or os.PathLike (a NetCDF file written by "
                        f"{writer}); got {type(path).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"`path`: no {what} file at {str(path)!r}")
    try:
        tree = xr.open_datatree(path).load()
        tree.close()
        config = json.loads(tree.attrs["evaluq_config"])
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        raise ValueError(f"`path` {os.fspath(path)!r} cannot be read as a saved fit (not one "
                         f"written by {writer}, or truncated or corrupted): "
                         f"{type(err).__name__}: {err}") from err
    expected, found = writer.partition(".")[0], tree.attrs.get(FIT_CLASS)
    if found is not None and found != expected:
        loader = tree.attrs.get(FIT_LOADER) or f"the loader of {found}"
        raise ValueError(f"`path` {os.fspath(path)!r} was written by {found}.save, not by "
                         f"{writer}; read it with {loader}")
    return tree, config


def summary_columns(draws: xr.DataArray, prefix: str) -> dict[str, np.ndarray]:
    """``{prefix}_mean``, ``{prefix}_2.5%`` and ``{prefix}_97.5%`` of (chain, draw, model)
    draws: the posterior mean and 95% equal-tailed interval of each model."""
    bounds = posterior_interval(draws, 0.95)
    return {f"{prefix}_mean": draws.mean(SAMPLE_DIMS).values, f"{prefix}_2.5%": bounds[:, 0],
            f"{prefix}_97.5%": bounds[:, 1]}


class PosteriorFit:
    """What every fitted Bayesian model answers the same way (the base of
    :class:`evaluq.HierarchicalFit` and :class:`evaluq.ItemFit`).

    A subclass holds ``idata`` (the ArviZ DataTree, with ``posterior`` and ``sample_stats``),
    ``config`` and ``data`` (whose ``higher_is_better`` orients differences and ranks), names
    its ``SCOPES`` (the first is the default) and supplies ``_scope_draws(scope)``: the draws
    (chain, draw, model) of each model's quantity at that scope, and ``_diagnose`` (its
    convergence table); its extras (variance components, predictive checks, the frequentist
    comparison) are its own. Differences with a ROPE, ranks, diagnostics, save and the repr
    are written here once.
    """

    SCOPES: ClassVar[tuple[str, ...]] = ()
    LOADER: ClassVar[str] = ""
    """The function that reads a saved fit of this class back (``"evaluq.load_fit"``): written
    into the file, so a file given to another fit's loader is named with its own."""
    idata: xr.DataTree
    config: dict[str, Any]
    data: Any

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior group as a Dataset."""
        return self.idata["posterior"].to_dataset()

    @property
    def _higher_is_better(self) -> bool:
        return bool(self.data.higher_is_better)

    def _scope_draws(self, scope: str) -> xr.DataArray:
        raise NotImplementedError(f"{type(self).__name__} must supply _scope_draws(scope)")

    def _scale_priors(self) -> dict[str, tuple[str, float]]:
        """{posterior variable: (prior key, sigma)} of the fit's scale parameters with a
        HalfNormal(sigma) prior (none by default)."""
        return {}

    PRIOR_SCOPE: ClassVar[tuple[str, str]] = ("", "")
    """The scope whose intervals rest on the scales' priors, and the data that would inform
    them (the note of :meth:`prior_contraction` names both)."""

    def prior_contraction(self) -> pd.DataFrame:
        """How far the data moved each scale parameter from its prior.

        Returns
        -------
        pandas.DataFrame
            One row per (quantity, model) of the fit's HalfNormal-prior scales:
            ``prior_key`` (its name in ``priors=``), ``prior_sigma``, ``prior_sd``,
            ``posterior_sd`` and ``contraction`` = 1 -
            posterior / prior variance (:func:`contraction_table`; below 0.5 the scale is
            mostly its prior, which the fit's repr and the report say). ``attrs["note"]``
            holds that sentence (``""`` when every scale is learned from the data).
        """
        table = contraction_table(self.posterior, self._scale_priors())
        table.attrs["note"] = weak_contraction_note(table, *self.PRIOR_SCOPE)
        return table

    def _diagnose(self, post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
        raise NotImplementedError(f"{type(self).__name__} must supply _diagnose(post, stats)")

    def _check_scope(self, scope: str | None) -> str:
        return check_choice("scope", self.SCOPES[0] if scope is None else scope, self.SCOPES)

    @renamed_argument("level", "scope", meaning="the scope of the posterior quantity")
    def pairwise_differences(self, scope: str | None = None, *, rope: float | None = None,
                             confidence_level: float = 0.95) -> xr.Dataset:
        """Posterior differences between every pair of models (``model`` minus ``model_b``).

        Computed by :func:`evaluq.pairwise_differences` on the posterior draws of each
        model's quantity at ``scope`` (one kernel for the frequentist and the Bayesian side):
        ``ci`` is the equal-tailed credible interval (``ci_kind`` ``"percentile"``: the
        percentiles of the draws), ``p_greater`` is :math:`P(D > 0 \\mid data)`. Added, as
        in baycomp: ``p_below`` = P(D < -rope), ``p_rope`` = ``P(|D| <= rope)``,
        ``p_above`` = P(D > rope).

        Parameters
        ----------
        scope
            One of the fit's ``SCOPES``; default the first (``HierarchicalFit``:
            ``"population"``, differences of ``mu`` on a new language, or ``"benchmark"``,
            of the mean of theta over the cube's languages; ``ItemFit``: ``"benchmark"`` or
            ``"new_items"``, see :meth:`evaluq.ItemFit.scores`). (``level=`` is its
            deprecated name.)
        rope
            Half-width of the region of practical equivalence (>= 0, in score units);
            default 0.
        confidence_level
            Level of the credible intervals, in (0, 1); default 0.95.

        Returns
        -------
        xarray.Dataset
            The variables of :func:`evaluq.pairwise_differences` plus ``p_below``,
            ``p_rope``, ``p_above``; attrs ``scope`` and ``rope``.
        """
        scope = self._check_scope(scope)
        width = 0.0 if rope is None else check_rope(rope)
        draws = self._scope_draws(scope)
        out = pairwise_differences(draws, sample_dims=SAMPLE_DIMS,
                                   confidence_level=check_confidence_level(confidence_level),
                                   higher_is_better=self._higher_is_better)
        out = out.assign(rope_probabilities(draws, width))
        out.attrs.update(scope=scope, rope=width)
        return out

    @renamed_argument("level", "scope", meaning="the scope of the posterior quantity")
    def rank_probabilities(self, scope: str | None = None) -> xr.Dataset:
        """P(rank = r), expected rank and P(best) of every model
        (:func:`evaluq.rank_distribution` of the draws at ``scope``).

        Parameters
        ----------
        scope
            One of the fit's ``SCOPES``; default the first (see :meth:`pairwise_differences`).
            (``level=`` is its deprecated name.)
        """
        scope = self._check_scope(scope)
        out = rank_distribution(self._scope_draws(scope), sample_dims=SAMPLE_DIMS,
                                higher_is_better=self._higher_is_better)
        out.attrs["scope"] = scope
        return out

    def diagnostics(self) -> pd.DataFrame:
        """R-hat, bulk and tail ESS and the MCSE of the mean of every reported quantity;
        divergences.

        Returns
        -------
        pandas.DataFrame
            One row per (quantity, model): ``r_hat``, ``ess_bulk``, ``ess_tail``,
            ``mcse_mean`` (:func:`convergence_table`). ``attrs`` holds ``divergences``
            (count), ``problems`` (the advice the fit warns with, as a
            :class:`~evaluq.errors.ConvergenceWarning`) and, for the hierarchical model,
            ``bfmi`` (per chain).
        """
        return self._diagnose(self.posterior, self.idata["sample_stats"].to_dataset())

    def _warn_unconverged(self) -> list[str]:
        """The problems of :meth:`diagnostics`, warned as one ConvergenceWarning (at the
        user's line: ``evaluq._warn.warn``)."""
        problems: list[str] = self.diagnostics().attrs["problems"]
        if problems:
            warn("; ".join(problems), ConvergenceWarning)
        return problems

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fit (posterior, statistics, configuration, data hash) to a NetCDF file,
        atomically (a temporary file in the same folder, then renamed: a killed save leaves
        the old file whole).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (replaced). Read it back with :func:`evaluq.load_fit`
            (``HierarchicalFit``) or :func:`evaluq.load_item_fit` (``ItemFit``).
        """
        tree = self.idata.copy(deep=False)
        tree.attrs = {**self.idata.attrs, FIT_CLASS: type(self).__name__, FIT_LOADER: self.LOADER}
        with atomic_file(path) as tmp:
            tree.to_netcdf(tmp, encoding=netcdf_checksums(tree))

    # -- display: the subclass's header, summary table and notes ---------------------------------
    def _header(self) -> str:
        raise NotImplementedError

    def _summary_columns(self) -> dict[str, Any]:
        raise NotImplementedError

    def _summary(self) -> pd.DataFrame:
        """The repr's table: one row per model, the subclass's columns (``summary_columns``
        of its headline draws)."""
        return pd.DataFrame(self._summary_columns(),
                            index=pd.Index(self.data.models, name=MODEL))

    def _preamble(self) -> list[str]:
        return []

    def _trailer(self) -> list[str]:
        return []

    def _notes(self) -> list[str]:
        return []

    def _all_notes(self) -> list[str]:
        return [*self._notes(), self.prior_contraction().attrs["note"]]

    def __repr__(self) -> str:
        return "\n".join([self._header(), *self._preamble(),
                          self._summary().round(4).to_string(), *self._trailer()]
                         + [f"note: {text}" for text in self._all_notes() if text])

    def _repr_html_(self) -> str:
        return (f"<p><strong>{self._header()}</strong></p>"
                + "".join(f"<p>{text}</p>" for text in self._preamble())
                + self._summary().round(4).to_html()
                + "".join(f"<p><em>{text}</em></p>" for text in self._all_notes() if text))
