"""arena-rank's (LMArena's) Bradley-Terry ratings and intervals on LLMFAO, for evaluq's ratings.

Runs in arena-rank's own virtual env (``benchmarks/anchors/setup_arena_rank.sh``), never in
evaluq's. The data: ``tests/data/llmfao/llmfao.csv`` (8,931 crowd votes), ``left`` as
arena-rank's ``model_a``, ``right`` as ``model_b``, ``winner`` ``left`` / ``right`` / ``tie`` as
outcome 1 / 0 / 0.5 (a tie is half a win each, arena-rank's only tie treatment).

What arena-rank 0.1.1 computes (read from its source, ``arena_rank/models/bradley_terry.py``,
``utils/data_utils.py``, ``utils/math_utils.py``):

* ``PairDataset.from_pandas`` collapses the votes to unique (model_a, model_b, outcome) rows
  with counts (a and b keep their order: (a, b) and (b, a) are different rows).
* ``BradleyTerry.fit``: optax L-BFGS on the mean loss
  ``-sum_k w_k [y_k d_k - softplus(d_k)] / sum_k w_k``, ``d_k = theta_a - theta_b`` (natural log
  odds), from theta = 0; stops when ``max abs(grad) < gtol`` or the relative change of the loss
  ``< ftol`` (defaults ``gtol = ftol = 1e-9``, ``max_iter = 1000``).
* Identification: none imposed; theta starts at 0 and every L-BFGS step is a combination of
  gradients, which sum to zero over models, so theta stays sum-zero (checked below).
* Elo scale: ``rating = init_rating + theta * scale / ln(base)`` with ``scale = 400``,
  ``base = 10``, ``init_rating = 1000`` (alpha = 400 / ln 10 = 173.7178): the mean rating is
  1000; no reference model.
* ``ci_method="sandwich"``: ``V = H^-1 G H^-1``, ``H = sum_k n_k p_k (1 - p_k) x_k x_k' +
  hessian_reg * N * I`` (a ridge on the diagonal: ``hessian_reg = 1e-5`` times the number of
  votes ``N`` for unweighted data, here 0.08931), ``G = sum_k n_k (y_k - p_k)^2 x_k x_k'``
  (per-vote scores, iid: no cluster, no small-sample factor), ``x_k = e_a - e_b``; interval
  ``rating +- z * sqrt(V_ii) * alpha``, ``z = norm.ppf(1 - significance_level / 2)``.
* ``ci_method="bootstrap"``: multinomial resampling of the unique rows' counts
  (``jax.random.PRNGKey(seed)``, default seed 42, 100 resamples), refit from 0, percentile
  interval by ``jnp.quantile`` (linear interpolation).

Usage::

    python run_arena_rank.py reference OUT.json [N_BOOTSTRAP]
        Ratings and sandwich 95% intervals at arena-rank's default tolerances and run to
        convergence (gtol 1e-13, ftol 0), the convergence gap, the ridge's effect (the same
        sandwich with a pseudo-inverse instead of the ridge), the gradient at each fit, and
        (if N_BOOTSTRAP > 0, default 100) arena-rank's bootstrap intervals (about 1.5 s a
        resample); the distance to evalica's converged fit (if evalica_reference.json is
        there); versions.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "llmfao" / "llmfao.csv"
OUTCOME = {"left": 1.0, "right": 0.0, "tie": 0.5}
LEVEL = 0.95
TIGHT = {"gtol": 1e-13, "ftol": 0.0, "max_iter": 100_000}


def outcome_map(label: str) -> float:
    """arena-rank's default map sends unknown labels to 0.5 silently: this one refuses."""
    return OUTCOME[label]


def load():
    # bradley_terry sets jax_enable_x64 when imported: import it before building the data,
    # or the counts and outcomes are float32
    import arena_rank.models.bradley_terry  # noqa: F401
    from arena_rank.utils.data_utils import PairDataset

    votes = pd.read_csv(DATA, dtype=str).rename(columns={"left": "model_a", "right": "model_b"})
    dataset = PairDataset.from_pandas(votes, competitor_cols=["model_a", "model_b"],
                                      outcome_col="winner", outcome_map=outcome_map)
    return votes, dataset


def fitted(dataset, **tolerances):
    from arena_rank.models.bradley_terry import BradleyTerry

    model = BradleyTerry(n_competitors=len(dataset.competitors), **tolerances)
    start = time.perf_counter()
    model.fit(dataset)
    seconds = time.perf_counter() - start
    return model, seconds


def gradient_and_loss(model, dataset) -> tuple[float, float, float]:
    """Max abs gradient of the mean loss and of the summed log-likelihood at the fit, loss."""
    import jax

    data = dataset.as_dict()
    loss, grad = jax.value_and_grad(model.loss_function)(model.params, data)
    total = float(np.sum(np.asarray(dataset.opt_weights)))
    g = np.abs(np.asarray(grad["ratings"]))
    return float(g.max()), float(g.max() * total), float(loss)


def sandwich_pinv(model, dataset) -> np.ndarray:
    """arena-rank's H and G without the ridge; V = H^+ G H^+ (Moore-Penrose): the sum-zero
    sandwich the ridge approximates."""
    hessian, grad_cov = model.compute_hessian_and_covariance(
        model.params["ratings"], dataset.pairs, dataset.outcomes, dataset.counts,
        dataset.opt_weights, 0.0, model.n_competitors)
    h_plus = np.linalg.pinv(np.asarray(hessian), rcond=1e-12, hermitian=True)
    return np.sqrt(np.diag(h_plus @ np.asarray(grad_cov) @ h_plus)) * model.alpha


def summary(model, dataset, seconds: float, label: str) -> dict:
    from jax.scipy.stats import norm

    res = model.compute_ratings_and_cis(dataset, significance_level=1 - LEVEL,
                                        ci_method="sandwich")
    names = list(res["competitors"])
    ratings = np.asarray(res["ratings"])
    theta = np.asarray(model.params["ratings"])
    g_mean, g_sum, loss = gradient_and_loss(model, dataset)
    se_pinv = sandwich_pinv(model, dataset)
    z = float(norm.ppf(1 - (1 - LEVEL) / 2))

    def by_model(values) -> dict[str, float]:
        return dict(zip(names, np.asarray(values, dtype=float).tolist(), strict=True))

    return {
        "label": label, "seconds_fit": seconds,
        "tolerances": {"gtol": model.gtol, "ftol": model.ftol, "max_iter": model.max_iter},
        "mean_loss": loss, "max_abs_gradient_mean_loss": g_mean,
        "max_abs_gradient_loglik": g_sum, "sum_theta_logit": float(theta.sum()),
        "mean_rating": float(ratings.mean()),
        "rating": by_model(ratings), "theta_logit": by_model(theta),
        "se": by_model(np.sqrt(np.asarray(res["variances"]))),
        "ci_lower": by_model(res["rating_lower"]), "ci_upper": by_model(res["rating_upper"]),
        "z": z,
        "se_pinv_no_ridge": by_model(se_pinv),
        "ci_lower_pinv_no_ridge": by_model(ratings - z * se_pinv),
        "ci_upper_pinv_no_ridge": by_model(ratings + z * se_pinv),
    }


def bootstrap(model, dataset, n: int) -> dict:
    """arena-rank's ``ci_method="bootstrap"`` steps, with its own resampling and refit
    (``fit_single_bootstrap_sample``), run in this process: its ``multiprocessing.Pool``
    forks a multithreaded JAX process and deadlocks here (JAX warns so)."""
    import jax
    import jax.numpy as jnp
    from arena_rank.models.bradley_terry import fit_single_bootstrap_sample

    start = time.perf_counter()
    total = jnp.sum(dataset.counts)
    counts = jax.random.multinomial(key=jax.random.PRNGKey(42), n=int(total),
                                    p=dataset.counts / total,
                                    shape=(n, dataset.counts.shape[0]), dtype=model.dtype)
    draws = np.stack([np.asarray(fit_single_bootstrap_sample(counts[i], model, dataset)
                                 ["ratings"]) for i in range(n)])
    scaled = draws * model.alpha + model.init_rating
    names = list(dataset.competitors)

    def by_model(values) -> dict[str, float]:
        return dict(zip(names, np.asarray(values, dtype=float).tolist(), strict=True))

    level = 1 - LEVEL
    return {"num_bootstrap": n, "seed": 42, "seconds": time.perf_counter() - start,
            "tolerances": {"gtol": model.gtol, "ftol": model.ftol, "max_iter": model.max_iter},
            "method": "arena-rank's bootstrap: multinomial resampling of the unique (model_a, "
                      "model_b, outcome) rows' counts (iid votes; jax PRNGKey(42)), refit from "
                      "0 by its fit_single_bootstrap_sample, percentile interval "
                      "(jnp.quantile, linear), variance jnp.var (ddof 0); run in one process",
            "ci_lower": by_model(jnp.quantile(scaled, level / 2, axis=0)),
            "ci_upper": by_model(jnp.quantile(scaled, 1 - level / 2, axis=0)),
            "se": by_model(np.sqrt(np.var(scaled, axis=0))),
            "max_abs_sum_theta_logit": float(np.abs(draws.sum(axis=1)).max())}


def reference(path: str, n_bootstrap: str = "100") -> int:
    votes, dataset = load()
    model_def, sec_def = fitted(dataset)
    model_tight, sec_tight = fitted(dataset, **TIGHT)
    default = summary(model_def, dataset, sec_def, "arena-rank defaults (gtol 1e-9, ftol 1e-9)")
    tight = summary(model_tight, dataset, sec_tight, "to convergence (gtol 1e-13, ftol 0)")
    gap = {m: default["rating"][m] - tight["rating"][m] for m in tight["rating"]}
    gap_se = {m: default["se"][m] - tight["se"][m] for m in tight["se"]}
    ridge = {m: tight["se"][m] - tight["se_pinv_no_ridge"][m] for m in tight["se"]}
    out = {
        "script": "benchmarks/anchors/run_arena_rank.py",
        "versions": {p: version(p) for p in ("arena-rank", "jax", "optax", "numpy", "pandas")},
        "data": {"path": "tests/data/llmfao/llmfao.csv",
                 "sha256": hashlib.sha256(DATA.read_bytes()).hexdigest(),
                 "n_votes": len(votes), "n_models": len(dataset.competitors),
                 "n_unique_rows": int(dataset.pairs.shape[0]),
                 "mapping": "model_a = left, model_b = right; outcome left 1, right 0, tie 0.5"},
        "confidence_level": LEVEL,
        "scale": {"scale": model_tight.scale, "base": model_tight.base,
                  "init_rating": model_tight.init_rating, "alpha": model_tight.alpha,
                  "formula": "rating = init_rating + theta * scale / ln(base) = 1000 + "
                             "173.71779276... * theta, theta the natural-log BT strength",
                  "anchor": "sum-zero theta (mean rating 1000), not imposed: the fit starts "
                            "at 0 and L-BFGS stays in the span of the gradients, which sum "
                            "to zero (sum_theta_logit records it); no reference model"},
        "sandwich": {"hessian_reg": model_tight.hessian_reg,
                     "ridge_on_hessian_diagonal": model_tight.hessian_reg * len(votes),
                     "formula": "V = (H + ridge I)^-1 G (H + ridge I)^-1, H = sum_k n_k p_k "
                                "(1 - p_k) x_k x_k', G = sum_k n_k (y_k - p_k)^2 x_k x_k' "
                                "(iid per-vote scores, HC0); se = sqrt(V_ii) * alpha; interval "
                                "rating +- z se",
                     "pinv_no_ridge": "the same H (ridge 0) and G with H^+ (Moore-Penrose) "
                                      "in place of the ridged inverse: the exact sum-zero "
                                      "sandwich; '*_pinv_no_ridge' fields"},
        "converged": tight,
        "default_tolerance": default,
        "convergence_gap": {
            "note": "arena-rank at its default tolerances (gtol = ftol = 1e-9 on the mean "
                    "loss) stops short of the MLE; ratings(default) - ratings(converged), Elo",
            "max_abs_rating_elo": max(abs(v) for v in gap.values()),
            "max_abs_se_elo": max(abs(v) for v in gap_se.values()),
            "rating_elo": gap},
        "ridge_effect": {
            "note": "se(arena-rank, ridge 1e-5 N) - se(pseudo-inverse, no ridge), Elo, at the "
                    "converged fit",
            "max_abs_se_elo": max(abs(v) for v in ridge.values()),
            "max_abs_ci_bound_elo": max(abs(v) for v in ridge.values()) * tight["z"],
            "se_elo": ridge},
    }
    evalica = ROOT / "benchmarks" / "anchors" / "evalica_reference.json"
    if evalica.exists():    # the same half-win likelihood, fitted by evalica's own iteration
        theta = json.loads(evalica.read_text())["bradley_terry"]["converged"][
            "log_scores_sum_zero"]
        out["cross_check_evalica"] = {
            "note": "max abs(rating - (1000 + alpha * theta_evalica)), Elo, theta_evalica "
                    "evalica's converged bradley_terry log scores (evalica_reference.json)",
            "converged": max(abs(tight["rating"][m] - (1000 + model_tight.alpha * t))
                             for m, t in theta.items()),
            "default_tolerance": max(abs(default["rating"][m] - (1000 + model_tight.alpha * t))
                                     for m, t in theta.items())}
    if int(n_bootstrap) > 0:
        out["bootstrap_converged"] = bootstrap(model_tight, dataset, int(n_bootstrap))
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode != "reference":
        raise SystemExit(__doc__)
    assert math.isclose(400 / math.log(10), 173.71779276130073)
    sys.exit(reference(*args))
