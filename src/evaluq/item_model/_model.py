"""The 1PL item model with the items integrated out (PyMC imported lazily, inside functions).

    logit P(y_mie = 1) = eta_mk - b_i,  eta_mk = alpha + dev_m + t_k + g_mk,
    b_i ~ N(0, sigma_item^2),  t_k ~ N(0, sigma_task^2),  g_mk ~ N(0, sigma_mxt^2).

The sampler integrates each item's effect out on one grid shared by every term
(``_gridquad``'s fused kernel, :func:`grid_terms`): a table of -softplus(eta_mk - b_g) per
(model, task) and node, and each (task, item total) term's integrand N(b; 0, s^2)
exp(-b Y - sum_m n_km softplus(eta_mk - b)) summed from its task's rows, so one
log-density costs (models x tasks) x nodes transcendental functions plus terms x models x
nodes additions, independent of the number of items. The adaptive Gauss-Hermite rule
(``_quadrature``: each term centred at its mode and scaled by its curvature, ``N_NODES``
nodes) is the reference (``quadrature="gauss-hermite"``) and serves the draws after
sampling.

The effects are sampled summing to zero (:func:`zero_sum_effects`: an exact
reparametrisation of the iid prior above, so the same model), centred when every task has
many items (:func:`centred_effects`). With a task column the terms are (task, item total)
pairs, up to K times those of one task: the per-term part of a gradient costs K times
more, the floor of a task fit's cost against the same fit without tasks (the sampler's
steps per draw are near those without tasks once the ridges of the iid form are gone).

``build_explicit_model`` is the same model with one parameter per item (the baseline of the
speed benchmark and the form for checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from evaluq._dims import MODEL
from evaluq._fits import merge_priors
from evaluq.item_model._data import ItemData
from evaluq.item_model._quadrature import N_NODES as N_NODES
from evaluq.item_model._quadrature import NEWTON_STEPS as NEWTON_STEPS
from evaluq.item_model._quadrature import log_integrand as log_integrand
from evaluq.item_model._quadrature import term_loglik as term_loglik
from evaluq.item_model._quadrature import term_mode as term_mode

if TYPE_CHECKING:
    import pymc as pm

PRIOR_KEYS: Final = ("alpha_mu", "alpha_sigma", "dev_sigma", "sigma_item_sigma",
                     "sigma_task_sigma", "sigma_mxt_sigma")
PRIOR_TEXT: Final = {
    "alpha_mu": "mean of the common logit alpha ~ Normal (default: logit of the pooled "
                "accuracy)",
    "alpha_sigma": "SD of alpha (default 2.5)",
    "dev_sigma": "scale of tau_dev ~ HalfNormal, the SD of the model deviations dev ~ "
                 "ZeroSumNormal(tau_dev), learned from the data (partially pooled; default 1 "
                 "logit)",
    "sigma_item_sigma": "scale of sigma_item ~ HalfNormal (default 2.5)",
    "sigma_task_sigma": "scale of sigma_task ~ HalfNormal (default 1)",
    "sigma_mxt_sigma": "scale of sigma_model_x_task ~ HalfNormal (default 1)",
}


DEV_SIGMA: Final = 1.0
"""Default scale of tau_dev ~ HalfNormal (``dev_sigma``): models 0.1-2 logits apart are
within its bulk (a fixed ZeroSumNormal(2.5) was effectively flat, and P(a > b) of close
models overconfident; issue 36)."""


def model_deviations(x: dict[str, Any], n_m: int, extra_var: Any = 0.0,
                     centred: bool = False) -> Any:
    """dev (model,) ~ ZeroSumNormal(sqrt(tau_dev^2 + ``extra_var``)), tau_dev ~
    HalfNormal(``dev_sigma``): the model deviations partially pooled (their scale learned
    from the data, as the cube model's tau_m); ``extra_var`` is the model x task variance
    folded in by :func:`zero_sum_effects`. ``centred`` (:func:`centred_deviations`): dev
    sampled directly; otherwise non-centred (``dev_z`` ~ ZSN(1), ``dev`` a deterministic).
    With ``fixed_dev_sigma`` in ``x`` (the ordinal family's ``dev_sigma_fixed``) the scale
    is that constant, as HiBayES's fixed prior."""
    import pymc as pm
    import pytensor.tensor as pt

    if "fixed_dev_sigma" in x:      # the ordinal family's dev_sigma_fixed (HiBayES's prior)
        return pm.ZeroSumNormal("dev", sigma=pt.sqrt(x["fixed_dev_sigma"] ** 2 + extra_var),
                                dims=MODEL)
    if DEV_PRIOR == "gamma":
        tau_dev = pm.Gamma("tau_dev", alpha=2.0, beta=2.0 / x["prior_dev_sigma"])
    else:
        tau_dev = pm.HalfNormal("tau_dev", x["prior_dev_sigma"])
    scale = pt.sqrt(tau_dev**2 + extra_var)
    if centred:
        return pm.ZeroSumNormal("dev", sigma=scale, dims=MODEL)
    return pm.Deterministic("dev", scale * pm.ZeroSumNormal("dev_z", 1.0, dims=MODEL),
                            dims=MODEL)


DEV_PRIORS: Final = ("halfnormal", "gamma")
"""Families of tau_dev's prior (see ``DEV_PRIOR``)."""
DEV_PRIOR: str = "halfnormal"
"""tau_dev ~ HalfNormal(``dev_sigma``) (the default) or ``"gamma"``: Gamma(2, rate 2 /
``dev_sigma``) (mean ``dev_sigma``, mode ``dev_sigma`` / 2, density 0 at tau_dev = 0: the
boundary-avoiding prior of Chung et al. 2013), read when a model is built. Measured
(``benchmarks/calibration_item_pooling.py``, 5 models x 60 items x 1 epoch): both are
nominal under their own prior (SBC-style, 200 sets: P(a > b) observed - stated +0.009 /
+0.005, pairwise 90% coverage 0.881 / 0.891, SE 0.011, shrinkage slope 1.01 / 1.01), but
neither at every fixed truth: at tau 0.3 (400 sets) HalfNormal gives P(a > b) +0.014 (z
+1.9) and pairwise coverage 0.866, Gamma +0.0005 (z +0.1) and 0.886; at tau 0.1 (200 sets)
HalfNormal -0.009 (z -0.7) and 0.897, Gamma -0.036 (z -3.0, overconfident) and 0.920."""


def draw_tau_dev(gen: np.random.Generator, dev_sigma: float, size: Any = None) -> Any:
    """Draws of tau_dev from its prior (``DEV_PRIOR``), for prior predictive draws and SBCs.

    Examples
    --------
    >>> import numpy as np
    >>> x = draw_tau_dev(np.random.default_rng(0), 1.0, 100_000)
    >>> bool(abs(x.mean() - (1.0 if DEV_PRIOR == "gamma" else np.sqrt(2 / np.pi))) < 0.01)
    True
    """
    if DEV_PRIOR == "gamma":
        return gen.gamma(2.0, dev_sigma / 2.0, size)
    return np.abs(gen.normal(0.0, dev_sigma, size))


DEV_CENTRED: bool | None = None
"""dev sampled centred (True), non-centred (False) or, by default (None), as the data say
(:func:`centred_deviations`). With 60 items x 1 epoch the data pin a deviation down to about
its prior's scale, the funnel of a centred dev with tau_dev near 0
(``benchmarks/calibration_item_pooling.py --steps`` measures both); with 10^6 responses
they pin it down 50 times more tightly than the deviations spread, and a non-centred dev
trades tau_dev against every dev_z (24.8 leapfrog steps per draw against 13.7 centred at
20 models x 10^4 items x 5 epochs in 4 tasks; sampling 54.7 s against 33.3 s)."""


def default_priors(data: ItemData) -> dict[str, float]:
    """Weakly informative priors on the logit scale (see ``PRIOR_TEXT``)."""
    rate = (data.correct.sum() + 0.5) / (data.trials.sum() + 1.0)
    return {"alpha_mu": float(np.log(rate / (1 - rate))), "alpha_sigma": 2.5,
            "dev_sigma": DEV_SIGMA, "sigma_item_sigma": 2.5, "sigma_task_sigma": 1.0,
            "sigma_mxt_sigma": 1.0}


def resolve_priors(data: ItemData, priors: dict[str, float] | None) -> dict[str, float]:
    """Default priors updated with the user's; unknown keys and bad values raise."""
    return merge_priors(default_priors(data), priors, PRIOR_KEYS)


def padded_terms(n_terms: int) -> int:
    """Terms are padded (with weight 0) to a power of two, so a compiled model serves data
    of similar size."""
    return max(16, 1 << int(np.ceil(np.log2(max(n_terms, 1)))))


QUADRATURES: Final = ("grid", "gauss-hermite")
"""How :func:`build_model` integrates the item effects out (see :func:`grid_terms`)."""


def grid_spacing(data: ItemData) -> float:
    """h_data of the shared grid (``_gridquad``): the largest information about b of one
    item, 1/4 per response (p = 1/2)."""
    from evaluq.item_model._gridquad import data_spacing

    return data_spacing(float(np.max(data.epochs.sum(axis=0))) / 4.0)


def grid_terms(data: ItemData, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each (task, item total) term's entries in the shared-grid table (``_gridquad``).

    The table has one row per (model, task), -softplus(eta_mk - b_g) (row m K + k), and a
    last row -b_g (row M K); term t of task k and total Y takes the rows of its task with
    counts n_km and the last row with count Y, so its integrand is N(b; 0, s^2) exp(-b Y -
    sum_m n_km softplus(eta_mk - b)), as the adaptive rule's. Returns rows (size, M + 1)
    int and counts (size, M + 1); padded terms (weight 0) have zero counts.
    """
    n_m, n_k = data.shape
    n_t = len(data.term_total)
    rows = np.zeros((size, n_m + 1), dtype=np.int64)
    counts = np.zeros((size, n_m + 1))
    rows[:n_t, :n_m] = np.arange(n_m)[None, :] * n_k + data.term_task[:, None]
    rows[:n_t, n_m] = n_m * n_k
    counts[:n_t, :n_m] = data.epochs[:, data.term_task].T
    counts[:n_t, n_m] = data.term_total
    return rows, counts


def model_inputs(data: ItemData, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the marginal model, by name (a prior of a learned item
    distribution, ``_item_density.SHAPE_PRIOR_KEYS``, among ``priors`` included)."""
    out = {"correct": data.correct, "trials": data.trials}
    if data.has_items:
        size = padded_terms(len(data.term_total))
        pad = size - len(data.term_total)
        rows, counts = grid_terms(data, size)
        out |= {"term_total": np.r_[data.term_total, np.zeros(pad)],
                "term_task": np.r_[data.term_task, np.zeros(pad, dtype=np.int64)],
                "term_weight": np.r_[data.term_weight, np.zeros(pad)],
                "epochs": data.epochs, "grid_rows": rows, "grid_counts": counts,
                "grid_spacing": np.asarray(grid_spacing(data))}
    return out | {f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()}


def model_task_effects(x: dict[str, Any], n_m: int, n_k: int) -> Any:
    """eta (model, task) = dev + t + g, with the scales they need (no intercept)."""
    import pymc as pm
    import pytensor.tensor as pt

    eta = pt.zeros((n_m, n_k))
    if n_m > 1:
        eta = eta + model_deviations(x, n_m)[:, None]
    if n_k > 1:
        # non-centred: with a handful of tasks the scales are weakly identified and a
        # centred effect with its scale near 0 makes a funnel (divergences, measured)
        sigma_task = pm.HalfNormal("sigma_task", x["prior_sigma_task_sigma"])
        task_z = pm.Normal("task_z", 0.0, 1.0, shape=n_k)
        eta = eta + pm.Deterministic("task_effect", sigma_task * task_z)[None, :]
        if n_m > 1:
            sigma_mxt = pm.HalfNormal("sigma_model_x_task", x["prior_sigma_mxt_sigma"])
            mxt_z = pm.Normal("model_x_task_z", 0.0, 1.0, shape=(n_m, n_k))
            eta = eta + pm.Deterministic("model_x_task", sigma_mxt * mxt_z)
    return eta


EFFECTS: Final = ("zero-sum", "iid")
"""Parametrisations of eta: the same prior on eta (see :func:`zero_sum_effects`)."""
CENTRED_RATIO: Final = 1.5
"""The task and model x task effects are centred when their spread is at least this many
times the noise of their estimates (:func:`effects_identified`)."""
DEV_CENTRED_RATIO: Final = 8.0
"""The model deviations are centred when their spread is at least this many times the noise
of their estimates (:func:`centred_deviations`): stricter than ``CENTRED_RATIO``, since with
a handful of models the spread's estimate is itself noisy (the ratio measured 0-2.9 over
five data sets of 5 models x 60 items x 1 epoch, whose posterior the non-centred form
samples better; 7-19 at 10 x 1,000 x 3 in 4 tasks, 28-57 at 20 x 10^4 x 5). At 6 models x
120 items x 2 epochs (ratio 5.2, 2PL) the centred form diverged 1-3 times in 2,000 draws
over six seeds, the non-centred 0-2 (0 in five): 4 was too low."""
CENTRED_MIN_ITEMS: Final = 100
"""With at least this many items in every task the task and model x task effects are
sampled centred (the data pin each cell's eta down, so a non-centred effect would make the
sampler trade its scale against its standardised value); with fewer, non-centred (a
centred effect with a weakly identified scale near 0 makes a funnel). Measured at 10
models x 1,000 items x 3 epochs in 4 tasks: 8.5-9.4 leapfrog steps per draw centred, 14.8
non-centred, no divergences either way."""


def structure_flags() -> tuple[str, bool | None]:
    """The module switches every item-model graph reads when it is built (``DEV_PRIOR``,
    ``DEV_CENTRED``): part of every compiled model's key, so a process that changes them
    never samples a model compiled before (same rng, same draws, whatever ran before)."""
    return DEV_PRIOR, DEV_CENTRED


def centred_effects(data: ItemData) -> bool:
    """Whether :func:`build_model` samples the task and model x task effects centred: every
    task has at least ``CENTRED_MIN_ITEMS`` items and (with items) the data pin both effects
    down within their spread (:func:`effects_identified`)."""
    if not (data.shape[1] > 1 and data.n_items.min() >= CENTRED_MIN_ITEMS):
        return False
    return not data.has_items or effects_identified(data)


def centred_deviations(data: ItemData) -> bool:
    """Whether the model deviations are sampled centred (``DEV_CENTRED``, or by default the
    data): with two models or more, the spread of the models' mean eta over tasks is at
    least ``DEV_CENTRED_RATIO`` times the noise of those means (as :func:`effects_identified`,
    from the same plug-in estimates: tau^2 = sum d_m^2 / (M - 1) - mean(se_m^2), d_m a
    model's mean eta minus the grand mean, se_m^2 = mean_k(1 / I_mk) / K, over the tasks
    each model was scored on). Deterministic: part of every compiled model's key
    (:func:`centring`)."""
    if DEV_CENTRED is not None:
        return DEV_CENTRED
    if data.shape[0] < 2:
        return False
    eta, noise, _ = cell_estimates(data)
    scored = data.epochs > 0
    n_scored = np.maximum(scored.sum(axis=1), 1)
    means = np.where(scored, eta, 0.0).sum(axis=1) / n_scored
    dev = means - means.mean()
    se2 = float((np.where(scored, noise, 0.0).sum(axis=1) / n_scored**2).mean())
    return bool(dev @ dev / (len(dev) - 1) - se2 >= DEV_CENTRED_RATIO**2 * se2)


def centring(data: ItemData) -> tuple[bool, bool]:
    """(:func:`centred_effects`, :func:`centred_deviations`): how the effects are sampled,
    part of every compiled model's key."""
    return centred_effects(data), centred_deviations(data)


def cell_estimates(data: ItemData) -> tuple[np.ndarray, np.ndarray, float]:
    """eta (model, task) at the penalised marginal maximum (``_drift.plug_in_fit``, on the
    distinct (task, item total) terms: the beta-binomial's response patterns, 9,663 at 20
    models x 10^4 items x 5 epochs, collapse to 404 of them, and the fit is the same; without
    items the empirical logits), the noise 1 / I_mk of each, I_mk = n_items_k n_km E_b[p (1
    - p)] (b ~ N(0, sigma_item^2)), and sigma_item (0 without items)."""
    from scipy.special import expit

    from evaluq.item_model._drift import plug_in_fit

    if not data.has_items:
        rate = (data.correct + 0.5) / (data.trials + 1.0)
        noise = 1.0 / np.maximum(data.trials * rate * (1.0 - rate), 1e-12)
        return np.log(rate / (1.0 - rate)), noise, 0.0
    # the binomial's terms, (task, item total): the beta-binomial's patterns collapse to them
    keys, where = np.unique(np.stack([data.term_task, data.term_total]), axis=1,
                            return_inverse=True)
    weight = np.bincount(where.ravel(), weights=data.term_weight, minlength=keys.shape[1])
    eta, sigma = plug_in_fit(data.correct, data.epochs, keys[1], keys[0].astype(np.int64),
                             weight)
    z, w = np.polynomial.hermite.hermgauss(20)
    p = expit(eta[..., None] - np.sqrt(2.0) * sigma * z)
    variance = (p * (1.0 - p)) @ (w / np.sqrt(np.pi))              # E_b[p (1 - p)]
    noise = 1.0 / np.maximum(data.n_items * data.epochs * variance, 1e-12)
    return eta, noise, sigma


def effects_identified(data: ItemData) -> bool:
    """Whether the spread of the model x task and of the task effects is at least
    ``CENTRED_RATIO`` times the noise of their estimates (from the penalised marginal
    maximum of ``_drift.plug_in_fit``; deterministic).

    A centred effect is efficient when the data pin each value down more tightly than its
    scale spreads them, a non-centred one when its scale is small against that noise (a
    centred effect with its scale near 0 is a funnel). With cell estimates eta_mk of
    information I_mk = n_items_k n_km E_b[p (1 - p)] (b ~ N(0, sigma_item^2)), the
    method-of-moments spreads are

        tau_g^2 = sum g_mk^2 / ((M - 1)(K - 1)) - mean(1 / I),   g the interaction of eta,
        tau_t^2 = sum t_k^2 / (K - 1) - mean(se_t^2),   se_t^2 = mean_m(1 / I) / M
                  + sigma_item^2 / n_items_k      (t_k the task means minus the grand mean;
                  a task's items are a sample),

    compared with the root mean noise. Measured at 10 models x 1,000 items x 3 epochs in 4
    tasks: with no model x task effect (tasks that are arbitrary splits) the centred form
    mixed sigma_model_x_task at R-hat 1.03-1.08 and ESS 49-126 of 2,000 draws (26 leapfrog
    steps per draw), the non-centred one at R-hat 1.00 and ESS 830-920 (16 steps); with an
    effect of SD 0.2 (ratio 1.8-2.3) the centred form takes 8.5-9.4 steps, the non-centred
    14.8."""
    eta, noise, sigma = cell_estimates(data)
    n_m, n_k = eta.shape
    t = eta.mean(axis=0) - eta.mean()
    se_t = noise.mean(axis=0) / n_m + sigma**2 / data.n_items
    identified = (t @ t / (n_k - 1) - se_t.mean()) >= CENTRED_RATIO**2 * se_t.mean()
    if n_m > 1:
        g = eta - eta.mean(axis=0) - eta.mean(axis=1, keepdims=True) + eta.mean()
        tau2 = (g**2).sum() / ((n_m - 1) * (n_k - 1)) - noise.mean()
        identified = identified and tau2 >= CENTRED_RATIO**2 * noise.mean()
    return bool(identified)


def zero_sum_effects(x: dict[str, Any], n_m: int, n_k: int, centred: bool = False,
                     dev_centred: bool = False) -> Any:
    """eta (model, task) = alpha + dev + t + g with every effect summing to zero.

    The iid prior t_k ~ N(0, s_t^2), g_mk ~ N(0, s_g^2) (with alpha ~ N(mu, a^2), dev ~
    ZSN(d)) splits exactly (the ANOVA decomposition of an iid Gaussian array into independent
    parts) into

        alpha' = alpha + mean(t) + mean(g)  ~ N(mu, a^2 + s_t^2 / K + s_g^2 / (M K)),
        dev'_m = dev_m + (g_m. - g..)       ~ ZSN(sqrt(d^2 + s_g^2 / K)),
        t'_k   = t_k - mean(t) + (g_.k - g..) ~ ZSN(sqrt(s_t^2 + s_g^2 / M)),
        g'_mk  = g_mk - g_m. - g_.k + g..   ~ ZSN(s_g) over both axes,

    (ZSN(s): N(0, s^2 (I - J / n)), an iid N(0, s^2) vector minus its mean) and eta =
    alpha' + dev'_m + t'_k + g'_mk is the same sum: the prior, hence the posterior, of eta
    and of the scales is unchanged. The sampler no longer meets the ridges of the iid form
    (alpha against the mean task effect, a task effect against its column of g, a model's
    deviation against its row of g): with four tasks these doubled its leapfrog steps per
    draw (30.6 -> 14.8 measured; 8.5-9.4 with ``centred``). ``alpha`` is then the mean of
    eta over models and tasks, ``dev`` a model's mean over tasks minus alpha,
    ``task_effect`` a task's mean over models minus alpha and ``model_x_task`` the rest.

    ``centred``: the task and model x task effects centred (see ``CENTRED_MIN_ITEMS``);
    otherwise non-centred (a standardised ZSN times its scale: ``task_z``,
    ``model_x_task_z``). ``dev_centred``: the model deviations centred
    (:func:`centred_deviations`), otherwise ``dev_z``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    eta, mean_var = zero_sum_parts(x, n_m, n_k, centred, dev_centred)
    alpha = pm.Normal("alpha", x["prior_alpha_mu"],
                      pt.sqrt(x["prior_alpha_sigma"] ** 2 + mean_var))
    return alpha + eta


def zero_sum_parts(x: dict[str, Any], n_m: int, n_k: int, centred: bool = False,
                   dev_centred: bool = False) -> tuple[Any, Any]:
    """(dev + t + g, v): the zero-sum parts of :func:`zero_sum_effects` and the variance v =
    s_t^2 / K + s_g^2 / (M K) of the iid effects' mean, which the caller folds into its
    intercept's prior (the binary families' alpha; the ordinal family's first cutpoint,
    with the opposite sign, which leaves the prior of eta - kappa unchanged); ``centred``
    and ``dev_centred`` as there."""
    import pymc as pm
    import pytensor.tensor as pt

    alpha_var: Any = 0.0
    dev_extra = 0.0
    eta = pt.zeros((n_m, n_k))
    if n_k > 1:
        sigma_task = pm.HalfNormal("sigma_task", x["prior_sigma_task_sigma"])
        task_var = sigma_task**2
        alpha_var = alpha_var + task_var / n_k
        if n_m > 1:
            sigma_mxt = pm.HalfNormal("sigma_model_x_task", x["prior_sigma_mxt_sigma"])
            if centred:
                mxt = pm.ZeroSumNormal("model_x_task", sigma_mxt, shape=(n_m, n_k),
                                       n_zerosum_axes=2)
            else:
                mxt = pm.Deterministic("model_x_task", sigma_mxt * pm.ZeroSumNormal(
                    "model_x_task_z", 1.0, shape=(n_m, n_k), n_zerosum_axes=2))
            eta = eta + mxt
            task_var = task_var + sigma_mxt**2 / n_m
            dev_extra = sigma_mxt**2 / n_k
            alpha_var = alpha_var + sigma_mxt**2 / (n_m * n_k)
        if centred:
            task = pm.ZeroSumNormal("task_effect", pt.sqrt(task_var), shape=n_k)
        else:
            task = pm.Deterministic("task_effect", pt.sqrt(task_var) * pm.ZeroSumNormal(
                "task_z", 1.0, shape=n_k))
        eta = eta + task[None, :]
    if n_m > 1:
        eta = eta + model_deviations(x, n_m, dev_extra, dev_centred)[:, None]
    return eta, alpha_var


def _effects(x: dict[str, Any], data: ItemData, effects: str = "zero-sum",
             centring: tuple[bool, bool] = (False, False)) -> Any:
    """eta (model, task) = alpha + dev + t + g: :func:`zero_sum_effects` (``centring`` its
    (``centred``, ``dev_centred``), :func:`centring`), or (``"iid"``, the former
    parametrisation, kept as the reference of the tests) :func:`model_task_effects` plus
    alpha ~ N(mu, a^2)."""
    import pymc as pm

    if effects not in EFFECTS:
        raise ValueError(f"`effects` must be one of {EFFECTS}; got {effects!r}")
    if effects == "zero-sum":
        return zero_sum_effects(x, *data.shape, *centring)
    alpha = pm.Normal("alpha", x["prior_alpha_mu"], x["prior_alpha_sigma"])
    return alpha + model_task_effects(x, *data.shape)


TAIL_SDS: Final = 8.0
"""The shared grid reaches this many curvature SDs beyond the modes of the extreme terms."""


def grid_span(x: dict[str, Any], eta: Any, sigma_item: Any,
              standard: tuple[Any, Any] | None = None) -> tuple[Any, Any]:
    """Lowest and highest node of the shared grid (PyTensor): +-``HALF_WIDTH`` prior SDs
    (``_gridquad``), widened to ``TAIL_SDS`` curvature SDs beyond the modes of each task's
    extreme terms (total 0 and total sum_m n_km: an item no model ever answers, or every
    model always does). Their mass sits in the prior's tail when an item has many
    responses (at 4 models x 40 epochs and s = 0.69 the mode of total 0 is 6.2 s out, and
    a grid of +-7 s misses 3% of its integral); every other term's mode lies between them.
    ``standard`` (m, v) of a learned item distribution (``_item_density``): the span also
    covers z in [-Z_EDGE, Z_EDGE] on its standardised scale, b = s (z - m) / v."""
    import pytensor.tensor as pt

    from evaluq.item_model._gridquad import HALF_WIDTH

    n_t = pt.concatenate([x["epochs"].T, x["epochs"].T])                  # (2K, M)
    eta_t = pt.concatenate([eta.T, eta.T])
    total = pt.concatenate([pt.zeros(eta.shape[1]), x["epochs"].sum(axis=0)])
    mode, sd = term_mode(eta_t, n_t, total, sigma_item)
    lo = pt.minimum(-HALF_WIDTH * sigma_item, (mode - TAIL_SDS * sd).min())
    hi = pt.maximum(HALF_WIDTH * sigma_item, (mode + TAIL_SDS * sd).max())
    if standard is not None:
        from evaluq.item_model._item_density import Z_EDGE

        m, v = standard
        lo = pt.minimum(lo, sigma_item * (-Z_EDGE - m) / v)
        hi = pt.maximum(hi, sigma_item * (Z_EDGE - m) / v)
    return lo, hi


def _grid_loglik(x: dict[str, Any], eta: Any, sigma_item: Any, shape: Any = None) -> Any:
    """sum_t w_t log I_t on the grid shared by every term (``_gridquad``'s fused kernel; see
    :func:`grid_terms`): (models x tasks + 1) x nodes transcendental functions, not terms x
    models x nodes. Nodes lo + g h over :func:`grid_span`, h = min(h_data, ``HZ`` s) as
    ``_gridquad``'s (trapezoid rule, relative error ~2 exp(-2 pi^2 w^2 / h^2) for an
    integrand of SD w; the spacing widened where the span would need more than
    ``_gridquad.MAX_NODES`` nodes). ``shape``: the coefficients of a learned item
    distribution (``_item_density``), whose log g(b_g) + log h is then the base instead of
    log N(b_g; 0, s^2) + log h (the span widened to its support, the nodes on its lattice
    and the spacing from its curvature: ``_item_density.lattice_grid``; the kernel
    unchanged)."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    from evaluq.item_model._gridquad import MAX_NODES, grid_loglik, grid_nodes, prior_base

    standard = None
    if shape is not None:
        from evaluq.item_model._item_density import standardise

        standard = standardise(pt, shape)
    span = grid_span(x, eta, sigma_item, None if standard is None else standard[:2])
    # at most MAX_NODES nodes: a small sigma_item on a wide span (a warm-up trajectory)
    # once asked for billions of nodes (an out-of-memory kill)
    if standard is None:
        b, h = grid_nodes(sigma_item, x["grid_spacing"], span)
        b, h = disconnected_grad(b), disconnected_grad(h)  # the rule's value is its own
        base = prior_base(pt, b, sigma_item, h)
    else:
        from evaluq.item_model._item_density import lattice_grid

        b, h, base = lattice_grid(span, sigma_item, shape, standard, x["grid_spacing"],
                                  MAX_NODES)
    table = pt.concatenate([-pt.softplus(eta[:, :, None] - b).reshape((-1, b.shape[0])),
                            -b[None, :]], axis=0)
    return grid_loglik(table, base, x["grid_rows"], x["grid_counts"], x["term_weight"])


def build_model(data: ItemData, priors: dict[str, float] | None = None,
                effects: str = "zero-sum", quadrature: str = "grid",
                item_distribution: str = "normal") -> pm.Model:
    """Build the marginal 1PL model (items integrated out) on the sufficient statistics.

    Free variables: ``alpha``, ``dev`` (model; with more than one model), ``sigma_item``
    (with items), ``sigma_task`` and the task effects (with more than one task), and
    ``sigma_model_x_task`` and the model x task effects (models and tasks), each effect
    summing to zero (``effects="zero-sum"``, :func:`zero_sum_effects`; centred when
    :func:`centred_effects`, else the standardised ``task_z`` / ``model_x_task_z``), or
    ``effects="iid"``: the former form, alpha + dev + sigma_task z_k + sigma_mxt z_mk with
    iid standard normal z (the same model, kept as the tests' reference). The item effects
    are integrated out on the grid shared by every term (``quadrature="grid"``,
    :func:`grid_terms`) or by the adaptive Gauss-Hermite rule of each term
    (``"gauss-hermite"``, :func:`term_loglik`; the reference). Every array is a ``pm.Data``
    so a compiled model is refitted on new data of the same shape. ``item_distribution``
    ``"learned"``: b ~ g, the learned distribution of ``_item_density`` (free variable
    ``item_shape_z``, deterministic ``item_shape``; prior key
    ``shape_sigma``), on the shared grid only.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from evaluq.item_model._item_density import ITEM_DISTRIBUTIONS, split_priors

    if quadrature not in QUADRATURES:
        raise ValueError(f"`quadrature` must be one of {QUADRATURES}; got {quadrature!r}")
    if item_distribution not in ITEM_DISTRIBUTIONS:
        raise ValueError(f"`item_distribution` must be one of {ITEM_DISTRIBUTIONS}; got "
                         f"{item_distribution!r}")
    learned = item_distribution == "learned" and data.has_items
    if learned and quadrature != "grid":
        raise ValueError("`item_distribution='learned'` integrates the items out on the "
                         f"shared grid only; got quadrature={quadrature!r}")
    rest, shape_priors = split_priors(priors, learned)
    inputs = model_inputs(data, resolve_priors(data, rest) | shape_priors)
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        eta = _effects(x, data, effects, centring(data))
        loglik = (x["correct"] * eta).sum()
        if data.has_items:
            sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
            if quadrature == "grid":
                shape = None
                if learned:
                    from evaluq.item_model._item_density import shape_coefficients

                    shape = shape_coefficients(x)
                loglik = loglik + _grid_loglik(x, eta, sigma_item, shape)
            else:
                task = x["term_task"]
                terms = term_loglik(eta[:, task].T, x["epochs"][:, task].T,
                                    x["term_total"], sigma_item)
                loglik = loglik + (x["term_weight"] * terms).sum()
        else:
            loglik = loglik - (x["trials"] * pt.softplus(eta)).sum()
        pm.Potential("item_loglik", loglik)
    return pm_model


def build_explicit_model(data: ItemData, per_item: np.ndarray,
                         priors: dict[str, float] | None = None,
                         effects: str = "zero-sum") -> pm.Model:
    """The same 1PL model with one explicit (non-centred) parameter per item.

    ``per_item`` (model, item): correct answers over the epochs of each item (the items in
    ``data.item_labels`` order); ``effects`` as in :func:`build_model`. The baseline of
    ``benchmarks/bench_item_model.py``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    resolved = resolve_priors(data, priors)
    item_task = np.asarray(data.item_task)
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {f"prior_{k}": pm.Data(f"prior_{k}", np.asarray(v)) for k, v in resolved.items()}
        eta = _effects(x, data, effects, centring(data))
        sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        z = pm.Normal("item_z", 0.0, 1.0, shape=len(item_task))
        logit = eta[:, item_task] - sigma_item * z[None, :]
        n = pt.as_tensor_variable(data.epochs[:, item_task])
        y = pt.as_tensor_variable(per_item)
        pm.Potential("item_loglik", (y * logit - n * pt.softplus(logit)).sum())
    return pm_model
