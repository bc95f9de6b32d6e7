"""The on-disk cache of nutpie's compiled model (``evaluq._nutpie_cache``, issue 17 item 7).

A second process fitting the same model structure loads the compiled cfuncs (a cache hit,
recorded in ``fit.config["compile_cache"]``) and gives the same draws, bit for bit, as the
first process and as nutpie's own ``compile_pymc_model``; a damaged entry is rebuilt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluq._nutpie_cache import CACHE_ENV, GENERATED_SRC, _drop_entry, cache_dir

ROOT = Path(__file__).resolve().parents[2]

# one fresh process: fit a small paired cube with the cache; with "stock", also sample the
# same model compiled by nutpie itself (no cache) and compare the raw draws
CHILD = """
import hashlib, json, sys, warnings
import numpy as np
sys.path.insert(0, {here!r})
from paired_sim import Setting, shared_cube
import evaluq as eq
from evaluq.hierarchical import _fit
warnings.simplefilter("ignore")
cube = shared_cube(np.random.default_rng(3), Setting(n_models=3, n_languages=6, n_seeds=3,
                                                     n_boot=40, rho=0.5))[0]
fit = eq.fit_hierarchical(cube, draws=60, tune=60, chains=2, rng=4, retry=False)
out = {{"cache": fit.config["compile_cache"], "skipped": fit.config["compile_graph_skipped"],
        "digest": hashlib.sha256(fit.posterior["mu"].values.tobytes()
                                 + fit.posterior["theta"].values.tobytes()).hexdigest()}}
if sys.argv[1] == "stock":
    import nutpie
    from evaluq.hierarchical._data import cube_statistics
    from evaluq.hierarchical._model import build_model, model_inputs, resolve_priors
    data = cube_statistics(cube, "auto", None)
    inputs = model_inputs(data, resolve_priors(data, None), "crossed")
    pm_model = build_model(data, "crossed")
    stock = nutpie.compile_pymc_model(pm_model, backend="numba",
                                      var_names=[v.name for v in pm_model.free_RVs])
    ours, _, _ = _fit.compiled_nutpie(data, "crossed")
    run = {{"draws": 60, "tune": 60, "chains": 2, "seed": 11, "target_accept": 0.8}}
    raws = [_fit._sample_nutpie(c, inputs, run, False) for c in (stock, ours)]
    out["stock_equal"] = all(
        np.array_equal(raws[0].posterior[v].values, raws[1].posterior[v].values)
        for v in raws[0].posterior.data_vars)
    out["n_vars"] = len(raws[0].posterior.data_vars)
print(json.dumps(out))
"""


def _child(cache: Path, mode: str = "") -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    env[CACHE_ENV] = str(cache)
    env["TMPDIR"] = str(cache.parent / "tmp")   # what PyTensor leaves there is counted
    (cache.parent / "tmp").mkdir(exist_ok=True)
    env.pop("PYTHONWARNINGS", None)
    code = CHILD.format(here=str(ROOT / "tests" / "hierarchical"))
    done = subprocess.run([sys.executable, "-c", code, mode or "plain"], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # PyTensor's generated source went to the cache, not one new file per function in the
    # system temporary directory (75 per item-model fit before, never removed)
    assert list((cache.parent / "tmp").iterdir()) == []
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv(CACHE_ENV)
    import pytensor

    assert cache_dir() == Path(pytensor.config.base_compiledir) / "evaluq-nutpie"


def test_drop_entry_removes_only_that_entry(tmp_path: Path) -> None:
    for name in ("f-abc-logp.py312.nbi", "f-abc-logp.py312.1.nbc", "f-abd-logp.py312.nbi"):
        (tmp_path / name).write_bytes(b"x")
    _drop_entry(tmp_path, "abc-logp")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f-abd-logp.py312.nbi"]


@pytest.mark.slow  # three fresh processes, two of them compile (about 30 s each when loaded)
def test_second_process_loads_the_cache_with_identical_draws(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _child(cache, "stock")
    assert first["cache"] == "miss"
    assert first["stock_equal"] is True    # nutpie's own compile_pymc_model: same draws
    assert first["n_vars"] >= 4
    assert {p.suffix for p in cache.iterdir() if p.is_file()} == {".nbi", ".nbc", ".json"}
    assert any((cache / GENERATED_SRC).glob("*.py"))
    second = _child(cache)
    assert second["cache"] == "hit"
    assert second["skipped"] is True      # the manifest: PyTensor's functions not even built
    assert second["digest"] == first["digest"]
    # damage every file of the entry: the next process rebuilds it and says so
    for path in filter(Path.is_file, cache.iterdir()):
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 3])
    third = _child(cache)
    assert third["cache"] == "miss"
    assert third["skipped"] is False
    assert third["digest"] == first["digest"]
    print(f"CACHE first {first['cache']}, second {second['cache']}, after damage "
          f"{third['cache']}; draws identical and equal to nutpie's own compilation")


@pytest.mark.slow
def test_changed_nutpie_internals_fall_back_to_nutpie(monkeypatch, tmp_path):
    """nutpie is not pinned: if its private steps that the cache drives change, the model is
    still compiled (by nutpie's public function), without the cache, saying why."""
    import pymc as pm

    from evaluq import _nutpie_cache

    def changed(*args: Any, **kwargs: Any) -> Any:
        raise AttributeError("module 'nutpie.compile_pymc' has no attribute '_make_functions'")

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(_nutpie_cache, "_compile_cached", changed)
    with pm.Model() as model:
        pm.Normal("x")
    compiled, info = _nutpie_cache.compile_pymc_model(model)
    assert info["cache"] == "off"
    assert "_make_functions" in info["reason"]
    assert compiled.n_dim == 1
