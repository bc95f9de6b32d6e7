"""Exceptions that users may want to catch."""

from __future__ import annotations


class CubeError(ValueError):
    """An evaluation cube (or the table it is built from) is malformed.

    Raised by the loaders and by :func:`evaluq.validate`; the message names the variable,
    dimension, column or key that is wrong.
    """


class NotFittedError(RuntimeError):
    """A fitted object was used before it was fitted; the message says which method to call."""
