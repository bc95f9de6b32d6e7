"""cje-eval's (cje 0.9.3) numbers on fixed data, the anchor of evaluq's judge transport check.

Runs in cje-eval's own virtual env (``benchmarks/anchors/setup_cje.sh``), never in evaluq's.
evaluq's tests read only the JSON this script writes (the data set is written into it).

Usage::

    python run_cje.py reference OUT.json
        On one fixed simulated data set (four policies on the same prompts, a judge score in
        [0, 1] and a binary oracle label on a random 30% of each policy's rows; the judge is
        lenient for policy "D": its oracle rate at a given judge score is 0.3 lower), writes
        calibrated_mean_ci per policy (default cluster-robust inference; and with the tuned
        correction weight), analyze_dataset's estimates, standard errors, intervals and paired
        comparisons, and the transport audits: transport_audit of each of B, C, D's held-out
        labelled probe against the calibrator fitted on policy A, and analyze_dataset's own
        audit with the same probes. The data, the seed and the versions go into the JSON.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from importlib.metadata import version

import numpy as np

SEED = 20261128
POLICIES = ("A", "B", "C", "D")
N_PROMPTS = 600
N_PROBE = 200
LABEL_FRACTION = 0.3
SHIFT = {"A": 0.0, "B": 0.0, "C": 0.0, "D": -0.3}
QUALITY = {"A": (3.0, 3.0), "B": (3.3, 2.7), "C": (2.7, 3.3), "D": (3.0, 3.0)}
DELTA_MAX = 0.1


def oracle_prob(score: np.ndarray, policy: str) -> np.ndarray:
    """P(oracle = 1 | judge score) = clip(0.1 + 0.8 * score + SHIFT[policy], 0.02, 0.98)."""
    return np.clip(0.1 + 0.8 * score + SHIFT[policy], 0.02, 0.98)


def simulate() -> dict:
    """Scores, oracle labels (NaN = unlabelled) and held-out probes per policy."""
    rng = np.random.default_rng(SEED)
    data: dict = {"prompt_id": [f"p{i}" for i in range(N_PROMPTS)], "policies": {}}
    for pol in POLICIES:
        a, b = QUALITY[pol]
        score = rng.beta(a, b, N_PROMPTS)
        oracle = (rng.random(N_PROMPTS) < oracle_prob(score, pol)).astype(float)
        labelled = rng.random(N_PROMPTS) < LABEL_FRACTION
        probe_score = rng.beta(a, b, N_PROBE)
        probe_oracle = (rng.random(N_PROBE) < oracle_prob(probe_score, pol)).astype(float)
        data["policies"][pol] = {
            "judge_score": score.tolist(),
            "oracle_full": oracle.tolist(),
            "labelled": labelled.tolist(),
            "probe_judge_score": probe_score.tolist(),
            "probe_oracle": probe_oracle.tolist(),
        }
    return data


PREVALENCE = {"A": 0.5, "B": 0.6, "C": 0.4, "D": 0.5}
LENIENT = {"A": 0.0, "B": 0.0, "C": 0.0, "D": 0.15}


def judge_given_gold(gold: np.ndarray, policy: str, rng: np.random.Generator) -> np.ndarray:
    """Judge score = clip(0.3 + 0.35 gold + N(0, 0.15) + LENIENT[policy], 0, 1)."""
    noise = rng.normal(0.0, 0.15, gold.size)
    return np.clip(0.3 + 0.35 * gold + noise + LENIENT[policy], 0.0, 1.0)


def simulate_lenient() -> dict:
    """Second design: gold ~ Bernoulli(PREVALENCE), the judge's score given gold the same for
    every policy but D, for which it is 0.15 higher (a lenient judge)."""
    rng = np.random.default_rng(SEED + 1)
    data: dict = {"prompt_id": [f"p{i}" for i in range(N_PROMPTS)], "policies": {}}
    for pol in POLICIES:
        oracle = (rng.random(N_PROMPTS) < PREVALENCE[pol]).astype(float)
        score = judge_given_gold(oracle, pol, rng)
        labelled = rng.random(N_PROMPTS) < LABEL_FRACTION
        probe_oracle = (rng.random(N_PROBE) < PREVALENCE[pol]).astype(float)
        probe_score = judge_given_gold(probe_oracle, pol, rng)
        data["policies"][pol] = {
            "judge_score": score.tolist(),
            "oracle_full": oracle.tolist(),
            "labelled": labelled.tolist(),
            "probe_judge_score": probe_score.tolist(),
            "probe_oracle": probe_oracle.tolist(),
        }
    return data


def _arrays(d: dict) -> tuple[np.ndarray, np.ndarray]:
    score = np.asarray(d["judge_score"], float)
    labels = np.where(np.asarray(d["labelled"]), np.asarray(d["oracle_full"], float), np.nan)
    return score, labels


def _mean_ci(data: dict) -> dict:
    from cje import calibrated_mean_ci

    out: dict = {}
    for weight in ("one", "tuned"):
        res = {}
        for pol, d in data["policies"].items():
            score, labels = _arrays(d)
            r = calibrated_mean_ci(score, labels, seed=0, correction_weight=weight)
            cal = r.diagnostics.get("calibration", {})
            res[pol] = {"estimate": r.estimate, "se": r.se, "ci": list(r.ci), "n": r.n,
                        "n_oracle": r.n_oracle, "method": r.method,
                        "calibration_mode": cal.get("selected_mode", cal.get("mode")),
                        "correction_weight": r.diagnostics.get("correction_weight"),
                        "raw_judge_mean": float(score.mean()),
                        "labelled_oracle_mean": float(np.nanmean(labels)),
                        "full_oracle_mean": float(np.mean(d["oracle_full"]))}
        out[f"correction_weight_{weight}"] = res
    return out


def _transport_vs_base(data: dict) -> dict:
    from cje import calibrated_mean_ci, transport_audit

    score, labels = _arrays(data["policies"]["A"])
    base = calibrated_mean_ci(score, labels, seed=0)
    out: dict = {"base_policy": "A", "delta_max": DELTA_MAX, "family_size": 3}
    for pol in POLICIES[1:]:
        d = data["policies"][pol]
        audit = transport_audit(np.asarray(d["probe_judge_score"]),
                                np.asarray(d["probe_oracle"]), base.calibrator,
                                delta_max=DELTA_MAX, family_size=3, group_label=pol)
        out[pol] = {"status": audit.status, "delta_hat": audit.delta_hat,
                    "delta_ci": list(audit.delta_ci), "delta_se": audit.delta_se,
                    "n_probe": audit.n_probe, "recommended_action": audit.recommended_action}
    return out


def _analyze(data: dict) -> dict:
    from cje import analyze_dataset
    from cje.diagnostics.transport import TransportAuditConfig

    draws = {}
    probes = {}
    for pol, d in data["policies"].items():
        score, labels = _arrays(d)
        draws[pol] = [{"prompt_id": pid, "judge_score": float(s),
                       "oracle_label": None if np.isnan(y) else float(y)}
                      for pid, s, y in zip(data["prompt_id"], score, labels, strict=True)]
        probes[pol] = [{"prompt_id": f"probe_{pol}_{i}", "judge_score": float(s),
                        "oracle_label": float(y)}
                       for i, (s, y) in enumerate(zip(d["probe_judge_score"],
                                                      d["probe_oracle"], strict=True))]
    transport = TransportAuditConfig(probes_by_policy=probes,
                                     delta_max_by_policy={p: DELTA_MAX for p in POLICIES})
    res = analyze_dataset(fresh_draws_data=draws, transport=transport,
                          fresh_judge_scale=(0.0, 1.0), fresh_oracle_scale=(0.0, 1.0))
    names = list(res.metadata.get("target_policies", POLICIES))
    lo, hi = res.confidence_interval() if hasattr(res, "confidence_interval") else (None, None)
    out: dict = {"policies": names, "estimates": np.asarray(res.estimates).tolist(),
                 "standard_errors": np.asarray(res.standard_errors).tolist(),
                 "ci_lower": None if lo is None else np.asarray(lo).tolist(),
                 "ci_upper": None if hi is None else np.asarray(hi).tolist(),
                 "comparisons": {}, "transport": {}}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            c = res.compare_policies(a, b)
            out["comparisons"][f"{a}-{b}"] = _plain(c)
    out["metadata_keys"] = sorted(res.metadata)
    out["transport"] = _plain({k: v for k, v in res.metadata.items() if "transport" in k})
    out["transport_unverified"] = _plain(res.metadata.get("transport_unverified"))
    return out


def _plain(v: object) -> object:
    """JSON-able copy (numpy scalars, arrays, dataclasses, tuples)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if hasattr(v, "__dataclass_fields__"):
        return {k: _plain(getattr(v, k)) for k in v.__dataclass_fields__}
    if isinstance(v, float | int | str | bool) or v is None:
        return v
    return repr(v)


def reference(path: str) -> int:
    logging.disable(logging.WARNING)
    data = simulate()
    out: dict = {"script": "benchmarks/anchors/run_cje.py reference",
                 "versions": {p: version(p) for p in ("cje-eval", "numpy", "scipy",
                                                      "scikit-learn")},
                 "seed": SEED, "label_fraction": LABEL_FRACTION, "shift": SHIFT,
                 "quality_beta": QUALITY,
                 "design": ("judge score ~ Beta(QUALITY[policy]); oracle ~ Bernoulli(clip(0.1 + "
                            "0.8 score + SHIFT[policy], 0.02, 0.98)); labelled = Bernoulli("
                            "LABEL_FRACTION) per row; probes: a held-out labelled sample of "
                            "N_PROBE rows per policy (other prompts). Policy D's judge is "
                            "lenient (E[oracle | judge] is 0.3 lower): the transport "
                            "check must flag D and only D. The judge-score distribution also "
                            "differs a little between policies (QUALITY), so E[judge | oracle] "
                            "differs for B and C without any shift of E[oracle | judge]. "
                            "A second design, 'lenient_judge', shifts E[judge | oracle] "
                            "instead."),
                 "data": data}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["calibrated_mean_ci"] = _mean_ci(data)
        out["transport_audit_vs_A"] = _transport_vs_base(data)
        out["analyze_dataset"] = _analyze(data)
        lenient = simulate_lenient()
        out["lenient_judge"] = {
            "design": ("gold ~ Bernoulli(PREVALENCE[policy]); judge score = clip(0.3 + 0.35 "
                       "gold + N(0, 0.15) + LENIENT[policy], 0, 1); labelled and probes as "
                       "above. The judge's relation E[judge | gold] is the same for A, B, C "
                       "and 0.15 higher for D (lenient); E[gold | judge] differs between all "
                       "four (it depends on the prevalence too)."),
            "prevalence": PREVALENCE, "lenient": LENIENT, "seed": SEED + 1, "data": lenient,
            "calibrated_mean_ci": _mean_ci(lenient),
            "transport_audit_vs_A": _transport_vs_base(lenient),
            "analyze_dataset": _analyze(lenient)}
    out["warnings"] = sorted({f"{w.category.__name__}: {w.message}"[:300] for w in caught})
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "reference":
        return reference(argv[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
