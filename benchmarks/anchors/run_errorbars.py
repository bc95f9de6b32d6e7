"""Reference ICC and design effects from the ``errorbars`` package (PyPI).

Runs in errorbars' own virtual env (``python -m venv /work/peers/errorbars &&
/work/peers/errorbars/bin/pip install errorbars``), never in evaluq's. For a few clustered
data sets (epochs of items, unequal clusters of items, binary and real scores) it records
``errorbars.stats.intraclass_correlation`` and ``design_effect(icc, N / G)`` (what its CLI
reports) beside the data, so that ``tests/test_clusters.py`` recomputes evaluq's answer on the
same scores.

Usage::

    /work/peers/errorbars/bin/python benchmarks/anchors/run_errorbars.py [OUT.json]
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy as np


def datasets() -> list[dict]:
    rng = np.random.default_rng(7)
    out = []
    # epochs: 40 items x 5 epochs of 0/1 scores, item difficulty on the logit scale
    p = 1 / (1 + np.exp(-rng.normal(1.0, 1.5, 40)))
    epochs = (rng.random((40, 5)) < p[:, None]).astype(int)
    out.append({"name": "40 items x 5 epochs, binary", "scores": epochs.ravel().tolist(),
                "clusters": np.repeat(np.arange(40), 5).tolist(), "epochs_shape": [40, 5]})
    # unequal clusters: 25 passages of 1-12 questions, real scores
    sizes = rng.integers(1, 13, 25)
    effect = rng.normal(0, 0.6, 25)
    real = np.concatenate([e + rng.normal(0, 1, s) for e, s in zip(effect, sizes, strict=True)])
    out.append({"name": "25 passages of 1-12 items, real scores", "scores": real.tolist(),
                "clusters": np.repeat([f"p{i:02d}" for i in range(25)], sizes).tolist()})
    # unequal clusters, binary, weak clustering
    sizes = rng.integers(2, 30, 15)
    q = 1 / (1 + np.exp(-rng.normal(0.5, 0.4, 15)))
    binary = np.concatenate([(rng.random(s) < qi).astype(int)
                             for qi, s in zip(q, sizes, strict=True)])
    out.append({"name": "15 tasks of 2-29 items, binary", "scores": binary.tolist(),
                "clusters": np.repeat(np.arange(15), sizes).tolist()})
    return out


def main(out: str) -> None:
    from errorbars.stats import design_effect, intraclass_correlation

    runs = []
    for data in datasets():
        scores, clusters = np.asarray(data["scores"], float), np.asarray(data["clusters"])
        icc = intraclass_correlation(scores, clusters)
        n_clusters = len(set(clusters.tolist()))
        data.update(icc=icc, design_effect=design_effect(icc, len(scores) / n_clusters))
        runs.append(data)
        print(data["name"], round(icc, 6), round(data["design_effect"], 6), file=sys.stderr)
    record = {"peer": "errorbars", "functions": ["errorbars.stats.intraclass_correlation",
                                                 "errorbars.stats.design_effect"],
              "version": metadata.version("errorbars"), "python": platform.python_version(),
              "numpy": np.__version__, "datasets": runs}
    Path(out).write_text(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         str(Path(__file__).with_name("errorbars_clusters.json")))
