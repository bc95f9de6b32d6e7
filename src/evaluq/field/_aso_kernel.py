"""The violation ratios of one model's bootstrap quantile functions against every later
model's, in one pass (``multi_aso`` at many models).

With f the first model's and g another's quantile values on the grid t_0 < ... < t_{T-1}
(spacing dt), deepsig's violation ratio is

    eps_W(f, g) = sum_{t >= 1} [f_t < g_t] (g_t - f_t)^2 dt / sum_t (g_t - f_t)^2 dt,

1/2 where the denominator is 0 (identical quantile functions). The numpy form builds
(models, resamples, grid) temporaries per model (at 200 models and 1,000 resamples, 320 MB
each, several per model); this kernel reads each value once and keeps two running sums in
the order of the grid (numpy's sums are pairwise and unrolled, so the two agree to about
1e-15, not bit for bit): 1.81 -> 0.09 s for one model against 199 others at 1,000 resamples
on a 201-node grid. ``tests/test_almost_stochastic_order.py`` checks it against the numpy
form.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def pair_violation_ratios(first: np.ndarray, others: np.ndarray,
                          dt: float) -> np.ndarray:  # pragma: no cover - compiled
    """eps_W of ``first`` (B, T) against each of ``others`` (R, B, T), resample by resample:
    (R, B)."""
    n_other, n_boot, n_grid = others.shape
    out = np.empty((n_other, n_boot))
    for r in range(n_other):
        for b in range(n_boot):
            f, g = first[b], others[r, b]
            d = g[0] - f[0]
            squared = d * d * dt
            violation = 0.0
            for t in range(1, n_grid):
                d = g[t] - f[t]
                term = d * d * dt
                squared += term
                violation += term if f[t] < g[t] else 0.0
            out[r, b] = 0.5 if squared == 0.0 else violation / squared
    return out


def violation_ratios(first: np.ndarray, others: np.ndarray, dt: float) -> Any:
    """:func:`pair_violation_ratios` on C-ordered float64 copies where needed."""
    return pair_violation_ratios(np.ascontiguousarray(first, dtype=np.float64),
                                 np.ascontiguousarray(others, dtype=np.float64), float(dt))
