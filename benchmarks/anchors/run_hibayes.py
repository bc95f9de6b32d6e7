"""HiBayES's ordered-logistic judge model on its own judge example -> hibayes_judge.json.

Run with the HiBayES venv (``benchmarks/anchors/setup_hibayes.sh``):

    /work/peers/hibayes/bin/python benchmarks/anchors/run_hibayes.py

It copies HiBayES's ``examples/llm-as-a-judge-usecases/q2`` example (0-10 ratings of two
LLMs by three graders; the data are also in ``tests/data/hibayes/judge_q2.csv``) into a
temporary directory and runs HiBayES's own pipeline (``hibayes-load``, ``hibayes-process``,
``hibayes-model``) on two configurations, each with and without the grader x LLM interaction:

- ``default``: q2's own ``files/config.yaml`` (HiBayES's default priors: intercept N(0, 1),
  effect-coded main effects and interactions N(0, 1), first cutpoint N(-4, 0.2), cutpoint
  increments 0.3 + LogNormal(-0.5, 0.3); 4 chains x 2,000 draws after 1,000 warm-up, seed 0);
- ``wide``: the same with ``prior_main_effects_scale`` and ``prior_interaction_scale`` 10
  (near-flat effects, the cutpoint prior unchanged). evaluq's test fits this one with the same
  priors: its sum-to-zero effects (ZeroSumNormal) and HiBayES's effect coding differ in
  shape, which a scale of 10 makes immaterial (the posterior SDs are ~0.1-0.3).

Recorded per fit: posterior means and MCSEs of the comparable parameters (the cutpoints
minus the intercept, which is evaluq's cutpoints: evaluq has no intercept; the LLM, grader
and grader x LLM effects, all sum-to-zero in both), and PSIS-LOO and WAIC (arviz, on
HiBayES's pointwise log-likelihood: one rating per observation), plus arviz's LOO comparison
of with and without the interaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import arviz as az
import numpy as np
import yaml

SRC = Path(os.environ.get("HIBAYES_SRC", "/work/peers/hibayes-src"))
EXAMPLE = SRC / "examples" / "llm-as-a-judge-usecases" / "q2"
BIN = Path(sys.executable).parent
OUT = Path(__file__).with_name("hibayes_judge.json")
WIDE = {"prior_main_effects_scale": 10.0, "prior_interaction_scale": 10.0}


def _config(wide: bool) -> dict:
    cfg = yaml.safe_load((EXAMPLE / "files" / "config.yaml").read_text())
    cfg["check"] = {"checkers": ["divergences", "r_hat", "ess_bulk", "ess_tail"]}
    cfg.pop("communicate", None)
    if wide:
        for m in cfg["model"]["models"]:
            m["config"].update(WIDE)
    return cfg


def _run(workdir: Path, cfg: dict) -> Path:
    (workdir / "files").mkdir(parents=True)
    shutil.copytree(EXAMPLE / "data", workdir / "data")
    (workdir / "files" / "config.yaml").write_text(yaml.safe_dump(cfg))
    steps = [("hibayes-load", None, "load"), ("hibayes-process", "load", "process"),
             ("hibayes-model", "process", "model")]
    with open(workdir / "log.txt", "w") as log:
        for cmd, state, out in steps:
            args = [str(BIN / cmd), "--config", "files/config.yaml", "--out", f".output/{out}/"]
            if state:
                args += ["--analysis-state", f".output/{state}/"]
            subprocess.run(args, cwd=workdir, check=True, stdout=log, stderr=log,
                           stdin=subprocess.DEVNULL)
    return workdir / ".output" / "model" / "models"


def _summary(idata: az.InferenceData) -> dict:
    post = idata.posterior
    kappa = post["cutpoints"] - post["intercept"]
    out = {"cutpoints_minus_intercept": kappa}
    for name in ("LLM_effects", "grader_effects", "grader_LLM_effects"):
        if name in post:
            out[name] = post[name]
    res = {}
    for name, da in out.items():
        da = da.astype("float64")
        mcse = az.mcse(da.to_dataset(name="x"), method="mean")["x"]
        res[name] = {"dims": [d for d in da.dims if d not in ("chain", "draw")],
                     "coords": {d: [str(v) for v in da[d].values] for d in da.dims
                                if d not in ("chain", "draw")},
                     "mean": np.asarray(da.mean(("chain", "draw"))).tolist(),
                     "sd": np.asarray(da.std(("chain", "draw"))).tolist(),
                     "mcse": np.asarray(mcse).tolist()}
    loo = az.loo(idata, pointwise=True)
    waic = az.waic(idata)
    res["loo"] = {"elpd": float(loo.elpd_loo), "se": float(loo.se), "p": float(loo.p_loo),
                  "pareto_k_above_0.7": int((np.asarray(loo.pareto_k) > 0.7).sum())}
    res["waic"] = {"elpd": float(waic.elpd_waic), "se": float(waic.se),
                   "p": float(waic.p_waic)}
    res["divergences"] = int(idata.sample_stats["diverging"].sum())
    return res


def main() -> None:
    import jax
    import numpyro

    result = {"peer": "HiBayES", "repository": "https://github.com/UKGovernmentBEIS/hibayes",
              "commit": (SRC / "COMMIT").read_text().strip(),
              "versions": {"numpyro": numpyro.__version__, "jax": jax.__version__,
                           "arviz": az.__version__},
              "data": "examples/llm-as-a-judge-usecases/q2/data/data.csv "
                      "(tests/data/hibayes/judge_q2.csv)",
              "data_sha256": hashlib.sha256((EXAMPLE / "data" / "data.csv").read_bytes())
              .hexdigest(),
              "model": "ordered_logistic_model, num_classes 11, effect coding; "
                       "4 chains x 2000 draws (1000 warm-up), seed 0",
              "wide_priors": WIDE, "configs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, wide in (("default", False), ("wide", True)):
            models = _run(Path(tmp) / name, _config(wide))
            fits = {}
            for tag in ("with_interaction", "without_interaction"):
                fits[tag] = az.from_netcdf(models / f"ordered_logistic_model{tag}"
                                           / "inference_data.nc")
            entry = {tag: _summary(idata) for tag, idata in fits.items()}
            cmp = az.compare(fits, ic="loo")
            entry["loo_compare"] = {"ranking": [str(i) for i in cmp.index],
                                    "elpd_diff": float(cmp["elpd_diff"].iloc[1]),
                                    "dse": float(cmp["dse"].iloc[1])}
            result["configs"][name] = entry
            print(name, json.dumps(entry["loo_compare"]), flush=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
