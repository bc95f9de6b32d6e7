"""Simulated evaluation cubes with known variance components (for tests, calibration, docs)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from evaluq._validation import RNGLike, check_int, check_memory, check_real, check_rng
from evaluq.cube import from_arrays


def simulate_cube(
    *,
    n_models: int = 3,
    n_languages: int = 8,
    n_seeds: int = 5,
    n_boot: int | None = 200,
    model_means: np.ndarray | list[float] | None = None,
    sigma_between: float = 2.0,
    sigma_seed: float = 0.5,
    sigma_boot: float = 1.0,
    boot_correlation: float = 0.0,
    seed_sharing: float = 0.0,
    sigma_language: float = 0.0,
    rng: RNGLike = None,
) -> xr.Dataset:
    r"""Simulate a cube whose variance components are known.

    .. math::

        y_{mls} &= \mu_m + g_l + a_{ml} + e_{ml} + z_{mls}, \quad
            g_l \sim N(0, \sigma_{language}^2),\;
            a_{ml} \sim N(0, \sigma_{between}^2),\;
            z_{mls} \sim N(0, \sigma_{seed}^2) \\
        e_{ml} &= \sigma_{boot}\left(\sqrt{\rho}\, c_l + \sqrt{1-\rho}\, d_{ml}\right) \\
        y^*_{mlsb} &= y_{mls} + \sigma_{boot}\left(\sqrt{\rho}\, c_{lb}
            + \sqrt{1-\rho}\left(\sqrt{\kappa}\, d_{mlb}
            + \sqrt{1-\kappa}\, f_{mlsb}\right)\right)

    with independent standard normal :math:`c, d, f`. :math:`g_l` is a language difficulty
    shared by all models (the crossed structure of the hierarchical model; the paper's
    between-language SD of a model is then :math:`\sqrt{\sigma_{language}^2 +
    \sigma_{between}^2}`). The test-set error :math:`e_{ml}` is shared by all seeds of (m, l)
    and, like the replicate noise, correlated between models with :math:`\rho`
    (``boot_correlation``): every model is scored on the same test set, and replicate b is the
    same resampled test set for every model. :math:`\kappa` (``seed_sharing``) is the share
    of a model's replicate noise common to its seeds; since the full-test-set error is fully
    shared by the seeds, :math:`\kappa` near 1 keeps the replicates faithful to it. The
    defaults (0, 0) give independent replicates; cubes built from real predictions with
    :func:`evaluq.from_predictions` behave more like ``boot_correlation=0.5,
    seed_sharing=0.9`` (seeds of one model make nearly the same errors).

    Parameters
    ----------
    n_models, n_languages, n_seeds
        Cube sizes.
    n_boot
        Bootstrap replicates per (model, language, seed); ``None`` for no ``boot_score``.
    model_means
        True population means :math:`\mu_m` (default all zero).
    sigma_between, sigma_seed, sigma_boot
        True standard deviations.
    boot_correlation, seed_sharing
        :math:`\rho` and :math:`\kappa` in [0, 1]: how the test-set error and the bootstrap
        replicate noise are shared across models, and the replicate noise across the seeds
        of a model.
    sigma_language
        SD of the language difficulty shared by all models (default 0).
    rng
        Seed or Generator.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=4, n_seeds=3, n_boot=10, rng=0)
    >>> dict(cube.boot_score.sizes)
    {'model': 2, 'language': 4, 'seed': 3, 'bootstrap': 10}
    """
    gen = check_rng(rng)
    n_models = check_int("n_models", n_models, minimum=1)
    n_languages = check_int("n_languages", n_languages, minimum=1)
    n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    for name, value in (("sigma_between", sigma_between), ("sigma_seed", sigma_seed),
                        ("sigma_boot", sigma_boot)):
        check_real(name, value, low=0.0)
    mu = np.zeros(n_models) if model_means is None else np.asarray(model_means, float)
    if mu.shape != (n_models,):
        raise ValueError(f"`model_means` must have {n_models} values; got shape {mu.shape}")
    shape = (n_models, n_languages)
    theta = mu[:, None] + gen.normal(0, sigma_between, shape)
    test_err = gen.normal(0, sigma_boot, shape)
    score = (theta + test_err)[..., None] + gen.normal(0, sigma_seed, (*shape, n_seeds))
    rho = check_real("boot_correlation", boot_correlation, low=0.0, high=1.0)
    kappa = check_real("seed_sharing", seed_sharing, low=0.0, high=1.0)
    check_real("sigma_language", sigma_language, low=0.0)
    # (draws after the default ones, so the defaults give the same cube as before)
    if rho > 0:  # the test-set error is correlated between models like the replicates
        common_err = sigma_boot * gen.normal(0, 1, (1, n_languages))
        shared_err = np.sqrt(rho) * common_err + np.sqrt(1 - rho) * test_err
        score = score + (shared_err - test_err)[..., None]
    if sigma_language > 0:
        score = score + gen.normal(0, sigma_language, (1, n_languages, 1))
    boot = None
    if n_boot is not None:
        n_boot = check_int("n_boot", n_boot, minimum=2)
        check_memory("n_boot", 8.0 * 2 * n_models * n_languages * n_seeds * n_boot)
        noise = gen.normal(0, 1, (*shape, n_seeds, n_boot))
        if kappa > 0:
            shared = gen.normal(0, 1, (*shape, 1, n_boot))
            noise = np.sqrt(kappa) * shared + np.sqrt(1 - kappa) * noise
        if rho > 0:
            common = gen.normal(0, 1, (1, n_languages, 1, n_boot))
            noise = np.sqrt(rho) * common + np.sqrt(1 - rho) * noise
        boot = score[..., None] + sigma_boot * noise
    return from_arrays(
        score,
        boot,
        models=[f"m{i}" for i in range(n_models)],
        languages=[f"l{j:02d}" for j in range(n_languages)],
        metric="simulated",
    )
