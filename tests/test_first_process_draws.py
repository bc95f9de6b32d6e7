"""Same rng, same draws in the first process on a machine and in every later one (issue 34).

Each process below starts with its own PyTensor compile directory and evaluq nutpie cache
(``PYTENSOR_FLAGS=base_compiledir=...``, ``EVALUQ_CACHE_DIR``): one starts empty (the first
process ever on a machine: PyTensor compiles every kernel, evaluq compiles and writes the
cfuncs), one reuses the first one's directories once it is done (every later process: the
cfuncs loaded from the cache, PyTensor compiling nothing; hierarchical skips PyTensor's
functions through its manifest), one has a warm PyTensor directory and an empty evaluq
cache (evaluq upgraded: the cfuncs compiled against PyTensor's cached kernels). Every
process must print the same bytes for every stored draw of a small ``fit_items`` (the
binomial family, and the 2PL on its marginal form, whose fused kernel is evaluq's own numba
code: each process also gets its own ``NUMBA_CACHE_DIR``) and a small ``fit_hierarchical``.

Before the cfuncs were made self-contained (``evaluq._nutpie_cache._self_contained``) the
first process differed from the later ones in the last bits of the gradient (1e-15),
which NUTS turned into draws differing by up to 7e-13 after 100 iterations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import hashlib, json, warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import evaluq as eq
    from evaluq.item_model import _marginal

    def digest(ds):
        out = {}
        for name in sorted(ds.data_vars):
            values = np.ascontiguousarray(np.asarray(ds[name].values, dtype=np.float64))
            out[name] = hashlib.sha256(values.tobytes()).hexdigest()
        return out

    table = eq.simulate_items(n_models=3, n_items=40, n_epochs=2, rng=1)
    items = eq.fit_items(table, model="model", item="item", score="score", epoch="epoch",
                         family="binomial", draws=50, tune=50, chains=2, rng=7)
    twopl = eq.fit_items(table, model="model", item="item", score="score", epoch="epoch",
                         discrimination=True, draws=50, tune=50, chains=2, rng=7)
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, rng=2)
    hier = eq.fit_hierarchical(cube, draws=50, tune=50, chains=2, rng=7, sampler="nutpie",
                               retry=False)
    print(json.dumps({"items": digest(items.posterior), "2pl": digest(twopl.posterior),
                      "hierarchical": digest(hier.idata["posterior"].to_dataset()),
                      "alpha": float(items.posterior["alpha"].values.ravel()[-1])}))
""")


def _env(compiledir: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    env["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, f"base_compiledir={compiledir}") if f)
    env["EVALUQ_CACHE_DIR"] = str(cache)
    env["NUMBA_CACHE_DIR"] = str(compiledir / "numba")      # evaluq's own numba kernels
    return env


def _start(script: Path, compiledir: Path, cache: Path) -> subprocess.Popen[str]:
    compiledir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, str(script)], env=_env(compiledir, cache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-3000:]
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_first_process_draws_equal_later_ones(tmp_path: Path) -> None:
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT)
    # the first process (its own empty directories; one, not two: a cold start compiles
    # every model, the suite's costliest step)
    results = {"first": _result(_start(script, tmp_path / "pt0", tmp_path / "cache0"))}
    # then, at once, the later processes: PyTensor's kernels warm and evaluq's cache empty
    # (a copy of the first one's kernels) ...
    shutil.copytree(tmp_path / "pt0", tmp_path / "pt1")
    upgraded = _start(script, tmp_path / "pt1", tmp_path / "cache1")
    # ... and the first one's caches warm
    later = _start(script, tmp_path / "pt0", tmp_path / "cache0")
    results["later"] = _result(later)
    results["pytensor warm, evaluq cold"] = _result(upgraded)
    assert any((tmp_path / "cache0").glob("manifest-*.json"))   # hierarchical's manifest
    assert any((tmp_path / "cache0").glob("*logp*.nbc"))
    reference = results["first"]
    assert reference["items"]
    assert reference["hierarchical"]
    assert reference["2pl"]
    for name, result in results.items():
        assert result == reference, f"{name} differs from the first process: {result}"
