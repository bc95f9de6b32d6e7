"""``fit_hierarchical``: sample the marginal model and wrap the posterior in a fit object."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import FACTOR, LANGUAGE, MODEL, MODEL_B, POSTERIOR_SAMPLE_DIMS
from evaluq._fits import (
    PosteriorFit,
    divergences,
    read_fit_tree,
    sampler_stats,
    summary_columns,
)
from evaluq._nutpie_cache import compile_pymc_model, pymc_sampling, with_data
from evaluq._schema import orientation, validate
from evaluq._validation import (
    RNGLike,
    check_bool,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_rng,
)
from evaluq._warn import warn
from evaluq.errors import ConvergenceWarning, NotFittedError
from evaluq.hierarchical._compare import compare, frequentist_side
from evaluq.hierarchical._data import (
    TEST_SET_ERRORS,
    HierarchicalData,
    cube_digest,
    cube_statistics,
)
from evaluq.hierarchical._diagnostics import diagnostics
from evaluq.hierarchical._model import (
    MODELS,
    build_model,
    model_inputs,
    resolve_priors,
    target_accept,
    tau_m_evidence,
    tau_m_from_coordinates,
    tau_m_variant,
)
from evaluq.hierarchical._posterior import conditional_draws, sigma_boot_draws

SAMPLERS: Final = ("auto", "nutpie", "pymc")
SCOPES: Final = ("population", "benchmark")
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
RETRY_TARGET_ACCEPT: Final = 0.95
"""The least target acceptance of the retry of a fit that failed its checks."""
KEEP_CELLS_MAX: Final = 10_000_000   # theta (chain, draw, model, language) kept up to this size
_COMPILED: dict[tuple[str, int, bool, int, str], Any] = {}
"""nutpie models compiled in this process, by (model, number of models, paired errors, number
of error factors, coordinates of tau_m): refits reuse them."""


def nutpie_available() -> bool:
    """Whether nutpie is installed (then ``sampler="auto"`` uses it).

    Returns
    -------
    bool

    Examples
    --------
    >>> from evaluq.hierarchical import nutpie_available
    >>> isinstance(nutpie_available(), bool)
    True
    """
    return importlib.util.find_spec("nutpie") is not None


# --- sampling -------------------------------------------------------------------------------------

def compiled_nutpie(data: HierarchicalData, model: str,
                    variant: str | None = None) -> tuple[Any, float, dict[str, Any]]:
    """The nutpie model for (model, number of models, paired errors, factors, coordinates of
    tau_m (``variant``, default ``_model.tau_m_variant`` of the data)), compiled on
    first use; compile seconds; where it came from (``cache``: ``"process"``, compiled
    earlier in this process, or the disk cache's ``"hit"``, ``"miss"`` or ``"off"``, see
    ``_nutpie_cache``) and the seconds spent on nutpie's cfuncs."""
    if variant is None:
        variant = tau_m_variant(tau_m_evidence(data))
    key = (model, data.shape[0], data.paired, data.model_factors, variant)
    if key in _COMPILED:
        return _COMPILED[key], 0.0, {"cache": "process", "manifest": False,
                                     "cfunc_seconds": 0.0}
    start = time.perf_counter()
    pm_model = build_model(data, model)
    # only the free variables are stored: the deterministics (mu, tau_m, tau_lang) are cheap
    # to form afterwards (``_deterministics``), and leaving them out of nutpie's expand
    # function cuts the numba compilation by about 40%; the compiled cfuncs are cached on
    # disk, and a new process fitting the same structure loads them without even building
    # PyTensor's functions (``structure``: the key above, which the in-process cache
    # already takes to determine the graph)
    _COMPILED[key], info = compile_pymc_model(
        pm_model, var_names=[v.name for v in pm_model.free_RVs],
        structure={"model": "hierarchical", "key": [model, int(key[1]), bool(key[2]),
                                                    int(key[3]), key[4]]},
        sources=[build_model.__code__.co_filename,
                 str(Path(__file__).with_name("_fused.py"))])
    return _COMPILED[key], time.perf_counter() - start, info


def _deterministics(post: xr.Dataset, data: HierarchicalData, priors: dict[str, float],
                    variant: str) -> xr.Dataset:
    """``mu``, ``tau_m`` and ``tau_lang`` from the free variables where the sampler stored
    only those: mu = alpha + dev (alpha alone with one model), tau_m_scale =
    |tau_m_scale_raw| (unless sampled itself), tau_m from its coordinates and that scale
    (``_model.tau_m_from_coordinates``; ``variant`` their coordinates), tau_lang =
    |tau_lang_raw|."""
    if "mu" not in post:
        mu = (post["alpha"] + post["dev"] if "dev" in post
              else post["alpha"].expand_dims({MODEL: 1}, axis=-1))
        post = post.assign(mu=mu.transpose(*SAMPLE_DIMS, MODEL))
    if "tau_m_scale" not in post:
        post = post.assign(tau_m_scale=abs(post["tau_m_scale_raw"]))
    if "tau_m" not in post:
        post = post.assign(tau_m=xr.apply_ufunc(
            tau_m_from_coordinates, post["tau_m_z"], post["tau_m_scale"],
            priors["tau_m_sigma"], variant))
    if "tau_lang" not in post and "tau_lang_raw" in post:
        post = post.assign(tau_lang=abs(post["tau_lang_raw"]))
    return post


def _sample_nutpie(compiled: Any, inputs: dict[str, np.ndarray], run: dict[str, Any],
                   progressbar: bool) -> xr.DataTree:
    """``run``: draws, tune, chains, seed and target_accept (of ``config``)."""
    import nutpie

    return nutpie.sample(with_data(compiled, **inputs), draws=run["draws"], tune=run["tune"],
                         chains=run["chains"], cores=run["chains"], seed=run["seed"],
                         target_accept=run["target_accept"], progress_bar=progressbar,
                         save_warmup=False)


def _sample_pymc(data: HierarchicalData, model: str, priors: dict[str, float],
                 run: dict[str, Any], progressbar: bool) -> xr.DataTree:
    import pymc as pm

    with pymc_sampling(), build_model(data, model, priors):
        return pm.sample(draws=run["draws"], tune=run["tune"], chains=run["chains"], cores=1,
                         random_seed=run["seed"], target_accept=run["target_accept"],
                         nuts_sampler="pymc", progressbar=progressbar,
                         compute_convergence_checks=False)


def _posterior_arrays(post: xr.Dataset, model: str) -> dict[str, Any]:
    get: dict[str, Any] = {name: post[name].transpose(*SAMPLE_DIMS, ...).values
           for name in ("mu", "tau_m", "sigma_seed")}
    get["tau_lang"] = (post["tau_lang"].transpose(*SAMPLE_DIMS).values if model == "crossed"
                       else None)
    return get


def _build_tree(data: HierarchicalData, model: str, raw: xr.DataTree, post_seed: int,
                priors: dict[str, float], config: dict[str, Any]) -> xr.DataTree:
    models, languages = data.models, data.languages
    post = _deterministics(raw["posterior"].to_dataset().drop_vars(MODEL, errors="ignore"), data,
                           priors, config["tau_m_coordinates"])
    keep = [v for v in ("alpha", "dev", "mu", "tau_m", "tau_m_scale", "sigma_seed", "tau_lang")
            if v in post]
    post = post[keep].assign_coords({MODEL: models})
    arrays = _posterior_arrays(post, model)
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    keep_cells = n_chain * n_draw * data.ybar.size <= KEEP_CELLS_MAX
    cond = conditional_draws(data, arrays, np.random.default_rng(post_seed),
                             keep_cells=keep_cells)
    cd = (*SAMPLE_DIMS, MODEL)
    tau2 = post["tau_m"] ** 2 + (post["tau_lang"] ** 2 if model == "crossed" else 0.0)
    post = post.assign(
        sigma_between=np.sqrt(tau2),
        benchmark_mean=(cd, cond["benchmark_mean"]),
        a=((*SAMPLE_DIMS, LANGUAGE), cond["a"]),
    ).assign_coords({LANGUAGE: languages})
    if "theta" in cond:
        post["theta"] = ((*cd, LANGUAGE), cond["theta"])
    if model == "independent":
        post = post.drop_vars("a")
    post["sigma_seed"] = post["sigma_seed"].where(xr.DataArray(data.seed_identified, dims=MODEL))
    post.attrs = {"sampler": config["sampler"]}
    stats = sampler_stats(raw)
    observed = xr.Dataset(
        {"ybar": ((MODEL, LANGUAGE), data.ybar), "n_seeds": ((MODEL, LANGUAGE), data.n_seeds),
         "vbar": ((MODEL, LANGUAGE), data.vbar), "boot_dof": ((MODEL, LANGUAGE), data.boot_dof),
         "seed_ss": (MODEL, data.seed_ss), "seed_dof": (MODEL, data.seed_dof),
         "observed": ((MODEL, LANGUAGE), data.observed.astype(np.int8)),
         "v_fixed": ((MODEL, LANGUAGE), data.v_fixed),
         "seed_identified": (MODEL, data.seed_identified.astype(np.int8))},
        coords={MODEL: models, LANGUAGE: languages},
        attrs={"boot_identified": int(data.boot_identified),
               "test_set_errors": "paired" if data.paired else "independent",
               "pairing": data.pairing, "pairing_note": data.pairing_note,
               "sharing": json.dumps(data.sharing),
               "n_factors": data.n_factors,
               "summary_only": int(data.summary_only),
               "higher_is_better": int(data.higher_is_better)})
    if data.boot_corr is not None and data.loadings is not None and data.psi is not None:
        observed["boot_corr"] = ((LANGUAGE, MODEL, MODEL_B), data.boot_corr)
        observed["loadings"] = ((LANGUAGE, MODEL, FACTOR), data.loadings)
        observed["psi"] = ((LANGUAGE, MODEL), data.psi)
        observed = observed.assign_coords({MODEL_B: models})
    constant = xr.Dataset({f"prior_{k}": v for k, v in priors.items()})
    tree = xr.DataTree.from_dict({"posterior": post, "sample_stats": stats,
                                  "observed_data": observed, "constant_data": constant})
    tree.attrs = {"evaluq_config": json.dumps(config), "data_digest": data.digest,
                  "identifiability": json.dumps(data.reasons)}
    return tree


# --- the fit object -------------------------------------------------------------------------------

@dataclass(eq=False, repr=False)
class HierarchicalFit(PosteriorFit):
    """A fitted hierarchical model (see :func:`fit_hierarchical`).

    Attributes
    ----------
    idata
        ArviZ data (``xarray.DataTree``): ``posterior`` (chain, draw, model[, language]) with
        the sampled hyperparameters and the exact conditional draws ``a``, ``theta``
        (when small enough) and ``benchmark_mean``; ``sample_stats``; ``observed_data``
        (the sufficient statistics); ``constant_data`` (the prior scales).
    sampler
        ``"nutpie"`` or ``"pymc"``.
    config
        The arguments of the fit, the priors and the seeds.
    data
        The cube's sufficient statistics and which components are identified
        (:class:`HierarchicalData`).
    cube
        The cube the model was fitted to (the frequentist side of
        :meth:`compare_frequentist`).
    """

    idata: xr.DataTree
    sampler: str
    config: dict[str, Any]
    data: HierarchicalData = field(repr=False)
    cube: xr.Dataset | None = field(repr=False)
    SCOPES: ClassVar[tuple[str, ...]] = SCOPES
    LOADER: ClassVar[str] = "evaluq.load_fit"
    # the fit base's questions, named on the class too (``vars(cls)``: the docstring checks
    # and the API docs list them per fit); each is defined once, in ``_fits.PosteriorFit``
    pairwise_differences = PosteriorFit.pairwise_differences
    rank_probabilities = PosteriorFit.rank_probabilities
    diagnostics = PosteriorFit.diagnostics
    save = PosteriorFit.save
    prior_contraction = PosteriorFit.prior_contraction
    PRIOR_SCOPE: ClassVar[tuple[str, str]] = ("population", "languages")

    def _scale_priors(self) -> dict[str, tuple[str, float]]:
        """tau_lang = |N(0, tau_lang_sigma)| (``"crossed"``) and tau_m_scale ~
        HalfNormal(tau_m_sigma), both HalfNormal: a new language's spread (the population
        scope) rests on them."""
        priors = self.config.get("priors", {})
        keys = {"tau_lang": "tau_lang_sigma", "tau_m_scale": "tau_m_sigma"}
        return {name: (key, float(priors[key])) for name, key in keys.items() if key in priors}

    # -- draws ----------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        if "posterior" not in self.idata.children:
            raise NotFittedError("HierarchicalFit: `idata` has no posterior group; fit the "
                                 "model with eq.fit_hierarchical(cube) or load a saved fit "
                                 "with eq.load_fit(path)")

    def _scope_draws(self, scope: str) -> xr.DataArray:
        """``mu`` (population) or ``benchmark_mean`` (benchmark), (chain, draw, model)."""
        scope = check_choice("scope", scope, SCOPES)
        return self.posterior["mu" if scope == "population" else "benchmark_mean"]

    def variance_components(self) -> xr.Dataset:
        """Posterior draws of the variance components (names of :func:`evaluq.variance_components`).

        Returns
        -------
        xarray.Dataset
            ``sigma_between`` (chain, draw, model): :math:`\\sqrt{\\tau_{lang}^2 + \\tau_m^2}`
            (crossed) or :math:`\\tau_m` (independent); ``sigma_seed`` (chain, draw, model;
            NaN where not identified); ``sigma_boot`` (chain, draw, model, language; NaN
            without bootstrap information); ``tau_m`` and, crossed, ``tau_lang``. The attrs
            say which components the cube cannot identify and why.
        """
        post = self.posterior
        shape = (post.sizes["chain"], post.sizes["draw"])
        boot = sigma_boot_draws(self.data, shape, np.random.default_rng(self.config["boot_seed"]))
        out = post[[v for v in ("sigma_between", "sigma_seed", "tau_m", "tau_lang") if v in post]]
        out = out.assign(sigma_boot=((*SAMPLE_DIMS, MODEL, LANGUAGE), boot))
        out = out.assign_coords({LANGUAGE: self.data.languages})
        out.attrs = {"model": self.config["model"], **self.data.reasons}
        return out

    # -- comparison with the frequentist side --------------------------------------------------
    def compare_frequentist(self, resampled: xr.Dataset | None = None, *,
                            confidence_level: float = 0.95, rng: RNGLike = 0) -> pd.DataFrame:
        """The posterior beside the frequentist estimates, one row per quantity.

        Frequentist side: :func:`evaluq.variance_components` (``tau_between``, the RMS over
        languages of ``sigma_seed`` and ``sigma_boot``), and :func:`evaluq.aggregate`,
        :func:`evaluq.pairwise_differences` and :func:`evaluq.rank_distribution` of
        ``resampled``. By default ``resampled`` is the resampling that exists for the cube,
        the first of:

        * a paired fit: the shared replicates with the seeds,
          ``eq.resample(cube, replication="nonparametric", seeds="rescaled")``, so both
          sides pair the models;
        * parametric replication noise, where the cube has a seed SD and a test-set SD for
          every cell (independent across models, as the unpaired posterior's errors);
        * a one-seed cube with replicates: its replicates (nonparametric);
        * several seeds and no replicates: the seeds redrawn (nonparametric, seeds rescaled,
          paired across models); the test-set noise is then in neither side (the posterior
          absorbs it into ``tau_m``) and the description says so;
        * a summary cube with one of ``sd_seed`` / ``sd_boot``: parametric noise of that one,
          the other noise in neither side;
        * one seed and no replicates, or a summary cube without SDs: the languages
          bootstrapped (``languages="bootstrap"``, ``replication="none"``), compared with
          the posterior at **population** scope (``mu``, a new language);
        * one language and none of the above: nothing is redrawn; the frequentist intervals
          and P(best) are NaN.

        All but the languages' bootstrap keep the languages fixed and are compared with the
        posterior at **benchmark** scope (the mean of theta over the cube's languages).

        Returns
        -------
        pandas.DataFrame
            Columns ``quantity``, ``model``, ``model_b``, ``frequentist``, ``freq_lower``,
            ``freq_upper``, ``posterior_mean``, ``post_lower``, ``post_upper``, ``agree``
            and ``driver`` (the assumption that explains a disagreement; empty when they
            agree). ``attrs``: ``resampling`` (what the frequentist side redraws and what
            neither side sees), ``posterior_scope`` (``"benchmark"`` or ``"population"``),
            ``scope`` (the same in words), ``caption`` (both, one sentence),
            ``test_set_errors`` (the fit's pairing) and ``confidence_level``.

        Parameters
        ----------
        resampled : xarray.Dataset, optional
            A resampled cube (:func:`evaluq.resample`) of the fitted cube for the frequentist
            intervals; compared at population scope when it bootstraps the languages (a
            ``language_slot`` dim), else at benchmark scope. Default None: the resampling
            above.
        confidence_level : float, optional
            Level of both sides' intervals, in (0, 1); default 0.95.
        rng : int, numpy.random.Generator or None, optional
            Seed or generator of the default resampling; default 0 (reproducible).
        """
        level = check_confidence_level(confidence_level)
        if self.cube is None:
            raise ValueError("compare_frequentist needs the cube: load the fit with "
                             "eq.load_fit(path, cube)")
        side = frequentist_side(self.cube, self.data, resampled, check_rng(rng))
        return compare(self.cube, self.data, self.variance_components(),
                       self._scope_draws(side.scope),
                       self.pairwise_differences(side.scope, confidence_level=level),
                       self.rank_probabilities(side.scope)["p_best"], side, level)

    def _diagnose(self, post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
        """The convergence table of :meth:`diagnostics` (with ``bfmi`` per chain)."""
        return diagnostics(post, stats, self.data.seed_identified)

    # -- display -------------------------------------------------------------------------------
    def _summary_columns(self) -> dict[str, Any]:
        post = self.posterior
        return {**summary_columns(post["mu"], "mu"),
                "sigma_between_mean": post["sigma_between"].mean(SAMPLE_DIMS).values}

    def _header(self) -> str:
        n_m, n_l = self.data.shape
        post = self.posterior
        div = divergences(self.idata["sample_stats"].to_dataset())
        errors = (f"'paired', error_factors={self.data.n_factors}" if self.data.paired
                  else "'independent'")
        retried = self.config.get("retried")
        again = (f", retried with target_accept={self.config['target_accept']:g} after "
                 f"{len(retried['problems'])} failed check(s) of a {retried['draws']}-draw "
                 "run" if retried else "")
        return (f"HierarchicalFit(model={self.config['model']!r}, test_set_errors={errors}, "
                f"sampler={self.sampler!r}, "
                f"{n_m} models x {n_l} languages, {post.sizes['chain']} chains x "
                f"{post.sizes['draw']} draws, divergences={div}{again})")

    def _preamble(self) -> list[str]:
        return [f"test-set errors {self.data.pairing}"]

    def _notes(self) -> list[str]:
        return [*self.data.reasons.values(), self.data.pairing_note]


# --- public functions -----------------------------------------------------------------------------

def _fit_iv(model: Any, draws: Any, tune: Any, chains: Any, sampler: Any,
            progressbar: Any) -> tuple[int, int, int, str]:
    check_choice("model", model, MODELS)
    draws = check_int("draws", draws, minimum=1)
    tune = check_int("tune", tune, minimum=0)
    chains = check_int("chains", chains, minimum=1)
    check_choice("sampler", sampler, SAMPLERS)
    if sampler == "auto":
        sampler = "nutpie" if nutpie_available() else "pymc"
    elif sampler == "nutpie" and not nutpie_available():
        raise ValueError("`sampler` is 'nutpie' but nutpie is not installed; "
                         "pip install nutpie, or use sampler='pymc'")
    check_bool("progressbar", progressbar)
    return draws, tune, chains, sampler


def trace_bytes(n_models: int, n_languages: int, draws: int, chains: int) -> int:
    """The posterior's memory at once: per draw and chain about 4 M L + 3 M + L + 16 float64
    (theta, g, the cells' sigma_boot and error terms; mu, tau_m, sigma_seed; a; the
    scalars), twice (the sampler's trace and the InferenceData)."""
    return 2 * 8 * draws * chains * (4 * n_models * n_languages + 3 * n_models
                                     + n_languages + 16)


def _check_trace_memory(data: HierarchicalData, draws: int, chains: int) -> None:
    """Refuse a posterior above the memory budget (:func:`trace_bytes`) before sampling."""
    check_memory("draws", trace_bytes(*data.shape, draws, chains), hint=" (or `chains`)")


def fit_hierarchical(cube: xr.Dataset, *, model: str = "crossed", draws: int = 1000,
                     tune: int = 1000, chains: int = 4, rng: RNGLike = 0,
                     sampler: str = "auto", priors: dict[str, float] | None = None,
                     test_set_errors: str = "auto", error_correlation: Any = None,
                     progressbar: bool = False, retry: bool = True) -> HierarchicalFit:
    """Fit the hierarchical model to an evaluation cube.

    The model (design.md section 3; ``models/hierarchical_model.md``), crossed:

    .. math::

        \\theta_{ml} = \\mu_m + a_l + g_{ml}, \\quad a_l \\sim N(0, \\tau_{lang}^2), \\quad
        g_{ml} \\sim N(0, \\tau_m^2), \\quad
        \\tau_m \\sim \\mathrm{HalfNormal}(\\tau_{scale}), \\quad
        \\bar y_{ml} \\sim N(\\theta_{ml}, \\sigma_{boot,ml}^2 + \\sigma_{seed,m}^2 / S_{ml})

    with the within-cell seed sum of squares :math:`\\sim \\sigma_{seed,m}^2 \\chi^2(S-1)` and
    the pooled bootstrap variance a scaled chi-square. ``"independent"`` drops :math:`a_l`.
    It is sampled in its marginal form (a and g integrated out: per language a multivariate
    normal with diagonal-plus-rank-one covariance, O(M L)); a, theta and the benchmark means
    are then exact conditional Gaussian draws. The test-set variance of a cell is plugged
    in (its degrees of freedom S(B-1) are large): with replicates shared across seeds, only
    the part the seeds share, :math:`(S V - \\bar v)/(S - 1)` (V the variance of the
    seed-mean replicates, :math:`\\bar v` the pooled per-seed one), since the seeds' own
    item-level disagreement is already in :math:`\\sigma_{seed}^2`; the posterior draws of
    ``sigma_boot`` (the per-seed SD) are scaled inverse chi-square. The models' :math:`\\tau_m`
    are partially pooled through one scale :math:`\\tau_{scale}` (``tau_m_scale``); NUTS's
    target acceptance rate is 0.9 where the pooled scale makes a thin ridge, else 0.8
    (``fit.config["target_accept"]``, beside the coordinates of :math:`\\tau_m`,
    ``fit.config["tau_m_coordinates"]``).

    When every model was scored on the same bootstrap replicates of each test set (as
    :func:`evaluq.from_predictions` makes them), the test-set errors of the models on one
    language are correlated: a hard test set is hard for all of them. Then (the default
    ``test_set_errors="auto"``) the model reads that correlation :math:`R_l` from the
    replicates, approximates it by a k-factor model
    :math:`R_l \\approx \\Lambda_l \\Lambda_l' + \\mathrm{diag}(\\psi_l)` (k chosen
    against the replicates' sampling noise) and the errors
    :math:`e_{\\cdot l} \\sim N(0, D_l^{1/2} R_l D_l^{1/2})` (:math:`D_l` the cells'
    bootstrap variances) are no longer independent across models. Differences between
    models then lose the shared error, as the paired bootstrap's do. The covariance of a
    language is a diagonal plus a rank k + 1 term: the log-density costs O(M k^2 L)
    (Woodbury identity and determinant lemma).

    Parameters
    ----------
    cube
        An evaluation cube (raw, with or without bootstrap replicates, or summary-only).
    model
        ``"crossed"`` or ``"independent"``.
    draws, tune, chains
        Posterior draws and tuning steps per chain (default 1000 each); number of chains
        (default 4, as ArviZ recommends for R-hat; nutpie runs them in parallel).
    rng
        Seed or Generator (the sampler's seed and the conditional draws come from it);
        default 0 (a fit is a stored artefact: reproducible).
    sampler
        ``"auto"`` (nutpie when installed, else PyMC's NUTS), ``"nutpie"`` or ``"pymc"``.
        nutpie models are compiled once per process and number of models, then refitted
        with new data.
    priors
        Overrides of the prior scales: ``alpha_mu``, ``alpha_sigma``, ``dev_sigma``,
        ``tau_lang_sigma``, ``tau_m_sigma``, ``sigma_seed_sigma``.
    test_set_errors
        ``"auto"`` (default): paired whenever the cube's bootstrap replicates are shared
        across models, whatever loader built it: when the cube says so
        (:func:`evaluq.from_predictions` / :func:`evaluq.from_items` cubes, or the cube
        attribute ``shared_bootstrap=1``, which :func:`evaluq.from_long` /
        :func:`evaluq.from_arrays` write for ``shared_bootstrap=True``), and, when the cube
        does not say, when the replicates' correlation across models is beyond their noise
        (the factor model's k > 0: replicates drawn separately for each model give k = 0);
        or when ``error_correlation`` is given. Independent otherwise, and always for
        ``shared_bootstrap=0`` (then the repr and the report say the posterior is
        conservative if the errors are in fact paired). Whether the seeds of a cell share
        its replicates is read the same way (marked, else from the replicates' correlation
        across seeds). ``"paired"`` insists (a cube without usable replicates, whose
        replicates are marked as not shared, ``shared_bootstrap=0``, or whose unmarked
        replicates show no correlation across models (0 factors: drawn separately for each
        model) raises ``CubeError``; mark shared replicates, or give ``error_correlation``);
        ``"independent"`` takes each cell's test-set error on its own. The choice and why
        are recorded in ``fit.data.pairing`` (also ``fit.config["pairing"]``, the repr and
        the ``observed_data`` attrs) and what the replicates were taken to share, and who
        said so, in ``fit.data.sharing`` (``fit.config["shared_bootstrap"]``).
    error_correlation
        The correlation of the test-set errors across models when the cube cannot show it
        (a summary-only cube): a number in [0, 1] for every pair, or a DataArray with dims
        (language, model, model_b). Default None.
    progressbar
        Show the sampler's progress bar.
    retry
        When the convergence checks fail, sample once more, with twice the draws and a
        target acceptance of at least ``RETRY_TARGET_ACCEPT`` (smaller steps, which follow
        the curvature a divergence came from), and keep that run (default True). The first
        run's problems are recorded in ``fit.config["retried"]`` and the repr. Of 432 default
        fits of nine types of clean simulated cubes, 13 warned after one run and 2 after the
        retry (``scripts/hierarchical_warning_battery.py``).

    Returns
    -------
    HierarchicalFit
        Warns :class:`ConvergenceWarning` with advice when the (last) run fails ArviZ's
        checks (``arviz_stats.diagnose``): rank-normalised R-hat > 1.01, a bulk or tail ESS
        below 100 per chain, divergences, or E-BFMI < 0.3 in a chain.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, n_languages=8, n_boot=50, sigma_language=1.0, rng=0)
    >>> fit = eq.fit_hierarchical(cube, draws=500, tune=500, rng=0)  # doctest: +SKIP
    >>> fit.rank_probabilities().p_best.sum().item()                  # doctest: +SKIP
    1.0
    """
    draws, tune, chains, sampler = _fit_iv(model, draws, tune, chains, sampler, progressbar)
    check_bool("retry", retry)
    check_choice("test_set_errors", test_set_errors, TEST_SET_ERRORS)
    gen = check_rng(rng)
    data = cube_statistics(cube, test_set_errors, error_correlation)
    _check_trace_memory(data, draws, chains)
    resolved = resolve_priors(data, priors)
    seed, post_seed, boot_seed = (int(s) for s in gen.integers(0, 2**31 - 1, size=3))
    config: dict[str, Any] = {"model": model, "test_set_errors": test_set_errors,
              "pairing": data.pairing, "shared_bootstrap": data.sharing,
              "error_correlation": None if error_correlation is None else "given",
              "draws": draws,
              "tune": tune, "chains": chains,
              "sampler": sampler, "priors": resolved, "seed": seed, "post_seed": post_seed,
              "boot_seed": boot_seed}
    evidence = tau_m_evidence(data)             # how the data pin tau_m: the sampler's setup
    config["tau_m_coordinates"] = tau_m_variant(evidence)
    config["target_accept"] = target_accept(evidence)
    config["compile_seconds"], config["compile_cache"] = 0.0, None
    compiled = None
    if sampler == "nutpie":
        compiled, config["compile_seconds"], info = compiled_nutpie(
            data, model, config["tau_m_coordinates"])
        config["compile_cache"] = info["cache"]
        config["compile_cfunc_seconds"] = info["cfunc_seconds"]
        config["compile_graph_skipped"] = info["manifest"]
    fit = _run(cube, data, model, resolved, config, compiled, progressbar)
    problems = fit.diagnostics().attrs["problems"]
    if problems and retry:
        first = {k: config[k] for k in ("draws", "target_accept", "seed", "sampling_seconds")}
        # the retry's seed comes from the first's, not from ``gen``: a Generator shared by
        # several fits advances as it did without the retry
        retry_seed = int(np.random.SeedSequence(seed).generate_state(1)[0] % (2**31 - 1))
        config.update(draws=2 * draws, seed=retry_seed,
                      target_accept=max(config["target_accept"], RETRY_TARGET_ACCEPT),
                      retried={"problems": problems, **first})
        fit = _run(cube, data, model, resolved, config, compiled, progressbar)
        problems = fit.diagnostics().attrs["problems"]
    if problems:
        warn("; ".join(problems), ConvergenceWarning)
    return fit


def _run(cube: xr.Dataset, data: HierarchicalData, model: str, priors: dict[str, float],
         config: dict[str, Any], compiled: Any, progressbar: bool) -> HierarchicalFit:
    """One sampler run with ``config``'s settings (and its seconds), and its fit."""
    start = time.perf_counter()
    if compiled is not None:
        raw = _sample_nutpie(compiled, model_inputs(data, priors, model), config, progressbar)
    else:
        raw = _sample_pymc(data, model, priors, config, progressbar)
    config["sampling_seconds"] = time.perf_counter() - start
    tree = _build_tree(data, model, raw, config["post_seed"], priors, config)
    return HierarchicalFit(idata=tree, sampler=config["sampler"], config=config, data=data,
                           cube=cube)


def _stored_data(tree: xr.DataTree) -> HierarchicalData:
    """The sufficient statistics as saved with a fit (when the cube is not given)."""
    obs = tree["observed_data"].to_dataset()
    return HierarchicalData(
        models=obs[MODEL].values, languages=obs[LANGUAGE].values, ybar=obs["ybar"].values,
        observed=obs["observed"].values.astype(bool), n_seeds=obs["n_seeds"].values,
        v_fixed=obs["v_fixed"].values, vbar=obs["vbar"].values, boot_dof=obs["boot_dof"].values,
        seed_ss=obs["seed_ss"].values, seed_dof=obs["seed_dof"].values,
        seed_identified=obs["seed_identified"].values.astype(bool),
        boot_identified=bool(obs.attrs["boot_identified"]),
        summary_only=bool(obs.attrs["summary_only"]),
        higher_is_better=orientation(obs.attrs),
        reasons=json.loads(tree.attrs["identifiability"]), digest=tree.attrs["data_digest"],
        boot_corr=obs["boot_corr"].values if "boot_corr" in obs else None,
        loadings=obs["loadings"].values if "loadings" in obs else None,
        psi=obs["psi"].values if "psi" in obs else None,
        pairing=str(obs.attrs.get("pairing", obs.attrs.get("test_set_errors", "independent"))),
        pairing_note=str(obs.attrs.get("pairing_note", "")),
        sharing=json.loads(obs.attrs.get("sharing", "{}")))


def load_fit(path: str | os.PathLike[str], cube: xr.Dataset | None = None) -> HierarchicalFit:
    """Load a fit written by :meth:`HierarchicalFit.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The NetCDF file written by :meth:`HierarchicalFit.save`.
    cube : xarray.Dataset, optional
        The cube of the fit, checked by a hash of its values and labels (a different cube
        raises ``ValueError``). Without it, the fit is rebuilt from the sufficient statistics
        saved with it, and :meth:`HierarchicalFit.compare_frequentist` is unavailable.

    Returns
    -------
    HierarchicalFit

    Examples
    --------
    Fitting takes some seconds, so the example does not run here:

    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, n_languages=8, n_boot=50, rng=0)
    >>> fit = eq.fit_hierarchical(cube, draws=500, tune=500, rng=0)  # doctest: +SKIP
    >>> fit.save("fit.nc")                                            # doctest: +SKIP
    >>> eq.load_fit("fit.nc", cube).posterior["mu"].sizes["model"]    # doctest: +SKIP
    3
    """
    tree, config = read_fit_tree(path, writer="HierarchicalFit.save")
    if "posterior" not in tree.children:
        raise NotFittedError(f"`path`: {str(path)!r} holds no posterior; fit the model with "
                             "eq.fit_hierarchical(cube) and save that fit")
    data = _stored_data(tree)
    if cube is not None and cube_digest(validate(cube)) != data.digest:
        raise ValueError(f"`cube` is not the cube this fit was made from (data hash "
                         f"{cube_digest(validate(cube))[:12]} vs {data.digest[:12]} in "
                         f"{os.fspath(path)!r})")
    return HierarchicalFit(idata=tree, sampler=config["sampler"], config=config, data=data,
                           cube=cube)

