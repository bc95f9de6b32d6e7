"""Per-item tables with known truth, for tests, calibration and the benchmarks."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pandas as pd
from scipy.special import expit

from evaluq._validation import RNGLike, check_int, check_memory, check_real, check_rng

ROW_BYTES = 160
"""Memory of one simulated row at its peak (the arrays it is built from and the table's
columns, labels as strings): what the budget is checked against."""


def _check_sds(**sds: float) -> list[float]:
    """Each SD (argument -> value) a finite real >= 0: a NaN SD would draw NaN effects, which
    compare as False and give all-zero scores."""
    return [check_real(name, value, low=0.0) for name, value in sds.items()]


def _truth_new_items(eta: np.ndarray, w: np.ndarray, sigma_item: float, disc_sd: float,
                     gen: np.random.Generator, n_mc: int = 200_000) -> np.ndarray:
    """Expected score on a new item (Monte Carlo over the item distribution), per model."""
    b = gen.normal(0.0, sigma_item, n_mc)
    a = np.exp(gen.normal(0.0, disc_sd, n_mc)) if disc_sd > 0 else np.ones(n_mc)
    k = gen.choice(len(w), size=n_mc, p=w)
    return expit(a * (eta[:, k] - b)).mean(axis=1)


BIMODAL: Final = ((0.65, -1.0, 0.4), (0.35, 1.9, 0.6))
"""Issue 36's bimodal item population: many easy items and a hard cluster."""


def _check_mixture(mixture: Any, discrimination_sd: float) -> np.ndarray | None:
    """(component, 3) array of (weight, mean, sd), checked; None stays None."""
    if mixture is None:
        return None
    arr = np.asarray(mixture, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3 or len(arr) < 1 or not np.isfinite(arr).all() \
            or (arr[:, 0] <= 0).any() or (arr[:, 2] <= 0).any() \
            or abs(arr[:, 0].sum() - 1.0) > 1e-9:
        raise ValueError("`item_mixture` must be (weight, mean, sd) triples with positive "
                         f"weights summing to 1 and positive SDs; got {mixture!r}")
    if discrimination_sd > 0:
        raise ValueError("`item_mixture` takes the 1PL (discrimination_sd=0)")
    return arr


def mixture_new_items(eta: np.ndarray, w: np.ndarray, mixture: np.ndarray) -> np.ndarray:
    """Exact expected score on a new item (model,) with b from the normal ``mixture``
    (component, (weight, mean, sd)) and tasks weighted ``w``: per component 64-node
    Gauss-Hermite of sigmoid(eta - b)."""
    x, wx = np.polynomial.hermite.hermgauss(64)
    b = mixture[:, 1, None] + np.sqrt(2.0) * mixture[:, 2, None] * x          # (C, 64)
    p = expit(eta[..., None, None] - b)                                       # (M, K, C, 64)
    per = (p @ (wx / np.sqrt(np.pi))) @ mixture[:, 0]                         # (M, K)
    return per @ w


def simulate_items(*, n_models: int = 5, n_items: int = 100, n_epochs: int = 1,
                   n_tasks: int = 1, model_sd: float = 0.5, sigma_item: float = 1.5,
                   sigma_task: float = 0.5, sigma_model_x_task: float = 0.2,
                   mean_logit: float = 0.5, discrimination_sd: float = 0.0,
                   overdispersion: float = 0.0, item_mixture: Any = None,
                   rng: RNGLike = None) -> pd.DataFrame:
    """Simulate binary per-item scores (model x item x epoch) with known truth.

    logit p_mi = a_i (eta_mk - b_i) with eta_mk = mean_logit + d_m + t_k + g_mk, b_i ~ N(0,
    sigma_item^2), log a_i ~ N(0, discrimination_sd^2) (2PL when > 0); each epoch's
    probability is Beta(p phi, (1 - p) phi) with phi = 1 / overdispersion - 1 when
    ``overdispersion`` (the ICC of epochs given the item, in [0, 1)) is > 0 (beta-binomial
    run drift), else p.

    Parameters
    ----------
    n_models, n_items, n_epochs, n_tasks
        Sizes (items are split evenly across tasks).
    model_sd, sigma_item, sigma_task, sigma_model_x_task
        SDs of the model, item, task and model x task effects (logit scale).
    mean_logit
        The common level (logit scale).
    discrimination_sd
        SD of log discrimination (0: 1PL).
    overdispersion
        ICC of the epochs given the item (beta-binomial), in [0, 0.999].
    item_mixture
        None, or (weight, mean, sd) triples: b_i from this mixture of normals instead of
        N(0, sigma_item^2) (``sigma_item`` is then unused; weights sum to 1; 1PL only), e.g.
        ``BIMODAL`` (issue 36's population); the new-items truth is then exact (64-node
        Gauss-Hermite per component).
    rng
        Seed or Generator.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``task``, ``item``, ``epoch``, ``score``; ``attrs["truth"]`` holds
        ``benchmark`` (mean over these items of the expected score) and ``new_items`` (on a
        new item), per model; ``attrs["items"]`` the true ``difficulty`` (b_i) and
        ``discrimination`` (a_i) of each item.

    Examples
    --------
    >>> from evaluq.item_model import simulate_items
    >>> table = simulate_items(n_models=2, n_items=10, n_epochs=3, rng=0)
    >>> len(table), sorted(table.attrs["truth"])
    (60, ['benchmark', 'new_items'])
    """
    n_m, n_i = check_int("n_models", n_models, minimum=1), check_int("n_items", n_items,
                                                                    minimum=1)
    n_e, n_k = check_int("n_epochs", n_epochs, minimum=1), check_int("n_tasks", n_tasks,
                                                                    minimum=1)
    check_memory("n_items", float(ROW_BYTES) * n_m * n_i * n_e)
    over = check_real("overdispersion", overdispersion, low=0.0, high=0.999)
    model_sd, sigma_item, sigma_task, sigma_model_x_task, discrimination_sd = _check_sds(
        model_sd=model_sd, sigma_item=sigma_item, sigma_task=sigma_task,
        sigma_model_x_task=sigma_model_x_task, discrimination_sd=discrimination_sd)
    mean_logit = check_real("mean_logit", mean_logit)
    gen = check_rng(rng)
    eta = (mean_logit + gen.normal(0, model_sd, n_m)[:, None] + gen.normal(0, sigma_task, n_k)
           + gen.normal(0, sigma_model_x_task, (n_m, n_k)))
    task = np.sort(np.arange(n_i) % n_k)
    mix = _check_mixture(item_mixture, discrimination_sd)
    if mix is None:
        b = gen.normal(0, sigma_item, n_i)
    else:
        comp = gen.choice(len(mix), size=n_i, p=mix[:, 0])
        b = gen.normal(mix[comp, 1], mix[comp, 2])
    a = np.exp(gen.normal(0, discrimination_sd, n_i)) if discrimination_sd > 0 else np.ones(n_i)
    p = expit(a * (eta[:, task] - b))                                      # (M, I)
    if over > 0:
        phi = 1.0 / over - 1.0
        # one probability per (model, item) shared by its epochs: beta-binomial counts
        q = np.broadcast_to(gen.beta(np.clip(p * phi, 1e-9, None),
                                     np.clip((1 - p) * phi, 1e-9, None))[..., None],
                            (n_m, n_i, n_e))
    else:
        q = np.broadcast_to(p[..., None], (n_m, n_i, n_e))
    y = (gen.random((n_m, n_i, n_e)) < q).astype(np.int8)
    mm, ii, ee = np.meshgrid(np.arange(n_m), np.arange(n_i), np.arange(n_e), indexing="ij")
    width_m, width_k = len(str(n_m - 1)), len(str(n_k - 1))     # labels sort in index order
    df = pd.DataFrame({"model": np.char.add("m", np.char.zfill(mm.ravel().astype(str),
                                                                width_m)),
                       "task": np.char.add("t", np.char.zfill(task[ii.ravel()].astype(str),
                                                              width_k)),
                       "item": ii.ravel(), "epoch": ee.ravel(), "score": y.ravel()})
    w = np.bincount(task, minlength=n_k) / n_i
    new = _truth_new_items(eta, w, sigma_item, discrimination_sd, gen) if mix is None \
        else mixture_new_items(eta, w, mix)
    df.attrs["truth"] = {"benchmark": p.mean(axis=1), "new_items": new}
    df.attrs["items"] = {"difficulty": b, "discrimination": a}
    return df


def simulate_ratings(*, n_models: int = 4, n_items: int = 30, n_graders: int = 3,
                     n_levels: int = 11, n_epochs: int = 1, model_sd: float = 0.7,
                     sigma_item: float = 1.0, sigma_grader: float = 0.5,
                     sigma_grader_x_model: float = 0.3, cut_span: float = 6.0,
                     rng: RNGLike = None) -> pd.DataFrame:
    """Simulate judge ratings 0..K-1 (model x item x grader x epoch) with known truth.

    P(y <= c) = expit(kappa_c - eta) with kappa equally spaced over [-cut_span / 2,
    cut_span / 2] and eta = d_m + r_j + q_jm - b_i: d ~ N(0, model_sd^2) centred, r ~ N(0,
    sigma_grader^2) centred, q ~ N(0, sigma_grader_x_model^2) centred over both axes, b ~
    N(0, sigma_item^2).

    Parameters
    ----------
    n_models, n_items, n_graders, n_levels, n_epochs
        Sizes (every grader rates every model on every item in every epoch).
    model_sd, sigma_item, sigma_grader, sigma_grader_x_model
        SDs of the effects (logit scale).
    cut_span
        Width of the cutpoints' range.
    rng
        Seed or Generator.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``item``, ``grader``, ``epoch``, ``score``; ``attrs["truth"]``:
        ``benchmark`` and ``new_items`` (expected rating per model, graders weighted
        equally), ``cutpoints``, ``dev``, ``grader_effect``, ``grader_x_model``.

    Examples
    --------
    >>> from evaluq.item_model._simulate import simulate_ratings
    >>> t = simulate_ratings(n_models=2, n_items=5, n_graders=2, n_levels=5, rng=0)
    >>> len(t), int(t.score.max()) <= 4
    (20, True)
    """
    n_m, n_i = check_int("n_models", n_models, minimum=1), check_int("n_items", n_items,
                                                                    minimum=1)
    n_g, n_k = check_int("n_graders", n_graders, minimum=1), check_int("n_levels", n_levels,
                                                                      minimum=2)
    n_e = check_int("n_epochs", n_epochs, minimum=1)
    check_memory("n_items", float(ROW_BYTES) * n_m * n_i * n_g * n_e)
    model_sd, sigma_item, sigma_grader, sigma_grader_x_model = _check_sds(
        model_sd=model_sd, sigma_item=sigma_item, sigma_grader=sigma_grader,
        sigma_grader_x_model=sigma_grader_x_model)
    cut_span = check_real("cut_span", cut_span, low=0.0, low_inclusive=False)
    gen = check_rng(rng)
    kappa = np.linspace(-cut_span / 2, cut_span / 2, n_k - 1)
    d = gen.normal(0, model_sd, n_m)
    r = gen.normal(0, sigma_grader, n_g)
    q = gen.normal(0, sigma_grader_x_model, (n_g, n_m))
    d, r = d - d.mean(), r - r.mean()
    q = q - q.mean(0) - q.mean(1)[:, None] + q.mean()
    b = gen.normal(0, sigma_item, n_i)
    eta = d[None, :, None] + r[:, None, None] + q[:, :, None] - b               # (G, M, I)
    cum = expit(kappa - eta[..., None])                                          # (G,M,I,K-1)
    u = gen.random((n_e, *eta.shape))
    y = (u[..., None] > cum).sum(axis=-1)                                        # (E,G,M,I)
    ee, gg, mm, ii = np.meshgrid(np.arange(n_e), np.arange(n_g), np.arange(n_m),
                                 np.arange(n_i), indexing="ij")
    df = pd.DataFrame({"model": np.char.add("m", mm.ravel().astype(str)),
                       "item": ii.ravel(), "grader": np.char.add("g", gg.ravel().astype(str)),
                       "epoch": ee.ravel(), "score": y.ravel()})
    rating = expit(eta[..., None] - kappa).sum(axis=-1)                          # E[y]
    bn = gen.normal(0, sigma_item, 100_000)
    new = expit((d[None, :, None] + r[:, None, None] + q[:, :, None] - bn)[..., None]
                - kappa).sum(axis=-1).mean(axis=(0, 2))
    df.attrs["truth"] = {"benchmark": rating.mean(axis=(0, 2)), "new_items": new,
                         "cutpoints": kappa, "dev": d, "grader_effect": r,
                         "grader_x_model": q}
    return df
