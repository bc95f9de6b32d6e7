"""evalica's Bradley-Terry and Newman (Davidson ties) numbers on LLMFAO, for evaluq's ratings.

Runs in evalica's own virtual env (``benchmarks/anchors/setup_evalica.sh``), never in
evaluq's. The data: ``tests/data/llmfao/llmfao.csv`` (8,931 crowd votes; ``left`` is evalica's
``xs``, ``right`` its ``ys``; ``winner`` ``left`` / ``right`` / ``tie`` mapped to ``Winner.X`` /
``Winner.Y`` / ``Winner.Draw``, as evalica's own test fixture does).

Usage::

    python run_evalica.py reference OUT.json [GOLDEN.csv]
        ``bradley_terry`` (a tie is half a win each: win_weight 1, tie_weight 0.5) and
        ``newman`` (Davidson ties, fitted tie parameter ``v``) at evalica's defaults
        (tolerance 1e-6, limit 100) and run to convergence (tolerance 1e-14), on both solvers
        (pyo3, naive); evalica's golden LLMFAO scores, copied into the JSON with their source
        (GOLDEN.csv: ``llmfao-golden.csv`` of evalica's repository at tag v0.4.2; by default
        read with ``git show`` from a clone at /work/.mirror/dustalov+evalica/repo); an
        independent check of both fixed points (the log-likelihood's gradient there and a
        scipy L-BFGS maximum); the normalisations, written out; versions.
    python run_evalica.py time N_RESAMPLES METHOD [METHOD ...]
        Times ``evalica.bootstrap(evalica.bradley_terry, ...)`` on LLMFAO with N_RESAMPLES
        resamples for each METHOD (``BCa``: evalica's default; ``percentile``), its default
        solver, random_state 0, and prints one JSON line: the in-process wall and CPU seconds
        of each (import and data loading excluded) and the SD of the resampled log scores
        per model.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "llmfao" / "llmfao.csv"
TIGHT = 1e-14
LIMIT = 1_000_000
GOLDEN_SOURCE = {
    "repository": "https://github.com/dustalov/evalica",
    "tag": "v0.4.2",
    "commit": "0a558ece8e2f35168edfebce3dba24ffb38502a9",
    "file": "llmfao-golden.csv (columns algorithm,item,score; rows algorithm == "
            "'bradley_terry' and 'newman')",
    "evalica_test": "python/evalica/test_evalica.py: test_bradley_terry_dataset compares "
                    "result.scores / result.scores.sum() with the golden bradley_terry rows "
                    "(rtol 1e-4); test_newman_dataset compares result.scores (no "
                    "normalisation) with the golden newman rows (rtol 1e-4)",
}


def load() -> tuple[list[str], list[str], list, str]:
    from evalica import Winner

    votes = pd.read_csv(DATA, dtype=str)
    mapping = {"left": Winner.X, "right": Winner.Y, "tie": Winner.Draw}
    winners = votes["winner"].map(mapping)
    if winners.isna().any():
        raise ValueError("llmfao.csv: unknown winner label")
    digest = hashlib.sha256(DATA.read_bytes()).hexdigest()
    return votes["left"].tolist(), votes["right"].tolist(), winners.tolist(), digest


def counts(xs: list[str], ys: list[str], winners: list, models: list[str]
           ) -> tuple[np.ndarray, np.ndarray]:
    """Win matrix W[i, j] (i beat j) and symmetric tie matrix T[i, j] (ties of i and j)."""
    from evalica import Winner

    pos = {m: k for k, m in enumerate(models)}
    n = len(models)
    win, tie = np.zeros((n, n)), np.zeros((n, n))
    for x, y, w in zip(xs, ys, winners, strict=True):
        i, j = pos[x], pos[y]
        if w == Winner.X:
            win[i, j] += 1
        elif w == Winner.Y:
            win[j, i] += 1
        else:
            tie[i, j] += 1
            tie[j, i] += 1
    return win, tie


def bt_loglik(theta: np.ndarray, win: np.ndarray, tie: np.ndarray) -> tuple[float, np.ndarray]:
    """Half-win Bradley-Terry log-likelihood and gradient in theta = log score:
    sum_ij (W + T/2)_ij [theta_i - log(exp theta_i + exp theta_j)] (each tie counted once,
    as half a win each way)."""
    c = win + tie / 2
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))     # P(i beats j)
    ll = float(np.sum(c * np.log(p)))
    grad = np.sum(c * (1 - p), axis=1) - np.sum(c.T * p, axis=1)
    return ll, grad


def davidson_loglik(params: np.ndarray, win: np.ndarray, tie: np.ndarray
                    ) -> tuple[float, np.ndarray]:
    """Davidson log-likelihood in Newman's (evalica's) parametrisation, params = (theta, log v):
    P(i beats j) = s_i / D, P(tie) = 2 v sqrt(s_i s_j) / D, D = s_i + s_j + 2 v sqrt(s_i s_j),
    s = exp(theta). Each tie counted once (T is symmetric: half of it). Numerical gradient."""
    def f(par: np.ndarray) -> float:
        theta, logv = par[:-1], par[-1]
        half = (theta[:, None] + theta[None, :]) / 2
        log_d = np.logaddexp(np.logaddexp(theta[:, None], theta[None, :]),
                             np.log(2) + logv + half)
        return float(np.sum(win * (theta[:, None] - log_d))
                     + np.sum(np.triu(tie, 1) * (np.log(2) + logv + half - log_d)))

    ll = f(params)
    grad = np.empty_like(params)
    h = 1e-6
    for k in range(params.size):
        e = np.zeros_like(params)
        e[k] = h
        grad[k] = (f(params + e) - f(params - e)) / (2 * h)
    return ll, grad


def golden_rows() -> dict[str, dict[str, float]]:
    import subprocess

    text = subprocess.run(
        ["git", "--git-dir=/work/.mirror/dustalov+evalica/repo", "show",
         f"{GOLDEN_SOURCE['tag']}:llmfao-golden.csv"],
        capture_output=True, text=True, check=True).stdout
    return parse_golden(text)


def parse_golden(text: str) -> dict[str, dict[str, float]]:
    import io

    golden = pd.read_csv(io.StringIO(text), dtype={"score": float})
    return {alg: dict(zip(golden.loc[golden.algorithm == alg, "item"],
                          golden.loc[golden.algorithm == alg, "score"].astype(float),
                          strict=True))
            for alg in ("bradley_terry", "newman")}


def max_rel(a: dict[str, float], b: dict[str, float]) -> float:
    return max(abs(a[k] - b[k]) / abs(b[k]) for k in b)


def fit_bt(xs, ys, winners, models, tol: float, limit: int, solver: str) -> dict:
    import evalica

    r = evalica.bradley_terry(xs, ys, winners, tolerance=tol, limit=limit, solver=solver)
    s = r.scores.reindex(models)
    log_s = np.log(s.to_numpy())
    return {"solver": solver, "tolerance": tol, "limit": limit, "iterations": r.iterations,
            "win_weight": r.win_weight, "tie_weight": r.tie_weight,
            "scores_raw": dict(zip(models, s.tolist(), strict=True)),
            "scores_over_sum": dict(zip(models, (s / s.sum()).tolist(), strict=True)),
            "log_scores_sum_zero": dict(zip(models, (log_s - log_s.mean()).tolist(),
                                                 strict=True))}


def fit_newman(xs, ys, winners, models, tol: float, limit: int, solver: str) -> dict:
    import evalica

    r = evalica.newman(xs, ys, winners, tolerance=tol, limit=limit, solver=solver)
    s = r.scores.reindex(models)
    log_s = np.log(s.to_numpy())
    return {"solver": solver, "tolerance": tol, "limit": limit, "iterations": r.iterations,
            "v_init": r.v_init, "win_weight": r.win_weight, "tie_weight": r.tie_weight,
            "v": float(r.v), "davidson_nu": 2 * float(r.v),
            "scores_raw": dict(zip(models, s.tolist(), strict=True)),
            "scores_raw_geometric_mean": float(np.exp(log_s.mean())),
            "scores_over_sum": dict(zip(models, (s / s.sum()).tolist(), strict=True)),
            "log_scores_sum_zero": dict(zip(models, (log_s - log_s.mean()).tolist(),
                                                 strict=True))}


def independent_checks(out: dict, win: np.ndarray, tie: np.ndarray, models: list[str]) -> None:
    """Gradient at evalica's converged fixed points and scipy L-BFGS maxima from zero."""
    from scipy.optimize import minimize

    bt = out["bradley_terry"]["converged"]
    theta = np.array([bt["log_scores_sum_zero"][m] for m in models])
    ll, grad = bt_loglik(theta, win, tie)
    res = minimize(lambda t: tuple(-v for v in bt_loglik(t, win, tie)), np.zeros(len(models)),
                   jac=True, method="L-BFGS-B", options={"ftol": 0, "gtol": 1e-11,
                                                         "maxiter": 100_000})
    t_opt = res.x - res.x.mean()
    out["checks"]["bradley_terry"] = {
        "loglik_at_evalica_converged": ll, "max_abs_gradient_there": float(np.abs(grad).max()),
        "scipy_lbfgs_loglik": float(-res.fun),
        "max_abs_diff_log_scores_scipy_vs_evalica": float(np.abs(t_opt - theta).max())}
    nm = out["newman"]["converged"]
    par = np.array([nm["log_scores_sum_zero"][m] for m in models] + [np.log(nm["v"])])
    ll, grad = davidson_loglik(par, win, tie)
    res = minimize(lambda p: -davidson_loglik(p, win, tie)[0],
                   np.r_[np.zeros(len(models)), np.log(0.5)],
                   jac=lambda p: -davidson_loglik(p, win, tie)[1], method="L-BFGS-B",
                   options={"ftol": 0, "gtol": 1e-8, "maxiter": 100_000})
    out["checks"]["newman"] = {
        "loglik_at_evalica_converged": ll,
        "max_abs_gradient_there_numerical": float(np.abs(grad).max()),
        "scipy_lbfgs_loglik": float(-res.fun),
        "scipy_lbfgs_v": float(np.exp(res.x[-1])),
        "max_abs_diff_log_scores_scipy_vs_evalica": float(
            np.abs(res.x[:-1] - res.x[:-1].mean() - par[:-1]).max())}


def reference(path: str, golden_csv: str | None = None) -> int:
    xs, ys, winners, digest = load()
    models = sorted(set(xs) | set(ys))
    golden = (parse_golden(Path(golden_csv).read_text()) if golden_csv else golden_rows())
    out: dict = {
        "script": "benchmarks/anchors/run_evalica.py",
        "versions": {p: version(p) for p in ("evalica", "numpy", "pandas", "scipy")},
        "data": {"path": "tests/data/llmfao/llmfao.csv", "sha256": digest,
                 "n_votes": len(xs), "n_models": len(models),
                 "mapping": "xs = left, ys = right; winner left -> Winner.X, right -> "
                            "Winner.Y, tie -> Winner.Draw (evalica's conftest.py MAPPING)"},
        "models": models,
        "normalisation": {
            "bradley_terry": (
                "evalica's bradley_terry returns scores s = exp(theta) (Newman 2023's "
                "iteration on W + 0.5 T, T the symmetric tie matrix: a tie is half a win "
                "each way), rescaled each iteration to geometric mean 1, i.e. log s sums to "
                "zero. The golden file holds s / sum(s) (= softmax(theta)); evalica's test "
                "divides by the sum before comparing. To reproduce from evaluq logit "
                "ratings r (any anchor): exp(r) / sum(exp(r)); 'log_scores_sum_zero' here "
                "is log s minus its mean (= theta, logit scale, sum-zero)."),
            "newman": (
                "evalica's newman returns unnormalised scores s (the iteration's fixed "
                "point from s = 1, never rescaled: geometric mean "
                "scores_raw_geometric_mean, not 1); the golden newman rows are these raw "
                "scores. Only ratios are identified: compare log s minus its mean "
                "('log_scores_sum_zero') or s / sum(s). v is Newman's tie parameter: "
                "P(i beats j) = s_i / D, P(tie) = 2 v sqrt(s_i s_j) / D, "
                "D = s_i + s_j + 2 v sqrt(s_i s_j); Davidson's (1970) nu "
                "(P(tie) = nu sqrt(s_i s_j) / (s_i + s_j + nu sqrt(s_i s_j))) is 2 v. "
                "The returned v is the one of the last iteration's step (it lags the scores "
                "by one step; at tolerance 1e-14 the lag is below 1e-12)."),
        },
        "golden": {"source": GOLDEN_SOURCE, "bradley_terry_over_sum": golden["bradley_terry"],
                   "newman_raw": golden["newman"]},
        "bradley_terry": {}, "newman": {}, "checks": {},
    }
    for name, fit in (("bradley_terry", fit_bt), ("newman", fit_newman)):
        for label, tol, limit in (("default", 1e-6, 100), ("converged", TIGHT, LIMIT)):
            res = fit(xs, ys, winners, models, tol, limit, "pyo3")
            naive = fit(xs, ys, winners, models, tol, limit, "naive")
            res["max_abs_diff_naive_solver"] = float(max(
                abs(res["log_scores_sum_zero"][m] - naive["log_scores_sum_zero"][m])
                for m in models))
            key = "scores_over_sum" if name == "bradley_terry" else "scores_raw"
            gold = golden[name]
            res["max_rel_diff_vs_golden"] = max_rel(res[key], gold)
            out[name][label] = res
    win, tie = counts(xs, ys, winners, models)
    independent_checks(out, win, tie, models)
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


def timing(n_resamples: str, *methods: str) -> int:
    import evalica

    xs, ys, winners, _ = load()
    evalica.bradley_terry(xs, ys, winners)                   # warm (import, first call)
    seconds, cpu, log_sd = {}, {}, {}
    for method in methods:
        start, start_cpu = time.perf_counter(), time.process_time()
        res = evalica.bootstrap(evalica.bradley_terry, xs, ys, winners,
                                n_resamples=int(n_resamples), bootstrap_method=method,
                                random_state=0)
        seconds[method] = time.perf_counter() - start
        cpu[method] = time.process_time() - start_cpu
        assert res.distribution.shape == (int(n_resamples), 59)
        # SD of the resampled log scores (= sum-zero logit strengths: evalica rescales the
        # scores to geometric mean 1), per model: the iid bootstrap SE on the logit scale
        log_sd[method] = np.log(res.distribution).std(axis=0, ddof=1).to_dict()
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "n_resamples": int(n_resamples),
                      "log_sd": log_sd,
                      "solver": evalica.SOLVER, "evalica": version("evalica"),
                      "statistic": "bradley_terry scores (tie = half a win), iid vote "
                                   "resampling (scipy.stats.bootstrap, paired, not "
                                   "vectorised; BCa adds a jackknife of all 8,931 votes)"}))
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    sys.exit(reference(*args) if mode == "reference" else timing(*args))
