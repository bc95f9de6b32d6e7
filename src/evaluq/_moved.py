"""Module paths that moved into sub-packages (issue 31): the old path imports for one release.

``import evaluq.demsar`` (or ``from evaluq.demsar import friedman_test``) finds no file: the
finder below, last on :data:`sys.meta_path`, sees the old name in :data:`MOVED`, warns through
:func:`evaluq._deprecation.moved_module` and hands back the new module itself (``sys.modules``
holds it under both names), so the objects are the same. No file is left at the old path, and
``import evaluq`` pays only for this table (standard library only).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType
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
    "evaluq.experiment": "evaluq.significance.experiment",
}
"""Old module path -> where it lives now (remove an entry one release after its move)."""

_MACHINERY = ("<frozen importlib", os.path.dirname(importlib.__file__) + os.sep, __file__,
              os.path.join(os.path.dirname(__file__), "__init__.py"))
"""Files of the frames between an import and the finder: importlib's, this module's and
``evaluq/__init__.py``'s (``eq.experiment`` imports the old path)."""


def _importer() -> FrameType | None:
    """The frame that asked for the old path: the first one outside :data:`_MACHINERY`."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_MACHINERY):
        frame = frame.f_back
    return frame


class MovedModuleFinder:
    """A meta path finder and loader of the old paths in :data:`MOVED`."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        return ModuleSpec(fullname, cast("Loader", self)) if fullname in MOVED else None

    def create_module(self, spec: ModuleSpec) -> None:
        return None     # a placeholder module, replaced in sys.modules by exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        moved_module(old, MOVED[old], frame=_importer())  # blames the import line
        # the import system returns what sys.modules holds under the old name once this returns
        sys.modules[old] = importlib.import_module(MOVED[old])


def install() -> None:
    """Put the finder last on :data:`sys.meta_path` (once): asked only about names that no
    file provides."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
