"""Provenance attributes that every cube constructor writes (loader, source, version, rng)."""

from __future__ import annotations

from typing import Any


def evaluq_version() -> str:
    """The installed evaluq version (imported late: the package imports this module)."""
    from evaluq._version import __version__

    return __version__


def provenance(loader: str, source: str, *, metric: str, higher_is_better: bool,
               rng_seed: Any = None) -> dict[str, Any]:
    """The cube attributes naming the metric, its orientation and where the cube came from."""
    attrs: dict[str, Any] = {
        "metric": str(metric),
        "higher_is_better": int(bool(higher_is_better)),
        "loader": loader,
        "source": source,
        "evaluq_version": evaluq_version(),
    }
    if rng_seed is not None:
        attrs["rng_seed"] = rng_seed if isinstance(rng_seed, int | str) else str(rng_seed)
    return attrs


def table_attrs(table: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """The provenance a DataFrame carries in its ``attrs`` (the harness-log readers of
    :mod:`evaluq.io` put the tool, its version, the models, tasks and log files there), for a
    cube or result built from it: its string entries whose keys ``attrs`` does not have yet,
    and ``source`` (the log files) in place of a bare ``"DataFrame"``."""
    extra = getattr(table, "attrs", None)
    if not isinstance(extra, dict):
        return {}
    return {k: v for k, v in extra.items() if isinstance(k, str) and isinstance(v, str)
            and (k not in attrs or (k == "source" and attrs.get(k) == "DataFrame"))}
