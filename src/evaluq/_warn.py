"""The one way evaluq warns: attributed to the user's line (``tests/test_warning_origin.py``)."""

from __future__ import annotations

import os
import warnings
from typing import Final

_HERE = os.path.dirname(__file__)
PACKAGE_PREFIXES: Final = tuple(sorted({os.path.join(_HERE, ""),
                                       os.path.join(os.path.realpath(_HERE), "")}))
"""The package's directory (as imported, and resolved), with a trailing separator."""


def warn(message: str, category: type[Warning]) -> None:
    """Issue ``message`` as a ``category`` warning attributed to the first frame outside
    evaluq: the user's line (a notebook's cell), whatever the depth of the call inside the
    library. Python shows a warning with that file and line and, by its default filter,
    once per location; attributed inside the package, a notebook would show a path into the
    installed library and stay silent on a second call from another cell.

    Examples
    --------
    >>> import warnings
    >>> from evaluq._warn import warn
    >>> from evaluq.errors import EvaluqWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("a check", EvaluqWarning)
    >>> caught[0].category.__name__, str(caught[0].message)
    ('EvaluqWarning', 'a check')
    """
    warnings.warn(message, category, skip_file_prefixes=PACKAGE_PREFIXES)
