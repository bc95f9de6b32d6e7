"""The hierarchical model in its marginal form (the only module that imports PyMC).

Per language l the seed means of the observed models are multivariate normal,

    ybar[:, l] ~ MvN(mu, tau_lang^2 11' + diag(d_l)),
    d_ml = tau_m^2 + v_fixed_ml + sigma_seed_m^2 / S_ml,

with the language effect a_l and the cell effects g_ml integrated out. The covariance is
diagonal plus rank one, so the log-density is closed form in O(M L) (matrix determinant lemma
and Sherman-Morrison). The pooled seed sum of squares enters as a scaled chi-square. The
models' tau_m are partially pooled: tau_m ~ HalfNormal(tau_m_scale), tau_m_scale ~
HalfNormal(tau_m_sigma) (each tau_m rests on few interaction residuals; pooling borrows the
others' degrees of freedom).

With paired test-set errors (bootstrap replicates shared by all models) the errors of one
language are correlated across models, with the k-factor covariance
C_l = sqrt(v) (Lambda_l Lambda_l' + diag(psi_l)) sqrt(v) (``_factors``): psi v stays in the
diagonal d and the covariance is diag(d_l) + U_l U_l' with U_l = [tau_lang 1, sqrt(v) Lambda_l],
a rank k + 1 term; its log-density follows from the Woodbury identity and the matrix
determinant lemma with a (k + 1) x (k + 1) matrix per language, O(M k^2 L).

:func:`marginal_loglik` and :func:`lowrank_marginal_loglik` write the log-density in NumPy or
PyTensor (the reference); the model computes it, with its gradient, in the fused numba
kernel of ``_fused`` (2.3x faster per gradient at 50 x 500), which the tests hold to the
reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from evaluq._backend import array_module, softplus
from evaluq._dims import LANGUAGE, MODEL
from evaluq._fits import merge_priors
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
    "tau_m_sigma": "scale of tau_m_scale ~ HalfNormal, the pooled scale of the models' "
                   "tau_m ~ HalfNormal(tau_m_scale) (default: SD of the model x language "
                   "residuals of the cell means after the model and language effects; the "
                   "SD of the cell means when there are too few cells)",
    "sigma_seed_sigma": "scale of sigma_seed ~ HalfNormal (default: 2 x pooled within-cell "
                        "seed SD)",
}


def interaction_residuals(ybar: np.ndarray, observed: np.ndarray,
                          iterations: int = 50) -> tuple[np.ndarray, int]:
    """Residuals (0 on missing cells) of an additive model ybar_ml ~ m_m + l_l fitted on the
    observed cells, and their degrees of freedom n - M - L + 1.

    The effects are fitted by alternating row and column means (exact in one pass for a full
    table).
    """
    n_m, n_l = ybar.shape
    dof = int(observed.sum()) - n_m - n_l + 1
    w = observed.astype(np.float64)
    y = np.where(observed, ybar, 0.0)
    row, col = np.zeros(n_m), np.zeros(n_l)
    for _ in range(iterations):
        row = ((y - col) * w).sum(1) / np.maximum(w.sum(1), 1.0)
        col = ((y - row[:, None]) * w).sum(0) / np.maximum(w.sum(0), 1.0)
    return (y - row[:, None] - col) * w, dof


def interaction_sd(ybar: np.ndarray, observed: np.ndarray, iterations: int = 50) -> float:
    """SD of the residuals of an additive model ybar_ml ~ m_m + l_l on the observed cells.

    The sum of squares of :func:`interaction_residuals` is divided by n - M - L + 1. NaN when
    that is not positive.
    """
    resid, dof = interaction_residuals(ybar, observed, iterations)
    if dof <= 0:
        return float("nan")
    return float(np.sqrt((resid**2).sum() / dof))


LINEAR_TAU_Z: Final = 1.5
"""``tau_m`` is sampled linearly in tau_m^2 where the moment estimates of at least half the
models' tau_m^2 are this many standard errors above 0 (:func:`tau_m_evidence`)."""
RIDGE_TAU_Z: Final = 0.9
"""Where the ``"abs"`` coordinates are used but at least half the models' tau_m^2 are this
many standard errors above 0, NUTS samples with ``RIDGE_TARGET_ACCEPT``."""
RIDGE_TARGET_ACCEPT: Final = 0.9
DEFAULT_TARGET_ACCEPT: Final = 0.8
"""nutpie's and PyMC's default target acceptance rate."""
LINEAR_TAU_SCALE: Final = 0.01
"""tau_m^2 = 0.01 tau_m_sigma^2 softplus(z) in the linear coordinates."""


def tau_m_evidence(data: HierarchicalData) -> np.ndarray:
    """Per model, how far the data pin tau_m^2 above 0: the moment estimate of tau_m^2 in
    standard errors (-inf where it cannot be formed).

    The moment estimate is the model's mean squared interaction residual (after the model
    and language effects, scaled by n / (n - M - L + 1)) minus its mean known noise
    ``v + sigma_seed^2 / S``; its standard error is sqrt(2 / n_m) x (mean squared residual).
    :func:`tau_m_variant` chooses the coordinates of tau_m from it.
    """
    resid, dof = interaction_residuals(data.ybar, data.observed)
    obs = data.observed
    n_cells = obs.sum(axis=1)
    if dof <= 0:
        return np.full(data.shape[0], -np.inf)
    scale = obs.size / max(dof, 1)             # residuals lose the fitted effects' dof
    msr = (resid**2).sum(axis=1) * scale / np.maximum(n_cells, 1)
    arr = data.arrays()
    seed_dof = data.seed_dof
    with np.errstate(invalid="ignore", divide="ignore"):
        seed_var = np.where(seed_dof > 0, data.seed_ss / seed_dof, 0.0) * arr["seed_weight"]
        noise = ((arr["v_fixed"] + seed_var[:, None] * arr["inv_s"]) * obs).sum(axis=1) \
            / np.maximum(n_cells, 1)
        z = (msr - noise) / (np.sqrt(2.0 / np.maximum(n_cells, 1)) * msr)
    return np.where(np.isfinite(z) & (n_cells > 1), z, -np.inf)


def tau_m_variant(evidence: np.ndarray) -> str:
    """The coordinates of every model's tau_m (part of the compiled graph), from the
    :func:`tau_m_evidence` of each: ``"linear"`` when at least half exceed
    ``LINEAR_TAU_Z``, else ``"abs"``.

    The prior is the same in both (:func:`tau_m_prior_terms`); each suits one regime. Where
    tau_m is weakly identified its posterior is close to the prior, which the non-centred
    ``"abs"`` coordinates sample as plain normals (6 x 61: 7.0 leapfrog steps per draw
    against 14.7 linear; 5 x 8: 7.0 against 35.6, before the pooling). Where the data pin
    tau_m^2 well above 0, its posterior is close to normal in tau_m^2, while |Normal|
    coordinates see two modes (+-tau_m) with a valley between them (at 50 x 500 x 5,
    paired: 14.4 steps against 8.2 linear; log coordinates: 11.3, with a heavy left tail).

    One set of coordinates for all models, not a switch per model: a per-model switch cost
    about 20% more per gradient at 6 x 61, and the models it left in ``|Normal|`` at 50 x 500
    (those just under the threshold) took more steps than linear coordinates give them
    (10.3-11.8 leapfrog steps per draw against 8.1).
    """
    if evidence.size and np.mean(evidence > LINEAR_TAU_Z) >= 0.5:
        return "linear"
    return "abs"


def target_accept(evidence: np.ndarray) -> float:
    """NUTS's target acceptance rate for a cube with these :func:`tau_m_evidence`.

    ``RIDGE_TARGET_ACCEPT`` (smaller steps) where the ``"abs"`` coordinates are used but at
    least half the models' tau_m are moderately identified (above ``RIDGE_TAU_Z``): there
    the pooled scale times |z| follows a thin curved ridge, and at the default 0.8 NUTS
    diverged in 8 of 16 fits of the demo's 5 x 4 cube (1 of 16 at 0.9). Centred
    coordinates avoid the ridge but meet the funnel of the pooled scale where tau_m is
    weakly identified (12-18 of 144 probe fits warned, against 4 of 144 with this rule and
    3 before the pooling). Elsewhere the default, which takes 30-50% fewer leapfrog steps
    than 0.9.
    """
    if tau_m_variant(evidence) == "abs" and evidence.size \
            and np.mean(evidence > RIDGE_TAU_Z) >= 0.5:
        return RIDGE_TARGET_ACCEPT
    return DEFAULT_TARGET_ACCEPT


def tau_m_prior_terms(z: Any, scale: Any, sigma: Any, variant: str) -> tuple[Any, Any]:
    """tau_m^2 from its coordinates ``z`` (model,) and their log prior density, up to a
    constant, given the pooled scale: tau_m ~ HalfNormal(``scale``) in both coordinates.

    - ``"abs"``: tau_m = scale |z|, z ~ N(0, 1) (non-centred; no log transform whose long
      left tail NUTS explores slowly where tau_m is weakly identified);
    - ``"linear"``: tau_m^2 = c softplus(z) with c = 0.01 ``sigma``^2, and the log density
      -tau^2 / (2 scale^2) - log scale + log |d tau / d z|,  d tau / d z = sigmoid(z) c / (2 tau)
      (centred, ``sigma`` the fixed prior scale of ``scale``: where the data pin tau_m, its
      posterior is close to normal in tau_m^2).

    PyTensor tensors or NumPy arrays (``scale`` broadcasts against ``z``).
    """
    lib = array_module(z, scale)
    if variant == "abs":
        return (scale * z) ** 2, -0.5 * z**2
    tsq = LINEAR_TAU_SCALE * sigma**2 * softplus(lib, z)
    return tsq, (-tsq / (2.0 * scale**2) - lib.log(scale) - softplus(lib, -z)
                 - 0.5 * lib.log(tsq))


def tau_m_from_coordinates(z: np.ndarray, scale: np.ndarray, sigma: float,
                           variant: str) -> np.ndarray:
    """tau_m (..., model) from its sampled coordinates ``z`` (..., model) and the pooled
    scale ``scale`` (..., 1) (see :func:`tau_m_prior_terms`)."""
    with np.errstate(over="ignore"):
        return np.sqrt(tau_m_prior_terms(z, scale, sigma, variant)[0])


def _check_data(data: Any) -> None:
    """``data`` of the public building blocks: the result of ``cube_statistics`` (issue 35)."""
    if not isinstance(data, HierarchicalData):
        raise TypeError("`data` must be the HierarchicalData of "
                        "evaluq.hierarchical.cube_statistics(cube); got "
                        f"{type(data).__name__}")


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
    >>> priors["alpha_sigma"] == 2 * priors["tau_lang_sigma"]
    True
    """
    _check_data(data)
    cells = data.ybar[data.observed]
    spread = float(np.std(cells, ddof=1)) if cells.size > 1 else 0.0
    if not np.isfinite(spread) or spread <= 0:
        noise = np.nanmean(data.v_fixed[data.observed])
        spread = float(np.sqrt(noise)) if np.isfinite(noise) and noise > 0 else 1.0
    dof = data.seed_dof.sum()
    seed_sd = float(np.sqrt(data.seed_ss.sum() / dof)) if dof > 0 else spread
    if not seed_sd > 0:
        seed_sd = spread
    inter = interaction_sd(data.ybar, data.observed)
    return {
        "alpha_mu": float(np.mean(cells)),
        "alpha_sigma": 2.0 * spread,
        "dev_sigma": 2.0 * spread,
        "tau_lang_sigma": spread,
        "tau_m_sigma": inter if np.isfinite(inter) and inter > 0 else spread,
        "sigma_seed_sigma": 2.0 * seed_sd,
    }


def resolve_priors(data: HierarchicalData, priors: dict[str, float] | None) -> dict[str, float]:
    """Default priors updated with the user's; unknown keys and bad values raise."""
    return merge_priors(default_priors(data), priors, PRIOR_KEYS)


def model_inputs(data: HierarchicalData, priors: dict[str, float],
                 model: str = "crossed") -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the model, by name (for ``set_data`` / ``with_data``)."""
    out = data.arrays()
    if data.model_factors:                   # (M, k, L), the fused kernel's layout
        out["load"] = np.ascontiguousarray(out["load"].transpose(1, 2, 0))
    else:
        out.pop("load", None)                # paired with k = 0: the independent form
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
    lib = array_module(ybar, mu, d)
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


def small_cholesky(entries: list[list[Any]], lib: Any) -> list[list[Any]]:
    """Cholesky factor of a small symmetric matrix given entry by entry (each entry a batch).

    Unrolled into elementwise operations (n is the number of factors plus one), so that
    PyTensor's gradient compiles to plain numba loops: a batched Cholesky op's gradient runs
    in object mode. Returns the lower triangle as nested lists.
    """
    n = len(entries)
    low: list[list[Any]] = [[None] * n for _ in range(n)]
    for j in range(n):
        diag = entries[j][j] - sum((low[j][p] ** 2 for p in range(j)), start=0.0)
        low[j][j] = lib.sqrt(diag)
        for i in range(j + 1, n):
            off = entries[i][j] - sum((low[i][p] * low[j][p] for p in range(j)), start=0.0)
            low[i][j] = off / low[j][j]
    return low


def lowrank_marginal_loglik(ybar: Any, weight: Any, mu: Any, d: Any, tau_lang_sq: Any,
                            load: Any, n_factors: int) -> Any:
    """Sum over languages of log MvN(ybar[:, l] | mu, diag(d[:, l]) + U_l U_l').

    ``U_l = [tau_lang w_l, load_l]`` (model x (k + 1); ``load`` (language, model, k) is zero
    on missing cells), so the covariance is a diagonal plus a rank k + 1 term. With
    ``P = diag(w / d)``, ``K_l = I + U_l' P U_l`` and ``c_l = U_l' P r_l`` (r the observed
    residuals), the Woodbury identity and the matrix determinant lemma give

        r' S^{-1} r = r' P r - c' K^{-1} c,    log|S| = sum log d + log|K|,

    in O(M k^2) per language; K is factored by :func:`small_cholesky`. NumPy or PyTensor.
    """
    lib = array_module(ybar, mu, d, load)
    prec = weight / d                                        # (M, L)
    r = (ybar - mu[:, None]) * weight
    cols = [lib.sqrt(tau_lang_sq) * weight] + [load[:, :, j].T for j in range(n_factors)]
    n = len(cols)
    scaled = [col * prec for col in cols]
    entries = [[(scaled[i] * cols[j]).sum(axis=0) + (1.0 if i == j else 0.0)
                for j in range(n)] for i in range(n)]
    c = [(sc * r).sum(axis=0) for sc in scaled]
    low = small_cholesky(entries, lib)
    z: list[Any] = []
    for i in range(n):
        z.append((c[i] - sum((low[i][p] * z[p] for p in range(i)), start=0.0)) / low[i][i])
    logdet = (weight * lib.log(d)).sum() + 2.0 * sum(lib.log(low[i][i]).sum() for i in range(n))
    quad = (r * r * prec).sum() - sum((zi * zi).sum() for zi in z)
    return -0.5 * (weight.sum() * np.log(2 * np.pi) + logdet + quad)


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
        Overrides of the default prior scales (the keys of :func:`default_priors`).

    Returns
    -------
    pymc.Model
        Free variables ``alpha``, ``dev`` (model; absent with one model), ``tau_m_z``
        (model; the coordinates of ``tau_m``, see :func:`tau_m_variant`), the pooled
        scale of the tau_m (``tau_m_scale_raw`` with ``tau_m_scale = |tau_m_scale_raw|`` in
        the non-centred coordinates, else ``tau_m_scale`` itself), ``sigma_seed``
        (model) and, for ``"crossed"``, ``tau_lang_raw``, with ``tau_lang = |tau_lang_raw|``
        (half-normal; sampled on the
        real line, which avoids the log transform's long tail near 0); every array is a
        ``pm.Data`` so a compiled model can be refitted on new data of the same number of
        models. With ``data.paired`` the per-language covariance also holds the
        k-factor correlation of the models' test-set errors (a rank k + 1 term; the compiled
        graph depends on k).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.hierarchical import build_model, cube_statistics
    >>> data = cube_statistics(eq.simulate_cube(n_models=3, n_languages=5, n_boot=20, rng=0))
    >>> sorted(v.name for v in build_model(data).free_RVs)
    ['alpha', 'dev', 'sigma_seed', 'tau_lang_raw', 'tau_m_scale_raw', 'tau_m_z']
    """
    _check_data(data)
    model = check_choice("model", model, MODELS)
    import pymc as pm
    import pytensor.tensor as pt

    from evaluq.hierarchical._fused import fused_marginal_loglik

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
        # tau_m ~ HalfNormal(tau_m_scale), tau_m_scale ~ HalfNormal(tau_m_sigma): the models'
        # tau_m are partially pooled (tau_m_prior_terms), sampled in the coordinates that
        # suit them (tau_m_evidence, tau_m_variant)
        tau_m_z = pm.Flat("tau_m_z", dims=MODEL)
        sigma_tm = x["prior_tau_m_sigma"]
        variant = tau_m_variant(tau_m_evidence(data))
        if variant == "linear":        # centred: the scale in log coordinates (PyMC's)
            scale = pm.HalfNormal("tau_m_scale", sigma_tm)
        else:
            scale = pm.Deterministic("tau_m_scale",
                                     pt.abs(pm.Normal("tau_m_scale_raw", 0.0, sigma_tm)))
        tsq, prior = tau_m_prior_terms(tau_m_z, scale, sigma_tm, variant)
        pm.Deterministic("tau_m", pt.sqrt(tsq), dims=MODEL)
        pm.Potential("tau_m_prior", pt.sum(prior))
        sigma_seed = pm.HalfNormal("sigma_seed", x["prior_sigma_seed_sigma"], dims=MODEL)
        if model == "crossed":
            tau_lang_raw = pm.Normal("tau_lang_raw", 0.0, x["prior_tau_lang_sigma"])
            tau_lang = pm.Deterministic("tau_lang", pt.abs(tau_lang_raw))
            tau_lang_sq = tau_lang**2
        else:
            tau_lang_sq = pt.as_tensor_variable(0.0)
        # d_ml = tau_m^2 + sigma_seed_m^2 / S_ml + v_fixed_ml; the log-density of
        # lowrank_marginal_loglik (marginal_loglik without factors: independent errors, or
        # paired with no factor needed), fused with its gradient in one numba kernel
        pm.Potential("ybar_loglik", fused_marginal_loglik(
            x["ybar"], x["weight"], x["inv_s"], x["v_fixed"], mu, tsq,
            x["seed_weight"] * sigma_seed**2, tau_lang_sq,
            x["load"] if data.model_factors else None))
        # pooled within-cell sum of squares: SS_m / sigma_seed_m^2 ~ chi2(dof_m)
        pm.Potential("seed_ss_loglik", pt.sum(
            x["seed_weight"] * (-x["seed_dof"] * pt.log(sigma_seed)
                                - x["seed_ss"] / (2.0 * sigma_seed**2))))
    return pm_model
