"""The code's structure: no private names across domain modules; ARCHITECTURE.md maps them all."""

from __future__ import annotations

import ast
import io
import re
import tokenize
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


def architecture_rows() -> dict[str, int]:
    """Every module or package named in the first cell of a row of ARCHITECTURE.md, with the
    layer of the table it is in (``### Layer N: ...``); a name in two rows raises."""
    layers: dict[str, int] = {}
    layer = None
    for line in ARCHITECTURE.read_text().splitlines():
        heading = re.match(r"### Layer (\d+):", line)
        if heading:
            layer = int(heading.group(1))
        elif line.startswith("| `") and layer is not None:
            first_cell = line.split("|")[1]
            for name in re.findall(r"`([\w/]+(?:\.py)?)`", first_cell):
                assert name not in layers, f"ARCHITECTURE.md has two rows for {name}"
                layers[name] = layer
    return layers


def module_layers() -> dict[str, int]:
    """The layer of every module: its own row, else its package's row (``pkg/``); a package's
    ``__init__`` is the package. The top-level ``__init__`` is the lazy table (no layer)."""
    rows = architecture_rows()
    found: dict[str, int] = {}
    missing = []
    for path in _modules():
        rel = path.relative_to(SRC)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        package = f"{rel.parts[0]}/" if len(rel.parts) > 1 else None
        key = next((k for k in (str(rel), package) if k in rows), None)
        if key is None:
            missing.append(str(rel))
        else:
            found[_dotted(path).removesuffix(".__init__")] = rows[key]
    assert not missing, f"ARCHITECTURE.md does not map these modules: {missing}"
    return found


def test_every_module_is_in_the_architecture_map():
    """One row per module (or its package), each in the table of its layer (issue 31)."""
    layers = module_layers()
    assert set(layers.values()) == set(range(6)), sorted(set(layers.values()))
    stale = [n for n in architecture_rows() if not (SRC / n).exists()]
    assert not stale, f"ARCHITECTURE.md names modules that do not exist: {stale}"


def test_no_import_runs_up_a_layer():
    """A module imports only from its own layer or below (ARCHITECTURE.md's layers)."""
    layers = module_layers()
    upward = sorted(f"{source} (layer {layers[source]}) imports {target} (layer {layers[target]})"
                    for source, targets in import_graph().items() if source in layers
                    for target in targets if target in layers and layers[target] > layers[source])
    assert not upward, upward


# --- functions a reader can hold in their head ----------------------------------------------------

FUNCTION_BUDGET = 60
"""Code lines (docstrings, comments and blank lines excluded) a function or method may have."""

OVER_BUDGET: dict[str, str] = {}
"""Functions still over :data:`FUNCTION_BUDGET`, each with why it is not split yet."""

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _code_lines(text: str) -> set[int]:
    """Lines holding code: a token other than a comment, a newline or an indent."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (*_DEFS, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def function_sizes(text: str) -> dict[str, int]:
    """Code lines of every function and method (by qualified name; a nested function counts
    in its own entry and in its parent's)."""
    tree = ast.parse(text)
    code = _code_lines(text) - _docstring_lines(tree)
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = f"{prefix}{child.name}" if isinstance(child, (*_DEFS, ast.ClassDef)) else None
            if isinstance(child, _DEFS):
                span = range(child.lineno, (child.end_lineno or child.lineno) + 1)
                sizes[name or ""] = sum(1 for line in span if line in code)
            visit(child, f"{name}." if name else prefix)

    visit(tree, "")
    return sizes


def test_function_sizes_counts_code_lines_only():
    text = (
        "def f(x):\n"
        "    \"\"\"Doc.\n\n    More doc.\n    \"\"\"\n"
        "    # a comment\n"
        "\n"
        "    y = (x +\n"
        "         1)\n"
        "    return y\n"
        "\n"
        "class C:\n"
        "    def m(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "        return inner()\n"
    )
    assert function_sizes(text) == {"f": 4, "C.m": 4, "C.m.inner": 2}


def test_no_function_over_the_line_budget():
    """Long functions become short pipelines of named steps (issue 9, item 8)."""
    over = {}
    for path in _modules():
        rel = str(path.relative_to(SRC))
        for name, size in function_sizes(path.read_text()).items():
            if size > FUNCTION_BUDGET and f"{rel}::{name}" not in OVER_BUDGET:
                over[f"{rel}::{name}"] = size
    assert not over, (f"functions over {FUNCTION_BUDGET} code lines (split them into named "
                      f"steps): {over}")


def test_the_over_budget_list_names_existing_functions():
    known = {f"{p.relative_to(SRC)}::{name}" for p in _modules()
             for name in function_sizes(p.read_text())}
    assert not set(OVER_BUDGET) - known, sorted(set(OVER_BUDGET) - known)


# --- no import cycles ----------------------------------------------------------------------------

KNOWN_HIERARCHICAL_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Import cycles allowed for now: none (the hierarchical cycle of issue 23 is gone)."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, *, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at module level or inside functions; the ones under
    ``if TYPE_CHECKING:`` only when ``type_checking``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """evaluq's modules and the evaluq modules each imports (function-level imports count, and
    so do imports under ``if TYPE_CHECKING:``, issue 31).

    A type-checking import runs for no one, but it is still a seam: a module that types its
    argument with a class from a module that imports it back needs that module (the item
    model's check modules typed with ``ItemFit``, which imports them). In the package
    ``__init__`` those imports mirror the lazy table, so ``import evaluq`` inside the package
    reaches every public module, as ``evaluq.x`` attribute access would load it.
    """
    paths = {_dotted(p).removesuffix(".__init__"): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text()), type_checking=True):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
                continue
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            module = (f"{base}.{node.module}" if node.module else base) if node.level \
                else (node.module or "")
            for alias in node.names:
                targets.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths
                            else module)
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def test_import_cycles_finds_a_cycle_through_function_level_imports():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [frozenset({"a", "b", "c"})]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_counts_type_checking_imports():
    """An import under ``if TYPE_CHECKING:`` is an edge of the graph (issue 31)."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a.b\n")
    found = _imports(tree, type_checking=True)
    assert [alias.name for node in found for alias in node.names] == ["TYPE_CHECKING", "a.b"]
    graph = import_graph()
    assert "evaluq.item_model._fit" not in graph["evaluq.item_model._criticism"]


def test_no_import_cycle_among_evaluq_modules():
    """No two modules need each other, not even through an import inside a function (issue 23):
    a cycle is a seam that the next capability copies."""
    cycles = [c for c in import_cycles(import_graph()) if c not in KNOWN_HIERARCHICAL_CYCLES]
    assert not cycles, [sorted(c) for c in cycles]


def test_no_import_evaluq_inside_the_package():
    """Inside the package, import the module that defines a name, never ``evaluq`` itself (its
    lazy table reaches every module: a static cycle through all of them)."""
    offenders = []
    for path in _modules():
        if path == SRC / "__init__.py":
            continue
        rel = str(path.relative_to(SRC))
        for node in _imports(ast.parse(path.read_text()), type_checking=True):
            if isinstance(node, ast.Import) and any(a.name == "evaluq" for a in node.names):
                offenders.append(f"{rel}:{node.lineno}")
    assert not set(offenders) - KNOWN_IMPORT_EVALUQ, offenders


KNOWN_IMPORT_EVALUQ: frozenset[str] = frozenset()
"""``import evaluq`` lines allowed inside the package: none."""


# --- one warning hierarchy ------------------------------------------------------------------------

KNOWN_HIERARCHICAL_WARNINGS: frozenset[str] = frozenset()
"""Warning classes allowed not to be EvaluqWarnings: none."""


def test_every_warning_class_is_an_evaluq_warning():
    """``filterwarnings("ignore", category=eq.EvaluqWarning)`` silences every evaluq warning."""
    warnings_defined: dict[str, list[str]] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Warning"):
                bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
                warnings_defined[f"{path.relative_to(SRC)}::{node.name}"] = bases
    names = {key.split("::")[1] for key in warnings_defined}
    offenders = [key for key, bases in warnings_defined.items()
                 if key.split("::")[1] != "EvaluqWarning"
                 and not any(b == "EvaluqWarning" or b in names for b in bases)
                 and key not in KNOWN_HIERARCHICAL_WARNINGS]
    assert not offenders, offenders
    import evaluq._imhof
    import evaluq.metrics._common
    from evaluq.errors import EvaluqWarning

    assert issubclass(evaluq._imhof.ImhofAccuracyWarning, EvaluqWarning)
    assert issubclass(evaluq._imhof.ImhofAccuracyWarning, RuntimeWarning)
    assert issubclass(evaluq.metrics._common.UndefinedMetricWarning, EvaluqWarning)
