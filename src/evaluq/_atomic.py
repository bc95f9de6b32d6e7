"""Atomic writes: a file or a directory (a zarr store) appears whole at its path, or not at all.

A file is written to a temporary file in the same folder, flushed to disk (``fsync``) and
moved over the target with :func:`os.replace` (atomic on POSIX and Windows within one file
system): a write killed at any point leaves the previous file intact and at most a
temporary ``.<name>.<token>.tmp<suffix>`` beside it, never half a file at the target.

A directory is written to a temporary directory ``.<name>.<token>.partial`` beside the
target and renamed to the target when the writer is done. A killed write leaves only the
partial directory, which :func:`check_complete` (called by evaluq's readers of a directory)
refuses by its name (or by an :data:`INCOMPLETE_MARKER` file inside, for writers that mark
their directory), saying what happened and how to resume.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evaluq.errors import CubeError

INCOMPLETE_MARKER = ".evaluq-incomplete"
"""File inside a directory being written by a writer that marks it; present means the
write did not finish."""
PARTIAL_SUFFIX = ".partial"
"""Suffix of the temporary directory of :func:`atomic_dir`."""


def _fsync_dir(folder: Path) -> None:
    """Flush a directory entry (the rename) to disk, where the platform allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                                   # Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sibling(path: Path, tail: str) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}{tail}")


@contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` atomically.

    The temporary file is in the folder of ``path`` and ends with the same suffix (so that
    writers choosing a format by suffix choose the same). On an exception it is removed and
    ``path`` is untouched.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> with atomic_file(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), [p.name for p in target.parent.iterdir()]
    ('done', ['a.txt'])
    """
    target = Path(path)
    tmp = _sibling(target, f".tmp{target.suffix}")
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def netcdf_checksums(data: Any) -> dict[str, Any]:
    """``to_netcdf`` encoding with an HDF5 Fletcher-32 checksum on every data variable of a
    Dataset, or of every node of a DataTree (keyed by node path), so that a corrupted
    chunk fails to read instead of being read as numbers."""
    if hasattr(data, "subtree"):                       # a DataTree: one encoding per node
        return {node.path: {str(v): {"fletcher32": True} for v in node.data_vars}
                for node in data.subtree if node.data_vars}
    return {str(v): {"fletcher32": True} for v in data.data_vars}


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_file`); returns the path."""
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding=encoding)
    return Path(path)


@contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary directory path to create and fill; on success it is renamed to
    ``path``.

    ``path`` must not exist (``FileExistsError``). The temporary directory,
    ``.<name>.<token>.partial`` beside ``path``, does not exist yet (writers such as
    ``to_zarr`` create it); a killed write leaves only it, which :func:`check_complete`
    refuses by its name; on an exception it is removed.
    """
    target = Path(path)
    if target.exists():
        raise FileExistsError(f"{str(target)!r} already exists; remove it or name a new path")
    tmp = _sibling(target, PARTIAL_SUFFIX)
    try:
        yield tmp
        _fsync_dir(tmp)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(target.parent)


def check_complete(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a directory whose write by evaluq did not finish: a ``.partial`` directory
    left by :func:`atomic_dir`, or one holding :data:`INCOMPLETE_MARKER`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> store = pathlib.Path(tempfile.mkdtemp()) / ".cube.zarr.0123456789ab.partial"
    >>> store.mkdir()
    >>> check_complete(store, "cube")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evaluq.errors.CubeError: ... is a cube whose write was interrupted ...
    """
    name = Path(path).name
    partial = name.startswith(".") and name.endswith(PARTIAL_SUFFIX)
    if os.path.isdir(path) and (partial or os.path.exists(os.path.join(path, INCOMPLETE_MARKER))):
        final = name[1:-len(PARTIAL_SUFFIX) - 13] if partial else name
        raise CubeError(
            f"{str(path)!r} is a {what} whose write was interrupted before it finished (evaluq "
            f"writes {final!r} under this temporary name and renames it only when complete): "
            f"it is not read. Delete it and write {final!r} again")
