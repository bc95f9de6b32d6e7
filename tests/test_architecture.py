"""The code's structure: no private names across domain modules; ARCHITECTURE.md maps them all."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "evaluq"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "ARCHITECTURE.md"


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts)


def _top(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_name_from_a_sibling_domain_module(path):
    """Shared helpers live in private modules (``_kernels``, ``_draws``, ...), never in a
    domain module whose private names another domain module imports."""
    here = _dotted(path)
    offenders = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("evaluq."):
            continue
        module = node.module or ""
        if module.split(".")[-1].startswith("_") or _top(module) == _top(here):
            continue
        offenders += [f"{module}.{alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert not offenders, f"{here} imports private names of sibling modules: {offenders}"


def test_every_module_is_in_the_architecture_map():
    text = ARCHITECTURE.read_text()
    named = set(re.findall(r"`([\w/]+(?:\.py)?)`", text))
    missing = []
    for path in _modules():
        rel = path.relative_to(SRC)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        package = f"{rel.parts[0]}/" if len(rel.parts) > 1 else None
        if str(rel) in named or rel.name in named or (package and package in named):
            continue
        missing.append(str(rel))
    assert not missing, f"ARCHITECTURE.md does not map these modules: {missing}"
