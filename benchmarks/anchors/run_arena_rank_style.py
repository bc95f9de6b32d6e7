"""arena-rank's (LMArena's) style control, ``ContextualBradleyTerry``, for evaluq's
``fit_ratings(..., covariates=...)``.

Two modes:

``python run_arena_rank_style.py simulate OUT.csv``
    (any environment with numpy and pandas; evaluq's) writes the simulated arena of
    ``benchmarks/anchors/arena_style_votes.csv``: 16 models, 6,000 votes on 400 prompts, each
    answer with a length in tokens and counts of markdown headers, bold spans and list items;
    the votes follow a Davidson model (ties about 25 %) whose logit gets, besides the models'
    strengths, +0.30 per SD of the relative length difference and +0.10 per SD of the relative
    bold difference (the models differ in how long and how formatted their answers are, so
    ratings with and without style control differ). No public arena sample with response
    lengths is small and licensed for redistribution here (``tests/data/judges/
    arena_battles.csv`` has no lengths); the CSV is committed, so the reference does not depend
    on numpy's random streams in two environments.

``python run_arena_rank_style.py reference OUT.json``
    (in arena-rank's own virtual env, ``benchmarks/anchors/setup_arena_rank.sh``) fits
    arena-rank 0.1.1's ``ContextualBradleyTerry`` on that CSV.

What arena-rank 0.1.1 computes (read from its source, ``arena_rank/models/
contextual_bradley_terry.py``, ``utils/data_utils.py``; LMArena's notebook
``examples/lmarena.ipynb`` with ``examples/example_utils.py::add_style_feature_cols``):

* Features: the user's columns, one per feature, already a-vs-b (arena-rank takes
  ``feature_cols``, it does not difference anything). LMArena's notebook makes each one the
  relative difference ``(x_a - x_b) / (x_a + x_b)`` (``x_a + x_b = 0`` replaced by 1, so two
  zeros give 0) of tokens, header, bold and list counts. ``ContextualPairDataset.from_pandas(
  normalize_features=True)`` (the default) then standardises each column over the votes:
  ``(f - mean) / std`` with ``jnp.std`` (ddof 0; a constant column is left centred at 0, std
  replaced by 1). The votes are not collapsed (one row per vote).
* Outcome: ``model_a`` 1, ``model_b`` 0, ``tie`` / ``both_bad`` 0.5 (a tie is half a win
  each; any other label 0.5 silently; here every label is mapped explicitly).
* Loss: ``-mean_k w_k [y_k z_k - softplus(z_k)] + reg / 2 * |beta|^2``,
  ``z_k = theta_a - theta_b + f_k' beta`` (natural log-odds); defaults ``reg = 1.0`` (a ridge
  on the style coefficients, on the *mean* loss: as strong as one vote's worth of data per
  coefficient's unit) and ``reweighted=True`` (``w_k = 1 / max(n_pair, 50)`` normalised to
  mean 1: inverse pair-frequency weights). The maximum-likelihood model evaluq fits is
  ``reg=0``, ``reweighted=False``: those are the settings of the anchor (``converged``); the
  defaults' coefficients are recorded beside it (``arena_rank_defaults``) to show how much
  they shrink.
* Fit: optax L-BFGS from 0, stopping at ``max|grad| < gtol`` or relative loss change
  ``< ftol`` (both 1e-9 by default); theta stays sum-zero (every gradient sums to 0 over the
  models).
* Scale: ``rating = 1000 + theta * 400 / ln 10``; the coefficients ``beta`` are reported in
  logits per SD of the standardised feature (times 400 / ln 10 for Elo points per SD).
* Sandwich (``ci_method="sandwich"``): ``V = H^-1 G H^-1 / n`` with the mean Hessian
  ``H = (1/n) sum w p (1-p) x x' + hessian_reg I`` (``hessian_reg = 1e-5`` on every
  parameter, coefficients too; no ``reg`` term) and ``G = (1/n) sum (w (y - p))^2 x x' -
  reg^2 / n beta beta'``, ``x = (e_a - e_b, f)``; per-vote scores (HC0), no clustering;
  interval ``rating +- z sqrt(V_ii) alpha``. arena-rank returns no SE for the coefficients:
  the same ``V``'s coefficient block is recorded here (``coef_se*``).

Recorded: the fit to convergence (gtol 1e-13, ftol 0) and at the default tolerances, the
sandwich with arena-rank's ridge and with the exact pseudo-inverse (``H`` and ``G`` from
arena-rank's own ``compute_hessian_and_covariance`` with ``hessian_reg=0``), the features'
means and SDs, versions, and the defaults' (``reg=1``, reweighted) coefficients.
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
DATA = ROOT / "benchmarks" / "anchors" / "arena_style_votes.csv"
FEATURES = ("tokens", "headers", "bold", "lists")
OUTCOME = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
LEVEL = 0.95
TIGHT = {"gtol": 1e-13, "ftol": 0.0, "max_iter": 100_000}
SEED = 20261126


# --- the simulated arena ---------------------------------------------------------------------

def simulate(path: str) -> int:
    """16 models with strengths, typical lengths and markdown habits; Davidson votes whose logit
    includes style effects (see the module docstring)."""
    rng = np.random.default_rng(SEED)
    m, n, n_prompts = 16, 6000, 400
    names = [f"model-{k:02d}" for k in range(m)]
    theta = np.sort(rng.normal(0.0, 0.6, m))[::-1]
    log_len = rng.normal(6.0, 0.45, m)             # typical answer ~ 400 tokens
    # the stronger models are somewhat longer and more formatted (style confounds quality)
    log_len += 0.35 * (theta - theta.mean())
    markdown = np.exp(rng.normal(0.0, 0.6, m) + 0.4 * (theta - theta.mean()))
    prompt_len = rng.normal(0.0, 0.5, n_prompts)     # some prompts ask for long answers
    prompt = rng.integers(0, n_prompts, n)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m              # never a model against itself
    tokens = np.stack([np.exp(log_len[s] + prompt_len[prompt] + rng.normal(0, 0.4, n))
                       for s in (a, b)]).round().astype(int) + 1
    scale = tokens / 400.0
    headers = rng.poisson(1.5 * markdown[[a, b]] * scale)
    bold = rng.poisson(3.0 * markdown[[a, b]] * scale)
    lists = rng.poisson(4.0 * markdown[[a, b]] * scale)

    def rel(x: np.ndarray) -> np.ndarray:
        total = x[0] + x[1]
        return (x[0] - x[1]) / np.where(total == 0, 1, total)

    z_len, z_bold = rel(tokens), rel(bold)
    style = 0.30 * z_len / z_len.std() + 0.10 * z_bold / z_bold.std()
    d = theta[a] - theta[b] + style
    nu = 0.7
    f = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), np.log(nu))
    p_a, p_b = np.exp(0.5 * d - f), np.exp(-0.5 * d - f)
    u = rng.random(n)
    winner = np.where(u < p_a, "model_a", np.where(u < p_a + p_b, "model_b", "tie"))
    votes = pd.DataFrame({
        "prompt": prompt, "model_a": np.array(names)[a], "model_b": np.array(names)[b],
        "winner": winner, "tokens_a": tokens[0], "tokens_b": tokens[1],
        "headers_a": headers[0], "headers_b": headers[1], "bold_a": bold[0], "bold_b": bold[1],
        "lists_a": lists[0], "lists_b": lists[1]})
    votes.to_csv(path, index=False)
    return 0


def style_features(votes: pd.DataFrame) -> pd.DataFrame:
    """LMArena's ``add_style_feature_cols`` minus its own standardisation (arena-rank's
    ``normalize_features`` standardises again with ddof 0, which is what remains of the two):
    the relative differences ``(a - b) / (a + b)``, a zero total replaced by 1."""
    out = votes[["model_a", "model_b", "winner"]].copy()
    for feature in FEATURES:
        fa, fb = votes[f"{feature}_a"].astype(float), votes[f"{feature}_b"].astype(float)
        total = (fa + fb).replace(0, 1)
        out[feature] = (fa - fb) / total
    return out


# --- arena-rank ------------------------------------------------------------------------------

def outcome_map(label: str) -> float:
    """arena-rank's default map sends unknown labels to 0.5 silently: this one refuses."""
    return OUTCOME[label]


def dataset_of(votes: pd.DataFrame, reweighted: bool):
    # the model module sets jax_enable_x64 when imported: import it before building the data
    import arena_rank.models.contextual_bradley_terry  # noqa: F401
    from arena_rank.utils.data_utils import ContextualPairDataset

    return ContextualPairDataset.from_pandas(
        style_features(votes), feature_cols=list(FEATURES), outcome_map=outcome_map,
        reweighted=reweighted, normalize_features=True)


def fitted(dataset, **kwargs):
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry

    model = ContextualBradleyTerry(n_competitors=len(dataset.competitors),
                                   n_features=dataset.n_features, **kwargs)
    start = time.perf_counter()
    model.fit(dataset)
    return model, time.perf_counter() - start


def gradient(model, dataset) -> float:
    import jax

    grad = jax.grad(model.loss_function)(model.params, dataset.as_dict())
    return float(max(np.abs(np.asarray(g)).max() for g in grad.values()))


def summary(model, dataset, seconds: float, label: str) -> dict:
    from jax.scipy.stats import norm

    res = model.compute_ratings_and_cis(dataset, significance_level=1 - LEVEL,
                                        ci_method="sandwich")
    names = list(res["competitors"])
    m, q, n = model.n_competitors, model.n_features, dataset.pairs.shape[0]
    theta = np.asarray(model.params["ratings"])
    coef = np.asarray(model.params["coeffs"])
    z = float(norm.ppf(1 - (1 - LEVEL) / 2))
    alpha = model.alpha

    def sandwich(hessian_reg: float, inverse) -> np.ndarray:
        h, g = model.compute_hessian_and_covariance(
            model.params["ratings"], model.params["coeffs"], dataset.pairs, dataset.features,
            dataset.outcomes, dataset.weights, model.reg, hessian_reg, m, q, n)
        h_inv = inverse(np.asarray(h))
        return np.sqrt(np.diag(h_inv @ np.asarray(g) @ h_inv) / n)

    se_ridge = sandwich(model.hessian_reg, np.linalg.inv)        # arena-rank's own formula
    se_pinv = sandwich(0.0, lambda h: np.linalg.pinv(h, rcond=1e-12, hermitian=True))
    np.testing.assert_allclose(se_ridge[:m] * alpha, np.sqrt(np.asarray(res["variances"])),
                               rtol=1e-10)
    ratings = np.asarray(res["ratings"])

    def by(keys, values) -> dict[str, float]:
        return dict(zip(keys, np.asarray(values, dtype=float).tolist(), strict=True))

    feats = list(FEATURES)
    return {
        "label": label, "seconds_fit": seconds,
        "settings": {"reg": model.reg, "hessian_reg": model.hessian_reg, "gtol": model.gtol,
                     "ftol": model.ftol, "max_iter": model.max_iter},
        "max_abs_gradient_mean_loss": gradient(model, dataset),
        "sum_theta_logit": float(theta.sum()), "mean_rating": float(ratings.mean()),
        "rating": by(names, ratings), "theta_logit": by(names, theta),
        "se": by(names, se_ridge[:m] * alpha),
        "ci_lower": by(names, res["rating_lower"]), "ci_upper": by(names, res["rating_upper"]),
        "se_pinv_no_ridge": by(names, se_pinv[:m] * alpha),
        "ci_lower_pinv_no_ridge": by(names, ratings - z * se_pinv[:m] * alpha),
        "ci_upper_pinv_no_ridge": by(names, ratings + z * se_pinv[:m] * alpha),
        "coef_logit": by(feats, coef), "coef_elo": by(feats, coef * alpha),
        "coef_se_elo": by(feats, se_ridge[m:] * alpha),
        "coef_se_elo_pinv_no_ridge": by(feats, se_pinv[m:] * alpha),
        "coef_ci_lower_elo_pinv_no_ridge": by(feats, (coef - z * se_pinv[m:]) * alpha),
        "coef_ci_upper_elo_pinv_no_ridge": by(feats, (coef + z * se_pinv[m:]) * alpha),
        "z": z,
    }


def reference(path: str) -> int:
    votes = pd.read_csv(DATA)
    dataset = dataset_of(votes, reweighted=False)
    mle = {"reg": 0.0}
    tight, sec_tight = fitted(dataset, **mle, **TIGHT)
    default, sec_default = fitted(dataset, **mle)
    conv = summary(tight, dataset, sec_tight, "reg 0, reweighted False, to convergence "
                                              "(gtol 1e-13, ftol 0)")
    at_default = summary(default, dataset, sec_default, "reg 0, reweighted False, default "
                                                        "tolerances (gtol = ftol = 1e-9)")
    gap = {k: at_default["rating"][k] - conv["rating"][k] for k in conv["rating"]}
    gap_coef = {k: at_default["coef_elo"][k] - conv["coef_elo"][k] for k in conv["coef_elo"]}
    ridge = {k: conv["se"][k] - conv["se_pinv_no_ridge"][k] for k in conv["se"]}
    rel = style_features(votes)[list(FEATURES)].to_numpy(dtype=float)
    defaults_model, _ = fitted(dataset_of(votes, reweighted=True), **TIGHT)
    out = {
        "script": "benchmarks/anchors/run_arena_rank_style.py",
        "versions": {p: version(p) for p in ("arena-rank", "jax", "optax", "numpy", "pandas")},
        "data": {"path": "benchmarks/anchors/arena_style_votes.csv",
                 "sha256": hashlib.sha256(DATA.read_bytes()).hexdigest(),
                 "n_votes": len(votes), "n_models": len(dataset.competitors),
                 "n_ties": int((votes["winner"] == "tie").sum()),
                 "mapping": "model_a 1, model_b 0, tie 0.5 (a tie is half a win each)",
                 "features": {f: f"({f}_a - {f}_b) / ({f}_a + {f}_b), a zero total replaced "
                                 f"by 1; then standardised over the votes (ddof 0)"
                              for f in FEATURES},
                 "feature_mean": dict(zip(FEATURES, rel.mean(axis=0).tolist(), strict=True)),
                 "feature_sd_ddof0": dict(zip(FEATURES, rel.std(axis=0).tolist(),
                                              strict=True))},
        "confidence_level": LEVEL,
        "scale": {"alpha": tight.alpha, "init_rating": tight.init_rating,
                  "formula": "rating = 1000 + 400 / ln(10) * theta; coefficient (Elo per SD "
                             "of the standardised feature) = 400 / ln(10) * beta",
                  "anchor": "sum-zero theta (mean rating 1000), kept by L-BFGS from 0"},
        "sandwich": {"hessian_reg": tight.hessian_reg,
                     "formula": "V = H^-1 G H^-1 / n (mean Hessian and mean outer product of "
                                "the per-vote scores, HC0; ridge hessian_reg on every "
                                "parameter's diagonal); '*_pinv_no_ridge': hessian_reg 0 and "
                                "the Moore-Penrose inverse, the exact sum-zero sandwich"},
        "converged": conv,
        "default_tolerance": at_default,
        "convergence_gap": {
            "note": "arena-rank (reg 0, not reweighted) at its default tolerances minus run "
                    "to convergence, Elo",
            "max_abs_rating_elo": max(abs(v) for v in gap.values()),
            "max_abs_coef_elo": max(abs(v) for v in gap_coef.values()),
            "rating_elo": gap},
        "ridge_effect": {
            "note": "se(arena-rank's ridge 1e-5 on the mean Hessian) - se(pseudo-inverse), "
                    "Elo, at the converged fit",
            "max_abs_se_elo": max(abs(v) for v in ridge.values()), "se_elo": ridge},
        "arena_rank_defaults": {
            "note": "arena-rank's defaults (reg 1.0 on the mean loss, reweighted True: "
                    "inverse pair-frequency weights), run to convergence: a different, "
                    "penalised and reweighted estimator, recorded to show the shrinkage of "
                    "the coefficients; not what evaluq fits",
            "coef_logit": dict(zip(FEATURES, np.asarray(defaults_model.params["coeffs"])
                                   .tolist(), strict=True))},
    }
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "simulate":
        sys.exit(simulate(*args))
    if mode != "reference":
        raise SystemExit(__doc__)
    assert math.isclose(400 / math.log(10), 173.71779276130073)
    sys.exit(reference(*args))
