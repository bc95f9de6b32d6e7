"""Reference numbers from py-irt (1PL and 2PL by variational inference) on a seeded 2PL data
set, for ``tests/test_item_model_twopl.py::test_pyirt_anchor``.

The data are simulated here with numpy (seeded) and written into the JSON beside py-irt's
estimates, so the evaluq test fits exactly the same responses:

    logit P(y_mi = 1) = a_i (theta_m - b_i),  theta_m ~ N(0.5, 1),  b_i ~ N(0, 1.5^2),
    log a_i ~ N(0, 0.5^2),  20 models x 300 items, one binary response each.

py-irt's convention is the same as evaluq's (logit = a (ability - difficulty)): no sign flip.
Both models are run with py-irt's ``hierarchical`` priors (Normal / Gamma hyperpriors on the
locations and precisions of abilities, difficulties and log discriminations) and also its
``vague`` ones; ``pyro.set_rng_seed`` makes the run repeatable.

Usage (in the peer's venv, see setup_pyirt.sh):
    python benchmarks/anchors/run_pyirt.py [--epochs 3000] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

SEED = 2026
N_MODELS, N_ITEMS = 20, 300


def simulate(seed: int = SEED) -> dict:
    gen = np.random.default_rng(seed)
    theta = gen.normal(0.5, 1.0, N_MODELS)
    b = gen.normal(0.0, 1.5, N_ITEMS)
    a = np.exp(gen.normal(0.0, 0.5, N_ITEMS))
    p = 1.0 / (1.0 + np.exp(-a * (theta[:, None] - b)))
    y = (gen.random((N_MODELS, N_ITEMS)) < p).astype(int)
    return {"theta": theta.tolist(), "difficulty": b.tolist(), "discrimination": a.tolist(),
            "responses": ["".join(map(str, row)) for row in y]}


def fit_pyirt(responses: list[str], model_type: str, priors: str, epochs: int,
              seed: int) -> dict:
    import pandas as pd
    import pyro
    from py_irt.config import IrtConfig
    from py_irt.dataset import Dataset
    from py_irt.training import IrtModelTrainer

    y = np.array([[int(c) for c in row] for row in responses])
    df = pd.DataFrame(y, columns=[f"i{j:03d}" for j in range(y.shape[1])])
    df.insert(0, "subject", [f"m{m:02d}" for m in range(y.shape[0])])
    dataset = Dataset.from_pandas(df, subject_column="subject",
                                  item_columns=list(df.columns[1:]))
    pyro.set_rng_seed(seed)
    config = IrtConfig(model_type=model_type, priors=priors, epochs=epochs, log_every=epochs)
    trainer = IrtModelTrainer(data_path=Path("unused"), config=config, dataset=dataset,
                              verbose=False)
    start = time.perf_counter()
    trainer.train(epochs=epochs, device="cpu")
    params = trainer.last_params
    items = [params["item_ids"][k] for k in range(len(params["item_ids"]))]
    subjects = [params["subject_ids"][k] for k in range(len(params["subject_ids"]))]
    item_order = np.argsort([int(s[1:]) for s in items])
    subject_order = np.argsort([int(s[1:]) for s in subjects])
    out = {"seconds": round(time.perf_counter() - start, 2), "epochs": epochs,
           "priors": priors,
           "ability": np.asarray(params["ability"])[subject_order].tolist(),
           "difficulty": np.asarray(params["diff"])[item_order].tolist()}
    if "disc" in params:
        out["discrimination"] = np.asarray(params["disc"])[item_order].tolist()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3000)
    parser.add_argument("--out", default=str(Path(__file__).with_name("pyirt_reference.json")))
    args = parser.parse_args()
    data = simulate()
    fits = {}
    for model_type in ("1pl", "2pl"):
        for priors in ("hierarchical", "vague"):
            fits[f"{model_type}_{priors}"] = fit_pyirt(data["responses"], model_type, priors,
                                                       args.epochs, SEED)
            truth = np.asarray(data["difficulty"])
            est = np.asarray(fits[f"{model_type}_{priors}"]["difficulty"])
            print(f"py-irt {model_type} {priors}: corr(difficulty, truth) = "
                  f"{np.corrcoef(truth, est)[0, 1]:.4f} "
                  f"({fits[f'{model_type}_{priors}']['seconds']} s)")
    out = {"peer": "py-irt", "versions": {"py-irt": version("py-irt"),
                                          "pyro-ppl": version("pyro-ppl"),
                                          "torch": version("torch"),
                                          "python": platform.python_version()},
           "script": "benchmarks/anchors/run_pyirt.py", "seed": SEED,
           "n_models": N_MODELS, "n_items": N_ITEMS,
           "simulation": "logit P = a_i (theta_m - b_i); theta ~ N(0.5, 1), b ~ N(0, 1.5^2), "
                         "log a ~ N(0, 0.5^2); one binary response per model and item",
           "truth": {k: data[k] for k in ("theta", "difficulty", "discrimination")},
           "responses": data["responses"], "fits": fits}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
