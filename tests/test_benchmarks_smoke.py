"""Smoke test of the benchmarks: each one's ``--quick`` mode runs to the end in a subprocess.

Every benchmark's quick mode takes a few seconds of CPU (measured: 2-4 s each, mostly ``import
evaluq`` in the subprocess); the anchors' runs are marked slow. The anchors (BooStSa, reuben)
live in their own virtual envs built by ``benchmarks/anchors/setup_*.sh``; where one is not
installed its test is skipped with the command that installs it. ``EVALUQ_REUBEN`` names a
reuben checkout (reuben is not on the package index).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
ANCHORS = BENCH / "anchors"

# script -> extra arguments of its quick run (the anchors run in their own tests below)
QUICK = {
    "bench_bootstrap_test.py": ["--skip-anchor"],
    "bench_leaderboard.py": [],
    "bench_variance.py": [],
    "bench_zarr.py": [],            # the 0.3 GB zarr cube on 1 and 2 workers (~1 min)
    "bench_resample.py": [],
    "bench_agreement.py": [],
    "bench_bk_null_rates.py": [],
    "bench_closed_forms.py": [],
    "bench_expected_jsd.py": [],
    "bench_ranks.py": [],
    "bench_proportions.py": [],
    "bench_from_items.py": [],
    "bench_harness_logs.py": [],    # Inspect logs made offline (mock model), then read
    "bench_item_model.py": ["--skip-explicit"],   # compiles the nutpie model (~40 s loaded)
    "bench_cold_start.py": [],      # two fresh processes: a cache miss (~30 s loaded), a hit
    "bench_item_model_twopl.py": [],  # one tiny 2PL fit: compiles its nutpie model (~75 s loaded)
    "calibration_agreement.py": ["--only", "kappa"],
    "calibration_intervals.py": [],
    "bench_field_methods.py": ["--skip-anchor"],
    "bench_field_rliable.py": ["--skip-anchor"],
    "bench_ratings.py": ["--skip-anchor"],
    "bench_judges.py": [],
    "bench_report_many_models.py": [],   # 40 models: the all-pairs field methods, a report
}


def _run(script: str, *args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run([sys.executable, str(BENCH / script), "--quick", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{script} --quick failed:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --quick printed nothing"
    return done.stdout


@pytest.mark.parametrize("script", sorted(QUICK))
def test_benchmark_quick_mode_runs(script):
    out = _run(script, *QUICK[script])
    if script in ("bench_bootstrap_test.py", "bench_leaderboard.py", "bench_variance.py"):
        assert out.startswith("machine: ")
        assert "NaN" not in out
        assert "nan " not in out


@pytest.mark.slow  # two more processes with pandas and scikit-learn: about 8 s of CPU
def test_boostsa_anchor_quick():
    py = ANCHORS / ".venv-boostsa" / "bin" / "python"
    if not py.exists():
        pytest.skip("BooStSa is not installed: run `bash benchmarks/anchors/setup_boostsa.sh`")
    out = _run("bench_bootstrap_test.py")
    assert "BooStSa 0.2.13 whole process" in out
    assert "BooStSa Bootstrap.test" in out


@pytest.mark.slow
def test_reuben_anchor_quick():
    checkout = os.environ.get("EVALUQ_REUBEN")
    py = ANCHORS / ".venv-reuben" / "bin" / "python"
    if not checkout:
        pytest.skip("reuben is not on PyPI: set EVALUQ_REUBEN to a local checkout and run "
                    "`bash benchmarks/anchors/setup_reuben.sh $EVALUQ_REUBEN`")
    if not py.exists():
        pytest.skip("reuben is not installed: run "
                    "`bash benchmarks/anchors/setup_reuben.sh $EVALUQ_REUBEN`")
    out = _run("bench_leaderboard.py", "--reuben", checkout)
    assert "reuben pipeline" in out
    assert out.count("agrees within") == 2


@pytest.mark.slow
def test_rliable_deepsig_anchors_quick():
    rliable = Path(os.environ.get("EVALUQ_RLIABLE_PYTHON", "/work/peers/rliable/bin/python"))
    deepsig = Path(os.environ.get("EVALUQ_DEEPSIG_PYTHON", "/work/peers/deepsig/bin/python"))
    if not (rliable.exists() and deepsig.exists()):
        pytest.skip("rliable / deepsig are not installed: run `bash benchmarks/anchors/"
                    "setup_rliable.sh` and `bash benchmarks/anchors/setup_deepsig.sh`")
    out = _run("bench_field_rliable.py")
    assert "rliable 1.2.0 get_interval_estimates" in out
    assert "deepsig 1.2.8 aso" in out
