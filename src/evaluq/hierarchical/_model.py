"""The hierarchical model in its marginal form (the only module that imports PyMC).

Per language l the seed means of the observed models are multivariate normal,

    ybar[:, l] ~ MvN(mu, tau_lang^2 11' + diag(d_l)),
    d_ml = tau_m^2 + v_fixed_ml + sigma_seed_m^2 / S_ml,

with the language effect a_l and the cell effects g_ml integrated out. The covariance is
diagonal plus rank one, so the log-density is closed form in O(M L) (matrix determinant lemma
and Sherman-Morrison). The pooled seed sum of squares enters as a scaled chi-square.

With paired test-set errors (bootstrap replicates shared by all models) the errors of one
language are correlated across models: v_fixed leaves d and enters as the known covariance
C_l = sqrt(v) R_l sqrt(v), and the covariance tau_lang^2 11' + diag(d_l) + C_l is dense (one
dense factorisation per language, O(M^3 L)).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from evaluq._dims import LANGUAGE, MODEL
from evaluq._validation import check_choice
from evaluq.hierarchical._data import HierarchicalData

if TYPE_CHECKING:
    import pymc as pm

MODELS: Final = ("crossed", "independent")
PRIOR_KEYS: Final = ("alpha_mu", "alpha_sigma", "dev_sigma", "tau_lang_sigma", "tau_m_sigma",
                     "sigma_seed_sigma")
PRIOR_TEXT: Final = {
    "alpha_mu": "mean of the common level alpha ~ Normal (default: mean of the cell means)",
    "alpha_sigma": "SD of alpha (default: 2 x SD of the cell means)",
    "dev_sigma": "SD of the model deviations dev ~ ZeroSumNormal (default: 2 x SD of the "
                 "cell means)",
    "tau_lang_sigma": "scale of tau_lang ~ HalfNormal (default: SD of the cell means)",
    "tau_m_sigma": "scale of tau_m ~ HalfNormal (default: SD of the cell means)",
    "sigma_seed_sigma": "scale of sigma_seed ~ HalfNormal (default: 2 x pooled within-cell "
                        "seed SD)",
}


def default_priors(data: HierarchicalData) -> dict[str, float]:
    """Weakly informative prior scales computed from the data (see ``PRIOR_TEXT``).

    Parameters
    ----------
    data : HierarchicalData
        The cube's sufficient statistics (:func:`cube_statistics`). The scales follow the
        spread (SD) of the observed cell means, or the root mean known noise when the cells
        do not vary, or 1; ``sigma_seed_sigma`` follows the pooled within-cell seed SD.

    Returns
    -------
    dict of str to float
        ``alpha_mu``, ``alpha_sigma``, ``dev_sigma``, ``tau_lang_sigma``, ``tau_m_sigma``,
        ``sigma_seed_sigma`` (the keys that ``fit_hierarchical(priors=...)`` overrides).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.hierarchical import cube_statistics, default_priors
    >>> data = cube_statistics(eq.simulate_cube(n_models=3, n_languages=5, n_boot=20, rng=0))
    >>> priors = default_priors(data)
    >>> sorted(priors)
    ['alpha_mu', 'alpha_sigma', 'dev_sigma', 'sigma_seed_sigma', 'tau_lang_sigma', 'tau_m_sigma']
    >>> priors["alpha_sigma"] == 2 * priors["tau_m_sigma"]
    True
    """
    cells = data.ybar[data.observed]
    spread = float(np.std(cells, ddof=1)) if cells.size > 1 else 0.0
    if not np.isfinite(spread) or spread <= 0:
        noise = np.nanmean(data.v_fixed[data.observed])
        spread = float(np.sqrt(noise)) if np.isfinite(noise) and noise > 0 else 1.0
    dof = data.seed_dof.sum()
    seed_sd = float(np.sqrt(data.seed_ss.sum() / dof)) if dof > 0 else spread
    if not seed_sd > 0:
        seed_sd = spread
    return {
        "alpha_mu": float(np.mean(cells)),
        "alpha_sigma": 2.0 * spread,
        "dev_sigma": 2.0 * spread,
        "tau_lang_sigma": spread,
        "tau_m_sigma": spread,
        "sigma_seed_sigma": 2.0 * seed_sd,
    }


def resolve_priors(data: HierarchicalData, priors: dict[str, float] | None) -> dict[str, float]:
    """Default priors updated with the user's; unknown keys and bad values raise."""
    out = default_priors(data)
    if priors is None:
        return out
    if not isinstance(priors, dict):
        raise TypeError(f"`priors` must be a dict or None; got {type(priors).__name__}")
    for key, value in priors.items():
        if key not in PRIOR_KEYS:
            raise ValueError(f"`priors` has an unknown key {key!r}; expected one of "
                             f"{list(PRIOR_KEYS)}")
        value = float(value)
        if not np.isfinite(value) or (key != "alpha_mu" and value <= 0):
            raise ValueError(f"`priors[{key!r}]` must be finite"
                             + ("" if key == "alpha_mu" else " and > 0") + f"; got {value}")
        out[key] = value
    return out


def model_inputs(data: HierarchicalData, priors: dict[str, float],
                 model: str = "crossed") -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the model, by name (for ``set_data`` / ``with_data``)."""
    out = data.arrays()
    if data.paired:
        del out["v_fixed"]                   # it enters through boot_cov
    unused = {"tau_lang_sigma"} if model == "independent" else set()
    if data.shape[0] == 1:
        unused.add("dev_sigma")              # one model: mu = alpha
    out.update({f"prior_{key}": np.asarray(priors[key], dtype=np.float64) for key in PRIOR_KEYS
                if key not in unused})
    return out


def marginal_loglik(ybar: Any, weight: Any, mu: Any, d: Any, tau_lang_sq: Any) -> Any:
    """Sum over languages of log MvN(ybar[:, l] | mu, tau^2 11' + diag(d[:, l])), observed rows.

    Works on numpy arrays and on PyTensor tensors alike (missing cells have ``weight`` 0).
    """
    lib = _lib(ybar, mu, d)
    prec = weight / d
    r = (ybar - mu[:, None]) * weight
    a = prec.sum(axis=0)
    b = (r * prec).sum(axis=0)
    q = (r * r * prec).sum(axis=0)
    denom = 1.0 + tau_lang_sq * a
    logdet = (weight * lib.log(d)).sum(axis=0) + lib.log(denom)
    quad = q - tau_lang_sq * b * b / denom
    n_obs = weight.sum()
    return -0.5 * (n_obs * np.log(2 * np.pi) + (logdet + quad).sum())


def paired_marginal_loglik(ybar: Any, weight: Any, mu: Any, d: Any, tau_lang_sq: Any,
                           boot_cov: Any, eye: Any) -> Any:
    """Sum over languages of log MvN(ybar[:, l] | mu, tau^2 11' + diag(d[:, l]) + C_l).

    ``boot_cov`` (language, model, model) is the covariance of the cells' test-set errors,
    zero on the rows and columns of missing cells; a missing cell's row of the covariance is
    that of the identity and its residual 0, so it adds nothing. ``eye`` is the (model,
    model) identity. NumPy or PyTensor alike.
    """
    lib = _lib(ybar, mu, d, boot_cov)
    w = weight.T                                            # (L, M)
    r = ((ybar - mu[:, None]) * weight).T
    diag = w * d.T + (1.0 - w)
    cov = tau_lang_sq * w[:, :, None] * w[:, None, :] + boot_cov + eye * diag[:, :, None]
    if lib is np:
        chol = np.linalg.cholesky(cov)
        z = np.linalg.solve(chol, r[..., None])[..., 0]
        logdet = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum()
        quad = (z * z).sum()
    else:
        # slogdet and a general (LU) solve, not a Cholesky factor: the gradient of a batched
        # Cholesky holds a batched AllocDiag, which numba runs in object mode, and PyTensor's
        # stabilize rewrites (nutpie applies them) turn a positive-definite solve into one
        logdet = lib.linalg.slogdet(cov)[1].sum()
        quad = (r * lib.linalg.solve(cov, r[..., None], assume_a="gen")[..., 0]).sum()
    return -0.5 * (weight.sum() * np.log(2 * np.pi) + logdet + quad)


def _lib(*values: Any) -> Any:
    if all(isinstance(v, np.ndarray | float | np.floating) for v in values):
        return np
    import pytensor.tensor as pt
    return pt


def build_model(data: HierarchicalData, model: str = "crossed",
                priors: dict[str, float] | None = None) -> pm.Model:
    """Build the marginal hierarchical model on a cube's sufficient statistics.

    Parameters
    ----------
    data
        The result of :func:`cube_statistics`.
    model
        ``"crossed"`` (language effect shared by all models) or ``"independent"`` (no
        shared language effect).
    priors
        Overrides of the default prior scales (keys in ``PRIOR_KEYS``).

    Returns
    -------
    pymc.Model
        Free variables ``alpha``, ``dev`` (model; absent with one model), ``tau_m_raw``
        (model), ``sigma_seed`` (model) and, for ``"crossed"``, ``tau_lang_raw``, with
        ``tau_m = |tau_m_raw|`` and ``tau_lang = |tau_lang_raw|`` (half-normal; sampled on the
        real line, which avoids the log transform's long tail near 0); every array is a
        ``pm.Data`` so a compiled model can be refitted on new data of the same number of
        models. With ``data.paired`` (:func:`cube_statistics` with
        ``test_set_errors="paired"``) the per-language covariance also holds the
        correlation of the models' test-set errors (dense: a factorisation per language).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.hierarchical import build_model, cube_statistics
    >>> data = cube_statistics(eq.simulate_cube(n_models=3, n_languages=5, n_boot=20, rng=0))
    >>> sorted(v.name for v in build_model(data).free_RVs)
    ['alpha', 'dev', 'sigma_seed', 'tau_lang_raw', 'tau_m_raw']
    """
    import pymc as pm
    import pytensor.tensor as pt

    model = check_choice("model", model, MODELS)
    inputs = model_inputs(data, resolve_priors(data, priors), model)
    n_models = data.shape[0]
    coords = {MODEL: list(map(str, data.models)), LANGUAGE: list(map(str, data.languages))}
    with pm.Model(coords=coords) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        alpha = pm.Normal("alpha", x["prior_alpha_mu"], x["prior_alpha_sigma"])
        if n_models > 1:
            dev = pm.ZeroSumNormal("dev", sigma=x["prior_dev_sigma"], dims=MODEL)
            mu = pm.Deterministic("mu", alpha + dev, dims=MODEL)
        else:
            mu = pm.Deterministic("mu", pt.stack([alpha]), dims=MODEL)
        # |Normal| = HalfNormal: the density depends on tau only through tau^2, so the raw
        # variable is sampled on the real line, with no log transform whose long left tail
        # (a variance near 0) NUTS explores slowly
        tau_m_raw = pm.Normal("tau_m_raw", 0.0, x["prior_tau_m_sigma"], dims=MODEL)
        tau_m = pm.Deterministic("tau_m", pt.abs(tau_m_raw), dims=MODEL)
        sigma_seed = pm.HalfNormal("sigma_seed", x["prior_sigma_seed_sigma"], dims=MODEL)
        if model == "crossed":
            tau_lang_raw = pm.Normal("tau_lang_raw", 0.0, x["prior_tau_lang_sigma"])
            tau_lang = pm.Deterministic("tau_lang", pt.abs(tau_lang_raw))
            tau_lang_sq = tau_lang**2
        else:
            tau_lang_sq = pt.as_tensor_variable(0.0)
        seed_var = x["seed_weight"] * sigma_seed**2
        d = (tau_m**2)[:, None] + seed_var[:, None] * x["inv_s"]
        if data.paired:
            loglik = paired_marginal_loglik(x["ybar"], x["weight"], mu, d, tau_lang_sq,
                                            x["boot_cov"], x["eye"])
        else:
            loglik = marginal_loglik(x["ybar"], x["weight"], mu, d + x["v_fixed"], tau_lang_sq)
        pm.Potential("ybar_loglik", loglik)
        # pooled within-cell sum of squares: SS_m / sigma_seed_m^2 ~ chi2(dof_m)
        pm.Potential("seed_ss_loglik", pt.sum(
            x["seed_weight"] * (-x["seed_dof"] * pt.log(sigma_seed)
                                - x["seed_ss"] / (2.0 * sigma_seed**2))))
    return pm_model
