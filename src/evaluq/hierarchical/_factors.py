"""A k-factor model of the per-language correlation of the models' test-set errors.

Per language l the correlation R_l (model x model) of the seed-mean bootstrap replicates is
approximated by

    R_l ~ Lambda_l Lambda_l' + diag(psi_l),   psi_ml = 1 - sum_j Lambda_mlj^2 >= PSI_FLOOR,

fitted by principal-axis factoring (the communalities and the top-k eigenvectors of the
reduced correlation R_l - diag(psi_l) updated in turn; one step of shifted subspace iteration
per update, all languages at once). The number of factors k, common to all languages, is the
smallest whose residual correlations are within the replicates' sampling noise: with B
replicates Fisher's z of a sample correlation has SD 1 / sqrt(B - 3), so

    X_k = (B - 3) sum_l sum_{m<n} (atanh r_lmn - atanh rhat_lmn)^2

is about chi-square with df_k = sum_l ((M_l - k)^2 - (M_l + k)) / 2 degrees of freedom (the
classical factor-analysis count) when k factors suffice; k is accepted when
X_k <= df_k + 3 sqrt(2 df_k). The replicates measure the correlation on the test set at hand,
which scatters around the errors' correlation by the finite number of items as well; when
the spread of a pair's z across languages (independent test sets) is larger than
1 / (B - 3), it is the noise variance instead (:func:`noise_variance`). Without it, 20
models scored on 60 items with uncorrelated errors got two spurious factors, whose dropped
negative directions made the paired posterior too narrow (90% coverage 0.84).

The floor under psi keeps the error covariance positive definite when two models make
identical errors (correlation 1), at the price of a test-set variance of PSI_FLOOR times the
cell's in their difference.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np

PSI_FLOOR: Final = 0.01
"""Smallest unique variance (share of a cell's test-set variance not explained by factors)."""
K_MAX: Final = 6
"""Most factors tried (the compiled model grows with k)."""
ITERATIONS: Final = 500
TOLERANCE: Final = 1e-6
"""The iterations stop when no unique variance moves by more than this."""
R_CLIP: Final = 1.0 - PSI_FLOOR
"""Correlations are compared on Fisher's z within +-(1 - PSI_FLOOR) (the model's range)."""
GIVEN_TOLERANCE: Final = 0.02
"""Largest residual correlation accepted when the correlation is given (no replicate noise)."""


class Factors(NamedTuple):
    """A fitted factor model: loadings (L, M, k), unique variances psi (L, M), the statistic."""

    loadings: np.ndarray
    psi: np.ndarray
    statistic: float
    dof: float


def fit_k(corr: np.ndarray, usable: np.ndarray, k: int,
          iterations: int = ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """Principal-axis factoring with k factors of every language's correlation at once.

    ``corr`` (L, M, M) with unit diagonal; ``usable`` (L, M) the cells that enter (the others
    get loading 0 and psi 1). Returns loadings (L, M, k) and psi (L, M).
    """
    n_lang, n_models, _ = corr.shape
    mask = usable[:, :, None] & usable[:, None, :]
    r = np.where(mask, corr, 0.0)
    if k == 0:
        return np.zeros((n_lang, n_models, 0)), np.ones((n_lang, n_models))
    off = np.abs(r - np.eye(n_models) * r)
    psi = np.clip(1.0 - off.max(axis=-1), PSI_FLOOR, 1.0)
    q = np.linalg.qr(r[:, :, :k] + np.eye(n_models)[:, :k])[0]          # start: the first k
    loadings = np.zeros((n_lang, n_models, k))
    for _ in range(iterations):
        reduced = r - np.eye(n_models) * psi[:, :, None] * usable[:, :, None]
        shifted = reduced + np.eye(n_models)          # eigenvalues >= 0: power on the top k
        q = np.linalg.qr(shifted @ q)[0]
        small = np.swapaxes(q, 1, 2) @ reduced @ q                       # (L, k, k)
        vals, vecs = np.linalg.eigh(small)
        loadings = (q @ vecs) * np.sqrt(np.clip(vals, 0.0, None))[:, None, :]
        loadings *= usable[:, :, None]
        h2 = (loadings**2).sum(axis=-1)
        scale = np.sqrt(np.minimum(1.0, (1.0 - PSI_FLOOR) / np.maximum(h2, 1e-300)))
        loadings *= scale[:, :, None]
        new = np.where(usable, 1.0 - (loadings**2).sum(axis=-1), 1.0)
        done = np.abs(new - psi).max(initial=0.0) < TOLERANCE
        psi = new
        if done:
            break
    return loadings, psi


def _fisher(r: np.ndarray) -> np.ndarray:
    return np.arctanh(np.clip(r, -R_CLIP, R_CLIP))


def noise_variance(corr: np.ndarray, usable: np.ndarray, n_boot: int) -> float:
    """Variance of the noise in a Fisher-z correlation: ``1 / (B - 3)`` from the replicates,
    or, when larger, the pooled variance across languages of each pair's z.

    The replicates estimate the correlation of the errors on the test set at hand, which
    itself scatters around the errors' correlation by the finite number of items (SD about
    1 / sqrt(items)); languages are independent test sets, so that scatter shows as the
    spread of a pair's correlation across languages. A correlation that truly differs
    between languages inflates this estimate, which errs towards fewer factors.
    """
    base = 1.0 / max(n_boot - 3, 1)
    iu = np.triu_indices(corr.shape[1], k=1)
    pair = (usable[:, :, None] & usable[:, None, :])[:, iu[0], iu[1]]        # (L, P)
    count = pair.sum(axis=0)
    ok = count > 1
    if not ok.any():
        return base
    z = np.where(pair, _fisher(corr[:, iu[0], iu[1]]), 0.0)
    mean = z.sum(axis=0) / np.maximum(count, 1)
    ss = (np.where(pair, z - mean, 0.0) ** 2).sum(axis=0)
    pooled = ss[ok].sum() / (count[ok] - 1).sum()
    return float(max(base, pooled))


def residual_statistic(corr: np.ndarray, usable: np.ndarray, loadings: np.ndarray,
                       n_boot: int, noise: float | None = None) -> tuple[float, float]:
    """X_k and df_k of the module docstring (Fisher-z residuals of the off-diagonal pairs),
    the squared residuals divided by ``noise`` (default ``1 / (B - 3)``)."""
    k = loadings.shape[-1]
    fitted = loadings @ np.swapaxes(loadings, 1, 2)
    iu = np.triu_indices(corr.shape[1], k=1)
    pair = (usable[:, :, None] & usable[:, None, :])[:, iu[0], iu[1]]
    z = (_fisher(corr[:, iu[0], iu[1]]) - _fisher(fitted[:, iu[0], iu[1]])) * pair
    m_l = usable.sum(axis=-1)
    dof = np.maximum(((m_l - k) ** 2 - (m_l + k)) / 2.0, 0.0).sum()
    scale = 1.0 / noise if noise is not None else n_boot - 3
    return float(scale * (z * z).sum()), float(dof)


def fit_factors(corr: np.ndarray, usable: np.ndarray, n_boot: int | None) -> Factors:
    """The factor model with the number of factors chosen from the data.

    ``n_boot`` is the number of replicates behind ``corr`` (the noise the residuals are
    judged against); None for a given correlation, judged against ``GIVEN_TOLERANCE``.
    """
    n_models = corr.shape[1]
    k_top = min(K_MAX, max(n_models - 1, 0))
    noise = None if n_boot is None else noise_variance(corr, usable, n_boot)
    fit = Factors(*fit_k(corr, usable, 0), np.inf, 0.0)
    for k in range(k_top + 1):
        loadings, psi = fit_k(corr, usable, k)
        if n_boot is None:
            fitted = loadings @ np.swapaxes(loadings, 1, 2) + np.eye(n_models) * psi[:, :, None]
            mask = usable[:, :, None] & usable[:, None, :]
            worst = float(np.abs(np.where(mask, corr - fitted, 0.0)).max(initial=0.0))
            fit = Factors(loadings, psi, worst, 0.0)
            if worst <= GIVEN_TOLERANCE:
                break
            continue
        stat, dof = residual_statistic(corr, usable, loadings, n_boot, noise)
        fit = Factors(loadings, psi, stat, dof)
        if dof <= 0 or stat <= dof + 3.0 * np.sqrt(2.0 * dof):
            break
    return fit
