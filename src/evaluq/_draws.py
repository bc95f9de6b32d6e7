"""Draws of a per-model statistic, whatever produced them: resamples or posterior draws.

:func:`as_draws` turns either the result of :func:`evaluq.aggregate` or any DataArray of draws
with a ``model`` dim and named sample dims (``("resample",)``, or ``("chain", "draw")`` for
posterior draws) into one numpy layout, so that pairwise differences and rank distributions
come from one kernel for the frequentist and the Bayesian side.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from evaluq._apply import as_dims
from evaluq._dims import MODEL, OBSERVED, RESAMPLE, RESAMPLED
from evaluq._schema import build_a_cube_hint, orientation
from evaluq._validation import check_orientation
from evaluq.errors import CubeError

NO_NOISE_REASON = (
    "replication='none' with languages='fixed', or with a single language to redraw, redraws "
    "nothing: every resample is the observed cube, so there is no spread to report (an "
    "interval of width 0 would claim certainty). Resample with replication noise "
    "('parametric' / 'nonparametric': seeds or bootstrap replicates), or with "
    "languages='bootstrap' / 'subsample' over several languages")


def draws_no_noise(attrs: Mapping[Any, Any]) -> bool:
    """Whether resamples with these attributes carry no noise at all (every draw identical):
    no replication noise, and the languages fixed or only one to redraw (a bootstrap of one
    language draws it every time; its SDs came out ~1e-15 and its z ~1e14)."""
    return attrs.get("replication") == "none" and (attrs.get("languages") == "fixed"
                                                   or attrs.get("n_languages") == 1)


@dataclass(frozen=True)
class Draws:
    """Draws laid out for the kernels.

    ``values`` has shape ``(*extra, model, sample)`` (the sample dims flattened, last), and
    ``observed`` shape ``(*extra, model)``. Laid out lazily (``as_draws(..., lazy=True)`` on
    dask-backed draws), ``values`` is a dask array ``(*extra, model, *sample_dims)`` whose
    leading axes are one chunk each (the sample dims keep their chunks), and ``observed`` a
    dask array; nothing has been computed and the draws have not been checked for NaN yet
    (:func:`check_block` does it chunk by chunk).
    """

    values: Any
    observed: Any
    models: np.ndarray
    extra_dims: tuple[Hashable, ...]
    extra_coords: dict[Hashable, Any]
    sample_dims: tuple[Hashable, ...]
    attrs: dict[Hashable, Any]
    orientation: int

    @property
    def n_samples(self) -> int:
        """How many draws each statistic has."""
        return int(np.prod(self.values.shape[len(self.extra_dims) + 1:], dtype=np.int64))

    @property
    def is_lazy(self) -> bool:
        """Whether the draws are a dask array still to be computed chunk by chunk."""
        return not isinstance(self.values, np.ndarray)


def orientation_of(attrs: dict[Hashable, Any], higher_is_better: Any) -> int:
    """+1 when larger is better, -1 when smaller is; from the argument or ``attrs``."""
    if higher_is_better is None:
        higher_is_better = orientation(attrs)
    return 1 if check_orientation(higher_is_better, or_none=True) else -1


def _from_aggregate(data: xr.Dataset, sample_dims: tuple[Hashable, ...],
                    observed: Any) -> tuple[xr.DataArray, xr.DataArray]:
    if observed is not None:
        raise ValueError("`observed` is taken from the aggregate's 'observed' variable; pass "
                         "it only with a DataArray of draws")
    if sample_dims != (RESAMPLE,):
        raise ValueError(f"the result of eq.aggregate has the sample dim {RESAMPLE!r}; got "
                         f"`sample_dims`={sample_dims!r}")
    return data[RESAMPLED], data[OBSERVED]


def _check_layout(draws: xr.DataArray, sample_dims: tuple[Hashable, ...], name: str) -> None:
    missing = [d for d in (MODEL, *sample_dims) if d not in draws.dims]
    if missing:
        raise CubeError(f"`{name}` has no dim(s) {missing}; its dims are {list(draws.dims)} "
                        f"(draws need a {MODEL!r} dim and the `sample_dims` {sample_dims!r})")
    if MODEL not in draws.coords:
        raise CubeError(f"`{name}` needs {MODEL!r} coordinates (the model names)")
    if draws.sizes[MODEL] == 0:
        raise CubeError(f"`{name}` has no models")


def _check_complete(values: np.ndarray, observed: np.ndarray, models: np.ndarray,
                    name: str) -> None:
    bad_draws = np.isnan(values).any(axis=tuple(i for i in range(values.ndim)
                                                if i != values.ndim - 2))
    bad_obs = np.isnan(observed).any(axis=tuple(range(observed.ndim - 1)))
    if bad_draws.any() or bad_obs.any():
        which = [str(m) for m in models[bad_draws | bad_obs]]
        where = "observed values and draws" if bad_obs.any() and bad_draws.any() else (
            "observed values" if bad_obs.any() else "draws")
        raise CubeError(
            f"`{name}` holds NaN aggregates: the {where} of model(s) {which} (a missing "
            f"cell that the aggregate could not skip, or a resample that drew only languages "
            f"where the model has no score). Pairwise differences and ranks need every "
            f"value; aggregate with `skipna=True` (if not done: it skips missing cells), "
            f"drop the missing cells from the cube, or resample with `languages='fixed'` (a "
            f"bootstrap of the languages can draw only those a model lacks)")
    if np.isinf(values).any() or np.isinf(observed).any():
        raise CubeError(f"`{name}` holds infinite values; pairwise differences and ranks need "
                        f"finite draws")


def check_block(values: np.ndarray, models: np.ndarray, name: str = "draws") -> None:
    """NaN / inf check of one chunk of draws laid out ``(batch, model, samples)``."""
    _check_complete(values, np.zeros(values.shape[:-1]), models, name)


def as_draws(data: Any, *, sample_dims: Any = (RESAMPLE,), observed: Any = None,
             higher_is_better: Any = None, name: str = "draws", lazy: bool = False) -> Draws:
    """Validate ``data`` and lay it out as :class:`Draws` (see the module docstring).

    With ``lazy=True`` dask-backed draws stay lazy (the caller streams them chunk by chunk);
    otherwise they are computed.
    """
    dims = as_dims(sample_dims, "sample_dims")
    if isinstance(data, xr.Dataset) and RESAMPLED in data and OBSERVED in data:
        draws, obs = _from_aggregate(data, dims, observed)
        attrs = dict(data.attrs)
        if draws_no_noise(attrs):
            raise CubeError(f"`{name}`: {NO_NOISE_REASON}")
    elif isinstance(data, xr.DataArray):
        draws, attrs = data, dict(data.attrs)
        _check_layout(draws, dims, name)
        if observed is None:
            obs = draws.mean(dims)
        elif isinstance(observed, xr.DataArray):
            obs = observed
        else:
            raise TypeError(f"`observed` must be a DataArray over {MODEL!r} or None; got "
                            f"{type(observed).__name__}")
    else:
        extra = (f" with variables {sorted(map(str, data.data_vars))}"
                 if isinstance(data, xr.Dataset) else "")
        error = CubeError if isinstance(data, xr.Dataset) else TypeError
        hint = build_a_cube_hint(data, "eq.aggregate(eq.resample(cube))")
        raise error(f"`{name}` must be the result of eq.aggregate (a Dataset with "
                    f"{OBSERVED!r} and {RESAMPLED!r}) or a DataArray of draws with a "
                    f"{MODEL!r} dim; got {type(data).__name__}{extra}{hint}")
    _check_layout(draws, dims, name)
    if draws.dtype == np.bool_ or not np.issubdtype(draws.dtype, np.number):
        raise TypeError(f"`{name}` must hold real numbers; got dtype {draws.dtype}")
    extra_dims = tuple(d for d in draws.dims if d not in (MODEL, *dims))
    unknown = [d for d in obs.dims if d not in (MODEL, *extra_dims)]
    if MODEL not in obs.dims or unknown:
        raise CubeError(f"`observed` must have the dims {[MODEL, *extra_dims]} of the draws "
                        f"without the sample dims; got {list(obs.dims)}")
    obs = obs.broadcast_like(draws.isel({d: 0 for d in dims}, drop=True))
    models = np.asarray(draws[MODEL].values)
    if not np.array_equal(np.asarray(obs[MODEL].values), models):
        obs = obs.sel({MODEL: models})
    ordered = draws.transpose(*extra_dims, MODEL, *dims)
    obs = obs.transpose(*extra_dims, MODEL)
    if lazy and ordered.chunks is not None:
        n_lead = len(extra_dims) + 1
        values = ordered.data.rechunk({axis: -1 for axis in range(n_lead)})
        obs_values = obs.data
    else:
        values = np.asarray(ordered.values, dtype=np.float64)
        values = values.reshape(*values.shape[:len(extra_dims) + 1], -1)
        obs_values = np.asarray(obs.values, dtype=np.float64)
        _check_complete(values, obs_values, models, name)
    return Draws(values=values, observed=obs_values, models=models, extra_dims=extra_dims,
                 extra_coords={d: draws[d].values for d in extra_dims if d in draws.coords},
                 sample_dims=dims, attrs=attrs,
                 orientation=orientation_of(attrs, higher_is_better))


def sample_dims_label(dims: Sequence[Hashable]) -> str:
    """``"resample"`` or ``"chain x draw"``, for result attributes."""
    return " x ".join(map(str, dims))
