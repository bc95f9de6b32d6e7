"""Exceptions that users may want to catch."""

from __future__ import annotations


class CubeError(ValueError):
    """An evaluation cube (or the table it is built from) is malformed.

    Raised by the loaders and by :func:`evaluq.validate`; the message names the variable,
    dimension, column or key that is wrong.
    """


class NotFittedError(RuntimeError):
    """A fitted object was used before it was fitted; the message says which method to call.

    Raised by the hierarchical model (:class:`evaluq.HierarchicalFit`) when a result that
    needs its posterior is asked of a fit without one.
    """


class EvaluqWarning(UserWarning):
    """Base class of evaluq's warnings: something in the input looks wrong but may be right.

    Every warning class of evaluq derives from it (a numerical one, such as
    ``ImhofAccuracyWarning``, also from ``RuntimeWarning``), so
    ``warnings.filterwarnings("ignore", category=evaluq.EvaluqWarning)`` silences them all.
    """


class ScaleWarning(EvaluqWarning):
    """Scores far from the others of their language (robust SDs from the median): a wrong
    scale (a 0-1 metric given as 0-100, a sum instead of a mean) or a broken run. The
    message names the rows."""


class HarnessLogWarning(EvaluqWarning):
    """An evaluation harness's log (Inspect, lm-evaluation-harness) is read but something in it
    needs a look: a score missing for some samples, samples that errored or were invalidated,
    an unfinished run read on request, two logs of the same model and task. The message names
    the file, the model, the task and the samples."""


class MissingDataWarning(EvaluqWarning):
    """A report or analysis left out what the data lack: (model, language) cells with no
    score at all (the languages, or models, that hold them are named) or runs missing from
    some cells (each cell then uses its own runs). The message says what was done."""


class ImplicitEpochWarning(EvaluqWarning):
    """A per-item table repeats its (model[, task], item) keys, the table's ``epoch`` column (a
    harness log's) tells the repeats apart, and the epoch argument (``seed=`` of
    :func:`evaluq.item_means` / :func:`evaluq.from_items`, ``epoch=`` of
    :func:`evaluq.fit_items`) was not given: the epochs were taken as repeated scorings of each
    item, as if it had been given. Pass it to say so."""


class ConvergenceWarning(EvaluqWarning):
    """A Bayesian fit's sampler diagnostics (R-hat, ESS, divergences, E-BFMI) are not good
    enough; the message says what to change. The one convergence warning of every fit
    (:func:`evaluq.fit_hierarchical`, :func:`evaluq.fit_items`; ``ItemConvergenceWarning`` is
    another name of this class)."""


class SmallSampleWarning(EvaluqWarning):
    """Too few items (tasks, runs) for a procedure's p-value or interval to hold its nominal
    level: at a true null it would reject more often than the level says. The message gives
    the count, the threshold and the procedure valid at that size (for
    :func:`evaluq.bootstrap_test`: ``method="permutation"``)."""
