"""Every public name documents every parameter and shows an example (issue 12, item 6).

The public surface is everything reachable from ``evaluq.__all__`` and the public
submodules' ``__all__``: functions, classes (their ``__init__``) and their public
methods. Docstrings are parsed with :mod:`numpydoc.docscrape`, the parser the numpydoc
Sphinx extension uses, so a name counts as documented exactly when numpydoc sees it in
the ``Parameters`` section (a combined line like ``counts, q : ...`` documents both).
For a dataclass, the fields documented in the class's ``Attributes`` section count for
its generated ``__init__``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterator

import pytest
from numpydoc.docscrape import FunctionDoc, NumpyDocString

import evaluq

PUBLIC_SUBMODULES = (
    "agreement",
    "dirichlet",
    "intervals",
    "measurement_error",
    "metrics",
    "significance",
    "plots",
    "tables",
    "reporting",
    "hierarchical",
    "power",
    "ratings",
    "judges",
)

# Public functions that may go without an ``Examples`` section, each with its reason.
NO_EXAMPLE: dict[str, str] = {}


def _modules() -> list[tuple[str, object]]:
    mods: list[tuple[str, object]] = [("evaluq", evaluq)]
    for name in PUBLIC_SUBMODULES:
        mods.append((f"evaluq.{name}", importlib.import_module(f"evaluq.{name}")))
    return mods


def _public_objects() -> Iterator[tuple[str, object]]:
    seen: set[int] = set()
    for prefix, mod in _modules():
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{prefix}.{name}", obj


def _names(section: list) -> set[str]:
    names: set[str] = set()
    for param in section:
        for part in param.name.split(","):
            names.add(part.strip().lstrip("*"))
    return names


def _checked_parameters(func: Callable) -> list[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return []
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        name
        for name, p in sig.parameters.items()
        if name not in ("self", "cls") and not name.startswith("_") and p.kind not in skip
    ]


def _targets() -> Iterator[tuple[str, Callable, set[str]]]:
    """(qualified name, callable, names its docstring documents) for every public callable."""
    for qualname, obj in _public_objects():
        if inspect.isfunction(obj):
            yield qualname, obj, _names(FunctionDoc(obj)["Parameters"])
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            class_doc = NumpyDocString(inspect.getdoc(obj) or "")
            for mname, meth in vars(obj).items():
                if isinstance(meth, (staticmethod, classmethod)):
                    meth = meth.__func__
                if not inspect.isfunction(meth):
                    continue
                if mname == "__init__":
                    documented = _names(class_doc["Parameters"])
                    if dataclasses.is_dataclass(obj):
                        documented |= _names(class_doc["Attributes"])
                    yield f"{qualname}.__init__", meth, documented
                elif not mname.startswith("_"):
                    doc = NumpyDocString(inspect.getdoc(meth) or "")
                    yield f"{qualname}.{mname}", meth, _names(doc["Parameters"])


TARGETS = sorted(_targets(), key=lambda t: t[0])
PUBLIC_FUNCTIONS = sorted(
    (q, o) for q, o in _public_objects() if inspect.isfunction(o)
)


def test_the_surface_is_found() -> None:
    # The walk reaches the headline entry points; an empty walk would pass vacuously.
    names = {t[0] for t in TARGETS}
    assert "evaluq.leaderboard" in names
    assert "evaluq.dirichlet.expected_kl" in names
    assert "evaluq.HierarchicalFit.pairwise_differences" in names
    assert len(TARGETS) > 150


@pytest.mark.parametrize(("qualname", "func", "documented"), TARGETS, ids=[t[0] for t in TARGETS])
def test_every_parameter_is_documented(
    qualname: str, func: Callable, documented: set[str]
) -> None:
    missing = [p for p in _checked_parameters(func) if p not in documented]
    assert not missing, f"{qualname} does not document {missing}"


def _parameters_section(qualname: str, func: Callable) -> set[str]:
    """Names in the ``Parameters`` section that documents ``func`` (the class's, for __init__)."""
    if qualname.endswith(".__init__"):
        owner = dict(_public_objects())[qualname.removesuffix(".__init__")]
        return _names(NumpyDocString(inspect.getdoc(owner) or "")["Parameters"])
    return _names(NumpyDocString(inspect.getdoc(func) or "")["Parameters"])


@pytest.mark.parametrize(("qualname", "func", "documented"), TARGETS, ids=[t[0] for t in TARGETS])
def test_no_documented_parameter_is_missing_from_the_signature(
    qualname: str, func: Callable, documented: set[str]
) -> None:
    # The docs claim only what exists: a renamed argument must not linger in its docstring.
    names = set(inspect.signature(func).parameters)
    stale = sorted(_parameters_section(qualname, func) - names)
    assert not stale, f"{qualname} documents {stale}, which it does not take"


@pytest.mark.parametrize(
    ("qualname", "func"), PUBLIC_FUNCTIONS, ids=[q for q, _ in PUBLIC_FUNCTIONS]
)
def test_every_public_function_has_an_example(qualname: str, func: Callable) -> None:
    if qualname in NO_EXAMPLE:
        pytest.skip(NO_EXAMPLE[qualname])
    assert FunctionDoc(func)["Examples"], f"{qualname} has no Examples section"


def test_the_exceptions_are_real() -> None:
    # Every listed exception names a public function that indeed has no example.
    functions = dict(PUBLIC_FUNCTIONS)
    for qualname in NO_EXAMPLE:
        assert qualname in functions, qualname
        assert not FunctionDoc(functions[qualname])["Examples"], qualname
