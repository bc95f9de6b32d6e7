"""nutpie models whose compiled machine code is cached on disk, across processes.

``nutpie.compile_pymc_model(model, backend="numba")`` builds the model's log-density and
expand functions with PyTensor (whose numba kernels PyTensor caches on disk) and wraps each
in a ``numba.cfunc`` that the Rust sampler calls through a function pointer. Those two
cfuncs are closures over per-model values (the shared-data layout, the PyTensor function),
and nutpie compiles them without numba's cache: numba would key a cached closure by its
source file alone, so two models would share one entry. Compiling them (and, inlined, the
whole log-density and its gradient) is most of a fresh process's cold start: 20 of 22 s of
``compile_pymc_model`` on a loaded machine.

:func:`compile_pymc_model` does what nutpie's numba path does, step by step with nutpie's own
functions, and compiles the two cfuncs with ``cache=True`` under a numba cache locator of its
own, keyed by everything that changes their code:

- PyTensor's cache keys of the compiled log-density-and-gradient and expand graphs (they
  cover the graph, its constants, the dtypes and PyTensor's fastmath flag);
- the cfuncs' layout: number of unconstrained and stored values, the shared variables'
  order, rank and dtype, the record type of nutpie's ``user_data``;
- the versions of evaluq, nutpie (and a hash of its ``compile_pymc.py``, which writes the
  cfuncs), PyTensor, PyMC, numba, llvmlite, numpy and Python, and the machine;
- numba itself stores each entry with its target (CPU name and features) and ignores entries
  of another CPU.

The data do not enter the compiled code: the cfuncs are typed with placeholder arrays of the
same rank and dtype, and the sampler reads the data through ``user_data`` pointers at run
time, as nutpie does. So a refit of new data of the same structure, in any later process,
loads the compiled cfuncs (a cache hit) instead of compiling them; the numbers are the
same as nutpie's own compilation gives (the same machine code from the same PyTensor
graphs).

The cache directory is ``$EVALUQ_CACHE_DIR`` when set, otherwise ``evaluq-nutpie`` inside
PyTensor's ``base_compiledir`` (``~/.pytensor`` by default, moved with
``PYTENSOR_FLAGS=base_compiledir=...``). numba writes each file through a temporary file
and :func:`os.replace`, so concurrent processes never read half a file (two processes that
miss at once both compile and both write equal entries). An entry that cannot be read (a
truncated or corrupt file) is deleted and rebuilt, never fatal. Set ``EVALUQ_CACHE_DIR`` to
an empty directory to start afresh; deleting the directory is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final
from weakref import WeakKeyDictionary

import numpy as np

CACHE_ENV: Final = "EVALUQ_CACHE_DIR"
"""Environment variable naming the cache directory."""
FORMAT: Final = 1
"""Version of this module's cache entries (bump when the way the cfuncs are built changes)."""

_LOCK = threading.Lock()
_KEYS: WeakKeyDictionary[Callable[..., Any], tuple[str, Path]] = WeakKeyDictionary()
"""The Python functions numba compiles with our locator: their key and directory."""
_REGISTERED: list[bool] = []


def cache_dir() -> Path:
    """The directory of the cached nutpie models: ``$EVALUQ_CACHE_DIR``, else
    ``evaluq-nutpie`` in PyTensor's ``base_compiledir``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> from evaluq._nutpie_cache import cache_dir
    >>> cache_dir().name != ""
    True
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import pytensor

    return Path(pytensor.config.base_compiledir) / "evaluq-nutpie"


def _register_locator() -> None:
    """Put our locator first in numba's list (once): it answers only for our cfuncs."""
    from numba.core.caching import CacheImpl, _CacheLocator

    class EvaluqCacheLocator(_CacheLocator):
        """numba's cache for a cfunc registered in ``_KEYS``: our directory, our key."""

        def __init__(self, py_func: Any, py_file: str, key: str, path: Path) -> None:
            self._py_func, self._py_file = py_func, py_file
            self._key, self._path = key, path

        def ensure_cache_path(self) -> None:
            self._path.mkdir(parents=True, exist_ok=True)

        def get_cache_path(self) -> str:
            return str(self._path)

        def get_source_stamp(self) -> str:
            return self._key

        def get_disambiguator(self) -> str:
            return self._key

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> EvaluqCacheLocator | None:
            entry = _KEYS.get(py_func)
            return None if entry is None else cls(py_func, py_file, *entry)

    with _LOCK:
        if not _REGISTERED:
            CacheImpl._locator_classes.insert(0, EvaluqCacheLocator)  # type: ignore[arg-type]
            _REGISTERED.append(True)


def _versions() -> dict[str, str]:
    import llvmlite
    import numba
    import nutpie
    import nutpie.compile_pymc
    import pymc
    import pytensor

    from evaluq._version import __version__

    source = Path(nutpie.compile_pymc.__file__).read_bytes()
    return {"format": str(FORMAT), "evaluq": __version__, "nutpie": nutpie.__version__,
            "nutpie_source": hashlib.sha256(source).hexdigest(), "pytensor": pytensor.__version__,
            "pymc": pymc.__version__, "numba": numba.__version__,
            "llvmlite": llvmlite.__version__, "numpy": np.__version__, "python": sys.version,
            "machine": f"{platform.system()} {platform.machine()}"}


def _graph_key(fn_pt: Any) -> str | None:
    """PyTensor's cache key of a compiled function's graph (None: PyTensor cannot cache it)."""
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS

    jit_fn = getattr(getattr(fn_pt, "vm", None), "jit_fn", None)
    py_func = getattr(jit_fn, "py_func", None)
    return None if py_func is None else CACHED_SRC_FUNCTIONS.get(py_func)


def _placeholders(shared_data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Arrays of the shared data's rank and dtype, read-only and C-ordered like nutpie's
    (the cfuncs are typed with them; the data themselves are read at run time)."""
    out = {}
    for key, value in shared_data.items():
        arr = np.zeros((1,) * value.ndim, dtype=value.dtype)
        arr.flags.writeable = False
        out[key] = arr
    return out


def _drop_entry(path: Path, key: str) -> None:
    """Delete every file of one cache entry (its index and data files)."""
    for file in path.glob(f"*{key}*"):
        with contextlib.suppress(OSError):
            file.unlink()


def _cfunc(raw: Callable[..., Any], sig: Any, cached: bool) -> Any:
    """``numba.cfunc(sig, cache=cached)(raw)``, where the cache's index ignores the
    closure's contents (numba pickles them into its index key, and nutpie's closure holds
    objects whose pickle changes with every process; our entry key covers what they mean)."""
    from numba.core import sigutils
    from numba.core.caching import FunctionCache
    from numba.core.ccallback import CFunc

    class EntryCache(FunctionCache):
        def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
            code = hashlib.sha256(self._py_func.__code__.co_code).hexdigest()
            return (sig, codegen.magic_tuple(), (code, FORMAT))

    res = CFunc(raw, sigutils.normalize_signature(sig), locals={}, options={})
    if cached:
        res._cache = EntryCache(raw)  # type: ignore[attr-defined]
    res.compile()
    return res


def _cached_cfunc(raw: Callable[..., Any], sig: Any, key: str | None, path: Path) -> Any:
    """The cfunc of ``raw``, from / into the cache when ``key`` is given: a damaged entry
    is deleted and compiled again."""
    if key is None:
        return _cfunc(raw, sig, cached=False)
    _register_locator()
    _KEYS[raw] = (key, path)
    try:
        return _cfunc(raw, sig, cached=True)
    except Exception:  # an unreadable entry (truncated, corrupt): rebuild it
        _drop_entry(path, key)
        return _cfunc(raw, sig, cached=True)


def compile_pymc_model(model: Any, var_names: Iterable[str] | None = None
                       ) -> tuple[Any, dict[str, Any]]:
    """``nutpie.compile_pymc_model(model, backend="numba", var_names=var_names)`` with its
    two cfuncs cached on disk across processes (module docstring).

    Parameters
    ----------
    model : pymc.Model
        The model (its data as ``pm.Data``: refits change them with ``with_data``).
    var_names : iterable of str, optional
        The variables nutpie stores (default: all).

    Returns
    -------
    compiled : nutpie.compile_pymc.CompiledPyMCModel
        What nutpie's own function returns, sampling to the same numbers.
    info : dict
        ``cache``: ``"hit"`` (both cfuncs loaded from the cache), ``"miss"`` (compiled and
        written), ``"off"`` (PyTensor could not key a graph: compiled without the cache);
        ``cache_key`` (the entry's hash, or None), ``cache_dir`` and ``cfunc_seconds``
        (compiling or loading the two cfuncs).

    Examples
    --------
    Compiling takes seconds, so the example does not run here:

    >>> import pymc as pm
    >>> from evaluq._nutpie_cache import compile_pymc_model
    >>> with pm.Model() as m:                                       # doctest: +SKIP
    ...     _ = pm.Normal("x")
    >>> compiled, info = compile_pymc_model(m)                      # doctest: +SKIP
    >>> info["cache"] in ("hit", "miss", "off")                     # doctest: +SKIP
    True
    """
    import nutpie.compile_pymc as ncp
    from pymc.initial_point import make_initial_point_fn

    # as nutpie.compile_pymc_model with its defaults (support point, free variables jittered)
    initial_point_fn = ncp._wrap_with_lock(make_initial_point_fn(
        model=model, overrides=None, default_strategy="support_point",
        jitter_rvs=set(model.free_RVs), return_transformed=True))
    (n_dim, n_expanded, logp_fn_pt, expand_fn_pt, flat_initial_point_fn, shape_info,
     reparameterized_names) = ncp._make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=True,
        pymc_initial_point_fn=initial_point_fn, var_names=var_names)
    shared_data: dict[str, np.ndarray] = {}
    shared_var_keys: dict[Any, str] = {}
    for var in [*logp_fn_pt.get_shared(), *expand_fn_pt.get_shared()]:
        if var not in shared_var_keys:
            key = f"s{len(shared_var_keys)}"   # nutpie draws a uuid: ours is reproducible
            shared_data[key] = np.array(var.get_value(), order="C", copy=True)
            shared_data[key].flags.writeable = False
            shared_var_keys[var] = key
    user_data = ncp.make_user_data(shared_var_keys, shared_data)
    logp_keys = [shared_var_keys[var] for var in logp_fn_pt.get_shared()]
    expand_keys = [shared_var_keys[var] for var in expand_fn_pt.get_shared()]
    entry = _entry_key(logp_fn_pt, expand_fn_pt, n_dim, n_expanded, shared_data, logp_keys,
                       expand_keys, user_data)
    path = cache_dir()
    typing = _placeholders(shared_data)
    logp_raw, logp_sig = ncp._make_c_logp_func(n_dim, logp_fn_pt.vm.jit_fn, user_data,
                                               logp_keys, typing)
    expand_raw, expand_sig = ncp._make_c_expand_func(
        n_dim, n_expanded, expand_fn_pt.vm.jit_fn, user_data, expand_keys, typing)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # numba's NumbaWarning on an uncacheable entry
        logp = _cached_cfunc(logp_raw, logp_sig, entry and entry + "-logp", path)
        expand = _cached_cfunc(expand_raw, expand_sig, entry and entry + "-expand", path)
    cfunc_seconds = time.perf_counter() - start
    dims, coords = ncp._prepare_dims_and_coords(model, shape_info, reparameterized_names)
    compiled = ncp.CompiledPyMCModel(
        _n_dim=n_dim, dims=dims, _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp, compiled_expand_func=expand,
        initial_point_func=flat_initial_point_fn, shared_data=shared_data,
        shared_var_keys=shared_var_keys, user_data=user_data, n_expanded=n_expanded,
        shape_info=shape_info, logp_func=logp_fn_pt, expand_func=expand_fn_pt,
        reparameterized_names=reparameterized_names)
    hits = logp.cache_hits + expand.cache_hits
    status = "off" if entry is None else ("hit" if hits == 2 else "miss")
    return compiled, {"cache": status, "cache_key": entry, "cache_dir": str(path),
                      "cfunc_seconds": cfunc_seconds}


def _entry_key(logp_fn_pt: Any, expand_fn_pt: Any, n_dim: int, n_expanded: int,
               shared_data: dict[str, np.ndarray], logp_keys: list[str],
               expand_keys: list[str], user_data: np.ndarray) -> str | None:
    """The hash naming a model's cache entry; None when PyTensor cannot key a graph."""
    graphs = (_graph_key(logp_fn_pt), _graph_key(expand_fn_pt))
    if None in graphs:
        return None
    parts = {"versions": _versions(), "graphs": graphs, "n_dim": int(n_dim),
             "n_expanded": int(n_expanded), "logp_shared": logp_keys,
             "expand_shared": expand_keys,
             "shared": {k: [v.ndim, v.dtype.str] for k, v in shared_data.items()},
             "user_data": str(user_data.dtype.descr)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
