"""Module paths that moved into sub-packages (issue 31): the old path imports for one release.

``import evaluq.demsar`` (or ``from evaluq.demsar import friedman_test``) finds no file: the
finder below, last on :data:`sys.meta_path`, sees the old name in :data:`MOVED`, warns through
:func:`evaluq._deprecation.moved_module` and hands back the new module itself (``sys.modules``
holds it under both names), so the objects are the same. No file is left at the old path, and
``import evaluq`` pays only for this table (standard library only).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, cast

from evaluq._deprecation import moved_module

if TYPE_CHECKING:
    from importlib.abc import Loader  # not imported at run time: a loader by its methods

MOVED: dict[str, str] = {
    "evaluq.rliable_methods": "evaluq.field.rliable",
    "evaluq.almost_stochastic_order": "evaluq.field.stochastic_order",
    "evaluq.demsar": "evaluq.field.demsar",
    "evaluq.bayescomp": "evaluq.field.bayescomp",
    "evaluq.proportions": "evaluq.small_samples.proportions",
    "evaluq.pass_k": "evaluq.small_samples.pass_k",
    "evaluq.clusters": "evaluq.small_samples.clusters",
    "evaluq.paired_bayes": "evaluq.small_samples.paired_bayes",
}
"""Old module path -> where it lives now (remove an entry one release after its move)."""


class MovedModuleFinder:
    """A meta path finder and loader of the old paths in :data:`MOVED`."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        return ModuleSpec(fullname, cast("Loader", self)) if fullname in MOVED else None

    def create_module(self, spec: ModuleSpec) -> None:
        return None     # a placeholder module, replaced in sys.modules by exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        moved_module(old, MOVED[old], stacklevel=2)  # blames the import line
        # the import system returns what sys.modules holds under the old name once this returns
        sys.modules[old] = importlib.import_module(MOVED[old])


def install() -> None:
    """Put the finder last on :data:`sys.meta_path` (once): asked only about names that no
    file provides."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
