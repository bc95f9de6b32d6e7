"""nutpie models whose compiled machine code is cached on disk, across processes.

``nutpie.compile_pymc_model(model, backend="numba")`` builds the model's log-density and
expand functions with PyTensor (whose numba kernels PyTensor caches on disk) and wraps each
in a ``numba.cfunc`` that the Rust sampler calls through a function pointer. Those two
cfuncs are closures over per-model values (the shared-data layout, the PyTensor function),
and nutpie compiles them without numba's cache (numba's own cache could not serve them
anyway: it keys an entry by the closure's pickled contents, which change with every
process, and nothing else of the model). Compiling them (and, inlined, the
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

Finding that entry still needs PyTensor's compiled functions (their graph keys), which cost
a few seconds of graph rewriting per process. A caller that knows what determines its graph
(hierarchical: the model, the number of models, paired errors and the number of factors,
the key of its per-process cache of compiled models) passes it as ``structure``, with the
source files that build the model: the first process writes a small JSON manifest under a
hash of them (and of the versions above) with the entry's key and nutpie's layout (sizes,
names, shapes, the shared variables' order); a later process that finds it builds only the
PyMC model and its initial-point function, and loads the cfuncs. When the manifest or the
entry cannot be used, the full path runs (and rewrites them).

The data do not enter the compiled code: the cfuncs are typed with placeholder arrays of the
same rank and dtype, and the sampler reads the data through ``user_data`` pointers at run
time, as nutpie does. So a refit of new data of the same structure, in any later process,
loads the compiled cfuncs (a cache hit) instead of compiling them.

Each cfunc is self-contained (:func:`_self_contained`): the PyTensor functions it calls are
internal copies in its own machine code, so the process that compiles it (the first on a
machine) runs the very code that every later process loads, and the same ``rng`` gives the
same draws, bit for bit, in both. (With nutpie's own compilation, or with numba's default
linking, a call to a copy goes through a symbol the JIT binds to the first definition in
the process: PyTensor's freshly compiled kernel in the first process, the cached copy in a
later one, whose fastmath code differs in the last bits of the gradient; NUTS turned that
into draws differing by up to 7e-13 after a hundred iterations.)

The cache directory is ``$EVALUQ_CACHE_DIR`` when set, otherwise ``evaluq-nutpie`` inside
PyTensor's ``base_compiledir`` (``~/.pytensor`` by default, moved with
``PYTENSOR_FLAGS=base_compiledir=...``). numba writes each file through a temporary file
and :func:`os.replace`, so concurrent processes never read half a file (two processes that
miss at once both compile and write equivalent entries; the last one stays). An entry that
cannot be read (a truncated or corrupt file) is deleted and rebuilt, never fatal; a
directory that cannot be written means no cache (nutpie's own compilation). Deleting the
directory is always safe.

PyTensor writes the Python source of every function it compiles for numba to a file, by
default one new file in the system temporary directory per function, which it never
removes (75 files per item-model fit, in every process). Unless the user has chosen
``pytensor.config.generated_src_dir``, :func:`compile_pymc_model` points it to
``pytensor-src`` in the cache directory (:func:`keep_generated_source`): there PyTensor
names each file by its content (a later process reuses it) and removes files unused for
weeks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final
from weakref import WeakKeyDictionary

import numpy as np

from evaluq._atomic import write_text

CACHE_ENV: Final = "EVALUQ_CACHE_DIR"
"""Environment variable naming the cache directory."""
GENERATED_SRC: Final = "pytensor-src"
"""The cache directory's subdirectory for PyTensor's generated source files."""
FORMAT: Final = 2
"""Version of this module's cache entries (bump when the way the cfuncs are built changes;
2: self-contained cfuncs, whose callees are internal copies)."""

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


def keep_generated_source() -> None:
    """Point PyTensor's generated source files to the cache directory's
    :data:`GENERATED_SRC` when ``pytensor.config.generated_src_dir`` is unset and the
    directory can be written (module docstring); otherwise change nothing.

    Examples
    --------
    >>> import pytensor
    >>> from evaluq._nutpie_cache import keep_generated_source
    >>> keep_generated_source()
    >>> pytensor.config.generated_src_dir != ""
    True
    """
    import pytensor

    if pytensor.config.generated_src_dir:
        return
    path = cache_dir() / GENERATED_SRC
    if _writable(path):
        pytensor.config.generated_src_dir = str(path)


@contextlib.contextmanager
def pymc_sampling() -> Any:
    """The context of a ``pm.sample`` run (the fits that do not go through nutpie): its
    generated source in the cache directory (:func:`keep_generated_source`), and PyMC's
    progress messages ("Sampling 4 chains ...") kept off the user's terminal; its warnings
    still show."""
    import logging

    keep_generated_source()
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


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


def _make_cfunc(raw: Callable[..., Any], sig: Any, cached: bool) -> Any:
    """numba's ``CFunc`` of ``raw`` (not compiled yet), with a cache whose index ignores the
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
    return res


def _self_contained(library: Any) -> None:
    """Link the cfunc's dependencies into its module, optimise it, and make every linked-in
    function internal, before numba finalizes it (the module is then only verified and
    loaded: numba's own ``finalize`` links and optimises the same way, see
    ``numba.core.codegen.CPUCodeLibrary.finalize``).

    numba links each callee (PyTensor's graph function and its kernels) into a caller as a
    ``linkonce_odr`` copy, which the caller's optimisation changes further (with PyTensor's
    fastmath: reassociated sums, fused multiply-adds). A call left out of line goes
    through the symbol, and the JIT resolves a symbol to the first definition loaded in
    the process: in a process that compiles the kernels, their own libraries; in a
    process that loads the cfunc from the cache, the copies in its object. The two
    machine codes differ in the last bits, and so did the draws of the first process on
    a machine from every later one. Internal copies are bound at compile time: the code
    a process runs is the code the cache stores, whatever else the process has loaded.
    """
    import llvmlite.binding as ll

    seen = set()
    for dep in library._linking_libraries:
        if dep not in seen:
            seen.add(dep)
            library._reload_init.update(dep._reload_init)
            library._final_module.link_in(dep._get_module_for_linking(), preserve=True)
    library._linking_libraries.clear()
    library._optimize_final_module()
    for fn in library._final_module.functions:
        if not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr:
            fn.linkage = ll.Linkage.internal
    library._optimize_final_module = lambda: None   # done above; finalize only loads it


def _compile(res: Any) -> None:
    """``CFunc.compile`` (numba.core.ccallback), with a compiled library made
    self-contained (:func:`_self_contained`) before numba finalizes and caches it."""
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        cres = res._cache.load_overload(res._sig, res._targetdescr.target_context)
        if cres is None:
            cres = res._compile_uncached()
            _self_contained(cres.library)
            res._cache.save_overload(res._sig, cres)
        else:
            res._cache_hits += 1
        res._library = cres.library
        res._wrapper_name = cres.fndesc.llvm_cfunc_wrapper_name
        res._wrapper_address = res._library.get_pointer_to_function(res._wrapper_name)


def _cfunc(raw: Callable[..., Any], sig: Any, cached: bool) -> Any:
    """``numba.cfunc(sig, cache=cached)(raw)`` with the cache of :func:`_make_cfunc`, its
    code self-contained (:func:`_self_contained`)."""
    res = _make_cfunc(raw, sig, cached)
    _compile(res)
    return res


def _load_cfunc(raw: Callable[..., Any], sig: Any, key: str, path: Path) -> Any | None:
    """The cfunc of ``raw`` loaded from the cache entry ``key``; None when it is not there
    or cannot be read (never compiled: ``raw`` may close over a placeholder)."""
    from numba.core.compiler_lock import global_compiler_lock

    _register_locator()
    _KEYS[raw] = (key, path)
    res = _make_cfunc(raw, sig, cached=True)
    try:
        with global_compiler_lock:
            cres = res._cache.load_overload(res._sig, res._targetdescr.target_context)
            if cres is None:
                return None
            # what CFunc.compile does with a loaded entry
            res._library = cres.library
            res._wrapper_name = cres.fndesc.llvm_cfunc_wrapper_name
            res._wrapper_address = res._library.get_pointer_to_function(res._wrapper_name)
            res._cache_hits += 1
    except Exception:  # an unreadable entry: the full path rebuilds it
        return None
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
    try:
        return _cfunc(raw, sig, cached=True)
    except Exception:  # still failing (the file system?): compile without the cache
        return _cfunc(raw, sig, cached=False)


def _writable(path: Path) -> bool:
    """Whether the cache directory exists or can be made, and a file can be written there."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return False
    return True


def compile_pymc_model(model: Any, var_names: Iterable[str] | None = None,
                       structure: dict[str, Any] | None = None,
                       sources: Iterable[str | os.PathLike[str]] = ()
                       ) -> tuple[Any, dict[str, Any]]:
    """``nutpie.compile_pymc_model(model, backend="numba", var_names=var_names)`` with its
    two cfuncs cached on disk across processes (module docstring).

    Parameters
    ----------
    model : pymc.Model
        The model (its data as ``pm.Data``: refits change them with ``with_data``).
    var_names : iterable of str, optional
        The variables nutpie stores (default: all).
    structure : dict, optional
        What determines the model's graph for the caller (JSON-able: the kind of model, the
        sizes and options that change the graph, not the data), with ``sources``, the files
        of the code that builds the model. Given both, a process that finds a manifest for
        them loads the cfuncs without even building PyTensor's functions (the graph is
        compiled and keyed fully the first time, and whenever the entry cannot be
        loaded). The caller promises that models of equal ``structure`` built by equal
        ``sources`` have equal graphs (as a per-process cache of compiled models assumes).
    sources : iterable of path-like, optional
        The files hashed into the manifest's key with ``structure``.

    Returns
    -------
    compiled : nutpie.compile_pymc.CompiledPyMCModel
        What nutpie's own function returns, sampling to the same numbers.
    info : dict
        ``cache``: ``"hit"`` (both cfuncs loaded from the cache), ``"miss"`` (compiled and
        written), ``"off"`` (PyTensor could not key a graph, or the directory is not
        writable: compiled without the cache);
        ``manifest``: whether PyTensor's functions were skipped (``structure`` matched a
        manifest); ``cache_key`` (the entry's hash, or None), ``cache_dir`` and
        ``cfunc_seconds`` (compiling or loading the two cfuncs).

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
    var_names = None if var_names is None else list(var_names)
    keep_generated_source()
    try:
        return _compile_cached(model, var_names, structure, sources)
    except (AttributeError, ImportError) as err:
        # the cache drives nutpie's private steps (nutpie is not pinned): when they change,
        # nutpie's public function still compiles the same model, only without the cache
        import nutpie

        start = time.perf_counter()
        compiled = nutpie.compile_pymc_model(model, backend="numba", var_names=var_names)
        return compiled, {"cache": "off", "manifest": False, "cache_key": None,
                          "cache_dir": str(cache_dir()),
                          "cfunc_seconds": time.perf_counter() - start,
                          "reason": f"nutpie's internals differ from this evaluq's: {err}"}


def _compile_cached(model: Any, var_names: list[str] | None,
                    structure: dict[str, Any] | None,
                    sources: Iterable[str | os.PathLike[str]]) -> tuple[Any, dict[str, Any]]:
    """:func:`compile_pymc_model` through the cache."""
    path = cache_dir()
    manifest = None
    if structure is not None:
        import pytensor

        config = [str(pytensor.config.numba__fastmath), str(pytensor.config.floatX)]
        parts = {"versions": _versions(), "structure": structure, "pytensor_config": config,
                 "var_names": None if var_names is None else list(var_names),
                 "sources": [hashlib.sha256(Path(f).read_bytes()).hexdigest()
                             for f in sources]}
        digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
        manifest = path / f"manifest-{digest}.json"
        loaded = _from_manifest(model, manifest, path)
        if loaded is not None:
            return loaded
    compiled, info, layout = _compile_full(model, var_names, path)
    if manifest is not None and info["cache"] != "off":
        with contextlib.suppress(OSError):
            write_text(manifest, json.dumps(layout))
    return compiled, info


_INITIAL_LOCK = threading.Lock()
"""Held while an initial point is computed under another fit's data (:func:`with_data`)."""


def with_data(compiled: Any, **updates: Any) -> Any:
    """``compiled.with_data(**updates)`` whose initial points are computed under the same
    data.

    nutpie's ``with_data`` replaces the arrays the log-density reads, but its initial-point
    function is PyMC's, which reads the model's shared variables: a starting value that
    depends on the data (a prior's location set from them, as the item model's
    ``alpha_mu``) came from the data the model was compiled with. The same seed then gave
    other draws after another fit of the same shape in the process than in a fresh one.
    Here the shared variables hold this model's data while a point is computed (under a
    lock; their values are restored after).

    Parameters
    ----------
    compiled : nutpie.compile_pymc.CompiledPyMCModel
        A compiled model (from :func:`compile_pymc_model`).
    **updates
        New values of its shared variables, by name.

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
        The model with the new data and an initial-point function that reads them.
    """
    import dataclasses

    new = compiled.with_data(**updates)
    base = getattr(compiled.initial_point_func, "evaluq_base", compiled.initial_point_func)
    values = {var: new.shared_data[key] for var, key in new.shared_var_keys.items()}

    def initial_point(seed: Any) -> Any:
        with _INITIAL_LOCK:
            saved = {var: var.get_value(borrow=True) for var in values}
            try:
                for var, value in values.items():
                    var.set_value(value)
                return base(seed)
            finally:
                for var, value in saved.items():
                    var.set_value(value, borrow=True)

    initial_point.evaluq_base = base          # type: ignore[attr-defined]
    return dataclasses.replace(new, initial_point_func=initial_point)


def _initial_point(model: Any) -> Any:
    """PyMC's initial-point function as nutpie builds it with its defaults (support
    point, every free variable jittered)."""
    import nutpie.compile_pymc as ncp
    from pymc.initial_point import make_initial_point_fn

    return ncp._wrap_with_lock(make_initial_point_fn(
        model=model, overrides=None, default_strategy="support_point",
        jitter_rvs=set(model.free_RVs), return_transformed=True))


def _shared(variables: Iterable[Any]) -> tuple[dict[str, np.ndarray], dict[Any, str]]:
    """The shared variables' values (read-only C arrays) by key, and the keys by variable."""
    shared_data: dict[str, np.ndarray] = {}
    shared_var_keys: dict[Any, str] = {}
    for var in variables:
        if var not in shared_var_keys:
            key = f"s{len(shared_var_keys)}"   # nutpie draws a uuid: ours is reproducible
            shared_data[key] = np.array(var.get_value(), order="C", copy=True)
            shared_data[key].flags.writeable = False
            shared_var_keys[var] = key
    return shared_data, shared_var_keys


def _raw_cfuncs(n_dim: int, n_expanded: int, logp_inner: Any, expand_inner: Any,
                user_data: np.ndarray, logp_keys: list[str], expand_keys: list[str],
                shared_data: dict[str, np.ndarray]) -> tuple[Any, Any, Any, Any]:
    """nutpie's two cfunc bodies and signatures, typed with placeholder arrays."""
    import nutpie.compile_pymc as ncp

    typing = _placeholders(shared_data)
    logp_raw, logp_sig = ncp._make_c_logp_func(n_dim, logp_inner, user_data, logp_keys,
                                               typing)
    expand_raw, expand_sig = ncp._make_c_expand_func(n_dim, n_expanded, expand_inner,
                                                     user_data, expand_keys, typing)
    return logp_raw, logp_sig, expand_raw, expand_sig


def _assemble(model: Any, parts: dict[str, Any]) -> Any:
    """nutpie's ``CompiledPyMCModel`` from its parts (as nutpie's numba path builds it)."""
    import nutpie.compile_pymc as ncp

    shape_info, reparameterized = parts["shape_info"], parts["reparameterized_names"]
    dims, coords = ncp._prepare_dims_and_coords(model, shape_info, reparameterized)
    return ncp.CompiledPyMCModel(
        _n_dim=parts["n_dim"], dims=dims, _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=parts["logp"], compiled_expand_func=parts["expand"],
        initial_point_func=parts["initial_point"], shared_data=parts["shared_data"],
        shared_var_keys=parts["shared_var_keys"], user_data=parts["user_data"],
        n_expanded=parts["n_expanded"], shape_info=shape_info, logp_func=parts["logp_fn"],
        expand_func=parts["expand_fn"], reparameterized_names=reparameterized)


def _compile_full(model: Any, var_names: Iterable[str] | None, path: Path
                  ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """PyTensor's functions, the entry key from their graphs, the cfuncs from / into the
    cache; the compiled model, the info and the layout a manifest records."""
    import nutpie.compile_pymc as ncp

    (n_dim, n_expanded, logp_fn_pt, expand_fn_pt, flat_initial_point_fn, shape_info,
     reparameterized_names) = ncp._make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=True,
        pymc_initial_point_fn=_initial_point(model), var_names=var_names)
    shared_data, shared_var_keys = _shared([*logp_fn_pt.get_shared(),
                                            *expand_fn_pt.get_shared()])
    user_data = ncp.make_user_data(shared_var_keys, shared_data)
    logp_keys = [shared_var_keys[var] for var in logp_fn_pt.get_shared()]
    expand_keys = [shared_var_keys[var] for var in expand_fn_pt.get_shared()]
    entry = _entry_key(logp_fn_pt, expand_fn_pt, n_dim, n_expanded, shared_data, logp_keys,
                       expand_keys, user_data)
    if entry is not None and not _writable(path):
        entry = None
    logp_raw, logp_sig, expand_raw, expand_sig = _raw_cfuncs(
        n_dim, n_expanded, logp_fn_pt.vm.jit_fn, expand_fn_pt.vm.jit_fn, user_data,
        logp_keys, expand_keys, shared_data)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # numba's NumbaWarning on an uncacheable entry
        logp = _cached_cfunc(logp_raw, logp_sig, entry and entry + "-logp", path)
        expand = _cached_cfunc(expand_raw, expand_sig, entry and entry + "-expand", path)
    cfunc_seconds = time.perf_counter() - start
    compiled = _assemble(model, {
        "n_dim": n_dim, "n_expanded": n_expanded, "shape_info": shape_info,
        "reparameterized_names": reparameterized_names, "logp": logp, "expand": expand,
        "initial_point": flat_initial_point_fn, "shared_data": shared_data,
        "shared_var_keys": shared_var_keys, "user_data": user_data, "logp_fn": logp_fn_pt,
        "expand_fn": expand_fn_pt})
    status = "off" if entry is None else (
        "hit" if logp.cache_hits + expand.cache_hits == 2 else "miss")
    names = [var.name for var in shared_var_keys]
    layout = {"format": FORMAT, "entry": entry, "n_dim": int(n_dim),
              "n_expanded": int(n_expanded), "names": list(shape_info[0]),
              "shapes": [[int(n) for n in shape] for shape in shape_info[2]],
              "reparameterized_names": list(reparameterized_names), "shared": names,
              "logp_shared": [names[int(k[1:])] for k in logp_keys],
              "expand_shared": [names[int(k[1:])] for k in expand_keys]}
    return compiled, {"cache": status, "manifest": False, "cache_key": entry,
                      "cache_dir": str(path), "cfunc_seconds": cfunc_seconds}, layout


def _from_manifest(model: Any, manifest: Path, path: Path) -> tuple[Any, dict[str, Any]] | None:
    """The compiled model from a manifest and its cache entry, without PyTensor's
    functions; None when either is missing, unreadable or does not fit the model."""
    import nutpie.compile_pymc as ncp

    try:
        layout = json.loads(manifest.read_text())
        shared = [model[name] for name in layout["shared"]]
        if layout.get("format") != FORMAT or not all(hasattr(v, "get_value") for v in shared):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    shared_data, shared_var_keys = _shared(shared)
    by_name = {var.name: key for var, key in shared_var_keys.items()}
    logp_keys = [by_name[name] for name in layout["logp_shared"]]
    expand_keys = [by_name[name] for name in layout["expand_shared"]]
    user_data = ncp.make_user_data(shared_var_keys, shared_data)
    n_dim, n_expanded = layout["n_dim"], layout["n_expanded"]
    # the cfuncs are only loaded, never compiled here: no inner function is needed
    logp_raw, logp_sig, expand_raw, expand_sig = _raw_cfuncs(
        n_dim, n_expanded, None, None, user_data, logp_keys, expand_keys, shared_data)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logp = _load_cfunc(logp_raw, logp_sig, layout["entry"] + "-logp", path)
        expand = _load_cfunc(expand_raw, expand_sig, layout["entry"] + "-expand", path)
    if logp is None or expand is None:
        return None
    cfunc_seconds = time.perf_counter() - start
    shapes = [np.asarray(shape, dtype=np.int64) for shape in layout["shapes"]]
    stops = np.cumsum([int(np.prod(shape)) for shape in shapes])
    shape_info = (layout["names"], [slice(int(b - int(np.prod(s))), int(b))
                                    for b, s in zip(stops, shapes, strict=True)], shapes)
    n_free = len(model.free_RVs)
    initial_point = ncp._rv_dict_to_flat_array_wrapper(
        _initial_point(model), names=layout["names"][:n_free], shapes=shapes[:n_free])
    compiled = _assemble(model, {
        "n_dim": n_dim, "n_expanded": n_expanded, "shape_info": shape_info,
        "reparameterized_names": layout["reparameterized_names"], "logp": logp,
        "expand": expand, "initial_point": initial_point, "shared_data": shared_data,
        "shared_var_keys": shared_var_keys, "user_data": user_data, "logp_fn": None,
        "expand_fn": None})
    return compiled, {"cache": "hit", "manifest": True, "cache_key": layout["entry"],
                      "cache_dir": str(path), "cfunc_seconds": cfunc_seconds}


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
