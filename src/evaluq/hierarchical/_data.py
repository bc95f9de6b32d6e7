"""From an evaluation cube to the sufficient statistics of the hierarchical model.

Per cell (m, l): the seed mean ``ybar``, the seed count ``S``, the within-cell sum of squares
over seeds and the pooled bootstrap variance; per model the pooled seed sum of squares. The
cost of the model then does not depend on the number of seeds or bootstrap replicates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    MODEL_B,
    N_SEEDS,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
    SHARED_BOOTSTRAP,
    SIGMA_BOOT,
    SIGMA_SEED,
)
from evaluq._schema import higher_is_better, is_summary, parse_orientation, validate
from evaluq._validation import check_choice
from evaluq.errors import CubeError
from evaluq.hierarchical._factors import K_MAX, PSI_FLOOR, Factors, fit_factors

TEST_SET_ERRORS = ("auto", "independent", "paired")
"""Cube attribute: 1 when replicate b of a language is the same resampled test set for every
model and seed, 0 when it is not; absent, the loaders that make such replicates
(``SHARED_LOADERS``) say so, and otherwise the replicates themselves (their correlation
across models, and across seeds, against their noise)."""
SHARED_LOADERS = ("from_predictions", "from_items")
MIN_PAIRED_BOOT = 10
"""Fewest shared replicates the error correlation is read from."""
SEED_SHARING_Z = 3.0
"""How many null SDs the seeds' pooled replicate correlation must exceed for a cube that does
not say how its replicates were drawn to count as sharing them across seeds
(:func:`seeds_share_replicates`)."""
FACTOR_BUCKETS = (0, 1, 3, K_MAX)
"""Factor counts the model is compiled for (k is rounded up to the next)."""
REASON_UNPAIRED = ("test-set errors taken as independent across models ({why}); if the models "
                   "were scored on the same test items their errors are correlated, and the "
                   "posterior differences and P(best) are then conservative (too wide, too "
                   "even): give fit_hierarchical(error_correlation=...) or a cube with "
                   "bootstrap replicates shared across models")
NOT_SHARED = (f"its bootstrap replicates are marked as not shared across models (cube "
              f"attribute {SHARED_BOOTSTRAP}=0)")
UNMARKED_K0 = (f"the cube does not say whether its bootstrap replicates are shared across "
               f"models (no {SHARED_BOOTSTRAP} attribute) and their correlation across models "
               f"is within the replicates' noise (0 factors)")
UNMARKED_PAIRED = ("bootstrap replicates correlated across models beyond their noise ({k} "
                   f"factor(s)), so shared; the cube does not say (no {SHARED_BOOTSTRAP} "
                   "attribute)")
REASON_UNCORRELATED = ("test-set errors taken as independent across models: the bootstrap "
                       "replicates show no correlation across models beyond their noise. If "
                       "they were drawn separately for each model they cannot show one, and "
                       "if the models were scored on the same test items the posterior "
                       "differences and P(best) are then conservative: give "
                       "fit_hierarchical(error_correlation=...) or replicates shared across "
                       "models")

REASON_NO_BOOT = ("sigma_boot is not identified: the cube has no bootstrap replicates "
                  "(boot_score / sd_boot), so the test-set error cannot be told apart from the "
                  "model-by-language deviation; it is absorbed by tau_m (and sigma_between)")
REASON_ONE_SEED = ("sigma_seed is not identified for {models}: one seed per cell (and no "
                   "sd_seed with n_seeds > 1), so seed noise cannot be told apart from the "
                   "model-by-language deviation; it is absorbed by tau_m (and sigma_between)")

REASON_ONE_MODEL = ("tau_lang and tau_m are not separately identified with one model (crossed "
                    "model): only their sum of squares, sigma_between, is")


@dataclass(frozen=True, eq=False)
class HierarchicalData:
    """Sufficient statistics of a cube for the hierarchical model.

    Arrays are (model, language) unless noted; missing cells have ``observed`` False and NaN
    in ``ybar``. Made by :func:`cube_statistics`; not meant to be built by hand.

    Attributes
    ----------
    models, languages : numpy.ndarray
        The cube's ``model`` and ``language`` labels, in the cube's order.
    ybar : numpy.ndarray
        Mean score of each cell over its seeds (NaN where the cell is missing).
    observed : numpy.ndarray of bool
        Whether the cell has at least one score.
    n_seeds : numpy.ndarray
        Seeds behind each cell mean (S_ml; 0 for a missing cell).
    v_fixed : numpy.ndarray
        Known (plugged-in) test-set variance of each cell mean (NaN for a missing cell): with
        replicates shared across seeds the part the seeds share (:func:`common_variance`;
        the seeds' own item-level disagreement is in sigma_seed), else ``vbar``.
    vbar : numpy.ndarray
        Pooled bootstrap variance of each cell (NaN without bootstrap information).
    boot_dof : numpy.ndarray
        Degrees of freedom of ``vbar`` (inf for a given ``sd_boot``, 0 without bootstrap).
    seed_ss : numpy.ndarray
        (model,) pooled within-cell sum of squares over seeds.
    seed_dof : numpy.ndarray
        (model,) its degrees of freedom.
    seed_identified : numpy.ndarray of bool
        (model,) whether ``sigma_seed`` is identified (``seed_dof > 0``).
    boot_identified : bool
        Whether the cube carries bootstrap information (``boot_score`` or ``sd_boot``).
    summary_only : bool
        Whether the cube is summary-only (:func:`evaluq.is_summary`).
    higher_is_better : bool
        The cube's direction (:func:`evaluq.higher_is_better`).
    reasons : dict of str to str
        For each component the cube cannot identify (``"sigma_seed"``, ``"sigma_boot"``),
        why not. Default empty.
    digest : str
        SHA-256 of the cube's values and model / language labels, which ties a saved fit to
        its cube (:func:`evaluq.load_fit`). Default ``""``.
    boot_corr : numpy.ndarray or None
        (language, model, model) correlation across models of the test-set errors, from
        bootstrap replicates shared by all models or given as ``error_correlation``; None
        when the errors are taken as independent. Rows of missing or constant cells are
        those of the identity. Default None.
    loadings, psi : numpy.ndarray or None
        The k-factor model of ``boot_corr`` (``_factors``): loadings (language, model, k)
        and unique variances (language, model), ``boot_corr ~ loadings loadings' +
        diag(psi)``. None when the errors are independent. Default None.
    pairing : str
        How ``test_set_errors`` was resolved and why (``"paired: ..."`` or
        ``"independent: ..."``). Default ``"independent"``.
    pairing_note : str
        With independent errors and test-set noise in the cube: the warning that the
        posterior is conservative if the errors are in fact paired. Default ``""``.
    sharing : dict
        What the bootstrap replicates were taken to share (``models``, ``seeds``: bools)
        and who said so (``source``: the cube's ``shared_bootstrap`` attribute, its loader,
        or the replicates' correlation). Default empty.

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.hierarchical import cube_statistics
    >>> data = cube_statistics(eq.simulate_cube(n_models=3, n_languages=5, n_boot=20, rng=0))
    >>> data.shape, data.boot_identified, bool(data.seed_identified.all())
    ((3, 5), True, True)
    """

    models: np.ndarray
    languages: np.ndarray
    ybar: np.ndarray
    observed: np.ndarray
    n_seeds: np.ndarray
    """Seeds behind each cell mean (S_ml)."""
    v_fixed: np.ndarray
    """Known (plugged-in) variance of each cell mean (the bootstrap variance, plus
    ``sd_seed**2 / S`` where a summary cube gives an SD without seed replicates)."""
    vbar: np.ndarray
    """Pooled bootstrap variance of each cell (NaN without bootstrap information)."""
    boot_dof: np.ndarray
    """Degrees of freedom of ``vbar``: sum over seeds of (B - 1); inf for a given ``sd_boot``."""
    seed_ss: np.ndarray
    """(model,) pooled within-cell sum of squares over seeds."""
    seed_dof: np.ndarray
    """(model,) its degrees of freedom, sum over cells of (S_ml - 1)."""
    seed_identified: np.ndarray
    """(model,) whether ``sigma_seed`` is identified."""
    boot_identified: bool
    summary_only: bool
    higher_is_better: bool
    reasons: dict[str, str] = field(default_factory=dict)
    digest: str = ""
    boot_corr: np.ndarray | None = None
    """(language, model, model) correlation of the test-set errors (paired replicates)."""
    loadings: np.ndarray | None = None
    """(language, model, k) factor loadings of ``boot_corr``."""
    psi: np.ndarray | None = None
    """(language, model) unique variances of ``boot_corr``'s factor model."""
    pairing: str = "independent"
    """How the test-set errors were resolved, and why."""
    pairing_note: str = ""
    """When the errors are taken as independent though the cube has test-set noise: that
    the posterior is conservative if they are in fact paired (shown by the repr and report)."""
    sharing: dict[str, Any] = field(default_factory=dict)
    """What the replicates were taken to share, and who said so (``source``)."""

    @property
    def shape(self) -> tuple[int, int]:
        """(n_models, n_languages)."""
        return self.ybar.shape

    @property
    def paired(self) -> bool:
        """Whether the test-set errors are correlated across models (paired replicates)."""
        return self.boot_corr is not None

    @property
    def n_factors(self) -> int:
        """Factors of the error correlation (0 when the errors are independent)."""
        return 0 if self.loadings is None else int(self.loadings.shape[-1])

    @property
    def model_factors(self) -> int:
        """Factor columns of the compiled model: ``n_factors`` rounded up to one of
        ``FACTOR_BUCKETS`` (zero columns pad it), so that refits whose k differs a little
        reuse one compiled model."""
        return next(b for b in FACTOR_BUCKETS if b >= self.n_factors)

    def boot_cov(self) -> np.ndarray:
        """(language, model, model) covariance of the cells' test-set errors, zero on the
        rows and columns of missing cells: ``sqrt(v) R sqrt(v)`` with ``v = v_fixed``."""
        if self.boot_corr is None:
            raise ValueError("boot_cov needs paired test-set errors (test_set_errors='paired')")
        sd = np.where(self.observed, np.sqrt(np.nan_to_num(self.v_fixed)), 0.0).T  # (L, M)
        return self.boot_corr * sd[:, :, None] * sd[:, None, :]

    def model_cov(self) -> np.ndarray:
        """(language, model, model) the factor model's covariance of the test-set errors,
        ``sqrt(v) (loadings loadings' + diag(psi)) sqrt(v)``, zero on missing cells."""
        if self.loadings is None or self.psi is None:
            raise ValueError("model_cov needs paired test-set errors (test_set_errors='paired')")
        sd = np.where(self.observed, np.sqrt(np.nan_to_num(self.v_fixed)), 0.0).T  # (L, M)
        corr = (self.loadings @ np.swapaxes(self.loadings, 1, 2)
                + np.eye(self.shape[0]) * self.psi[:, :, None])
        return corr * sd[:, :, None] * sd[:, None, :]

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays the model reads (``pm.Data``), missing cells neutralised (weight 0).

        With paired errors ``v_fixed`` is the unique part ``psi v`` of each cell's test-set
        variance and ``load`` (language, model, k) the factor part ``sqrt(v) loadings``
        (zero on missing cells): the error covariance is ``load load' + diag(psi v)``.
        """
        obs = self.observed
        v = np.where(obs, self.v_fixed, 1.0)
        paired: dict[str, np.ndarray] = {}
        if self.loadings is not None and self.psi is not None:
            sd = np.where(obs, np.sqrt(np.nan_to_num(self.v_fixed)), 0.0).T       # (L, M)
            pad = self.model_factors - self.n_factors
            paired["load"] = np.pad(self.loadings * sd[:, :, None], ((0, 0), (0, 0), (0, pad)))
            v = np.where(obs, v * self.psi.T, 1.0)
        return {
            **paired,
            "ybar": np.where(obs, self.ybar, 0.0),
            "weight": obs.astype(np.float64),
            "inv_s": np.where(obs, 1.0 / np.maximum(self.n_seeds, 1.0), 0.0),
            "v_fixed": v,
            "seed_ss": self.seed_ss.astype(np.float64),
            "seed_dof": self.seed_dof.astype(np.float64),
            "seed_weight": self.seed_identified.astype(np.float64),
        }


def _cell_stats(score: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed count, mean and within-cell sum of squares over the last axis (NaN skipped)."""
    if not np.isnan(score).any():          # the usual complete cube: no masks (3x faster)
        mean = score.mean(axis=-1)
        dev = score - mean[..., None]
        return np.full(mean.shape, float(score.shape[-1])), mean, np.einsum(
            "...i,...i->...", dev, dev)
    ok = ~np.isnan(score)
    n = ok.sum(axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(ok, score, 0.0).sum(-1) / n, np.nan)
    dev = np.where(ok, score - np.nan_to_num(mean)[..., None], 0.0)
    return n, mean, (dev * dev).sum(-1)


def _boot_stats(boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pooled variance over bootstrap replicates and seeds: (m, l, s, b) -> (m, l) and dof."""
    n_b, _, ss_b = _cell_stats(boot)                      # (m, l, s)
    dof = np.maximum(n_b - 1.0, 0.0)
    total_dof = dof.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        vbar = np.where(total_dof > 0, (ss_b * (dof > 0)).sum(-1) / total_dof, np.nan)
    return vbar, total_dof


def _seed_means(boot: np.ndarray) -> np.ndarray:
    """(model, language, bootstrap) mean over the seeds of each replicate (NaN seeds skipped)."""
    if not np.isnan(boot).any():
        return boot.mean(axis=2)
    counts = (~np.isnan(boot)).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.nansum(boot, axis=2) / np.maximum(counts, 1), np.nan)


def common_variance(boot: np.ndarray, vbar: np.ndarray, n_seeds: np.ndarray) -> np.ndarray:
    """The test-set variance of a cell mean that the seeds share, (model, language).

    With replicates shared across seeds (one resampled test set for every seed), a seed's
    replicate deviation is a common part (variance v_c, the test set's) plus a seed-specific
    part (variance v_s, the seed's own item-level disagreement, which the spread of the
    seeds' full-test-set scores, sigma_seed^2, already counts). The pooled per-seed variance
    ``vbar`` estimates v_c + v_s and the variance of the seed-mean replicate V estimates
    v_c + v_s / S, so

        v_c = (S V - vbar) / (S - 1)

    (unbiased, as both are; floored at 0); with one seed it is ``vbar`` (v_s is then not
    separable, nor is sigma_seed). The cell mean's variance is v_c + sigma_seed^2 / S.
    """
    n_b, _, ss = _cell_stats(_seed_means(boot))
    with np.errstate(invalid="ignore", divide="ignore"):
        var_mean = np.where(n_b > 1, ss / (n_b - 1.0), np.nan)
        v_c = (n_seeds * var_mean - vbar) / (n_seeds - 1.0)
    return np.where(n_seeds > 1, np.maximum(v_c, 0.0), vbar)


def error_correlation(boot: np.ndarray, observed: np.ndarray,
                      common: np.ndarray | None = None) -> np.ndarray:
    """Correlation across models of the test-set errors, per language.

    ``boot`` is (model, language, seed, bootstrap) with the replicate b shared by every model
    (one resampled test set, as :func:`evaluq.from_predictions` makes them); the seed mean
    of replicate b is the mean over the cell's seeds. The covariance of two models' errors
    is that of their seed-mean replicates (the seeds' own parts are independent across
    models); a model's variance is ``common`` (model, language; :func:`common_variance`)
    when given, else that of its seed-mean replicates. Returns (language, model, model),
    clipped to [-1, 1]; the rows and columns of missing cells and of cells whose variance
    is 0 are those of the identity (a cell with a replicate missing for every seed is not
    usable: the caller checks there is none).
    """
    means = _seed_means(boot)
    usable = observed & np.isfinite(means).all(axis=-1)
    means = np.where(usable[..., None], means, 0.0)                          # (M, L, B)
    dev = means - means.mean(axis=-1, keepdims=True)
    cov = np.einsum("mlb,nlb->lmn", dev, dev) / max(means.shape[-1] - 1, 1)
    sd = np.sqrt(np.einsum("lmm->lm", cov) if common is None
                 else np.where(usable, np.nan_to_num(common), 0.0).T)
    ok = sd > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(ok[:, :, None] & ok[:, None, :],
                        cov / (sd[:, :, None] * sd[:, None, :]), 0.0)
    corr = np.clip(corr, -1.0, 1.0)
    eye = np.broadcast_to(np.eye(corr.shape[1], dtype=bool), corr.shape)
    return np.where(eye, 1.0, corr)


def replicates_shared(cube: xr.Dataset) -> bool | None:
    """Whether replicate b of a language is one resampled test set for every model (and
    seed), as far as the cube says: the ``shared_bootstrap`` attribute (1 / 0) when present,
    else True for the loaders that make such replicates (``SHARED_LOADERS``), else None
    (not said: :func:`evaluq.from_long` / :func:`evaluq.from_arrays` without
    ``shared_bootstrap=``); False for a cube without ``boot_score``."""
    if BOOT_SCORE not in cube:
        return False
    if SHARED_BOOTSTRAP in cube.attrs:
        return parse_orientation(cube.attrs[SHARED_BOOTSTRAP], name=SHARED_BOOTSTRAP)
    return True if cube.attrs.get("loader") in SHARED_LOADERS else None


def seeds_share_replicates(boot: np.ndarray, vbar: np.ndarray, n_seeds: np.ndarray) -> bool:
    """Whether the seeds of a cell were scored on the same resampled test sets: their
    replicate deviations correlate beyond the replicates' noise.

    The share of a cell's per-seed replicate variance that its seeds have in common,
    ``(S V - vbar) / (S - 1) / vbar`` (:func:`common_variance` before its floor), is the mean
    correlation of the seeds' replicate deviations; with seeds resampled separately it is 0
    up to an SD of ``sqrt(2 / ((B - 1) S (S - 1)))``. Pooled over the cells with S >= 2
    (weights ``S (S - 1)``), it is judged shared beyond ``SEED_SHARING_Z`` of those SDs.
    ``boot`` is (model, language, seed, bootstrap); False without a cell of two seeds.
    """
    n_b, _, ss = _cell_stats(_seed_means(boot))
    weight = np.where((n_seeds > 1) & (n_b > 1) & (np.nan_to_num(vbar) > 0),
                      n_seeds * (n_seeds - 1.0), 0.0)
    if not weight.any():
        return False
    with np.errstate(invalid="ignore", divide="ignore"):
        var_mean = ss / (n_b - 1.0)
        share = (n_seeds * var_mean - vbar) / (n_seeds - 1.0) / vbar
    total = weight.sum()
    pooled = (weight * np.nan_to_num(share)).sum() / total
    null_var = 2.0 * (weight / np.maximum(n_b - 1.0, 1.0)).sum() / total**2
    return bool(pooled > SEED_SHARING_Z * np.sqrt(null_var))


def _replicate_problem(cube: xr.Dataset, observed: np.ndarray) -> str:
    """Why the cube's replicates cannot give the error correlation ("" when they can)."""
    if BOOT_SCORE not in cube:
        return ("has no boot_score: the correlation of the models' test-set errors is read "
                "from bootstrap replicates shared by all models (evaluq.from_predictions "
                "makes them)")
    n_boot = cube.sizes[BOOTSTRAP]
    if n_boot < MIN_PAIRED_BOOT:
        return (f"has {n_boot} bootstrap replicates; the error correlation needs at least "
                f"{MIN_PAIRED_BOOT}")
    boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values
    gaps = observed & np.isnan(boot).all(axis=2).any(axis=-1)
    if gaps.any():
        return (f"has {int(gaps.sum())} observed cells that miss a bootstrap replicate for "
                "every seed; the error correlation needs every replicate of every observed "
                "cell")
    return ""


def _given_correlation(cube: xr.Dataset, value: Any) -> np.ndarray:
    """``error_correlation`` as (language, model, model): a scalar in [0, 1] (the same
    correlation for every pair) or a DataArray (language, model, model_b) labelled as the
    cube, symmetric with unit diagonal and positive semi-definite."""
    n_m, n_l = cube.sizes[MODEL], cube.sizes[LANGUAGE]
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        rho = float(value)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"`error_correlation` must be in [0, 1] as a scalar (a negative "
                             f"correlation shared by every pair is not a factor model); got "
                             f"{value!r}")
        corr = np.full((n_m, n_m), rho) + (1.0 - rho) * np.eye(n_m)
        return np.broadcast_to(corr, (n_l, n_m, n_m)).copy()
    if not isinstance(value, xr.DataArray) or set(value.dims) != {LANGUAGE, MODEL, MODEL_B}:
        raise TypeError(f"`error_correlation` must be a number in [0, 1] or a DataArray with "
                        f"dims (language, model, model_b); got {type(value).__name__}"
                        + (f" with dims {value.dims}" if isinstance(value, xr.DataArray) else ""))
    try:
        picked = value.sel({LANGUAGE: cube[LANGUAGE].values, MODEL: cube[MODEL].values,
                            MODEL_B: cube[MODEL].values}).transpose(LANGUAGE, MODEL, MODEL_B)
    except KeyError as err:
        raise ValueError(f"`error_correlation` must have every language and model of `cube` "
                         f"as coordinates; {err}") from None
    corr = picked.values.astype(np.float64)
    eigen_min = np.linalg.eigvalsh(corr).min() if np.isfinite(corr).all() else np.nan
    if not (np.allclose(corr, np.swapaxes(corr, 1, 2)) and np.allclose(
            np.einsum("lmm->lm", corr), 1.0) and eigen_min >= -1e-8):
        raise ValueError("`error_correlation` must be a correlation matrix per language: "
                         "finite, symmetric, unit diagonal, positive semi-definite")
    return corr


class Pairing(NamedTuple):
    """How ``test_set_errors`` resolved: the error correlation and its factor model (None
    when independent), why, and whether the replicates are shared across models (None: not
    known)."""

    corr: np.ndarray | None
    factors: Factors | None
    text: str
    models_shared: bool | None


def _given_pairing(cube: xr.Dataset, given: Any, observed: np.ndarray) -> Pairing:
    """``error_correlation`` given: it and its factor model (one exact factor for a scalar)."""
    corr = _given_correlation(cube, given)
    if np.ndim(given) == 0:             # one correlation for every pair: one exact factor
        rho = min(float(given), 1.0 - PSI_FLOOR)
        n_l, n_m = observed.T.shape
        loadings = np.full((n_l, n_m, 1 if rho > 0 else 0), np.sqrt(rho))
        factors = Factors(loadings * observed.T[:, :, None],
                          np.where(observed.T, 1.0 - rho, 1.0), 0.0, 0.0)
    else:
        factors = fit_factors(corr, observed.T, None)
    return Pairing(corr, factors, "paired: error_correlation given", None)


def _unpaired_why(cube: xr.Dataset, problem: str) -> str:
    """Why 'auto' takes the errors as independent when the replicates cannot be read."""
    if is_summary(cube):
        return "a summary-only cube without error_correlation"
    if BOOT_SCORE not in cube:
        return "the cube has no bootstrap replicates"
    return f"the cube {problem}"


def _pairing(cube: xr.Dataset, errors: str, given: Any, observed: np.ndarray,
             reasons: dict[str, str], common: np.ndarray | None = None) -> Pairing:
    """Resolve ``test_set_errors``: the error correlation, its factor model and why.

    ``"auto"`` pairs replicates the cube marks as shared (:func:`replicates_shared`); those
    it does not mark are paired when their correlation across models is beyond their noise
    (the factor model's k > 0, :func:`fit_factors`), else taken as independent.
    """
    if errors == "independent":
        if given is not None:
            raise ValueError("`error_correlation` is given but `test_set_errors` is "
                             "'independent'; use 'auto' or 'paired'")
        return Pairing(None, None, "independent: asked for", replicates_shared(cube))
    if given is not None:
        return _given_pairing(cube, given, observed)
    problem, shared = _replicate_problem(cube, observed), replicates_shared(cube)
    if errors == "paired" and (problem or shared is False):
        raise CubeError(f"`test_set_errors` is 'paired' but `cube` {problem or NOT_SHARED}")
    if problem or shared is False:
        why = NOT_SHARED if not problem else _unpaired_why(cube, problem)
        if BOOT_SCORE in cube or SD_BOOT in cube:
            reasons["note"] = REASON_UNPAIRED.format(why=why)
        return Pairing(None, None, f"independent: {why}", shared)
    boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values
    corr = error_correlation(np.asarray(boot, dtype=np.float64), observed, common)
    factors = fit_factors(corr, observed.T, cube.sizes[BOOTSTRAP])
    k = int(factors.loadings.shape[-1])
    if errors == "paired" and shared is None and k == 0:
        raise CubeError(f"`test_set_errors` is 'paired' but {UNMARKED_K0}: nothing shows "
                        "the replicates shared, they look drawn separately for each model. Use "
                        "'auto' or 'independent'; if they are shared, say so (shared_bootstrap="
                        "True in eq.from_long / eq.from_arrays, or the cube attribute "
                        "shared_bootstrap=1), or pass `error_correlation`")
    if errors == "paired" or shared:
        source = "asked for" if errors == "paired" else "bootstrap replicates shared across models"
        return Pairing(corr, factors, f"paired: {source}", shared)
    if k == 0:
        reasons["note"] = REASON_UNCORRELATED
        return Pairing(None, None, f"independent: {UNMARKED_K0}", False)
    return Pairing(corr, factors, f"paired: {UNMARKED_PAIRED.format(k=k)}", True)


def cube_digest(cube: xr.Dataset) -> str:
    """SHA-256 of a cube's values and model / language labels (ties a saved fit to it)."""
    h = hashlib.sha256()
    for name in sorted(map(str, cube.data_vars)):
        var = cube[name]
        dims = [d for d in (MODEL, LANGUAGE, SEED, BOOTSTRAP) if d in var.dims]
        h.update(name.encode())
        h.update(np.ascontiguousarray(var.transpose(*dims).values, dtype=np.float64).tobytes())
    for dim in (MODEL, LANGUAGE):
        h.update("\x1f".join(map(str, cube[dim].values)).encode())
    return h.hexdigest()


class _Cells(NamedTuple):
    """Per-(model, language) cell inputs of :func:`cube_statistics`."""

    n_seeds: np.ndarray
    ss_cell: np.ndarray
    dof_cell: np.ndarray
    plug_seed: np.ndarray
    vbar: np.ndarray
    boot_dof: np.ndarray


def _summary_cells(cube: xr.Dataset, observed: np.ndarray) -> _Cells:
    """The cell inputs of a summary-only cube (``n_seeds``, ``sd_seed``, ``sd_boot``)."""
    shape = observed.shape
    n_seeds = np.where(observed, cube[N_SEEDS].transpose(MODEL, LANGUAGE).values, 0.0) \
        if N_SEEDS in cube else observed.astype(np.float64)
    sd_seed = (cube[SD_SEED].transpose(MODEL, LANGUAGE).values if SD_SEED in cube
               else np.full(shape, np.nan))
    sd_boot = (cube[SD_BOOT].transpose(MODEL, LANGUAGE).values if SD_BOOT in cube
               else np.full(shape, np.nan))
    has_sd = observed & ~np.isnan(sd_seed)
    estimable = has_sd & (n_seeds > 1)
    ss_cell = np.where(estimable, (n_seeds - 1) * np.nan_to_num(sd_seed) ** 2, 0.0)
    dof_cell = np.where(estimable, n_seeds - 1, 0.0)
    # an SD without replicate count behind it is plugged in as known
    plug_seed = np.where(has_sd & ~estimable,
                         np.nan_to_num(sd_seed) ** 2 / np.maximum(n_seeds, 1), 0.0)
    vbar = np.where(observed, sd_boot, np.nan)
    boot_dof = np.where(np.isnan(vbar), 0.0, np.inf)
    return _Cells(n_seeds, ss_cell, dof_cell, plug_seed, vbar**2, boot_dof)


def _raw_cells(cube: xr.Dataset, observed: np.ndarray, n_cell: np.ndarray,
               ss_cell: np.ndarray) -> _Cells:
    """The cell inputs of a raw cube (seed scores and, if present, ``boot_score``)."""
    shape = observed.shape
    dof_cell = np.maximum(n_cell - 1, 0.0)
    if BOOT_SCORE in cube:
        boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values
        vbar, boot_dof = _boot_stats(np.asarray(boot, dtype=np.float64))
        vbar = np.where(observed, vbar, np.nan)
    else:
        vbar, boot_dof = np.full(shape, np.nan), np.zeros(shape)
    return _Cells(n_cell, ss_cell, dof_cell, np.zeros(shape), vbar, boot_dof)


def _check_boot(observed: np.ndarray, vbar: np.ndarray, reasons: dict[str, str]) -> bool:
    """Whether the bootstrap variance is identified; bootstrap info must be all or nothing."""
    boot_identified = bool(np.any(observed & ~np.isnan(vbar)))
    if not boot_identified:
        reasons[SIGMA_BOOT] = REASON_NO_BOOT
    elif np.any(observed & np.isnan(vbar)):
        raise CubeError("`cube` has bootstrap information for some observed cells but not for "
                        f"others ({int(np.sum(observed & np.isnan(vbar)))} cells); give it for "
                        "every observed cell or for none")
    return boot_identified


def _check_models(models: np.ndarray, observed: np.ndarray, seed_identified: np.ndarray,
                  reasons: dict[str, str]) -> None:
    """Reasons for an unidentified seed or language SD; every model needs a language."""
    if not seed_identified.all():
        names = ", ".join(map(str, models[~seed_identified]))
        reasons[SIGMA_SEED] = REASON_ONE_SEED.format(models=names)
    if len(models) == 1:
        reasons["tau_lang"] = REASON_ONE_MODEL
    if not observed.any(axis=1).all():
        empty = ", ".join(map(str, models[~observed.any(axis=1)]))
        raise CubeError(f"`cube` has models with no observed language: {empty}")


def _shared_seeds(cube: xr.Dataset, summary: bool, vbar: np.ndarray, n_seeds: np.ndarray
                  ) -> tuple[np.ndarray | None, bool]:
    """Whether the seeds of a cell share its replicates (marked, or else read from them by
    :func:`seeds_share_replicates`), and then the test-set variance they share
    (:func:`common_variance`); None without shared replicates."""
    if summary or BOOT_SCORE not in cube:
        return None, False
    boot = np.asarray(cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values,
                      dtype=np.float64)
    shared = replicates_shared(cube) or seeds_share_replicates(boot, vbar, n_seeds)
    return (common_variance(boot, vbar, n_seeds) if shared else None), bool(shared)


def _sharing(cube: xr.Dataset, models_shared: bool | None, seeds_shared: bool
             ) -> dict[str, Any]:
    """What the fit took the replicates to share (``HierarchicalData.sharing``)."""
    if BOOT_SCORE not in cube:
        return {"source": "no bootstrap replicates", "models": None, "seeds": False}
    marked = replicates_shared(cube)
    source = (f"cube attribute {SHARED_BOOTSTRAP}" if SHARED_BOOTSTRAP in cube.attrs
              else f"loader {cube.attrs.get('loader')}" if marked
              else "read from the replicates")
    return {"source": source, "models": models_shared, "seeds": seeds_shared}


def cube_statistics(cube: Any, test_set_errors: str = "auto",
                    error_correlation: Any = None) -> HierarchicalData:
    """Reduce a validated cube to the sufficient statistics of the hierarchical model.

    Parameters
    ----------
    cube : xarray.Dataset
        An evaluation cube (raw or summary-only), checked by :func:`evaluq.validate`. Every
        model needs at least one observed language, and bootstrap information must be given
        for every observed cell or for none (else ``CubeError``).
    test_set_errors : {"auto", "independent", "paired"}, optional
        ``"paired"`` reads the correlation across models of the test-set errors from
        ``boot_score`` (replicates shared by all models, at least ``MIN_PAIRED_BOOT``) and
        fits its k-factor model (replicates marked as not shared, ``shared_bootstrap=0``,
        raise ``CubeError``); ``"auto"`` (default) pairs when the cube marks its replicates
        as shared across models (:func:`replicates_shared`), when it does not say and their
        correlation across models is beyond their noise (k > 0 factors), or when
        ``error_correlation`` is given, and takes the errors as independent otherwise;
        ``"independent"`` never pairs.
    error_correlation : float or xarray.DataArray, optional
        The correlation of the test-set errors across models when the cube cannot say it
        (a summary-only cube): a number in [0, 1] shared by every pair of models, or a
        DataArray (language, model, model_b). Default None.

    Returns
    -------
    HierarchicalData
        The statistics, which components are identified and why not.

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.hierarchical import cube_statistics
    >>> cube = eq.simulate_cube(n_models=2, n_languages=4, n_seeds=1, n_boot=None, rng=0)
    >>> data = cube_statistics(cube)
    >>> data.shape, data.boot_identified, sorted(data.reasons)
    ((2, 4), False, ['sigma_boot', 'sigma_seed'])
    """
    errors = check_choice("test_set_errors", test_set_errors, TEST_SET_ERRORS)
    cube = validate(cube)
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values.astype(np.float64)
    summary = is_summary(cube)
    n_cell, ybar, ss_cell = _cell_stats(score)
    observed = n_cell > 0
    cells = (_summary_cells(cube, observed) if summary
             else _raw_cells(cube, observed, n_cell, ss_cell))
    n_seeds, ss_cell, dof_cell, plug_seed, vbar, boot_dof = cells
    reasons: dict[str, str] = {}
    boot_identified = _check_boot(observed, vbar, reasons)
    seed_ss = np.where(observed, ss_cell, 0.0).sum(-1)
    seed_dof = np.where(observed, dof_cell, 0.0).sum(-1)
    seed_identified = seed_dof > 0
    models = cube[MODEL].values
    _check_models(models, observed, seed_identified, reasons)
    common, seeds_shared = _shared_seeds(cube, summary, vbar, n_seeds)
    v_test = vbar if common is None else common
    v_fixed = np.where(observed, np.nan_to_num(v_test) + plug_seed, np.nan)
    notes: dict[str, str] = {}
    pairing = _pairing(cube, errors, error_correlation, observed, notes, common)
    corr, factors = pairing.corr, pairing.factors
    return HierarchicalData(
        models=models, languages=cube[LANGUAGE].values, ybar=ybar, observed=observed,
        n_seeds=n_seeds.astype(np.float64), v_fixed=v_fixed, vbar=vbar,
        boot_dof=boot_dof.astype(np.float64), seed_ss=seed_ss, seed_dof=seed_dof,
        seed_identified=seed_identified, boot_identified=boot_identified,
        summary_only=summary, higher_is_better=higher_is_better(cube), reasons=reasons,
        digest=cube_digest(cube), boot_corr=corr,
        loadings=None if factors is None else factors.loadings,
        psi=None if factors is None else factors.psi, pairing=pairing.text,
        pairing_note=notes.get("note", ""),
        sharing=_sharing(cube, pairing.models_shared, seeds_shared),
    )
