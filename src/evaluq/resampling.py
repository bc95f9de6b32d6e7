"""Resampling an evaluation cube: replication noise and language draws (formulas.md section 7).

One resample is a hypothetical replication of the whole benchmark: every (model, language)
score is redrawn with its replication noise, and the set of languages may be redrawn too.
:func:`resample` returns the draws as an ordinary ``xarray.Dataset``; :func:`evaluq.aggregate`
reduces them over languages. ``resample(..., lazy=True)`` (the default on a dask-backed cube)
returns the same Dataset backed by dask, one chunk per ``chunk_size`` resamples, so that a
consumer such as :func:`evaluq.aggregate` holds one chunk of scores at a time.

Random numbers are drawn in blocks of ``_block_size`` resamples (:data:`RNG_BLOCK`, 1000,
unless a cube has more than 16 777 cells per resample), each block from its own
stream (``SeedSequence(entropy, spawn_key=(block, purpose))``). The numbers therefore depend
only on ``rng`` (not on ``chunk_size``, laziness or the cube's chunking), and the first ``n``
resamples of a longer run are the ``n`` resamples of a shorter one.

:func:`resample` is a pipeline of short steps: ``_validate`` (the options),
``_plan`` (a private :class:`_Recipe`: the inputs every block is drawn from),
:meth:`_Recipe.block` (one block of resamples, drawn by the function of its replication
in :data:`_DRAWERS`),
``_collect_eager`` / ``_collect_lazy`` (the chunks, in memory or as dask tasks) and
``_assemble`` (the Dataset, in the cube's label order). A new replication mode is one
new drawer; a new language mode one branch of ``_draw_languages``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, NamedTuple

import numpy as np
import xarray as xr
from scipy import special

from evaluq import _streaming
from evaluq._dims import (  # the DRAWN_* names and LANGUAGE_SLOT are re-exported here
    BOOT_SCORE,
    BOOTSTRAP,
    CUBE_DIMS,
    DRAWN_BOOTSTRAP,
    DRAWN_LANGUAGE,
    DRAWN_SEED,
    DRAWN_SEED_COUNT,
    LANGUAGE,
    LANGUAGE_SLOT,
    MODEL,
    N_SEEDS,
    OBSERVED,
    RESAMPLE,
    SCALE_CHECK,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
    SEEDS_ARE,
)
from evaluq._kernels import count_valid, nanmean, nanstd
from evaluq._scale import ANALYSIS_REMEDY, scale_check_off, warn_scale
from evaluq._schema import bounds as cube_bounds
from evaluq._schema import is_summary, one_run_per_cell, orientation, validate
from evaluq._validation import RNGLike, check_choice, check_int, check_memory, check_rng
from evaluq.errors import CubeError

REPLICATIONS: Final = ("parametric", "nonparametric", "none")
LANGUAGE_MODES: Final = ("fixed", "bootstrap", "subsample")
SEED_MODES: Final = ("one", "bootstrap", "rescaled", "mean")
RNG_BLOCK: Final = 1000
"""Resamples per random-number block (each block has its own stream), at most; see
``_block_size``."""
BLOCK_VALUES: Final = 2**24
"""Scores one random-number block may hold (128 MiB of float64): a cube with more than
``BLOCK_VALUES // RNG_BLOCK`` (16 777) model x language cells per resample draws fewer
resamples per block, so that memory stays bounded however many languages it has."""
CHUNK_BYTES: Final = 64 * 2**20
"""Target size of one chunk of scores when ``chunk_size`` is left to :func:`resample`."""
MAX_AUTO_CHUNK: Final = 10_000
MAX_LAZY_CHUNKS: Final = 10_000
"""Chunks of resamples a lazy :func:`resample` may have: its dask graph (one task per chunk
and variable, built in memory at about a millisecond a chunk, more for what reduces it) grows
with the number of chunks, so more are refused, naming the ``chunk_size`` that fits."""
_N_THREADS: Final = max(1, min(4, os.cpu_count() or 1))

Replication = Literal["parametric", "nonparametric", "none"]
LanguageMode = Literal["fixed", "bootstrap", "subsample"]
SeedMode = Literal["one", "bootstrap", "rescaled", "mean"]


# --- numpy kernels --------------------------------------------------------------------------------

def _block_size(n_models: int, n_languages: int) -> int:
    """Resamples per random-number block for ``n_models`` x ``n_languages`` scores per
    resample: ``RNG_BLOCK`` (1000), fewer when a block would hold more than ``BLOCK_VALUES``
    scores. It depends on the cube's shape only, never on ``chunk_size`` or on the chunks.

    Examples
    --------
    >>> _block_size(6, 61), _block_size(6, 20_833), _block_size(600, 61)
    (1000, 134, 458)
    """
    return max(1, min(RNG_BLOCK, BLOCK_VALUES // max(1, n_models * n_languages)))


def _block_rngs(entropy: int, block: int) -> tuple[np.random.Generator, np.random.Generator]:
    """The two streams of one block: language draws, replication draws."""
    return (np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(block, 0))),
            np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(block, 1))))


def _draw_languages(gen: np.random.Generator, mode: str, n: int, n_lang: int,
                    k: int) -> np.ndarray | None:
    """Language positions (n, k) for one block; None for fixed languages."""
    if mode == "fixed":
        return None
    if mode == "bootstrap":
        return gen.integers(0, n_lang, size=(n, k))
    rows = np.broadcast_to(np.arange(n_lang), (n, n_lang))
    return gen.permuted(rows, axis=1)[:, :k]


def _seed_counts(s_idx: np.ndarray, n_seeds: int) -> np.ndarray:
    """Counts (n, k, S) of the seed positions (n, k, S) drawn with replacement."""
    n, k, _ = s_idx.shape
    flat = (np.arange(n * k)[:, None] * n_seeds + s_idx.reshape(n * k, n_seeds)).ravel()
    counts = np.bincount(flat, minlength=n * k * n_seeds).reshape(n, k, n_seeds)
    return counts.astype(np.min_scalar_type(n_seeds))


def _replicate_positions(gen: np.random.Generator, seeds: str, shape: tuple[int, ...],
                         n_s: int, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Nonparametric draws for language slots of ``shape`` (n, k): the seed positions (n, k)
    for ``seeds="one"`` or (n, k, S) drawn with replacement otherwise, and the replicate
    positions (n, k). The same for every model (the differences stay paired)."""
    if seeds == "one":
        s_idx = gen.integers(0, n_s, size=shape)
        return s_idx, gen.integers(0, n_b, size=shape)
    # two levels: one replicate b and S seeds with replacement per (resample, language slot),
    # b shared by every drawn seed (the same resampled test set)
    b_idx = gen.integers(0, n_b, size=shape)
    if seeds == "mean":      # every seed once: the mean over the seeds of replicate b
        return np.broadcast_to(np.arange(n_s), (*shape, n_s)), b_idx
    return gen.integers(0, n_s, size=(*shape, n_s)), b_idx


def _gather_replicates(boot: np.ndarray, seeds: str, bounds: tuple[float, float] | None,
                       lang: np.ndarray, s_idx: np.ndarray, b_idx: np.ndarray) -> np.ndarray:
    """Scores (model, *lang.shape) of the drawn replicates of ``boot`` (model, language, seed,
    bootstrap): element by element, so any slice of the cells gives the same numbers."""
    n_m, _, n_s, n_b = boot.shape
    if seeds == "one":
        return boot[:, lang, s_idx, b_idx]
    flat_boot = boot.reshape(n_m, -1)
    base = (lang * n_s) * n_b + b_idx                         # position of (l, seed 0, b)
    total = np.take(flat_boot, base + s_idx[..., 0] * n_b, axis=1)
    for j in range(1, n_s):                                   # S gathers of (model, n, k)
        total += np.take(flat_boot, base + s_idx[..., j] * n_b, axis=1)
    total /= n_s
    if seeds == "rescaled" and n_s > 1:
        # plain mean over seeds: a missing seed makes the centre NaN (never dropped silently)
        boot_mean = boot.mean(axis=2).reshape(n_m, -1)
        centre = np.take(boot_mean, lang * n_b + b_idx, axis=1)
        total -= centre
        total *= np.sqrt(n_s / (n_s - 1))
        total += centre
        if bounds is not None:                   # the stretch may leave the metric's range
            np.clip(total, *bounds, out=total)
    return total


def _ragged_positions(gen: np.random.Generator, seeds: str, shape: tuple[int, ...],
                      n_s: int, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Nonparametric draws of a cube with unequal seeds per cell: uniforms (n, k) for
    ``seeds="one"`` or (n, k, S) otherwise, shared by every model (each cell maps them onto
    its own seeds, ``_gather_ragged``), and the replicate positions (n, k)."""
    if seeds == "one":
        return gen.random(shape), gen.integers(0, n_b, size=shape)
    b_idx = gen.integers(0, n_b, size=shape)
    if seeds == "mean":
        return np.full((*shape, n_s), np.nan), b_idx
    return gen.random((*shape, n_s)), b_idx


def _gather_ragged(boot: np.ndarray, runs: np.ndarray, seeds: str,
                   bounds: tuple[float, float] | None, lang: np.ndarray, u: np.ndarray,
                   b_idx: np.ndarray) -> np.ndarray:
    """``_gather_replicates`` for unequal seeds: ``boot`` holds each cell's seeds first
    (model, language, seed, bootstrap) and ``runs`` (model, language) how many it has. Cell
    (m, l) draws its c = runs[m, l] seeds with replacement through the first c uniforms,
    position floor(u c); ``"mean"`` takes every seed of the cell once; ``"rescaled"`` stretches
    the mean about the cell's mean replicate by sqrt(c / (c - 1)). A cell without seeds is NaN.
    """
    n_m, _, n_s, n_b = boot.shape
    flat = boot.reshape(n_m, -1)
    rows = np.arange(n_m)[:, None, None]
    c = runs[:, lang]                                          # (model, n, k)
    base = (lang * n_s) * n_b + b_idx
    if seeds == "one":
        return flat[rows, base + np.floor(u * c).astype(np.intp) * n_b]
    total = np.zeros(c.shape)
    for j in range(n_s):                                      # S gathers of (model, n, k)
        pos = j if seeds == "mean" else np.floor(u[..., j] * c).astype(np.intp)
        total += np.where(j < c, flat[rows, base + pos * n_b], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        total /= c
        if seeds == "rescaled":
            kept = np.arange(n_s)[:, None] < runs[..., None, None]   # (M, L, S, 1)
            centre_all = np.where(kept, boot, 0.0).sum(axis=2) / runs[..., None]
            centre = centre_all.reshape(n_m, -1)[rows, lang * n_b + b_idx]
            stretch = np.sqrt(np.where(c > 1, c / (c - 1), 1.0))
            total = centre + (total - centre) * stretch
            if bounds is not None:
                np.clip(total, *bounds, out=total)
    return total


def _ragged_runs(score: np.ndarray, boot: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``boot`` with each cell's seeds first and the seeds per cell, when some observed cell
    lacks some seed (a missing run, or models run with different numbers of seeds); else
    ``boot`` and None (the equal-seed draws, whose numbers stay as they were)."""
    valid = ~np.isnan(score)
    runs = valid.sum(axis=2)
    if not ((runs > 0) & (runs < score.shape[2])).any():
        return boot, None
    order = np.argsort(~valid, axis=2, kind="stable")[..., None]
    return np.ascontiguousarray(np.take_along_axis(boot, order, axis=2)), runs.astype(float)


def _truncated_normal(obs: np.ndarray, scale: np.ndarray, bounds: tuple[float, float],
                      u: np.ndarray) -> np.ndarray:
    """Scores from N(obs, scale^2) truncated to ``bounds``, by inverse CDF of ``u`` ~ U(0, 1).

    z = Phi^-1(Phi(a) + u (Phi(b) - Phi(a))) with a, b the standardised bounds; every draw
    lies in [lower, upper]. A cell with scale 0 stays at its observed score.
    """
    lo, hi = bounds
    with np.errstate(invalid="ignore", divide="ignore"):
        p_lo = special.ndtr((lo - obs) / scale)
        p_hi = special.ndtr((hi - obs) / scale)
        values = obs + scale * special.ndtri(p_lo + u * (p_hi - p_lo))
    values = np.where(scale > 0, values, obs)
    return np.clip(values, lo, hi)


@dataclass(frozen=True)
class _Inputs:
    observed: np.ndarray                 # (model, language) seed means
    scale: np.ndarray | None             # (model, language) parametric SD
    boot: np.ndarray | None              # (model, language, seed, bootstrap); None if streamed
    bounds: tuple[float, float] | None = None  # the metric's range
    n_seeds: int = 1                     # S and B of the replicates (nonparametric)
    n_boot: int = 1
    model_rows: np.ndarray | None = None  # the cube's position of each (canonical) model
    runs: np.ndarray | None = None       # (model, language) seeds per cell, ragged cubes only


@dataclass(frozen=True)
class _Options:
    n_resamples: int
    replication: str
    languages: str
    n_languages: int
    entropy: int
    chunk_size: int
    seeds: str | None
    lazy: bool
    block: int = RNG_BLOCK
    """Resamples per random-number block (``_block_size``)."""
    fresh_seed: int | None = None
    """With ``rng=None``: the seed drawn for the run (``rng=fresh_seed`` repeats it)."""


class _Block(NamedTuple):
    """One block of resamples: scores (model, n, k) laid out model-first (None when only the
    draws were asked for), language positions (n, k) or None, seed positions (n, k) or seed
    counts (n, k, S), replicate positions (n, k) (None unless nonparametric)."""

    values: np.ndarray | None
    lang: np.ndarray | None
    seeds: np.ndarray | None
    boots: np.ndarray | None


# --- draw: one block of resamples, one drawer per replication -------------------------------------

def _draw_parametric(inputs: _Inputs, seeds: str, lang: np.ndarray | None,
                     gen: np.random.Generator, n: int, values: bool, draws: bool) -> _Block:
    """N(observed, scale^2) scores, independent across models (truncated to declared bounds).

    The draws fill the block model by model (one generator call per model, the same stream
    as one call for the whole block), each model straight into its row of the cube's model
    order, and each row is scaled and shifted while it is in cache.
    """
    if not values:
        return _Block(None, lang, None, None)
    assert inputs.scale is not None
    obs, scale = inputs.observed, inputs.scale
    n_m = obs.shape[0]
    k = obs.shape[1] if lang is None else lang.shape[1]
    if inputs.bounds is not None:
        if lang is None:
            obs_k, scale_k = obs[:, None, :], scale[:, None, :]
        else:
            obs_k, scale_k = np.take(obs, lang, axis=1), np.take(scale, lang, axis=1)
        drawn = _truncated_normal(obs_k, scale_k, inputs.bounds, gen.random((n_m, n, k)))
        return _Block(_in_cube_order(drawn, inputs.model_rows), lang, None, None)
    out = np.empty((n_m, n, k))
    rows = range(n_m) if inputs.model_rows is None else inputs.model_rows
    flat = None if lang is None else lang.reshape(-1)
    for model, row in enumerate(rows):
        block = out[row]
        gen.standard_normal(out=block)
        if flat is None:
            block *= scale[model]
            block += obs[model]
        else:
            line = block.reshape(-1)              # a view: the row is C-contiguous
            line *= scale[model].take(flat)
            line += obs[model].take(flat)
    return _Block(out, lang, None, None)


def _in_cube_order(values: np.ndarray, model_rows: np.ndarray | None) -> np.ndarray:
    """``values`` (model, ...) in the canonical model order, put in the cube's order."""
    if model_rows is None:
        return values
    out = np.empty_like(values)
    out[model_rows] = values
    return out


def _draw_none(inputs: _Inputs, seeds: str, lang: np.ndarray | None,
               gen: np.random.Generator, n: int, values: bool, draws: bool) -> _Block:
    """The observed seed means, unchanged (only the languages vary)."""
    if not values:
        return _Block(None, lang, None, None)
    obs = inputs.observed
    out = (np.repeat(obs[:, None, :], n, axis=1) if lang is None
           else np.take(obs, lang, axis=1))
    return _Block(_in_cube_order(out, inputs.model_rows), lang, None, None)


def _draw_nonparametric(inputs: _Inputs, seeds: str, lang: np.ndarray | None,
                        gen: np.random.Generator, n: int, values: bool, draws: bool) -> _Block:
    """The cube's own replicates, the same draw for every model (see :func:`resample`)."""
    n_l = inputs.observed.shape[1]
    slots = np.broadcast_to(np.arange(n_l), (n, n_l)) if lang is None else lang
    if inputs.runs is not None:
        return _draw_ragged(inputs, seeds, lang, slots, gen, values, draws)
    s_idx, b_idx = _replicate_positions(gen, seeds, slots.shape, inputs.n_seeds, inputs.n_boot)
    out = None
    if values:
        assert inputs.boot is not None
        out = _in_cube_order(
            _gather_replicates(inputs.boot, seeds, inputs.bounds, slots, s_idx, b_idx),
            inputs.model_rows)
    if draws and s_idx.ndim == 3:
        s_idx = _seed_counts(s_idx, inputs.n_seeds)
    return _Block(out, lang, s_idx if draws else None, b_idx if draws else None)


def _draw_ragged(inputs: _Inputs, seeds: str, lang: np.ndarray | None, slots: np.ndarray,
                 gen: np.random.Generator, values: bool, draws: bool) -> _Block:
    """``_draw_nonparametric`` for a cube with unequal seeds per cell. The recorded seed
    draws are those of a cell with every seed (position floor(u S)); a cell with c seeds maps
    the same uniforms onto its own seeds."""
    assert inputs.runs is not None
    u, b_idx = _ragged_positions(gen, seeds, slots.shape, inputs.n_seeds, inputs.n_boot)
    out = None
    if values:
        assert inputs.boot is not None
        out = _in_cube_order(_gather_ragged(inputs.boot, inputs.runs, seeds, inputs.bounds,
                                            slots, u, b_idx), inputs.model_rows)
    s_idx = None
    if draws:
        s_idx = (np.broadcast_to(np.arange(inputs.n_seeds), u.shape) if seeds == "mean"
                 else np.floor(u * inputs.n_seeds).astype(np.intp))
        if s_idx.ndim == 3:
            s_idx = _seed_counts(s_idx, inputs.n_seeds)
    return _Block(out, lang, s_idx, b_idx if draws else None)


Drawer = Callable[[_Inputs, str, "np.ndarray | None", np.random.Generator, int, bool, bool],
                  _Block]
_DRAWERS: Final[dict[str, Drawer]] = {
    "parametric": _draw_parametric,
    "nonparametric": _draw_nonparametric,
    "none": _draw_none,
}
"""One drawer per replication mode: a new mode is one new entry (and its inputs in
``_inputs``)."""


# --- the recipe every chunk is drawn from (private) -----------------------------------------------

@dataclass(frozen=True, eq=False)
class _Recipe:
    """What every block of resamples is drawn from: the options, the (model, language) inputs
    in the canonical (sorted) label order, the labels and the positions restoring the cube's
    order. Shipped to every dask task (a few kilobytes, unless the replicates of an in-memory
    cube are drawn nonparametrically)."""

    options: _Options
    inputs: _Inputs = field(repr=False)
    coords: dict[str, np.ndarray] = field(repr=False)
    restore: dict[str, np.ndarray] = field(repr=False)
    attrs: dict[str, Any] = field(repr=False)

    @property
    def n_models(self) -> int:
        return int(self.inputs.observed.shape[0])

    @property
    def slot(self) -> str:
        return LANGUAGE if self.options.languages == "fixed" else LANGUAGE_SLOT

    def block(self, block: int, n: int, *, values: bool = True, draws: bool = True) -> _Block:
        """Resamples ``block * size`` to ``+ n``, ``size = options.block`` (a block always
        draws ``size`` resamples and keeps the first n, so a short run is the start of a long
        one)."""
        opts = self.options
        g_lang, g_rep = _block_rngs(opts.entropy, block)
        n_l = self.inputs.observed.shape[1]
        lang = _draw_languages(g_lang, opts.languages, opts.block, n_l, opts.n_languages)
        drawn = _DRAWERS[opts.replication](self.inputs, opts.seeds or "one", lang, g_rep,
                                           opts.block, values, draws)
        if n == opts.block:
            return drawn
        return _Block(None if drawn.values is None else drawn.values[:, :n],
                      *(None if a is None else a[:n] for a in drawn[1:]))


def _spans(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    return [(b, min(b + size, stop)) for b in range(start, stop, size)]


def _chunk_blocks(recipe: _Recipe, start: int, stop: int, *, values: bool, draws: bool,
                  pool: ThreadPoolExecutor | None = None) -> list[_Block]:
    size = recipe.options.block

    def one(span: tuple[int, int]) -> _Block:
        return recipe.block(span[0] // size, span[1] - span[0], values=values, draws=draws)

    spans = _spans(start, stop, size)
    return list(pool.map(one, spans) if pool is not None and len(spans) > 1 else map(one, spans))


def _chunk_scores(recipe: _Recipe, start: int, stop: int,
                  pool: ThreadPoolExecutor | None = None) -> np.ndarray:
    """Scores (n, model, k) of resamples ``start:stop`` (canonical order)."""
    blocks = _chunk_blocks(recipe, start, stop, values=True, draws=False, pool=pool)
    parts = [b.values for b in blocks if b.values is not None]
    values = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    return np.moveaxis(values, 0, 1)


def _chunk_draws(recipe: _Recipe, start: int, stop: int) -> dict[str, np.ndarray]:
    """The drawn labels / seed counts of resamples ``start:stop`` (see ``_draw_specs``)."""
    blocks = _chunk_blocks(recipe, start, stop, values=False, draws=True)
    out: dict[str, np.ndarray] = {}
    coords = recipe.coords

    def cat(i: int) -> np.ndarray:
        parts: list[np.ndarray] = [a for b in blocks if (a := b[i]) is not None]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    if blocks[0].lang is not None:
        out[DRAWN_LANGUAGE] = coords[LANGUAGE][cat(1)]
    if blocks[0].seeds is not None:
        seeds = cat(2)
        if seeds.ndim == 2:
            out[DRAWN_SEED] = coords[SEED][seeds]
        else:
            out[DRAWN_SEED_COUNT] = seeds
        if BOOTSTRAP in coords:
            out[DRAWN_BOOTSTRAP] = coords[BOOTSTRAP][cat(3)]
    return out


def _draw_specs(recipe: _Recipe) -> dict[str, tuple[tuple[str, ...], tuple[int, ...], Any]]:
    """Dims, trailing shape (after ``resample``) and dtype of every drawn variable."""
    opts, coords, slot = recipe.options, recipe.coords, recipe.slot
    k = opts.n_languages
    specs: dict[str, tuple[tuple[str, ...], tuple[int, ...], Any]] = {}
    if opts.languages != "fixed":
        specs[DRAWN_LANGUAGE] = ((RESAMPLE, slot), (k,), coords[LANGUAGE].dtype)
    if opts.replication == "nonparametric":
        n_s = recipe.inputs.n_seeds
        if opts.seeds == "one":
            specs[DRAWN_SEED] = ((RESAMPLE, slot), (k,), coords[SEED].dtype)
        else:
            specs[DRAWN_SEED_COUNT] = ((RESAMPLE, slot, SEED), (k, n_s),
                                       np.min_scalar_type(n_s))
        if BOOTSTRAP in coords:
            specs[DRAWN_BOOTSTRAP] = ((RESAMPLE, slot), (k,), coords[BOOTSTRAP].dtype)
    return specs


# --- collect: the chunks in memory, or as dask tasks ----------------------------------------------

def _collect_eager(recipe: _Recipe) -> dict[str, np.ndarray]:
    """Every variable in memory. The blocks are drawn in a thread pool (numpy releases the
    GIL while it fills arrays; every block has its own stream, so the numbers do not depend
    on the number of threads) and joined in their drawn, model-first layout (a contiguous
    copy; the scores are a transposed view of it)."""
    spans = _spans(0, recipe.options.n_resamples, recipe.options.block)
    with ThreadPoolExecutor(max_workers=_N_THREADS) as pool:
        blocks = list(pool.map(lambda span: _chunk_scores(recipe, *span), spans))
    drawn = [np.moveaxis(b, 0, 1) for b in blocks]            # (model, n, k) each
    scores = drawn[0] if len(drawn) == 1 else np.concatenate(drawn, axis=1)
    return {SCORE: np.moveaxis(scores, 0, 1),
            **_chunk_draws(recipe, 0, recipe.options.n_resamples)}


def _collect_lazy(recipe: _Recipe, boot: Any = None) -> dict[str, Any]:
    """Every variable as a dask array, one task per chunk of resamples (and, for replicates
    streamed from a dask-backed ``boot_score``, per chunk of the cube's models and languages)."""
    opts = recipe.options
    spans = _spans(0, opts.n_resamples, opts.chunk_size)
    n_m, k = recipe.n_models, opts.n_languages
    payload = _streaming.delayed_payload(recipe)
    if boot is None:
        score = _streaming.from_chunks(_chunk_scores, payload, spans, (n_m, k), np.float64)
    else:
        score = _streaming.from_boot_blocks(
            _streamed_scores, payload, spans, boot, None if opts.languages == "fixed" else k)
    out: dict[str, Any] = {SCORE: score}
    specs = _draw_specs(recipe)
    if specs:
        tasks = _streaming.chunk_tasks(_chunk_draws, payload, spans)
        for name, (_, tail, dtype) in specs.items():
            out[name] = _streaming.concat_items(tasks, name, spans, tail, dtype)
    return out


def _streamed_scores(recipe: _Recipe, start: int, stop: int, boot: np.ndarray,
                     lang_lo: int) -> np.ndarray:
    """Scores (n, models of ``boot``, k) of resamples ``start:stop`` drawn from one block of a
    dask-backed ``boot_score``: ``boot`` holds some models, the languages ``lang_lo`` onwards
    and every seed and replicate. The draws are those of the whole cube (drawn again here,
    cheaply); with fixed languages the block's languages are the result's, with drawn
    languages the slots holding another block's languages are 0 (the blocks' results add
    up to the scores: each slot is filled by exactly one block)."""
    opts, inputs = recipe.options, recipe.inputs
    n_l = inputs.observed.shape[1]
    lang_hi = lang_lo + boot.shape[1]
    seeds = opts.seeds or "one"
    out = []
    size = opts.block
    for b0, b1 in _spans(start, stop, size):
        g_lang, g_rep = _block_rngs(opts.entropy, b0 // size)
        lang = _draw_languages(g_lang, opts.languages, size, n_l, opts.n_languages)
        slots = np.broadcast_to(np.arange(n_l), (size, n_l)) if lang is None else lang
        s_idx, b_idx = _replicate_positions(g_rep, seeds, slots.shape, inputs.n_seeds,
                                            inputs.n_boot)
        n = b1 - b0
        slots, s_idx, b_idx = slots[:n], s_idx[:n], b_idx[:n]
        if lang is None:
            cols = slice(lang_lo, lang_hi)
            values = _gather_replicates(boot, seeds, inputs.bounds, slots[:, cols] - lang_lo,
                                        s_idx[:, cols], b_idx[:, cols])
        else:
            mine = (slots >= lang_lo) & (slots < lang_hi)
            values = np.zeros((boot.shape[0], *slots.shape))
            values[:, mine] = _gather_replicates(boot, seeds, inputs.bounds,
                                                 slots[mine] - lang_lo, s_idx[mine], b_idx[mine])
        out.append(values)
    return np.moveaxis(out[0] if len(out) == 1 else np.concatenate(out, axis=1), 0, 1)


# --- plan: the inputs of the draws ----------------------------------------------------------------

def _parametric_scale(cube: xr.Dataset, observed: np.ndarray) -> np.ndarray:
    """sqrt(sigma_seed^2 / S + sigma_boot^2) per (model, language)."""
    if is_summary(cube):
        for var in (SD_SEED, SD_BOOT):
            if var not in cube and not (var == SD_SEED and one_run_per_cell(cube)):
                raise CubeError(
                    f"`replication='parametric'` needs {var!r} in a summary-only cube; it has "
                    f"none (add the column; a column of zeros claims the component is absent "
                    f"and narrows every interval)")
        sd_boot = cube[SD_BOOT].transpose(MODEL, LANGUAGE).values
        # one run per cell and no sd_seed: the seed term is unknown, left out (and said so)
        sd_seed = (cube[SD_SEED].transpose(MODEL, LANGUAGE).values if SD_SEED in cube
                   else np.zeros_like(sd_boot))
        n_seeds = (cube[N_SEEDS].transpose(MODEL, LANGUAGE).values if N_SEEDS in cube
                   else np.ones_like(sd_seed))
    else:
        if BOOT_SCORE not in cube:
            raise CubeError(
                f"`replication='parametric'` needs the boot-to-boot SD: the cube has no "
                f"{BOOT_SCORE!r} (build it with bootstrap replicates, or use eq.from_summary "
                f"with `sd_boot`; replication='nonparametric' redraws the seeds alone and "
                f"says that the test-set noise is not included)")
        score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
        boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP)
        if cube.attrs.get(SEEDS_ARE) == "epochs":
            return _epoch_mean_sd(boot, score)
        n_seeds = count_valid(score).astype(np.float64)
        sd_seed = nanstd(score, 1)
        sd_boot = nanmean(_streaming.boot_sd(boot, score, 1) if boot.chunks is not None
                          else nanstd(boot.values, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(sd_seed**2 / n_seeds + sd_boot**2)
    bad = ~np.isnan(observed) & np.isnan(scale)
    if bad.any():
        m, lang = np.argwhere(bad)[0]
        raise CubeError(
            f"`replication='parametric'` needs the seed SD and the boot SD of every observed "
            f"(model, language); {int(bad.sum())} cell(s) lack one, for example model "
            f"{cube[MODEL].values.tolist()[m]!r}, language "
            f"{cube[LANGUAGE].values.tolist()[lang]!r} (a seed SD needs at least 2 seeds). "
            f"Give both SDs of every cell, or use "
            + ("replication='nonparametric' (the cube's bootstrap replicates, redrawn paired "
               "across models; the run-to-run noise a single seed cannot show is left out) or "
               if BOOT_SCORE in cube else "")
            + "replication='none' (each cell's mean as it is, no noise within the cell)")
    return scale


def _epoch_mean_sd(boot: xr.DataArray, score: np.ndarray) -> np.ndarray:
    """SD over replicates of the mean over epochs (model, language): the item bootstrap of
    the epochs' mean already holds the within-item (epoch-to-epoch) variance, so no seed
    term is added (adding sd_seed^2/S would count it twice)."""
    mean_boot = boot.mean(SEED, skipna=False).expand_dims(SEED, axis=2)
    centre = nanmean(score)[..., None]
    sd = (_streaming.boot_sd(mean_boot, centre, 1) if mean_boot.chunks is not None
          else nanstd(mean_boot.values, 1))
    return np.asarray(sd)[..., 0]


def _inputs(cube: xr.Dataset, replication: str) -> tuple[_Inputs, Any]:
    """The inputs of the draws, and ``boot_score`` as a dask array (model, language, seed,
    bootstrap; seed and bootstrap one chunk each) when its replicates are streamed."""
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
    observed = nanmean(score)
    if replication == "parametric":
        return _Inputs(observed, _parametric_scale(cube, observed), None,
                       bounds=cube_bounds(cube)), None
    if replication != "nonparametric":
        return _Inputs(observed, None, None), None
    bounds = cube_bounds(cube)
    if BOOT_SCORE not in cube:
        boot, runs = _ragged_runs(score, _seeds_only_replicates(cube, score))
        return _Inputs(observed, None, np.ascontiguousarray(boot), bounds, boot.shape[2], 1,
                       runs=runs), None
    lazy = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP)
    n_s, n_b = lazy.sizes[SEED], lazy.sizes[BOOTSTRAP]
    if lazy.chunks is not None:
        streamed = lazy.data.astype(np.float64).rechunk({2: -1, 3: -1})
        return _Inputs(observed, None, None, bounds, n_s, n_b), streamed
    boot, runs = _ragged_runs(score, np.asarray(lazy.values, dtype=np.float64))
    return _Inputs(observed, None, np.ascontiguousarray(boot), bounds, n_s, n_b,
                   runs=runs), None


def _seeds_only_replicates(cube: xr.Dataset, score: np.ndarray) -> np.ndarray:
    """The seeds' scores as a single "replicate" (model, language, seed, 1), for the
    nonparametric seed bootstrap of a cube without ``boot_score``."""
    if is_summary(cube):
        raise CubeError(
            "`replication='nonparametric'` redraws the cube's own seeds or bootstrap "
            "replicates; a summary-only cube has neither (use replication='parametric', which "
            "draws from its 'sd_seed' and 'sd_boot')")
    if cube.sizes[SEED] < 2:
        raise CubeError(
            f"`replication='nonparametric'` needs {BOOT_SCORE!r} or at least 2 seeds to redraw; "
            f"the cube has one seed and no bootstrap replicates, so it holds no information "
            f"about the replication noise (an interval from it would have width zero)")
    return score[..., None]


def _canonical(cube: xr.Dataset) -> tuple[xr.Dataset, dict[str, np.ndarray]]:
    """The cube with every dim's labels sorted, and the positions that restore the order.

    Random draws are made on the sorted cube, so the numbers do not depend on the order of
    models, languages, seeds or replicates in the input (the multilingual paper's tool swapped
    model labels when the input rows were reordered).
    """
    order: dict[str, np.ndarray] = {}
    for dim in CUBE_DIMS:
        if dim not in cube.dims:
            continue
        try:
            positions = np.argsort(cube[dim].values, kind="stable")
        except TypeError:           # labels of mixed types: keep the cube's order
            continue
        if not np.array_equal(positions, np.arange(len(positions))):
            order[dim] = positions
    if not order:
        return cube, {}
    canon = cube.isel(order)
    restore: dict[str, np.ndarray] = {
        dim: np.argsort(order[dim], kind="stable") for dim in (MODEL, LANGUAGE) if dim in order}
    return canon, restore


def _test_set_noise(cube: xr.Dataset, replication: str,
                    bounds: tuple[float, float] | None) -> str:
    """How the test-set sampling noise enters the resamples (recorded in the attrs)."""
    if replication == "none":
        return "not included: replication='none' keeps every score fixed"
    if replication == "parametric":
        shape = ("normal" if bounds is None else
                 "normal truncated to the metric's bounds {:g}..{:g}".format(*bounds))
        if cube.attrs.get(SEEDS_ARE) == "epochs" and BOOT_SCORE in cube:
            return (f"included: {shape} noise with the variance over replicates of the mean "
                    "over epochs (before truncation), independent across models")
        if is_summary(cube) and SD_SEED not in cube:
            return (f"included: {shape} noise with variance sd_boot^2 (before truncation), "
                    "independent across models. The run-to-run (seed) noise is NOT included: "
                    "each mean is one run and the cube has no 'sd_seed', so the intervals are "
                    "too narrow by the unseen run-to-run spread")
        return (f"included: {shape} noise with variance sd_seed^2/n_seeds + sd_boot^2 "
                "(before truncation), independent across models")
    if BOOT_SCORE in cube:
        return "included: a bootstrap replicate of the test set, shared by all models"
    return ("NOT included: the cube has no bootstrap replicates, so only the seeds are "
            "redrawn (paired across models); intervals cover seed noise alone and are too "
            "narrow by the unseen test-set sampling error")


def _attrs(cube: xr.Dataset, opts: _Options, inputs: _Inputs) -> dict[str, Any]:
    """The attributes of the resamples (and of every aggregate of them)."""
    bounds = inputs.bounds
    return {
        "metric": cube.attrs.get("metric", ""),
        "higher_is_better": int(orientation(cube.attrs)),
        "replication": opts.replication,
        **({"seeds": opts.seeds} if opts.seeds is not None else {}),
        "languages": opts.languages,
        "n_languages": opts.n_languages,
        "n_resamples": opts.n_resamples,
        "rng_entropy": str(opts.entropy),
        **({"rng_seed": str(opts.fresh_seed)} if opts.fresh_seed is not None else {}),
        "test_set_noise": _test_set_noise(cube, opts.replication, bounds),
        **({"bounds": np.asarray(bounds)} if bounds is not None else {}),
        **({SCALE_CHECK: 0} if scale_check_off(cube.attrs) else {}),
    }


def _plan(cube: xr.Dataset, opts: _Options) -> tuple[_Recipe, Any]:
    """The recipe of the draws (canonical label order) and the streamed ``boot_score``."""
    canon, restore = _canonical(cube)
    inputs, streamed = _inputs(canon, opts.replication)
    if MODEL in restore:         # the drawers write each model's scores in the cube's order
        inputs = replace(inputs, model_rows=np.argsort(restore[MODEL]))
    coords = {dim: canon[dim].values for dim in (MODEL, LANGUAGE, SEED, BOOTSTRAP)
              if dim in canon.dims}
    return _Recipe(opts, inputs, coords, restore, _attrs(canon, opts, inputs)), streamed


# --- validate -------------------------------------------------------------------------------------

def _validate(cube: Any, n_resamples: Any, replication: Any, languages: Any,
              n_languages: Any, rng: RNGLike, chunk_size: Any, lazy: Any, seeds: Any
              ) -> tuple[xr.Dataset, _Options]:
    on_dask = _streaming.is_dask(cube)
    cube = _streaming.prepare(cube) if on_dask else validate(cube)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if n_resamples < 2:
        raise ValueError(f"`n_resamples` must be >= 2 (one resample says nothing about a "
                         f"spread: its interval would have width zero); got {n_resamples}")
    replication = check_choice("replication", replication, REPLICATIONS)
    if replication == "nonparametric":
        seeds = (_default_seed_mode(cube) if seeds is None
                 else check_choice("seeds", seeds, SEED_MODES))
    elif seeds is not None:
        raise ValueError(f"`seeds` applies only to replication='nonparametric' (it says how "
                         f"the seeds' bootstrap replicates are drawn); got seeds={seeds!r} with "
                         f"replication={replication!r}")
    languages = check_choice("languages", languages, LANGUAGE_MODES)
    k = _check_n_languages(languages, n_languages, cube.sizes[LANGUAGE])
    if lazy is None:
        lazy = on_dask
    elif not isinstance(lazy, bool):
        raise TypeError(f"`lazy` must be True, False or None; got {lazy!r}")
    if chunk_size is None:
        per_resample = 8 * cube.sizes[MODEL] * k
        chunk_size = min(MAX_AUTO_CHUNK, max(1, CHUNK_BYTES // per_resample))
    chunk_size = check_int("chunk_size", chunk_size, minimum=1)
    block = _block_size(cube.sizes[MODEL], k)
    chunk_size = -(-chunk_size // block) * block
    _check_size(n_resamples, chunk_size if lazy else block, lazy, cube.sizes[MODEL] * k)
    fresh = None
    if rng is None:              # a fresh seed, recorded: passed back as rng it repeats the run
        fresh = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    entropy = int(check_rng(rng if fresh is None else fresh).integers(0, 2**63))
    return cube, _Options(n_resamples, replication, languages, k, entropy, chunk_size, seeds,
                          lazy, block, fresh)


def _default_seed_mode(cube: xr.Dataset) -> str:
    """``"mean"`` for a cube whose seeds are epochs of the same items with replicates shared
    by the epochs (``attrs["seeds_are"] == "epochs"``, as :func:`evaluq.from_items` records),
    ``"bootstrap"`` otherwise."""
    epochs = cube.attrs.get(SEEDS_ARE) == "epochs" and BOOT_SCORE in cube
    return "mean" if epochs else "bootstrap"


def _check_size(n_resamples: int, chunk: int, lazy: bool, cells: int) -> None:
    """Refuse, before anything is built, a lazy graph of more than :data:`MAX_LAZY_CHUNKS`
    tasks per variable, or an in-memory result above evaluq's memory budget
    (``EVALUQ_MEMORY_BUDGET``, :func:`evaluq._validation.check_memory`)."""
    n_chunks = -(-n_resamples // chunk)
    if lazy and n_chunks > MAX_LAZY_CHUNKS:
        need = -(-n_resamples // MAX_LAZY_CHUNKS)
        raise ValueError(
            f"`n_resamples`={n_resamples} in chunks of `chunk_size`={chunk} would make "
            f"{n_chunks} dask tasks per variable; a lazy resample holds at most "
            f"MAX_LAZY_CHUNKS={MAX_LAZY_CHUNKS} chunks (its graph is built in memory): "
            f"pass chunk_size >= {need} or fewer resamples")
    if not lazy:                  # the in-memory result: within evaluq's memory budget
        check_memory("n_resamples", 8 * n_resamples * cells,
                     hint=f" ({n_resamples} resamples of {cells} scores), or pass lazy=True "
                          f"(chunks of `chunk_size`, computed as they are reduced)")


def _check_n_languages(languages: str, n_languages: Any, n_l: int) -> int:
    """Languages per resample (L for fixed languages)."""
    if languages == "fixed":
        if n_languages is not None:
            raise ValueError(f"`n_languages` must be None with languages='fixed'; got "
                             f"{n_languages!r}")
        return n_l
    if languages == "bootstrap":
        return n_l if n_languages is None else check_int("n_languages", n_languages, minimum=1)
    if n_languages is None:
        raise ValueError("`n_languages` is required with languages='subsample'")
    if n_l < 2:
        raise ValueError(f"languages='subsample' needs at least 2 languages; the cube "
                         f"has {n_l}")
    return check_int("n_languages", n_languages, minimum=1, maximum=n_l - 1)


# --- assemble -------------------------------------------------------------------------------------

def _assemble(recipe: _Recipe, arrays: dict[str, Any], streamed: bool = False) -> xr.Dataset:
    """The resamples as a Dataset in the cube's label order (numpy or dask arrays alike).

    The drawers give the scores in the cube's model order already; replicates streamed from
    a dask ``boot_score`` come in the canonical order and are reordered here (lazily).
    """
    opts, coords = recipe.options, recipe.coords
    models = recipe.restore.get(MODEL)
    score = arrays[SCORE]
    if streamed and models is not None:
        score = score[:, models]
    observed = recipe.inputs.observed
    data_vars: dict[str, Any] = {
        SCORE: ((RESAMPLE, MODEL, recipe.slot), score),
        OBSERVED: ((MODEL, LANGUAGE), observed if models is None else observed[models]),
    }
    for name, (dims, _, _) in _draw_specs(recipe).items():
        data_vars[name] = (dims, arrays[name])
    out_coords = {RESAMPLE: np.arange(opts.n_resamples),
                  MODEL: coords[MODEL] if models is None else coords[MODEL][models],
                  LANGUAGE: coords[LANGUAGE]}
    if DRAWN_SEED_COUNT in data_vars:
        out_coords[SEED] = coords[SEED]
    out = xr.Dataset(data_vars, coords=out_coords)
    if LANGUAGE in recipe.restore:
        out = out.isel({LANGUAGE: recipe.restore[LANGUAGE]})
    out.attrs = dict(recipe.attrs)
    out[SCORE].attrs["description"] = "resampled score (seed mean plus replication noise)"
    out[OBSERVED].attrs["description"] = "observed seed-mean score of each (model, language)"
    return out


# --- public function ------------------------------------------------------------------------------

def resample(
    cube: xr.Dataset,
    *,
    n_resamples: int = 10_000,
    replication: Replication = "parametric",
    languages: LanguageMode = "fixed",
    n_languages: int | None = None,
    rng: RNGLike = None,
    chunk_size: int | None = None,
    lazy: bool | None = None,
    seeds: SeedMode | None = None,
) -> xr.Dataset:
    r"""Replicate a benchmark: redraw every score with its noise, and optionally the languages.

    Replication noise (``replication``), with :math:`\bar y_{ml}` the mean over the S seeds:

    * ``"parametric"``: :math:`y^{(r)}_{ml} = \bar y_{ml} + \varepsilon^{(r)}_{ml}`,
      :math:`\varepsilon^{(r)}_{ml} \sim N(0, \sigma_{seed,ml}^2 / S_{ml} + \sigma_{boot,ml}^2)`,
      a fresh draw for every resample. :math:`\sigma_{seed}` is the SD over seeds (ddof=1),
      :math:`\sigma_{boot}` the mean over seeds of the SD over bootstrap replicates
      (formulas.md section 6); a summary-only cube supplies ``sd_seed``, ``sd_boot`` and
      ``n_seeds`` (with one run per mean and no ``sd_seed``, ``sd_boot`` alone, and
      ``test_set_noise`` says the run-to-run noise is not included). The noise is
      **independent across models**: a summary cube says nothing about how models'
      test-set errors correlate, so none is assumed. When models share test sets
      and their errors are positively correlated this overstates the SD of differences
      (conservative); use ``"nonparametric"`` for paired differences.
      A cube with declared ``bounds`` (the loaders' ``bounds=(lower, upper)``) draws from
      this normal **truncated** to the bounds, so that no draw leaves the metric's range
      (and ``how="gmean"`` never meets a score <= 0 on a metric bounded below by 0); near a
      bound the draws then lean inward and the interval is narrower on that side than the
      normal one. The attribute ``test_set_noise`` records it.
    * ``"nonparametric"``: the cube's own bootstrap replicates :math:`y^*_{mlsb}`. For every
      resample and language one replicate b is drawn uniformly and used by **every** model
      (the same resampled test set: differences stay paired). How seeds enter is set by
      ``seeds`` (below). A cube **without** ``boot_score`` (seeds only, S >= 2) has its seeds
      redrawn the same way, paired across models, with the full-test-set scores in place of
      the replicates: the test-set sampling noise is then **not included** (nothing in the
      cube measures it) and the intervals are too narrow by it. The attribute
      ``test_set_noise`` of the result (and of :func:`evaluq.aggregate`'s) says so; add
      bootstrap replicates (:func:`evaluq.from_predictions`) or the boot SDs
      (:func:`evaluq.from_summary` with ``replication="parametric"``) to include it. One seed
      and no replicates raise (no noise to redraw).
    * ``"none"``: :math:`y^{(r)}_{ml} = \bar y_{ml}` (only the languages vary).

    Seeds with ``replication="nonparametric"`` (``seeds``), the same draw for every model;
    with :math:`\bar y^*_{mlb} = \frac1S \sum_s y^*_{mlsb}` and
    :math:`V_{ml} = \frac1B \sum_b \frac{1}{S-1}\sum_s (y^*_{mlsb} - \bar y^*_{mlb})^2`, the
    exact variance of one draw given the cube is stated for each:

    * ``"one"`` (the multilingual paper's scheme): one seed s drawn uniformly,
      :math:`y^{(r)}_{ml} = y^*_{mlsb}`. Variance
      :math:`\operatorname{Var}_b \bar y^*_{mlb} + \frac{S-1}{S} V_{ml}`, about
      :math:`\sigma_{boot}^2 + \sigma_{seed}^2`: the uncertainty of a **single-seed** score,
      while the observed :math:`\bar y_{ml}` averages S seeds. With S > 1 the intervals are
      too wide and pairwise tests lose power.
    * ``"bootstrap"`` (default): S seeds drawn **with replacement** (two-level bootstrap),
      :math:`y^{(r)}_{ml} = \frac1S \sum_{j=1}^S y^*_{m l s_j b}`, all drawn seeds scored on
      the same replicate b. Variance
      :math:`\operatorname{Var}_b \bar y^*_{mlb} + \frac{S-1}{S} \frac{V_{ml}}{S}`, about
      :math:`\sigma_{boot}^2 + \frac{S-1}{S}\frac{\sigma_{seed}^2}{S}`: the S-seed mean's
      uncertainty, with the usual bootstrap shrinkage :math:`(S-1)/S` of the seed part
      (1/2 of it with 2 seeds, 4/5 with 5). Every draw is a mean of real scores.
    * ``"rescaled"``: the same draws, with the seed deviations stretched by
      :math:`\sqrt{S/(S-1)}`: :math:`y^{(r)}_{ml} = \bar y^*_{mlb} + \sqrt{S/(S-1)}\,
      (\frac1S \sum_j y^*_{m l s_j b} - \bar y^*_{mlb})`. Variance
      :math:`\operatorname{Var}_b \bar y^*_{mlb} + V_{ml} / S`, about
      :math:`\sigma_{boot}^2 + \sigma_{seed}^2/S`: the parametric variance (formulas.md
      section 6) without its bias, but keeping the pairing and the replicates' shape. A draw
      can fall slightly outside the range of the observed scores. With declared
      ``bounds`` such draws are clipped to them. With S = 1 it equals
      ``"bootstrap"``.
    * ``"mean"``: no seed is drawn; :math:`y^{(r)}_{ml} = \bar y^*_{mlb}`, the mean over all
      S seeds of replicate b. Variance :math:`\operatorname{Var}_b \bar y^*_{mlb}`. This is
      right, and the default (``seeds=None``), for a cube whose seeds are **epochs**: repeated
      scorings of the same items, with one item bootstrap shared by the epochs
      (``attrs["seeds_are"] == "epochs"``, as :func:`evaluq.from_items` records). An epoch's
      deviation is then a per-item noise that the item bootstrap of the epochs' mean already
      holds; redrawing epochs as well (``"bootstrap"``) would count it twice. For
      ``replication="parametric"`` such a cube's scale is likewise the SD over replicates of
      the epochs' mean, with no ``sd_seed`` term.

    "About" assumes what :func:`evaluq.from_predictions` produces: replicate b is one resampled
    test set, shared by all seeds and models, so a seed's replicate deviation
    :math:`y^*_{mlsb} - y_{mls}` is (nearly) common to all seeds. If replicates were drawn
    independently for each seed, averaging S of them shrinks the test-set part to about
    :math:`(2S-1)/S^2` of :math:`\sigma_{boot}^2` and ``"bootstrap"`` / ``"rescaled"`` are too
    narrow; use ``"one"`` or ``"parametric"`` for such cubes.

    For other cubes ``"bootstrap"`` is the default because its draws are means of S observed
    scores, like the observed aggregate, and it needs no extrapolation; its shrinkage only
    touches the seed part and is small for S >= 5. Prefer ``"rescaled"`` with 2-3 seeds when
    the seed variance is a large part of the total; ``"one"`` reproduces the paper.

    Languages (``languages``), the same draw for every model of a resample:

    * ``"fixed"``: all L languages; the result has the cube's ``language`` dim.
    * ``"bootstrap"``: ``n_languages`` (default L) languages drawn with replacement.
    * ``"subsample"``: ``n_languages`` < L languages drawn without replacement.

    With ``"bootstrap"`` / ``"subsample"`` the scores have a ``language_slot`` dim instead of
    ``language``: slot j of resample r holds the j-th drawn language, whose label is
    ``drawn_language[r, j]`` (a bootstrap resample may repeat a language, so the slots cannot be
    labelled by language).

    Parameters
    ----------
    cube
        An evaluation cube (see :func:`evaluq.validate`).
    n_resamples
        Number of resamples (at least 2; thousands for a 95% interval).
    replication
        ``"parametric"``, ``"nonparametric"`` or ``"none"``.
    languages
        ``"fixed"``, ``"bootstrap"`` or ``"subsample"``.
    n_languages
        Languages per resample: ``None`` for ``"fixed"``; default L for ``"bootstrap"``;
        required (1 <= n_languages < L) for ``"subsample"``.
    rng
        Seed, Generator or SeedSequence; default None, a fresh seed (an analysis: scipy's
        convention), recorded in the ``rng_seed`` attribute so that the run can be repeated:
        ``rng=int(attrs["rng_seed"])`` gives the same resamples (``rng_entropy`` is the
        entropy the streams were seeded with). The numbers depend only on ``rng`` and the
        options,
        not on ``chunk_size``, ``lazy`` or the cube's chunks; the first n resamples of a
        longer run equal a run of n.
    chunk_size
        Resamples per chunk (rounded up to a multiple of the random-number block,
        ``_block_size``: 1000 unless the cube has more than 16 777 cells per resample):
        bounds the working memory at
        about ``chunk_size * models * n_languages * 8`` bytes times a small factor. Default:
        chunks of about 64 MiB of scores (at most 10 000 resamples). The numbers do not
        depend on it.
    lazy
        If True, the result is backed by dask: nothing is drawn until it is computed, one
        chunk of ``chunk_size`` resamples per task, and :func:`evaluq.aggregate` holds one
        chunk of scores at a time. ``.compute()`` gives exactly the ``lazy=False`` result.
        Default (None): lazy for a dask-backed cube, in memory otherwise. A lazy result
        has at most :data:`MAX_LAZY_CHUNKS` (10 000) chunks (its dask graph is built in
        memory); more are refused with the ``chunk_size`` that fits. An in-memory result
        larger than the machine's memory is refused too.
    seeds
        ``"one"``, ``"bootstrap"`` or ``"rescaled"``: how seeds are drawn with
        ``replication="nonparametric"`` (default ``"bootstrap"``); must be None otherwise.

    Returns
    -------
    xarray.Dataset
        ``score`` (resample, model, language | language_slot): the resampled scores;
        ``observed`` (model, language): the seed means :math:`\bar y_{ml}` (what
        :func:`evaluq.aggregate` reduces to the observed aggregate); ``drawn_language``
        (resample, language_slot) for drawn languages; for ``"nonparametric"``,
        ``drawn_bootstrap`` (resample, language | language_slot) and either ``drawn_seed``
        (same dims; ``seeds="one"``) or ``drawn_seed_count`` (resample, language |
        language_slot, seed): how often each seed was drawn (small unsigned integers, summing
        to S). Attributes carry the cube's ``metric`` and ``higher_is_better`` and the options
        (``seeds`` only for ``"nonparametric"``), and ``test_set_noise``: whether and how the
        test-set sampling noise enters the resamples (and ``scale_check`` 0 when the cube's
        attributes switch the scale check off).

    Warns
    -----
    ScaleWarning
        A model or a set of languages whose scores look like another scale (fractions among
        percentages, a sum among means: the loaders' ratio rule,
        ``evaluq._scale.scale_findings``), checked once per call on the cube's scores: a cube
        combined by hand after loading (``xr.concat`` of a cube in fractions and one in
        percentages) is seen here. ``cube.attrs["scale_check"] = 0`` (which a loader's
        ``outlier_threshold=None`` records) silences it.

    Notes
    -----
    Missing cells (NaN seed means) stay NaN in every resample that draws them; nothing is
    dropped or filled. :func:`evaluq.aggregate` raises on them unless told to skip them.
    Runs missing from an observed cell (a crashed seed, or models run with different numbers
    of seeds) are neither filled nor drawn: with ``"nonparametric"`` replication each cell
    redraws the seeds it has (:math:`S_{ml}` of them, its own seed bootstrap; ``"rescaled"``
    stretches by :math:`\sqrt{S_{ml} / (S_{ml} - 1)}`), through uniforms shared by every
    model, so complete cells are drawn as a cube of equal seeds would draw them (the recorded
    ``drawn_seed_count`` is theirs). A cube with equal seeds keeps its numbers exactly.
    A streamed (dask) ``boot_score`` keeps the equal-seed draws: a missing seed there makes
    the resamples that draw it NaN.

    A dask-backed cube (``eq.open_cube("cube.zarr")``, ``cube.chunk(...)``) is validated
    without reading ``boot_score`` and gives lazy resamples by default (one dask task per
    chunk of resamples; on a dask.distributed cluster they run on the workers). With
    ``replication="parametric"`` its ``boot_score`` is read once, chunk by chunk, into the
    per-cell SDs (bit-identical to the in-memory ones when ``seed`` and ``bootstrap`` are
    each one chunk, to about 1e-15 otherwise; see :func:`evaluq.variance_components`).
    With ``"nonparametric"`` the replicates are streamed: every task takes one block of
    ``boot_score`` (some models, some languages, every seed and replicate: a cube chunked
    along ``seed`` or ``bootstrap`` is rechunked to make them whole) and draws that block's
    share of one chunk of resamples. Each block is read once and shared by the tasks of
    every chunk of resamples (dask frees it when they are done); no task holds more than a
    block plus a chunk of scores. With fixed languages each block gives its own languages'
    scores; with drawn languages each block fills the slots that drew one of its languages
    (the other slots are 0) and the blocks' results are added, which is exact since every
    slot is filled by one block. The resamples equal the in-memory ones for any chunking of
    the cube and any ``chunk_size``: the random draws of a block of resamples (1000, fewer
    for a cube of more than 16 777 cells per resample: ``_block_size``) come from its own
    stream and are made again, cheaply, by every task that needs them.

    References
    ----------
    Sälevä, J. et al. Resampling-based uncertainty for multilingual NLP evaluation (paper 002 in
    ``seeds/``), sections 4.2 and 6.2; formulas.md section 7 (its tool's errata are avoided:
    results do not depend on row order, every resample draws fresh noise, nonparametric draws
    are shared by all models, and everything is seeded).

    See Also
    --------
    evaluq.aggregate, evaluq.pairwise_differences, evaluq.rank_distribution

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=2, n_boot=20, rng=0)
    >>> rs = eq.resample(cube, n_resamples=4, languages="bootstrap", rng=1)
    >>> dict(rs.score.sizes)
    {'resample': 4, 'model': 2, 'language_slot': 3}
    >>> dict(rs.observed.sizes)
    {'model': 2, 'language': 3}
    >>> np_rs = eq.resample(cube, n_resamples=4, replication="nonparametric", rng=1)
    >>> np_rs.attrs["seeds"], dict(np_rs.drawn_seed_count.sizes)
    ('bootstrap', {'resample': 4, 'language': 3, 'seed': 2})
    >>> np_rs.drawn_seed_count.sum("seed").values.tolist()[0]
    [2, 2, 2]
    >>> lazy = eq.resample(cube, n_resamples=2500, rng=1, lazy=True, chunk_size=1000)
    >>> lazy.score.chunks[0]
    (1000, 1000, 500)
    >>> lazy.compute().identical(eq.resample(cube, n_resamples=2500, rng=1))
    True
    """
    cube, opts = _validate(cube, n_resamples, replication, languages, n_languages, rng,
                           chunk_size, lazy, seeds)
    recipe, streamed = _plan(cube, opts)
    warn_scale(cube[SCORE], ANALYSIS_REMEDY, cube.attrs)      # once, after any refusal
    if opts.lazy or streamed is not None:
        out = _assemble(recipe, _collect_lazy(recipe, streamed), streamed is not None)
        return out if opts.lazy else out.compute()
    return _assemble(recipe, _collect_eager(recipe))


def __getattr__(name: str) -> Any:
    if name == "ResamplePlan":
        warnings.warn("evaluq.ResamplePlan is deprecated and no longer returned: "
                      "resample(..., lazy=True) returns an ordinary dask-backed xarray.Dataset "
                      "(chunks of `chunk_size` resamples) that evaluq.aggregate consumes chunk "
                      "by chunk", DeprecationWarning, stacklevel=2)
        return _Recipe
    if name == "block_size":        # public until issue 35; deprecated alias for one release
        warnings.warn("evaluq.resampling.block_size is a private helper now (issue 35); the "
                      "old name goes in the next release", DeprecationWarning, stacklevel=2)
        return _block_size
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
