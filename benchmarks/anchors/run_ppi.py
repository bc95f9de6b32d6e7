"""ppi-python's (ppi_py 0.2.3) numbers on fixed data, the anchor of evaluq's judges (issue 32).

Runs in ppi_py's own virtual env (``benchmarks/anchors/setup_ppi.sh``), never in evaluq's.
evaluq's tests read only the JSON this script writes (the data sets are written into it).

Usage::

    python run_ppi.py reference OUT.json
        Point estimates, 95% and 90% CIs (two-sided and one-sided), p-values for lam tuned
        (None), lam = 1 and lam = 0, the tuned lam itself, classical_mean_ci, and
        ppi_mean_power answers, on fixed simulated data sets (binary gold with a binary judge,
        a continuous judge score, a 5-level judge, lam clipped at 1 and at 0, a tiny set) and
        on ppi_py's own ``examples/baselines/forest_badmodel.npz`` (MIT, shipped in
        tests/data/judges/). Every array used is written into the JSON.
    python run_ppi.py arena UPSTREAM_DATA_DIR OUT.csv
        Writes tests/data/judges/arena_battles.csv from the four JSON-lines files of
        Networks-Learning/prediction-powered-ranking's data/ (human.json and the three LLM
        judges' files): the battles among ARENA_MODELS, one row per battle, the verdict codes
        shortened (model_a -> a, model_b -> b, tie -> tie, "tie (bothbad)" -> bothbad).
    python run_ppi.py real OUT.json
        Coverage and mean width of ppi_py's PPI++ (lam tuned), PPI (lam = 1) and classical 95%
        intervals on tests/data/judges/arena_battles.csv: one "file" per model pair (the
        pair's battles), per judge and judge coding, with 10% of the battles labelled, over
        random label subsets drawn by the generator written into the JSON.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

SEED = 20261126

FORMULAS = {
    "arrays": "Y (n,), Yhat (n,), Yhat_unlabeled (N,); no weights (w = 1).",
    "point_estimate": "theta(lam) = mean(lam * Yhat_unlabeled) + mean(Y - lam * Yhat)",
    "lam_tuned": (
        "lam = clip(C / ((1 + n / N) * V), 0, 1) with "
        "C = (1/n) * sum((Y - mean(Y)) * (Yhat - mean(Yhat)))  [covariance, ddof=0, over the "
        "n labelled items] and "
        "V = np.cov(concatenate([Yhat, Yhat_unlabeled]))  [variance, ddof=1, over all n + N "
        "judge scores, labelled and unlabelled pooled]. "
        "(_calc_lam_glm: num = trace(cov_grads) = 2 C; denom = 2 (1 + n/N) V; grads are centred "
        "so the provisional point estimate used to form them cancels.)"
    ),
    "lam_tuned_clipping": (
        "ppi_mean_ci and ppi_mean_pointestimate clip lam to [0, 1] (clip=True); "
        "ppi_mean_pval does NOT clip (clip=False default of _calc_lam_glm): its tuned lam can "
        "be < 0 or > 1."
    ),
    "standard_error": (
        "se = sqrt(std(lam * Yhat_unlabeled)**2 / N + std(Y - lam * Yhat)**2 / n) with "
        "numpy std, ddof=0 in both terms."
    ),
    "interval": (
        "statsmodels _zconfint_generic: two-sided theta +- norm.ppf(1 - alpha/2) * se; "
        "'larger': (theta + norm.ppf(alpha) * se, inf); 'smaller': (-inf, theta + "
        "norm.ppf(1 - alpha) * se). alpha = 1 - confidence_level."
    ),
    "alternative_bug": (
        "ppi_mean_ci with lam=None drops `alternative` in its recursive call: the tuned-lam "
        "interval is always two-sided (see results[*]['lam_None']['ci_alpha0.05_larger'])."
    ),
    "pval": (
        "ppi_mean_pval: z = (mean(lam*Yhat_unlabeled) + mean(Y - lam*Yhat) - null) / "
        "max(sqrt(std(lam*Yhat_unlabeled)**2/N + std(Y - lam*Yhat)**2/n), 1e-16) (ddof=0); "
        "two-sided p = 2 norm.sf(abs(z)); lam tuned WITHOUT clipping."
    ),
    "classical_mean_ci": "mean(Y) +- z * std(Y, ddof=0) / sqrt(n)",
    "ppi_mean_power": (
        "rho = min(cov0(Y, Yhat) / sqrt(var0(Y) var0(Yhat)), 1 - 1/n) (ddof=0, labelled pilot "
        "only; centred at mean(Y), which cancels); gamma = cost_Yhat / cost_Y (cost_X = 0); "
        "ppi_cost = cost_Y (1 - rho^2 + gamma rho^2 + 2 sqrt(gamma rho^2 (1 - rho^2))); "
        "classical_cost = cost_Y. n0 = budget / ppi_cost (budget given) or effective_n. "
        "n = n0 (1 - rho^2 + sqrt(gamma rho^2 (1 - rho^2))); "
        "N = n (n0 - n) / (n - (1 - rho^2) n0) (N = 0 if rho = 0); both rounded (Python round, "
        "half to even); cost = n cost_Y + (n + N) cost_Yhat; "
        "effective_n = round(n (n + N) / (n + (1 - rho^2) N)). Falls back to classical "
        "(n = round(budget / cost_Y) or round(n0), N = 0) if classical_cost < ppi_cost or N < 0; "
        "n_max branches: see ppi_power_analysis._get_powerful_pair / _get_cheap_pair. "
        "Note N counts the extra unlabelled items, n + N the judged ones."
    ),
}


def _sim() -> dict[str, dict]:
    """Fixed simulated data sets (gold in {0, 1}; judge scores binary, continuous or 1..5)."""
    rng = np.random.default_rng(SEED)
    out: dict[str, dict] = {}

    def split(y: np.ndarray, yhat: np.ndarray, n: int, note: str) -> dict:
        return {"Y": y[:n].tolist(), "Yhat": yhat[:n].tolist(),
                "Yhat_unlabeled": yhat[n:].tolist(), "note": note}

    # binary gold, binary judge: sensitivity 0.85, specificity 0.7
    y = (rng.random(1000) < 0.62).astype(float)
    yhat = np.where(y == 1, rng.random(1000) < 0.85, rng.random(1000) < 0.3).astype(float)
    out["binary_judge"] = split(y, yhat, 100, "gold Bern(0.62); judge sens 0.85, spec 0.70")
    # continuous judge score in [0, 1]
    y = (rng.random(880) < 0.45).astype(float)
    yhat = np.clip(rng.normal(0.3 + 0.4 * y, 0.2), 0.0, 1.0)
    out["continuous_judge"] = split(y, yhat, 80, "gold Bern(0.45); judge clip(N(0.3+0.4y, 0.2))")
    # 5-level judge 1..5
    y = (rng.random(660) < 0.55).astype(float)
    p1, p0 = [0.05, 0.1, 0.2, 0.3, 0.35], [0.3, 0.3, 0.2, 0.15, 0.05]
    yhat = np.where(y == 1, rng.choice(5, 660, p=p1), rng.choice(5, 660, p=p0)) + 1.0
    out["five_level_judge"] = split(y, yhat, 60, "gold Bern(0.55); judge 1..5, ordinal")
    # judge on a compressed scale: untuned lam > 1, clipped to 1
    y = (rng.random(500) < 0.5).astype(float)
    yhat = 0.3 * y + rng.normal(0.0, 0.02, 500)
    out["lam_clipped_at_1"] = split(y, yhat, 50, "judge = 0.3 y + N(0, 0.02): raw lam ~ 3")
    # anti-correlated judge: raw lam < 0, clipped to 0
    y = (rng.random(400) < 0.5).astype(float)
    yhat = np.where(rng.random(400) < 0.6, 1.0 - y, y)
    out["lam_clipped_at_0"] = split(y, yhat, 40, "judge flips gold w.p. 0.6: raw lam < 0")
    # tiny: n/N not negligible
    y = (rng.random(40) < 0.5).astype(float)
    yhat = np.where(rng.random(40) < 0.75, y, 1.0 - y)
    out["tiny"] = split(y, yhat, 10, "n = 10, N = 30; judge accuracy 0.75")
    return out


def _forest(path: Path) -> dict[str, dict]:
    """ppi_py's forest_badmodel (gold deforestation Y, a weak model's Yhat), seeded splits."""
    rows = np.loadtxt(path, delimiter=",", skiprows=1)
    y_all, yhat_all = rows[:, 0], rows[:, 1]
    out = {}
    for n in (100, 300):
        perm = np.random.default_rng(SEED + n).permutation(y_all.size)
        lab, unl = perm[:n], perm[n:]
        out[f"forest_badmodel_n{n}"] = {
            "Y": y_all[lab].tolist(), "Yhat": yhat_all[lab].tolist(),
            "Yhat_unlabeled": yhat_all[unl].tolist(),
            "note": (f"ppi_py examples/baselines/forest_badmodel.npz (MIT); labelled = "
                     f"np.random.default_rng({SEED + n}).permutation(1596)[:{n}], "
                     "unlabelled = the rest (in that permuted order)"),
        }
    return out


def _raw_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, clip: bool) -> float:
    from ppi_py.ppi import _calc_lam_glm

    pe = float(np.mean(yhat_u) + np.mean(y - yhat))
    return float(_calc_lam_glm((y - pe)[:, None], (yhat - pe)[:, None], (yhat_u - pe)[:, None],
                               np.eye(1), coord=None, clip=clip, optim_mode="overall"))


def _one(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> dict:
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_pval

    res: dict = {"n": int(y.size), "N": int(yhat_u.size),
                 "lam_tuned_clipped": _raw_lam(y, yhat, yhat_u, True),
                 "lam_tuned_unclipped": _raw_lam(y, yhat, yhat_u, False)}
    for lam in (None, 1.0, 0.0):
        key = f"lam_{lam}"
        r: dict = {"point": float(np.squeeze(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)))}
        for alpha in (0.05, 0.1):
            lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
            r[f"ci_alpha{alpha}"] = [float(np.squeeze(lo)), float(np.squeeze(hi))]
        for alt in ("larger", "smaller"):
            lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, alternative=alt, lam=lam)
            r[f"ci_alpha0.05_{alt}"] = [float(np.squeeze(lo)), float(np.squeeze(hi))]
        for null in (0.5,):
            r[f"pval_null{null}"] = float(np.squeeze(ppi_mean_pval(y, yhat, yhat_u, null=null,
                                                                   lam=lam)))
            r[f"pval_null{null}_larger"] = float(np.squeeze(ppi_mean_pval(
                y, yhat, yhat_u, null=null, lam=lam, alternative="larger")))
        res[key] = r
    lo, hi = classical_mean_ci(y, alpha=0.05)
    res["classical_ci_alpha0.05"] = [float(lo), float(hi)]
    return res


POWER_TARGETS = [
    {"cost_Y": 1.0, "cost_Yhat": 0.01, "effective_n": 200},
    {"cost_Y": 1.0, "cost_Yhat": 0.01, "budget": 100.0},
    {"cost_Y": 1.0, "cost_Yhat": 0.1, "effective_n": 500, "n_max": 1000},
    {"cost_Y": 1.0, "cost_Yhat": 0.05, "budget": 150.0, "n_max": 1000},
    {"cost_Y": 5.0, "cost_Yhat": 0.02, "effective_n": 80},
]


def _power(y: np.ndarray, yhat: np.ndarray) -> list[dict]:
    from ppi_py import ppi_mean_power

    out = []
    for target in POWER_TARGETS:
        r = ppi_mean_power(y, yhat, **target)
        out.append({"args": target, "result": {k: (float(v) if k in ("cost", "ppi_corr")
                                                    else int(v)) for k, v in r.items()}})
    return out


def _by_formula(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lam: float | None,
                alpha: float) -> tuple[float, float, float, float]:
    """FORMULAS re-implemented in plain numpy: (lam, point, lower, upper), two-sided."""
    from scipy.stats import norm

    n, big_n = y.size, yhat_u.size
    if lam is None:
        c = np.mean((y - y.mean()) * (yhat - yhat.mean()))
        v = np.var(np.concatenate([yhat, yhat_u]), ddof=1)
        lam = float(np.clip(c / ((1 + n / big_n) * v), 0.0, 1.0))
    point = np.mean(lam * yhat_u) + np.mean(y - lam * yhat)
    se = np.sqrt(np.var(lam * yhat_u) / big_n + np.var(y - lam * yhat) / n)
    z = norm.ppf(1 - alpha / 2)
    return lam, float(point), float(point - z * se), float(point + z * se)


def _formula_check(d: dict, res: dict) -> float:
    """Largest abs difference between ppi_py's numbers and FORMULAS (must be ~1e-15)."""
    y, yhat, yhat_u = (np.asarray(d[k], float) for k in ("Y", "Yhat", "Yhat_unlabeled"))
    worst = 0.0
    for lam in (None, 1.0, 0.0):
        for alpha in (0.05, 0.1):
            lam_f, point, lo, hi = _by_formula(y, yhat, yhat_u, lam, alpha)
            r = res[f"lam_{lam}"]
            worst = max(worst, abs(point - r["point"]), abs(lo - r[f"ci_alpha{alpha}"][0]),
                        abs(hi - r[f"ci_alpha{alpha}"][1]))
            if lam is None:
                worst = max(worst, abs(lam_f - res["lam_tuned_clipped"]))
    return worst


def reference(path: str) -> int:
    data = _sim()
    data.update(_forest(Path(__file__).resolve().parents[2] / "tests/data/judges"
                        / "ppi_py_forest_badmodel.csv"))
    out: dict = {"script": "benchmarks/anchors/run_ppi.py reference",
                 "versions": {p: version(p) for p in ("ppi-python", "numpy", "scipy",
                                                      "statsmodels")},
                 "seed": SEED, "formulas": FORMULAS, "data": data, "results": {}}
    for name, d in data.items():
        y, yhat, yhat_u = (np.asarray(d[k], float) for k in ("Y", "Yhat", "Yhat_unlabeled"))
        res = _one(y, yhat, yhat_u)
        res["power"] = _power(y, yhat)
        res["max_abs_diff_from_formulas"] = _formula_check(d, res)
        out["results"][name] = res
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "reference":
        return reference(argv[1])
    if len(argv) >= 2 and argv[0] == "real":
        return real(argv[1])
    if len(argv) >= 3 and argv[0] == "arena":
        return arena(argv[1], argv[2])
    print(__doc__)
    return 2


ARENA_MODELS = ("alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "koala-13b",
                "oasst-pythia-12b", "vicuna-13b")
ARENA_JUDGES = {"gpt4": "gpt-4-0125-preview", "claude3": "claude-3-opus-20240229",
                "gpt35": "gpt-3.5-turbo"}
CODES = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "bothbad"}


def arena(upstream: str, out: str) -> int:
    """arena_battles.csv from prediction-powered-ranking's data/*.json (JSON lines)."""
    def read(name: str) -> dict[int, dict]:
        with open(Path(upstream) / f"{name}.json") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        return {r["num"]: r for r in rows}

    human = read("human")
    judges = {k: read(v) for k, v in ARENA_JUDGES.items()}
    lines = ["battle,model_a,model_b,human," + ",".join(ARENA_JUDGES)]
    for num in sorted(human):
        h = human[num]
        if h["model_a"] not in ARENA_MODELS or h["model_b"] not in ARENA_MODELS:
            continue
        codes = []
        for k, j in judges.items():
            r = j[num]
            if (r["question_id"], r["model_a"], r["model_b"]) != (
                    h["question_id"], h["model_a"], h["model_b"]):
                raise ValueError(f"battle {num}: {k} does not match the human file")
            codes.append(CODES[r["winner"]])
        lines.append(",".join([str(num), h["model_a"], h["model_b"], CODES[h["winner"]],
                               *codes]))
    Path(out).write_text("\n".join(lines) + "\n")
    return 0


REAL_SEED = 20261127
N_SUBSETS = 2000
LABEL_FRACTION = 0.1


def arena_files(csv: Path) -> dict[str, dict]:
    """One file per model pair: the pair's battles, scored for its first model.

    ``first`` = the alphabetically first model of the pair. Per battle (rows in the CSV's
    order, i.e. by battle number): gold = 1 if the human picked ``first`` else 0 (ties and
    "both bad" count 0); judge coding ``binary``: 1 if the judge picked ``first`` else 0;
    coding ``three_level``: 1 picked ``first``, 0.5 tie, 0 picked the other.
    """
    import pandas as pd

    df = pd.read_csv(csv)
    out: dict[str, dict] = {}
    for i, first in enumerate(ARENA_MODELS):
        for second in ARENA_MODELS[i + 1:]:
            sub = df[((df.model_a == first) & (df.model_b == second))
                     | ((df.model_a == second) & (df.model_b == first))]
            side = np.where(sub.model_a == first, "a", "b")
            other = np.where(side == "a", "b", "a")
            rec = {"battles": sub.battle.tolist(),
                   "gold": (sub.human.to_numpy() == side).astype(float)}
            for k in ARENA_JUDGES:
                v = sub[k].to_numpy()
                rec[f"{k}/binary"] = (v == side).astype(float)
                rec[f"{k}/three_level"] = np.where(v == side, 1.0,
                                                   np.where(v == other, 0.0, 0.5))
            out[f"{first}__{second}"] = rec
    return out


def label_subsets(n_items: int, file_index: int) -> np.ndarray:
    """(N_SUBSETS, n_labels) labelled positions (into the file's battles) of every subset."""
    n_labels = round(LABEL_FRACTION * n_items)
    keys = np.random.default_rng([REAL_SEED, file_index]).random((N_SUBSETS, n_items))
    return np.argsort(keys, axis=1, kind="stable")[:, :n_labels]


def _coverage(gold: np.ndarray, judge: np.ndarray, subsets: np.ndarray) -> dict:
    from ppi_py import classical_mean_ci, ppi_mean_ci

    truth = float(gold.mean())
    n_items = gold.size
    res: dict = {}
    for name, lam in (("ppi++", None), ("ppi", 1.0), ("classical", 0.0)):
        lo = np.empty(len(subsets))
        hi = np.empty(len(subsets))
        for r, lab in enumerate(subsets):
            mask = np.zeros(n_items, bool)
            mask[lab] = True
            if name == "classical":
                lo[r], hi[r] = classical_mean_ci(gold[mask], alpha=0.05)
            else:
                a, b = ppi_mean_ci(gold[mask], judge[mask], judge[~mask], alpha=0.05, lam=lam)
                lo[r], hi[r] = float(np.squeeze(a)), float(np.squeeze(b))
        cover = (lo <= truth) & (truth <= hi)
        res[name] = {"coverage": float(cover.mean()), "mean_width": float(np.mean(hi - lo)),
                     "first3_ci": [[float(lo[r]), float(hi[r])] for r in range(3)]}
    return res


def real(path: str) -> int:
    csv = Path(__file__).resolve().parents[2] / "tests/data/judges/arena_battles.csv"
    files = arena_files(csv)
    out: dict = {
        "script": "benchmarks/anchors/run_ppi.py real",
        "versions": {p: version(p) for p in ("ppi-python", "numpy", "scipy", "statsmodels")},
        "data": "tests/data/judges/arena_battles.csv",
        "design": {
            "files": "one per model pair of ARENA_MODELS (alphabetical), its battles in CSV "
                     "order; the target is the pair's first model's strict win rate by human "
                     "vote, truth = mean(gold) over all the file's battles",
            "gold": "1 if the human picked the pair's first model, else 0 (tie, both bad, "
                    "other model)",
            "judge_binary": "1 if the judge picked the first model, else 0",
            "judge_three_level": "1 first model, 0.5 tie, 0 the other",
            "label_fraction": LABEL_FRACTION,
            "n_labels": ("round(0.1 * n_items) (Python round; per file: "
                         "files[*].n_labels)"),
            "subsets": (f"labelled positions of subset r of file i (i = its index in "
                        f"'files', 0-based) = np.argsort(np.random.default_rng([{REAL_SEED}, "
                        f"i]).random(({N_SUBSETS}, n_items)), axis=1, kind='stable')[r, "
                        ":n_labels]; the rest unlabelled; the same subsets for every judge "
                        "and coding of a file"),
            "n_subsets": N_SUBSETS, "confidence_level": 0.95,
            "methods": "ppi_mean_ci(lam=None) = PPI++; lam=1 = PPI; classical_mean_ci",
        },
        "arena_models": list(ARENA_MODELS), "judges": ARENA_JUDGES,
        "files": {}, "summary": {},
        "summary_note": ("summary: across all 21 files; summary_truth_0.2_to_0.8: across the "
                         "files whose truth is in [0.2, 0.8]. With a win rate near 0 (e.g. "
                         "alpaca-13b vs gpt-4, 0.047) most 10% label subsets hold no win and "
                         "every Wald interval (classical, PPI, PPI++) has width 0 there."),
    }
    for i, (name, rec) in enumerate(files.items()):
        gold = rec["gold"]
        subsets = label_subsets(gold.size, i)
        entry: dict = {"index": i, "n_items": int(gold.size), "n_labels": int(subsets.shape[1]),
                       "truth": float(gold.mean()), "battles": rec["battles"],
                        "first_subset": subsets[0].tolist(),
                       "settings": {}}
        for key in rec:
            if "/" in key:
                judge = rec[key]
                entry["settings"][key] = {"agreement_with_gold": float(np.mean(judge == gold)),
                                          "judge_mean": float(judge.mean()),
                                          **_coverage(gold, judge, subsets)}
        out["files"][name] = entry
        print(name, gold.size, flush=True)
    out["summary"] = _summary(out["files"])
    balanced = {k: v for k, v in out["files"].items() if 0.2 <= v["truth"] <= 0.8}
    out["summary_truth_0.2_to_0.8"] = {"files": sorted(balanced), **_summary(balanced)}
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return 0


def _summary(files: dict) -> dict:
    """Per setting: min / mean / max coverage and mean width across files."""
    out: dict = {}
    settings = next(iter(files.values()))["settings"]
    for key in settings:
        for method in ("ppi++", "ppi", "classical"):
            cov = [f["settings"][key][method]["coverage"] for f in files.values()]
            wid = [f["settings"][key][method]["mean_width"] for f in files.values()]
            out[f"{key}/{method}"] = {"coverage_min": min(cov), "coverage_mean": float(
                np.mean(cov)), "coverage_max": max(cov), "mean_width": float(np.mean(wid))}
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
