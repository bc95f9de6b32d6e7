"""Renamed keyword arguments: the old name keeps working for a while, with a warning.

``@renamed_argument("alpha", "prior")`` lets a function whose argument is now ``prior`` accept
``alpha=`` too: it emits a :class:`DeprecationWarning` naming the new argument and passes the
value on as ``prior``; giving both is a TypeError.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
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
