"""Renamed keyword arguments: the old name keeps working for a while, with a warning.

``@renamed_argument("alpha", "prior")`` lets a function whose argument is now ``prior`` accept
``alpha=`` too: it emits a :class:`DeprecationWarning` naming the new argument and passes the
value on as ``prior``; giving both is a TypeError. :func:`renamed_method` does the same for a
method (``MSEDistribution.interval`` -> ``confidence_interval``), :func:`moved_module` the
warning of an old module path (``evaluq.demsar`` -> ``evaluq.field.demsar``, see ``_moved``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed_argument(old: str, new: str, *, meaning: str = "") -> Callable[[F], F]:
    """Decorator: accept the keyword ``old`` as a deprecated spelling of ``new``."""
    what = f" ({meaning})" if meaning else ""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got both `{old}` and `{new}`; "
                                    f"`{old}` is the deprecated name of `{new}`")
                warnings.warn(f"{func.__name__}(): `{old}` is deprecated; use `{new}`{what}",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_method(old: str, new: str) -> Callable[..., Any]:
    """A deprecated method ``old`` that warns and calls the method ``new`` with its arguments.

    Used as a class attribute: ``interval = renamed_method("interval", "confidence_interval")``.

    >>> class Result:
    ...     def confidence_interval(self, confidence_level=0.95):
    ...         return confidence_level
    ...     interval = renamed_method("interval", "confidence_interval")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = Result().interval(0.9)
    >>> value, str(caught[0].message)
    (0.9, 'Result.interval() is deprecated; use Result.confidence_interval()')
    """

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        owner = type(self).__name__
        warnings.warn(f"{owner}.{old}() is deprecated; use {owner}.{new}()",
                      DeprecationWarning, stacklevel=2)
        return getattr(self, new)(*args, **kwargs)

    method.__name__ = old
    method.__doc__ = f"Deprecated: use :meth:`{new}` (same arguments)."
    return method


def moved_module(old: str, new: str, *, frame: FrameType | None = None) -> None:
    """Warn that the module ``old`` is now ``new`` (its old path imports for one release).

    ``frame``: the frame to blame (the user's ``import`` line, found by ``_moved`` below the
    import machinery's own frames); the caller's when None.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     moved_module("evaluq.demsar", "evaluq.field.demsar")
    >>> str(caught[0].message)
    'evaluq.demsar moved to evaluq.field.demsar; the old path goes in the next release'
    """
    message = f"{old} moved to {new}; the old path goes in the next release"
    if frame is None:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return
    where = frame.f_globals
    warnings.warn_explicit(message, DeprecationWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=where.get("__name__", "<unknown>"),
                           registry=where.setdefault("__warningregistry__", {}))
