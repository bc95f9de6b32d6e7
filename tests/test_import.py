"""``import evaluq`` is lazy (PEP 562) and complete: every public name resolves, heavy
dependencies stay out of ``sys.modules``, and ``evaluq --help`` does not load the analyses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import evaluq

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("pymc", "pytensor", "arviz", "arviz_base", "arviz_stats", "matplotlib", "dask", "nutpie")


def _modules_after(code: str) -> set[str]:
    """The modules loaded by ``code`` in a fresh interpreter running this worktree's evaluq."""
    env = {**os.environ, "PYTHONPATH": SRC}
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_evaluq_loads_no_heavy_dependency_and_no_analysis():
    loaded = _modules_after("import evaluq")
    assert "evaluq" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    # the analyses (and numpy with them) load on first use only
    assert "evaluq.dirichlet" not in loaded
    assert "numpy" not in loaded


def test_whole_public_api_loads_no_heavy_dependency():
    loaded = _modules_after("import evaluq\nfor n in evaluq.__all__: getattr(evaluq, n)")
    assert "evaluq.dirichlet" in loaded
    assert "xarray" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def test_cli_help_does_not_load_the_analyses():
    loaded = _modules_after(
        "from evaluq.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert "numpy" not in loaded
    assert "evaluq.cli" in loaded


def test_every_name_in_all_resolves_and_from_import_works():
    assert len(set(evaluq.__all__)) == len(evaluq.__all__)
    for name in evaluq.__all__:
        assert getattr(evaluq, name) is not None, name
    from evaluq import Experiment, aggregate, dirichlet, variance_components

    assert callable(aggregate)
    assert callable(variance_components)
    assert isinstance(dirichlet, types.ModuleType)
    assert Experiment.__module__.startswith("evaluq.")
    namespace: dict[str, object] = {}
    exec("from evaluq import *", namespace)
    assert set(evaluq.__all__) <= set(namespace)


def test_dir_lists_every_public_name():
    listed = dir(evaluq)
    assert set(evaluq.__all__) <= set(listed)
    assert "experiment" in listed
    assert "significance" in listed


def test_public_api_is_what_it_was_before_the_lazy_loading():
    # the names exported eagerly before the lazy loading (nothing dropped)
    before = {
        "BootstrapTestResult", "CubeError", "Experiment", "ExperimentResult", "NotFittedError",
        "__version__", "aggregate", "agreement", "bootstrap_test", "dirichlet",
        "from_arrays", "from_long", "from_predictions", "from_summary", "higher_is_better",
        "intervals", "is_summary", "leaderboard", "measurement_error", "metrics", "open_cube",
        "pairwise_by_language", "pairwise_differences", "pairwise_table", "rank_distribution",
        "read_table", "resample", "significance_groups", "simulate_cube", "validate",
        "variance_components", "variance_table",
    }
    assert before <= set(evaluq.__all__)
    # ResamplePlan is deprecated (resample(lazy=True) returns a Dataset): importable, not listed
    with pytest.warns(DeprecationWarning, match="ResamplePlan"):
        assert evaluq.ResamplePlan is not None
    assert evaluq.aggregate.__module__ == "evaluq.aggregation"
    assert evaluq.resample.__module__ == "evaluq.resampling"


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = evaluq.no_such_name  # type: ignore[attr-defined]


def test_aggregate_stays_the_function_whatever_is_imported_first():
    # the module is evaluq.aggregation: importing it never shadows the function
    code = (
        "import evaluq.ranks, evaluq.aggregation as m\n"
        "import evaluq\n"
        "assert callable(evaluq.aggregate), evaluq.aggregate\n"
        "assert evaluq.aggregate.__name__ == 'aggregate'\n"
        "from evaluq import aggregate\n"
        "assert callable(aggregate)\n"
    )
    _modules_after(code)  # raises CalledProcessError when an assertion fails


def test_experiment_moved_next_to_significance_and_old_paths_work():
    sys.modules.pop("evaluq.experiment", None)
    vars(evaluq).pop("experiment", None)
    with pytest.warns(DeprecationWarning, match="evaluq.experiment moved"):
        import evaluq.experiment as old_module
    from evaluq.significance import Experiment as from_significance
    from evaluq.significance.experiment import Experiment, ExperimentResult

    assert evaluq.Experiment is Experiment
    assert old_module.Experiment is Experiment
    assert old_module.ExperimentResult is ExperimentResult
    assert from_significance is Experiment
    assert Experiment.__module__ == "evaluq.significance.experiment"


def test_submodules_stay_reachable_as_attributes():
    for name in ("cube", "io", "pairwise", "ranks", "resampling", "variance", "significance"):
        module = getattr(evaluq, name)
        assert isinstance(module, types.ModuleType)
        assert module.__name__ == f"evaluq.{name}"
        assert name not in evaluq.__all__


def test_the_stub_is_the_one_list_of_public_names():
    """``__init__.pyi`` is what type checkers read and what ``import evaluq`` loads from: every
    aliased import is in ``__all__`` and resolves to the object the stub names."""
    import ast
    import importlib

    stub = ast.parse((Path(evaluq.__file__).parent / "__init__.pyi").read_text())
    public = set()
    for node in stub.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname == alias.name:
                    public.add(alias.name)
                    module = importlib.import_module(str(node.module))
                    assert getattr(evaluq, alias.name) is getattr(module, alias.name)
    assert public == set(evaluq.__all__)
    source = (Path(evaluq.__file__)).read_text()
    assert len(source.splitlines()) <= 150
