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

A zarr store's writer ends with :func:`write_manifest`: a :data:`GENERATION` file (a random
id of this write) and, last, a :data:`MANIFEST` of every chunk file and its size. A reader
checks the manifest on open (:func:`check_manifest`: a missing or resized chunk file is
refused naming it, never read as missing cells) and the generation whenever it reads a chunk
(:func:`check_generation`: a store replaced after it was opened raises, never mixes two
cubes).
"""

from __future__ import annotations

import json
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
STORE_DIR = ".evaluq"
"""evaluq's folder inside a zarr store it wrote: an empty zarr group (so that zarr, listing
the store, sees a node and not a stray file) holding :data:`MANIFEST` and
:data:`GENERATION`."""
MANIFEST = f"{STORE_DIR}/manifest.json"
"""File of a store written by evaluq, written last: its generation and every chunk file
(path relative to the store, ``/``-separated) with its size in bytes."""
GENERATION = f"{STORE_DIR}/generation"
"""File of a store written by evaluq: the random id of the write (hex), read at each chunk."""
_METADATA = frozenset({"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"})
"""Files of a store the manifest does not list (metadata, which opening reads anyway)."""


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


def zarr_checksums(data: Any) -> dict[str, dict[str, Any]]:
    """``to_zarr`` encoding with a checksum in every chunk of every variable (zstd's content
    checksum), so that a corrupted chunk fails to decode instead of being read as numbers."""
    from zarr.codecs import ZstdCodec

    return {str(name): {"compressors": (ZstdCodec(level=0, checksum=True),)}
            for name in data.variables}


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


def _chunk_files(root: Path) -> dict[str, int]:
    """Every chunk file under ``root`` (metadata excluded) -> its size in bytes."""
    files: dict[str, int] = {}
    for folder, subfolders, names in os.walk(root):
        if Path(folder) == root and STORE_DIR in subfolders:
            subfolders.remove(STORE_DIR)
        for name in names:
            if name in _METADATA or name.endswith(".tmp"):
                continue
            full = os.path.join(folder, name)
            files[os.path.relpath(full, root).replace(os.sep, "/")] = os.path.getsize(full)
    return files


def write_manifest(path: str | os.PathLike[str]) -> str:
    """The last step of writing a store: a new generation id in :data:`GENERATION`, then the
    :data:`MANIFEST` (the generation and every chunk file with its size), each written
    atomically. Returns the generation.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> store = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (store / "c0").write_bytes(b"1234")
    >>> generation = write_manifest(store)
    >>> json.loads((store / MANIFEST).read_text())["files"]
    {'c0': 4}
    >>> check_manifest(store, "store") == generation
    True
    """
    root = Path(path)
    files = _chunk_files(root)
    generation = uuid.uuid4().hex
    (root / STORE_DIR).mkdir(exist_ok=True)
    if (root / ".zgroup").exists() and not (root / "zarr.json").exists():    # zarr format 2
        write_text(root / STORE_DIR / ".zgroup", json.dumps({"zarr_format": 2}))
    else:
        write_text(root / STORE_DIR / "zarr.json", json.dumps(
            {"zarr_format": 3, "node_type": "group", "attributes": {}}))
    write_text(root / GENERATION, generation)
    write_text(root / MANIFEST, json.dumps({"generation": generation, "files": files},
                                           sort_keys=True))
    return generation


def check_manifest(path: str | os.PathLike[str], what: str) -> str | None:
    """Check a store against its manifest; returns its generation (None for a store without a
    manifest, not written by evaluq: nothing to check).

    A chunk file the manifest lists that is missing, or whose size changed, raises
    ``CubeError`` naming the store and the file (a missing chunk would otherwise read as
    NaN, as a cell that was never scored)."""
    root = Path(path)
    file = root / MANIFEST
    if not file.is_file():
        return None
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
        files, generation = dict(manifest["files"]), str(manifest["generation"])
    except (ValueError, KeyError, TypeError) as err:
        raise CubeError(f"{str(path)!r}: the manifest of this {what} ({MANIFEST}) is damaged "
                        f"({type(err).__name__}); the store cannot be checked") from None
    missing = [k for k in files if not (root / k).is_file()]
    resized = [k for k, size in files.items()
               if k not in missing and (root / k).stat().st_size != size]
    if missing or resized:
        bad = missing or resized
        how = "missing" if missing else "of another size than written"
        raise CubeError(
            f"{str(path)!r} is a damaged {what}: {len(bad)} of its {len(files)} chunk "
            f"file(s) are {how}, e.g. {str(root / bad[0])!r}; a missing chunk would read as "
            f"missing cells, so it is not read. Restore the store or write it again (if you "
            f"changed it on purpose, delete {str(file)!r} to open it unchecked)")
    return generation


def current_generation(path: str | os.PathLike[str]) -> str | None:
    """The generation id a store holds now (None: no :data:`GENERATION` file)."""
    try:
        return Path(path, GENERATION).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def check_generation(path: str | os.PathLike[str], expected: str | None) -> None:
    """Raise ``CubeError`` when the store at ``path`` is no longer the one opened (its
    generation differs from ``expected``, the generation read on open); no check for a store
    opened without one."""
    if expected is None:
        return
    now = current_generation(path)
    if now != expected:
        raise CubeError(
            f"the zarr store {str(path)!r} was replaced after it was opened (opened as "
            f"generation {expected}, it now holds {now or 'no evaluq generation'}): its "
            "chunks would mix two cubes, so none is read. Open it again with eq.open_cube")
