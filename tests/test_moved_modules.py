"""Old module paths keep importing for one release, with a DeprecationWarning (issue 31, item 4).

The modules moved into sub-packages leave no file behind (a file would still be a top-level
module): ``evaluq._moved`` maps each old path to the new module, which it hands back itself.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evaluq
from evaluq._moved import MOVED

SRC = Path(evaluq.__file__).resolve().parent


def _forget(name: str) -> None:
    """Drop the old name from ``sys.modules`` and ``evaluq``'s namespace, so the next import
    goes through the finder again (the new module stays loaded)."""
    sys.modules.pop(name, None)
    vars(evaluq).pop(name.rpartition(".")[2], None)


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_old_path_imports_the_new_module_with_a_warning(old, new):
    _forget(old)
    message = f"{old} moved to {new}; the old path goes in the next release"
    with pytest.warns(DeprecationWarning, match=message.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new
    assert sys.modules[old] is module


@pytest.mark.parametrize("old", sorted(MOVED))
def test_no_file_is_left_at_the_old_path(old):
    relative = Path(*old.split(".")[1:])
    assert not SRC.joinpath(relative).with_suffix(".py").exists()
    assert not (SRC / relative / "__init__.py").exists()
    assert importlib.import_module(MOVED[old])     # the table names modules that exist


def test_from_old_path_import_gives_the_same_objects():
    _forget("evaluq.rliable_methods")
    with pytest.warns(DeprecationWarning, match="evaluq.rliable_methods moved"):
        from evaluq.rliable_methods import interval_estimates
    assert interval_estimates is evaluq.interval_estimates
    _forget("evaluq.almost_stochastic_order")
    with pytest.warns(DeprecationWarning, match="evaluq.almost_stochastic_order moved"):
        from evaluq.almost_stochastic_order import ASOResult, aso
    assert aso is evaluq.aso
    assert ASOResult is evaluq.ASOResult


def test_top_level_names_do_not_warn():
    """``eq.demsar`` / ``eq.bayescomp`` are the submodules, reached without the old path."""
    import evaluq.field.bayescomp
    import evaluq.field.demsar

    assert evaluq.demsar is evaluq.field.demsar
    assert evaluq.bayescomp is evaluq.field.bayescomp
    assert evaluq.friedman_test is evaluq.field.demsar.friedman_test


def test_the_warning_points_at_the_import_line():
    """Outside the test's filters: Python's default filter shows a DeprecationWarning raised
    in ``__main__``, blamed on the user's import line, not on the import machinery."""
    env = {**os.environ, "PYTHONPATH": str(SRC.parent)}
    env.pop("PYTHONWARNINGS", None)
    result = subprocess.run([sys.executable, "-c", "import evaluq.demsar"],
                            capture_output=True, text=True, env=env, check=True)
    assert "<string>:1: DeprecationWarning: evaluq.demsar moved to evaluq.field.demsar" \
        in result.stderr


def test_unknown_module_still_fails():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("evaluq.no_such_module")


def test_the_attribute_of_a_moved_module_warns_too():
    """``eq.experiment`` (reachable, not in ``__all__``) is the old path of
    ``evaluq.significance.experiment``: the attribute warns as the import does."""
    _forget("evaluq.experiment")
    with pytest.warns(DeprecationWarning, match="evaluq.experiment moved"):
        module = evaluq.experiment
    assert module is importlib.import_module("evaluq.significance.experiment")
    assert "experiment" in dir(evaluq)
    assert "experiment" not in evaluq.__all__


PUBLIC_TOP_LEVEL_BUDGET = 30
"""Issue 31: at most 30 public top-level modules (files and sub-packages not named ``_*``)."""


def test_the_top_level_stays_small():
    files = {p.stem for p in SRC.glob("*.py") if not p.name.startswith("_")}
    packages = {p.name for p in SRC.iterdir()
                if p.is_dir() and not p.name.startswith("_") and (p / "__init__.py").exists()}
    public = files | packages
    assert len(public) <= PUBLIC_TOP_LEVEL_BUDGET, sorted(public)
    assert not {old.split(".")[1] for old in MOVED} & public     # the old paths are no files


def test_the_api_docs_list_every_moved_path():
    """docs/api.rst's table "Moved modules" is ``MOVED``, row for row."""
    import re

    api = (SRC.parents[1] / "docs" / "api.rst").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^``(evaluq\.[\w.]+)``\s+``(evaluq\.[\w.]+)``$", api, re.MULTILINE))
    assert rows == MOVED
