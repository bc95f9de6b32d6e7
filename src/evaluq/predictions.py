"""Build a cube from per-item targets and predictions, with paired bootstrap replicates."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from evaluq._dims import BOOT_SCORE, BOOTSTRAP, CLASS, ITEM, LANGUAGE, MODEL, SCORE, SEED
from evaluq._kernels import bootstrap_counts
from evaluq._provenance import provenance
from evaluq._schema import validate
from evaluq._validation import RNGLike, check_bounds, check_int, check_memory, check_rng
from evaluq.errors import CubeError
from evaluq.metrics._base import Metric, get_metric
from evaluq.metrics._inputs import prepare_inputs

_CHUNK_BYTES = 64 * 2**20

METRIC_BOUNDS: dict[str, tuple[float, float]] = {
    "accuracy": (0.0, 1.0),
    "precision": (0.0, 1.0),
    "recall": (0.0, 1.0),
    "f1": (0.0, 1.0),
    "cross_entropy": (0.0, math.inf),
    "kl": (0.0, math.inf),
    "js_divergence": (0.0, math.log(2.0)),
    "js_distance": (0.0, math.sqrt(math.log(2.0))),
    "emd": (0.0, 1.0),
    "entropy_similarity": (0.0, 1.0),
    "entropy_correlation": (-1.0, 1.0),
    "mse": (0.0, math.inf),
    "mae": (0.0, math.inf),
}
"""The range ``(lower, upper)`` of each built-in metric, keyed by its name (without the
``[...]`` options some factories append, as ``precision[class=1]`` or
``cross_entropy[eps=1e-12]``). Natural logarithms: the Jensen-Shannon divergence lies in
``[0, log 2]`` and its square root, the distance, in ``[0, sqrt(log 2)]``; the EMD is
normalised by ``K - 1`` and the entropy similarity is a cosine of non-negative vectors, both
in ``[0, 1]``."""


def metric_bounds(metric: str | Metric) -> tuple[float, float] | None:
    """The range ``(lower, upper)`` of a built-in metric, or None when it is not known.

    A :class:`evaluq.metrics.Metric` is looked up by its name, without the ``[...]`` options
    that factories such as :func:`evaluq.metrics.precision_metric` or
    :func:`evaluq.metrics.cross_entropy_metric` append (the options do not change the range).
    A metric of your own under another name has no known range.

    Parameters
    ----------
    metric
        A metric name or a :class:`evaluq.metrics.Metric`.

    Returns
    -------
    tuple of float or None
        ``(lower, upper)`` (``upper`` may be ``inf``), or None.

    See Also
    --------
    from_predictions, evaluq.cube.bounds

    Examples
    --------
    >>> from evaluq.predictions import metric_bounds
    >>> metric_bounds("f1"), metric_bounds("kl")
    ((0.0, 1.0), (0.0, inf))
    >>> metric_bounds("my_bleu") is None
    True
    """
    if isinstance(metric, Metric):
        name = metric.name
    elif isinstance(metric, str):
        name = metric
    else:
        raise TypeError(f"`metric` must be a metric name or a Metric; got {type(metric).__name__}")
    return METRIC_BOUNDS.get(name.split("[", 1)[0])


def _check_bounds(value: Any) -> tuple[float, float] | None:
    """Validate ``from_predictions(bounds=...)``: a pair of numbers lower < upper, or None."""
    return check_bounds(value, also="'auto'")


def _check_inside(cube: xr.Dataset, bounds: tuple[float, float]) -> None:
    """Every (non-NaN) score and replicate lies in the declared bounds, or a ValueError."""
    lo, hi = bounds
    for name in (SCORE, BOOT_SCORE):
        values = cube[name].values
        bad = (values < lo) | (values > hi)
        if bad.any():
            first = np.unravel_index(np.argmax(bad), bad.shape)
            where = {d: cube[name][d].values[i].item() for d, i in zip(cube[name].dims, first,
                                                                       strict=True)}
            raise ValueError(
                f"{int(bad.sum())} value(s) of {name!r} are outside the declared `bounds` "
                f"({lo:g}, {hi:g}), e.g. {float(values[first]):g} at {where}")


def _as_model_seed_item(language: Hashable, preds: Any, soft: bool) -> xr.DataArray:
    """Normalise one language's predictions to a DataArray (model, seed, item[, class])."""
    tail = (ITEM, CLASS) if soft else (ITEM,)
    if isinstance(preds, xr.DataArray):
        da = preds if SEED in preds.dims else preds.expand_dims({SEED: [0]})
        expected = {MODEL, SEED, *tail}
        if set(da.dims) != expected:
            raise CubeError(f"predictions for language {language!r} must have dims "
                            f"{sorted(expected)}; got {list(da.dims)}")
        return da.transpose(MODEL, SEED, *tail)
    if isinstance(preds, Mapping):
        models = list(preds)
        arrays = []
        for m in models:
            arr = np.asarray(preds[m])
            if arr.ndim == len(tail):
                arr = arr[None]
            if arr.ndim != len(tail) + 1:
                raise CubeError(
                    f"predictions for language {language!r}, model {m!r} must have shape "
                    f"(seed, item{', class' if soft else ''}); got {arr.shape}"
                )
            arrays.append(arr)
        n_seeds = max(a.shape[0] for a in arrays)
        shapes = {a.shape[1:] for a in arrays}
        if len(shapes) != 1:
            raise CubeError(f"predictions for language {language!r} have different item counts "
                            f"across models: {sorted(shapes)}")
        if any(a.shape[0] != n_seeds for a in arrays):
            raise CubeError(
                f"models of language {language!r} have different numbers of seeds "
                f"({[a.shape[0] for a in arrays]}); pass a DataArray with NaN-free "
                "predictions per (model, seed) or one language per call"
            )
        return xr.DataArray(np.stack(arrays), dims=(MODEL, SEED, *tail),
                            coords={MODEL: models, SEED: np.arange(n_seeds)})
    raise TypeError(
        f"predictions for language {language!r} must be a DataArray (model, seed, item"
        f"{', class' if soft else ''}) or a mapping model -> array; got {type(preds).__name__}"
    )


def from_predictions(
    targets: Any,
    predictions: Any,
    *,
    metric: str | Metric = "accuracy",
    n_boot: int = 1000,
    rng: RNGLike = 0,
    labels: Sequence[Any] | Mapping[Hashable, Sequence[Any]] | None = None,
    language: Hashable = "all",
    bounds: tuple[float, float] | Literal["auto"] | None = "auto",
) -> xr.Dataset:
    """Score per-item predictions into a cube with paired bootstrap replicates.

    For each language, ``n_boot`` test sets are resampled with replacement; replicate ``b`` of
    a language is the *same* resampled test set for every model and seed, so differences
    between models stay paired. Each replicate costs one matrix product of item counts and
    per-item statistics (see :mod:`evaluq.metrics._base`): no loop over replicates or items.

    Parameters
    ----------
    targets
        Mapping language -> per-item targets (labels ``(item,)``, probability rows
        ``(item, class)`` for soft metrics, or real values for regression); or one array for a
        single language (named by ``language``).
    predictions
        Mapping language -> predictions, each either a DataArray with dims
        ``(model, seed, item[, class])`` or a mapping model -> array ``(seed, item[, class])``;
        or one such object for a single language.
    metric
        A registered metric name (``evaluq.metrics.available_metrics()``) or a
        :class:`evaluq.metrics.Metric`.
    n_boot
        Bootstrap replicates per language (>= 2).
    rng
        Seed or Generator. Each language gets its own stream spawned in sorted language
        order, so the result does not depend on the order of the mapping.
    labels
        Label set for hard metrics (one for all languages, or a mapping per language).
        Default: the union of labels in that language's targets and predictions.
    language
        Name of the language when single arrays are given.
    bounds
        The metric's range ``(lower, upper)``, stored as the cube's ``bounds`` attribute (as
        the loaders' ``bounds=``) so that parametric resampling (:func:`evaluq.resample` with
        ``replication="parametric"``, its default) draws from a normal truncated to it.
        ``"auto"`` (default) records the range of a built-in metric (``METRIC_BOUNDS``:
        accuracy, precision, recall, F1, EMD and entropy similarity in [0, 1]; cross-entropy,
        KL, MSE and MAE in [0, inf); the Jensen-Shannon divergence in [0, log 2] and its
        distance in [0, sqrt(log 2)]; entropy correlation in [-1, 1]) and nothing for a metric
        whose range is not known (:func:`metric_bounds`). A pair is checked against every
        score and replicate (a ValueError names the first outside) and stored; None stores
        none.

    Returns
    -------
    xarray.Dataset
        A cube with ``score`` (model, language, seed) and ``boot_score``
        (model, language, seed, bootstrap); attribute ``bounds`` as described above.

    Examples
    --------
    >>> import numpy as np, xarray as xr, evaluq as eq
    >>> y = np.array([0, 1, 1, 0, 1, 0])
    >>> preds = xr.DataArray([[[0, 1, 1, 0, 0, 0]], [[1, 1, 1, 1, 1, 0]]],
    ...                      dims=("model", "seed", "item"), coords={"model": ["a", "b"]})
    >>> cube = eq.from_predictions(y, preds, n_boot=200, rng=1)
    >>> cube.score.values.ravel().round(3).tolist()
    [0.833, 0.667]
    >>> cube.boot_score.sizes["bootstrap"]
    200
    >>> eq.cube.bounds(cube)
    (0.0, 1.0)
    """
    metric_obj = get_metric(metric)
    if isinstance(bounds, str) and bounds == "auto":
        bounds_ = metric_bounds(metric_obj)
        declared = False
    else:
        bounds_ = _check_bounds(bounds)
        declared = True
    n_boot = check_int("n_boot", n_boot, minimum=2)
    root = check_rng(rng)
    targets, predictions, languages = _languages(targets, predictions, language)
    streams = np.random.SeedSequence(
        root.integers(0, 2**63 - 1, dtype=np.int64)  # derived from rng: one stream a language
    ).spawn(len(languages))
    per_lang = [_score_language(lang, targets[lang], predictions[lang], metric_obj, labels,
                                n_boot, np.random.default_rng(stream))
                for lang, stream in zip(languages, streams, strict=True)]
    cube = xr.concat(per_lang, dim=LANGUAGE, data_vars="all", coords="minimal",
                     compat="override", join="outer", fill_value=np.nan)
    cube = cube.assign_coords({LANGUAGE: languages}).sortby([MODEL, SEED])
    cube.attrs = provenance(
        "from_predictions", "predictions", metric=metric_obj.name,
        higher_is_better=metric_obj.higher_is_better,
        rng_seed=int(rng) if isinstance(rng, int) else type(rng).__name__,
    )
    cube.attrs["n_boot"] = n_boot
    if bounds_ is not None:
        if declared:
            _check_inside(cube, bounds_)
        cube.attrs["bounds"] = np.asarray(bounds_, dtype=np.float64)
    return validate(cube)


def _languages(targets: Any, predictions: Any, language: Any
               ) -> tuple[Mapping[Any, Any], Mapping[Any, Any], list[Any]]:
    """Targets and predictions as mappings language -> values, and the sorted languages."""
    if not isinstance(targets, Mapping):
        targets = {language: targets}
        predictions = {language: predictions}
    if not isinstance(predictions, Mapping):
        raise TypeError("`predictions` must be a mapping language -> predictions when "
                        "`targets` is a mapping")
    if set(targets) != set(predictions):
        missing = sorted(map(str, set(targets) ^ set(predictions)))
        raise CubeError(f"`targets` and `predictions` must name the same languages; "
                        f"these appear in only one: {missing}")
    if not targets:
        raise CubeError("`targets` is empty")
    try:
        languages = sorted(targets)
    except TypeError:
        raise CubeError("language names must be all strings or all numbers") from None
    return targets, predictions, languages


def _score_language(lang: Any, targets: Any, predictions: Any, metric_obj: Metric,
                    labels: Any, n_boot: int, gen: np.random.Generator) -> xr.Dataset:
    """One language's ``score`` (model, seed) and paired ``boot_score`` (model, seed,
    bootstrap): every model and seed scored on the same bootstrap count matrix."""
    soft = metric_obj.kind == "soft"
    preds = _as_model_seed_item(lang, predictions, soft)
    y = np.asarray(targets.values if isinstance(targets, xr.DataArray) else targets)
    if y.shape != preds.shape[2:]:
        raise CubeError(f"`targets` of language {lang!r} have shape {y.shape}, but its "
                        f"predictions have (item{', class' if soft else ''}) shape "
                        f"{preds.shape[2:]}")
    if y.shape[0] == 0:
        raise CubeError(f"language {lang!r} has no items")
    lab = labels.get(lang) if isinstance(labels, Mapping) else labels
    if lab is None and metric_obj.labels is not None:
        lab = metric_obj.labels
    try:
        prepared = prepare_inputs(y, preds, kind=metric_obj.kind, labels=lab,
                                  names=(f"predictions of language {lang!r}",),
                                  allow_leading=True)
    except (ValueError, TypeError) as err:
        raise CubeError(f"language {lang!r}: {err}") from None
    y, p, n_classes = prepared.targets, prepared.predictions[0], prepared.n_classes
    metric_lang = metric_obj.for_labels(prepared.labels) if metric_obj.kind == "hard" \
        else metric_obj
    score = metric_lang(y, p, n_classes)                         # (model, seed)
    # the replicates (model, seed, bootstrap), their chunks and the concatenated copy
    check_memory("n_boot", 16.0 * n_boot * max(np.size(score), 1))
    n_items = y.shape[0]
    chunk = max(1, min(n_boot, _CHUNK_BYTES // (8 * n_items)))
    boot = np.concatenate(
        [metric_lang.weighted(y, p, bootstrap_counts(gen, n_items, min(chunk, n_boot - i)),
                              n_classes)
         for i in range(0, n_boot, chunk)],
        axis=-1,
    )                                                           # (model, seed, bootstrap)
    return xr.Dataset(
        {SCORE: ((MODEL, SEED), score), BOOT_SCORE: ((MODEL, SEED, BOOTSTRAP), boot)},
        coords={MODEL: preds[MODEL].values, SEED: preds[SEED].values,
                BOOTSTRAP: np.arange(n_boot)},
    )
