"""Resampling an evaluation cube: replication noise and language draws (formulas.md section 7).

One resample is a hypothetical replication of the whole benchmark: every (model, language)
score is redrawn with its replication noise, and the set of languages may be redrawn too.
:func:`resample` returns the draws as a Dataset; :func:`evaluq.aggregate` reduces them over
languages. For very many resamples, ``resample(..., lazy=True)`` returns a
:class:`ResamplePlan` that :func:`evaluq.aggregate` consumes chunk by chunk, so that only the
per-model aggregates (``n_resamples x n_models``) are ever held in memory.

Random numbers are drawn in blocks of :data:`RNG_BLOCK` resamples, each block from its own
stream (``SeedSequence(entropy, spawn_key=(block, purpose))``). The numbers therefore depend
only on ``rng`` (not on ``chunk_size``), and the first ``n`` resamples of a longer run are the
``n`` resamples of a shorter one.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Literal, overload

import numpy as np
import xarray as xr
from scipy import special

from evaluq import _streaming
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    CUBE_DIMS,
    LANGUAGE,
    MODEL,
    N_SEEDS,
    OBSERVED,
    RESAMPLE,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
)
from evaluq._kernels import count_valid, nanmean, nanstd
from evaluq._validation import RNGLike, check_choice, check_int, check_rng
from evaluq.cube import bounds as cube_bounds
from evaluq.cube import is_summary, validate
from evaluq.errors import CubeError

# --- names this module adds (candidates for evaluq._dims) ---------------------------------------
LANGUAGE_SLOT: Final = "language_slot"
"""Dim of the languages drawn in one resample (``languages="bootstrap"`` / ``"subsample"``):
slot j holds the j-th drawn language, named by ``drawn_language``; a language can fill several
slots of a bootstrap resample."""
DRAWN_LANGUAGE: Final = "drawn_language"
DRAWN_SEED: Final = "drawn_seed"
DRAWN_BOOTSTRAP: Final = "drawn_bootstrap"
DRAWN_SEED_COUNT: Final = "drawn_seed_count"
"""How often each seed was drawn for a (resample, language slot) with ``seeds="bootstrap"`` /
``"rescaled"`` (dims resample, language | language_slot, seed; sums to S)."""

REPLICATIONS: Final = ("parametric", "nonparametric", "none")
LANGUAGE_MODES: Final = ("fixed", "bootstrap", "subsample")
SEED_MODES: Final = ("one", "bootstrap", "rescaled")
RNG_BLOCK: Final = 1000
"""Resamples per random-number block (each block has its own stream)."""
_N_THREADS: Final = max(1, min(4, os.cpu_count() or 1))

Replication = Literal["parametric", "nonparametric", "none"]
LanguageMode = Literal["fixed", "bootstrap", "subsample"]
SeedMode = Literal["one", "bootstrap", "rescaled"]


# --- numpy kernels --------------------------------------------------------------------------------

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


def _draw_nonparametric(inputs: _Inputs, seeds: str, lang: np.ndarray,
                        gen: np.random.Generator, want_draws: bool
                        ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Nonparametric scores (model, n, k) and the draws: seed positions (n, k) for
    ``seeds="one"``, seed counts (n, k, S) otherwise; replicate positions (n, k)."""
    boot = inputs.boot
    assert boot is not None
    n_m, _, n_s, n_b = boot.shape
    if seeds == "one":
        s_idx = gen.integers(0, n_s, size=lang.shape)
        b_idx = gen.integers(0, n_b, size=lang.shape)
        # one (seed, replicate) per (resample, language slot), the same for every model
        return boot[:, lang, s_idx, b_idx], s_idx, b_idx
    # two levels: one replicate b and S seeds with replacement per (resample, language slot),
    # both shared by every model (and b by every drawn seed: the same resampled test set)
    b_idx = gen.integers(0, n_b, size=lang.shape)
    s_all = gen.integers(0, n_s, size=(*lang.shape, n_s))
    flat_boot = boot.reshape(n_m, -1)
    base = (lang * n_s) * n_b + b_idx                         # position of (l, seed 0, b)
    total = np.take(flat_boot, base + s_all[..., 0] * n_b, axis=1)
    for j in range(1, n_s):                                   # S gathers of (model, n, k)
        total += np.take(flat_boot, base + s_all[..., j] * n_b, axis=1)
    total /= n_s
    if seeds == "rescaled" and n_s > 1:
        assert inputs.boot_mean is not None
        centre = np.take(inputs.boot_mean.reshape(n_m, -1), lang * n_b + b_idx, axis=1)
        total -= centre
        total *= np.sqrt(n_s / (n_s - 1))
        total += centre
        if inputs.bounds is not None:            # the stretch may leave the metric's range
            np.clip(total, *inputs.bounds, out=total)
    counts = _seed_counts(s_all, n_s) if want_draws else None
    return total, counts, b_idx


def _draw_block(inputs: _Inputs, replication: str, lang_idx: np.ndarray | None,
                gen: np.random.Generator, n: int, seeds: str = "one", want_draws: bool = True
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Scores (model, n, k) of one block, and the drawn seeds and replicate positions.

    The scores are laid out model-first (the gathers and the noise are contiguous that
    way); callers see them as (n, model, k) through a transposed view.
    """
    obs = inputs.observed                                     # (m, L)
    n_m, n_l = obs.shape
    if replication == "nonparametric":
        lang = np.broadcast_to(np.arange(n_l), (n, n_l)) if lang_idx is None else lang_idx
        return _draw_nonparametric(inputs, seeds, lang, gen, want_draws)
    k = n_l if lang_idx is None else lang_idx.shape[1]
    if replication == "none":
        values = (np.repeat(obs[:, None, :], n, axis=1) if lang_idx is None
                  else np.take(obs, lang_idx, axis=1))
        return values, None, None
    assert inputs.scale is not None
    if inputs.bounds is not None:
        return _truncated_normal(inputs, lang_idx, gen, n), None, None
    noise = gen.standard_normal((n_m, n, k))                  # independent across models
    if lang_idx is None:
        noise *= inputs.scale[:, None, :]
        noise += obs[:, None, :]
    else:
        noise *= np.take(inputs.scale, lang_idx, axis=1)
        noise += np.take(obs, lang_idx, axis=1)
    return noise, None, None


def _truncated_normal(inputs: _Inputs, lang_idx: np.ndarray | None, gen: np.random.Generator,
                      n: int) -> np.ndarray:
    """Parametric scores (model, n, k) from N(observed, scale^2) truncated to the bounds.

    Inverse-CDF draws: u ~ U(0, 1), z = Phi^-1(Phi(a) + u (Phi(b) - Phi(a))) with a, b the
    standardised bounds; every draw lies in [lower, upper]. A cell with scale 0 stays at its
    observed score.
    """
    assert inputs.scale is not None
    assert inputs.bounds is not None
    lo, hi = inputs.bounds
    obs, scale = inputs.observed, inputs.scale
    if lang_idx is not None:
        obs, scale = np.take(obs, lang_idx, axis=1), np.take(scale, lang_idx, axis=1)
    else:
        obs, scale = obs[:, None, :], scale[:, None, :]
    u = gen.random((obs.shape[0], n, obs.shape[-1]))
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
    boot: np.ndarray | None              # (model, language, seed, bootstrap)
    boot_mean: np.ndarray | None = None  # (model, language, bootstrap) mean over seeds
    bounds: tuple[float, float] | None = None  # the metric's range (parametric draws)


# --- the plan -------------------------------------------------------------------------------------

@dataclass(frozen=True, repr=False, eq=False)
class ResamplePlan:
    """A recipe for resamples of a cube, drawn chunk by chunk on demand.

    Made by ``evaluq.resample(..., lazy=True)``. :func:`evaluq.aggregate` accepts it and then
    never holds more than one chunk of scores; :meth:`compute` materialises the same Dataset
    that ``lazy=False`` returns, and :meth:`chunks` yields it piece by piece.

    Attributes
    ----------
    cube : xarray.Dataset
        The validated cube with every dim's labels sorted (the result restores the
        cube's order).
    n_resamples : int
        Number of resamples (>= 2).
    replication : str
        ``"parametric"``, ``"nonparametric"`` or ``"none"`` (see :func:`evaluq.resample`).
    languages : str
        ``"fixed"``, ``"bootstrap"`` or ``"subsample"``.
    n_languages : int
        Languages per resample (L for ``"fixed"``).
    entropy : int
        Root seed in [0, 2**63) drawn once from ``rng``; every block of resamples derives its
        own stream from it, so the numbers do not depend on ``chunk_size``.
    chunk_size : int
        Resamples drawn at once (a multiple of 1000).
    seeds : str or None
        How seeds are drawn with ``replication="nonparametric"`` (``"one"``,
        ``"bootstrap"`` or ``"rescaled"``); None otherwise.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=4, n_boot=20, rng=0)
    >>> plan = eq.resample(cube, n_resamples=1000, rng=0, lazy=True)
    >>> plan.compute().identical(eq.resample(cube, n_resamples=1000, rng=0))
    True
    """

    cube: xr.Dataset = field(repr=False)
    n_resamples: int
    replication: str
    languages: str
    n_languages: int
    entropy: int
    chunk_size: int
    _inputs: _Inputs = field(repr=False)
    _restore: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    """Positions that put the (sorted) model / language axes back in the cube's order."""
    seeds: str | None = None
    """How seeds are drawn with ``replication="nonparametric"`` (None otherwise)."""

    def _block(self, block: int, n: int, want_draws: bool = True
               ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        # a block always draws RNG_BLOCK resamples (a short last block keeps the first n), so
        # that the first n resamples of a longer run are those of a run of n
        g_lang, g_rep = _block_rngs(self.entropy, block)
        n_l = self._inputs.observed.shape[1]
        lang = _draw_languages(g_lang, self.languages, RNG_BLOCK, n_l, self.n_languages)
        values, s_idx, b_idx = _draw_block(self._inputs, self.replication, lang, g_rep,
                                           RNG_BLOCK, self.seeds or "one", want_draws)
        if n == RNG_BLOCK:
            return values, lang, s_idx, b_idx
        return (values[:, :n], *(None if a is None else a[:n]  # type: ignore[return-value]
                                 for a in (lang, s_idx, b_idx)))

    def _raw_chunks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray | None,
                                            np.ndarray | None, np.ndarray | None]]:
        """Yield (start, scores (n, m, k), language, seed, replicate positions (n, k)).

        The blocks of a chunk are drawn in a thread pool (numpy releases the GIL while it
        fills arrays); every block has its own stream, so the numbers do not depend on the
        number of threads.
        """
        with ThreadPoolExecutor(max_workers=_N_THREADS) as pool:
            for start in range(0, self.n_resamples, self.chunk_size):
                stop = min(start + self.chunk_size, self.n_resamples)
                blocks = [(b // RNG_BLOCK, min(RNG_BLOCK, stop - b))
                          for b in range(start, stop, RNG_BLOCK)]
                pieces = list(pool.map(lambda bn: self._block(*bn), blocks))
                values = np.concatenate([p[0] for p in pieces], axis=1) if len(pieces) > 1 \
                    else pieces[0][0]
                yield (start, np.moveaxis(values, 0, 1),
                       *(_concat([p[i] for p in pieces]) for i in range(1, 4)))  # type: ignore[misc]

    def _map_blocks(self, func: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``func`` applied to the scores (n, model, k) of every block, concatenated on axis 0.

        Blocks run in a thread pool, ``chunk_size`` resamples at a time; only the (small)
        results are kept.
        """
        blocks = [(b // RNG_BLOCK, min(RNG_BLOCK, self.n_resamples - b))
                  for b in range(0, self.n_resamples, RNG_BLOCK)]
        per_chunk = self.chunk_size // RNG_BLOCK

        def run(bn: tuple[int, int]) -> np.ndarray:
            return func(np.moveaxis(self._block(*bn, want_draws=False)[0], 0, 1))

        out: list[np.ndarray] = []
        with ThreadPoolExecutor(max_workers=_N_THREADS) as pool:
            for i in range(0, len(blocks), per_chunk):
                out.extend(pool.map(run, blocks[i:i + per_chunk]))
        return np.concatenate(out, axis=0)

    def chunks(self) -> Iterator[xr.Dataset]:
        """Yield the resamples as Datasets of at most ``chunk_size`` resamples each."""
        for start, values, lang, s_idx, b_idx in self._raw_chunks():
            yield self._dataset(start, values, lang, s_idx, b_idx)

    def compute(self) -> xr.Dataset:
        """All resamples as one Dataset (what ``resample(..., lazy=False)`` returns)."""
        parts = list(self._raw_chunks())
        if len(parts) == 1:
            return self._dataset(0, *parts[0][1:])
        values = np.moveaxis(np.concatenate([np.moveaxis(p[1], 0, 1) for p in parts], axis=1),
                             0, 1)
        lang = _concat([p[2] for p in parts])
        s_idx = _concat([p[3] for p in parts])
        b_idx = _concat([p[4] for p in parts])
        return self._dataset(0, values, lang, s_idx, b_idx)

    def _dataset(self, start: int, values: np.ndarray, lang: np.ndarray | None,
                 s_idx: np.ndarray | None, b_idx: np.ndarray | None) -> xr.Dataset:
        cube = self.cube
        n = values.shape[0]
        slot = LANGUAGE if lang is None else LANGUAGE_SLOT
        data_vars: dict[str, Any] = {
            SCORE: ((RESAMPLE, MODEL, slot), values),
            OBSERVED: ((MODEL, LANGUAGE), self._inputs.observed),
        }
        if lang is not None:
            data_vars[DRAWN_LANGUAGE] = ((RESAMPLE, slot), cube[LANGUAGE].values[lang])
        coords = {RESAMPLE: np.arange(start, start + n), MODEL: cube[MODEL].values,
                  LANGUAGE: cube[LANGUAGE].values}
        if s_idx is not None and b_idx is not None:
            if s_idx.ndim == 2:
                data_vars[DRAWN_SEED] = ((RESAMPLE, slot), cube[SEED].values[s_idx])
            else:
                data_vars[DRAWN_SEED_COUNT] = ((RESAMPLE, slot, SEED), s_idx)
                coords[SEED] = cube[SEED].values
            if BOOTSTRAP in cube.dims:
                data_vars[DRAWN_BOOTSTRAP] = ((RESAMPLE, slot), cube[BOOTSTRAP].values[b_idx])
        out = self.restore_order(xr.Dataset(data_vars, coords=coords))
        out.attrs = self._attrs()
        out[SCORE].attrs["description"] = "resampled score (seed mean plus replication noise)"
        out[OBSERVED].attrs["description"] = "observed seed-mean score of each (model, language)"
        return out

    # --- the protocol every consumer of a plan uses (aggregate, the dask path) -----------------
    @property
    def attrs(self) -> dict[str, Any]:
        """The attributes every resample Dataset of this plan carries."""
        return self._attrs()

    @property
    def observed(self) -> np.ndarray:
        """The observed seed means ``(model, language)``, in the plan's canonical model order."""
        return self._inputs.observed

    @property
    def n_missing_replicates(self) -> int:
        """How many NaN values the drawn replicates hold (0 without ``boot_score``)."""
        boot = self._inputs.boot
        return 0 if boot is None else int(np.isnan(boot).sum())

    def map_blocks(self, func: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``func`` applied to the scores ``(n, model, k)`` of every block of resamples, the
        results concatenated on axis 0 (blocks in a thread pool; only the results are kept).

        Parameters
        ----------
        func
            Maps one block's scores ``(n, model, k)`` (k languages, or drawn language slots)
            to an array whose first axis is the block's ``n`` resamples. The models are in
            the plan's canonical order: put the result back with :meth:`restore_order`.

        Returns
        -------
        numpy.ndarray
            The blocks' results, concatenated on axis 0 (``n_resamples`` rows).

        Examples
        --------
        >>> import evaluq as eq
        >>> plan = eq.resample(eq.simulate_cube(n_models=2, rng=0), n_resamples=50, rng=0,
        ...                    lazy=True)
        >>> plan.map_blocks(lambda x: x.mean(axis=-1)).shape
        (50, 2)
        """
        return self._map_blocks(func)

    def restore_order(self, data: xr.Dataset) -> xr.Dataset:
        """``data`` (with dims in the plan's canonical label order) back in the cube's order.

        Parameters
        ----------
        data
            A Dataset built from the plan's arrays (``model`` and possibly ``language`` in
            the canonical, sorted order); only the dims it has are reordered.

        Returns
        -------
        xarray.Dataset
            ``data`` in the cube's label order.

        Examples
        --------
        >>> import numpy as np, xarray as xr, evaluq as eq
        >>> plan = eq.resample(eq.simulate_cube(n_models=2, rng=0), n_resamples=5, rng=0,
        ...                    lazy=True)
        >>> ds = xr.Dataset({"x": ("model", np.arange(2.0))},
        ...                 coords={"model": plan.cube.model.values})
        >>> plan.restore_order(ds).x.values.tolist()
        [0.0, 1.0]
        """
        order = {dim: index for dim, index in self._restore.items() if dim in data.dims}
        return data.isel(order) if order else data

    def _attrs(self) -> dict[str, Any]:
        return {
            "metric": self.cube.attrs.get("metric", ""),
            "higher_is_better": int(self.cube.attrs.get("higher_is_better", 1)),
            "replication": self.replication,
            **({"seeds": self.seeds} if self.seeds is not None else {}),
            "languages": self.languages,
            "n_languages": self.n_languages,
            "n_resamples": self.n_resamples,
            "rng_entropy": str(self.entropy),
            "test_set_noise": self._test_set_noise(),
            **({"bounds": np.asarray(self._inputs.bounds)}
               if self._inputs.bounds is not None else {}),
        }

    def _test_set_noise(self) -> str:
        """How the test-set sampling noise enters the resamples (recorded in the attrs)."""
        if self.replication == "none":
            return "not included: replication='none' keeps every score fixed"
        if self.replication == "parametric":
            shape = ("normal" if self._inputs.bounds is None else
                     "normal truncated to the metric's bounds {:g}..{:g}".format(
                         *self._inputs.bounds))
            return (f"included: {shape} noise with variance sd_seed^2/n_seeds + sd_boot^2 "
                    "(before truncation), independent across models")
        if BOOT_SCORE in self.cube:
            return "included: a bootstrap replicate of the test set, shared by all models"
        return ("NOT included: the cube has no bootstrap replicates, so only the seeds are "
                "redrawn (paired across models); intervals cover seed noise alone and are too "
                "narrow by the unseen test-set sampling error")

    def __repr__(self) -> str:
        sizes = dict(self.cube[SCORE].sizes)
        seeds = "" if self.seeds is None else f"seeds={self.seeds!r}, "
        return (f"ResamplePlan(n_resamples={self.n_resamples}, replication={self.replication!r}, "
                f"{seeds}languages={self.languages!r}, n_languages={self.n_languages}, "
                f"chunk_size={self.chunk_size}, models={sizes[MODEL]}, "
                f"cube_languages={sizes[LANGUAGE]})")


    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(repr(self))}</pre>"


def _concat(parts: list[np.ndarray | None]) -> np.ndarray | None:
    if parts[0] is None:
        return None
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)  # type: ignore[arg-type]


# --- inputs from the cube -----------------------------------------------------------------------

def _parametric_scale(cube: xr.Dataset, observed: np.ndarray) -> np.ndarray:
    """sqrt(sigma_seed^2 / S + sigma_boot^2) per (model, language)."""
    if is_summary(cube):
        for var in (SD_SEED, SD_BOOT):
            if var not in cube:
                raise CubeError(
                    f"`replication='parametric'` needs {var!r} in a summary-only cube; it has "
                    f"none (add the column; a column of zeros claims the component is absent "
                    f"and narrows every interval)")
        sd_seed = cube[SD_SEED].transpose(MODEL, LANGUAGE).values
        sd_boot = cube[SD_BOOT].transpose(MODEL, LANGUAGE).values
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
            f"{cube[MODEL].values[m]!r}, language {cube[LANGUAGE].values[lang]!r} (a seed SD "
            f"needs at least 2 seeds)")
    return scale


def _inputs(cube: xr.Dataset, replication: str, seeds: str | None = None) -> _Inputs:
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
    observed = nanmean(score)
    if replication == "parametric":
        return _Inputs(observed, _parametric_scale(cube, observed), None,
                       bounds=cube_bounds(cube))
    if replication == "nonparametric":
        if BOOT_SCORE in cube:
            boot = np.ascontiguousarray(
                cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values,
                dtype=np.float64)
        else:
            boot = np.ascontiguousarray(_seeds_only_replicates(cube, score))
        # plain mean over seeds: a missing seed makes the centre NaN (never dropped silently)
        boot_mean = np.ascontiguousarray(boot.mean(axis=2)) if seeds == "rescaled" else None
        return _Inputs(observed, None, boot, boot_mean, bounds=cube_bounds(cube))
    return _Inputs(observed, None, None)


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


def _resample_iv(cube: Any, n_resamples: Any, replication: Any, languages: Any,
                 n_languages: Any, rng: RNGLike, chunk_size: Any, seeds: Any
                 ) -> tuple[xr.Dataset, int, str, str, int, int, int, str | None]:
    cube = _streaming.prepare(cube) if _streaming.is_dask(cube) else validate(cube)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if n_resamples < 2:
        raise ValueError(f"`n_resamples` must be >= 2 (one resample says nothing about a "
                         f"spread: its interval would have width zero); got {n_resamples}")
    replication = check_choice("replication", replication, REPLICATIONS)
    if replication == "nonparametric":
        seeds = "bootstrap" if seeds is None else check_choice("seeds", seeds, SEED_MODES)
    elif seeds is not None:
        raise ValueError(f"`seeds` applies only to replication='nonparametric' (it says how "
                         f"the seeds' bootstrap replicates are drawn); got seeds={seeds!r} with "
                         f"replication={replication!r}")
    languages = check_choice("languages", languages, LANGUAGE_MODES)
    chunk_size = check_int("chunk_size", chunk_size, minimum=1)
    chunk_size = -(-chunk_size // RNG_BLOCK) * RNG_BLOCK
    n_l = cube.sizes[LANGUAGE]
    if languages == "fixed":
        if n_languages is not None:
            raise ValueError(f"`n_languages` must be None with languages='fixed'; got "
                             f"{n_languages!r}")
        k = n_l
    elif languages == "bootstrap":
        k = n_l if n_languages is None else check_int("n_languages", n_languages, minimum=1)
    else:
        if n_languages is None:
            raise ValueError("`n_languages` is required with languages='subsample'")
        if n_l < 2:
            raise ValueError(f"languages='subsample' needs at least 2 languages; the cube "
                             f"has {n_l}")
        k = check_int("n_languages", n_languages, minimum=1, maximum=n_l - 1)
    gen = check_rng(rng)
    entropy = int(gen.integers(0, 2**63))
    return cube, n_resamples, replication, languages, k, entropy, chunk_size, seeds


# --- public function ------------------------------------------------------------------------------

@overload
def resample(cube: xr.Dataset, *, n_resamples: int = ..., replication: Replication = ...,
             languages: LanguageMode = ..., n_languages: int | None = ..., rng: RNGLike = ...,
             chunk_size: int = ..., lazy: Literal[False] = ...,
             seeds: SeedMode | None = ...) -> xr.Dataset: ...
@overload
def resample(cube: xr.Dataset, *, n_resamples: int = ..., replication: Replication = ...,
             languages: LanguageMode = ..., n_languages: int | None = ..., rng: RNGLike = ...,
             chunk_size: int = ..., lazy: Literal[True],
             seeds: SeedMode | None = ...) -> ResamplePlan: ...


def resample(
    cube: xr.Dataset,
    *,
    n_resamples: int = 10_000,
    replication: Replication = "parametric",
    languages: LanguageMode = "fixed",
    n_languages: int | None = None,
    rng: RNGLike = 0,
    chunk_size: int = 10_000,
    lazy: bool = False,
    seeds: SeedMode | None = None,
) -> xr.Dataset | ResamplePlan:
    r"""Replicate a benchmark: redraw every score with its noise, and optionally the languages.

    Replication noise (``replication``), with :math:`\bar y_{ml}` the mean over the S seeds:

    * ``"parametric"``: :math:`y^{(r)}_{ml} = \bar y_{ml} + \varepsilon^{(r)}_{ml}`,
      :math:`\varepsilon^{(r)}_{ml} \sim N(0, \sigma_{seed,ml}^2 / S_{ml} + \sigma_{boot,ml}^2)`,
      a fresh draw for every resample. :math:`\sigma_{seed}` is the SD over seeds (ddof=1),
      :math:`\sigma_{boot}` the mean over seeds of the SD over bootstrap replicates
      (formulas.md section 6); a summary-only cube supplies ``sd_seed``, ``sd_boot`` and
      ``n_seeds``. The noise is **independent across models**: a summary cube says nothing about
      how models' test-set errors correlate, so none is assumed. When models share test sets
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

    "About" assumes what :func:`evaluq.from_predictions` produces: replicate b is one resampled
    test set, shared by all seeds and models, so a seed's replicate deviation
    :math:`y^*_{mlsb} - y_{mls}` is (nearly) common to all seeds. If replicates were drawn
    independently for each seed, averaging S of them shrinks the test-set part to about
    :math:`(2S-1)/S^2` of :math:`\sigma_{boot}^2` and ``"bootstrap"`` / ``"rescaled"`` are too
    narrow; use ``"one"`` or ``"parametric"`` for such cubes.

    ``"bootstrap"`` is the default because its draws are means of S observed scores, like the
    observed aggregate, and it needs no extrapolation; its shrinkage only touches the seed
    part and is small for S >= 5. Prefer ``"rescaled"`` with 2-3 seeds when the seed
    variance is a large part of the total; ``"one"`` reproduces the paper.

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
        Seed, Generator or SeedSequence. The numbers depend only on ``rng`` and the options,
        not on ``chunk_size``; the first n resamples of a longer run equal a run of n.
    chunk_size
        Resamples generated at once (rounded up to a multiple of 1000): bounds the working
        memory at about ``chunk_size * models * n_languages * 8`` bytes times a small factor.
    lazy
        If True, return a :class:`ResamplePlan` that :func:`evaluq.aggregate` consumes chunk by
        chunk (memory: one chunk plus the ``n_resamples x models`` aggregates).
    seeds
        ``"one"``, ``"bootstrap"`` or ``"rescaled"``: how seeds are drawn with
        ``replication="nonparametric"`` (default ``"bootstrap"``); must be None otherwise.

    Returns
    -------
    xarray.Dataset or ResamplePlan
        ``score`` (resample, model, language | language_slot): the resampled scores;
        ``observed`` (model, language): the seed means :math:`\bar y_{ml}` (what
        :func:`evaluq.aggregate` reduces to the observed aggregate); ``drawn_language``
        (resample, language_slot) for drawn languages; for ``"nonparametric"``,
        ``drawn_bootstrap`` (resample, language | language_slot) and either ``drawn_seed``
        (same dims; ``seeds="one"``) or ``drawn_seed_count`` (resample, language |
        language_slot, seed): how often each seed was drawn (small unsigned integers, summing
        to S). Attributes carry the cube's ``metric`` and ``higher_is_better`` and the options
        (``seeds`` only for ``"nonparametric"``), and ``test_set_noise``: whether and how the
        test-set sampling noise enters the resamples.

    Notes
    -----
    Missing cells (NaN seed means) stay NaN in every resample that draws them; nothing is
    dropped or filled. :func:`evaluq.aggregate` raises on them unless told to skip them.
    A drawn ``boot_score`` that is NaN (a missing seed) is likewise NaN: with
    ``seeds="bootstrap"`` every resample that draws the missing seed for that cell, with
    ``"rescaled"`` every resample of the cell (the centre is the mean over all seeds).

    A dask-backed cube (``eq.open_cube("cube.zarr")``, ``cube.chunk(...)``) is validated
    without reading ``boot_score``. With ``replication="parametric"`` or ``"none"`` its
    ``boot_score`` is read once, chunk by chunk, into the per-cell SDs, and the result is a
    lazy Dataset: one dask task per ``chunk_size`` resamples draws them from the (model,
    language) means and scales (on a dask.distributed cluster, on the workers); the numbers
    equal the in-memory ones (each block of 1000 resamples has its own stream).
    ``"nonparametric"`` draws replicates of any cell in any resample, so it loads
    ``boot_score`` into memory. The resamples themselves are generated in chunks of
    ``chunk_size``.

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
    """
    on_dask = _streaming.is_dask(cube)
    cube, n, rep, lang_mode, k, entropy, chunk, seed_mode = _resample_iv(
        cube, n_resamples, replication, languages, n_languages, rng, chunk_size, seeds)
    canon, restore = _canonical(cube)
    plan = ResamplePlan(canon, n, rep, lang_mode, k, entropy, chunk,
                        _inputs(canon, rep, seed_mode), restore, seed_mode)
    if on_dask and rep != "nonparametric" and not lazy:
        return _streaming.dask_resamples(plan, RNG_BLOCK)    # one task per chunk of resamples
    return plan if lazy else plan.compute()


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
