"""False alarms and power of the report's scale check.

``evaluq.reporting.sections._scale_warnings`` on: the real demo predictions (accuracy, F1),
1000 Atari-like cubes (games on scales 1 to 1e5, algorithms about 2x apart, log-normal runs),
1000 cubes of accuracies 0.02-0.9, and 500 such cubes with one model's scores x100.

Run: ``python scripts/scale_check_false_alarms.py``
"""

from __future__ import annotations

import numpy as np

import evaluq as eq
from evaluq.demo import demo_cube
from evaluq.reporting.sections import _scale_warnings


def atari_like(rng: np.random.Generator, n_m: int = 6, n_g: int = 26,
               n_s: int = 5) -> np.ndarray:
    game_scale = np.exp(rng.normal(5, 2.5, n_g))           # games on scales 1 to 1e5
    algo = rng.normal(0, 0.8, (n_m, 1, 1))                  # algorithms about 2x apart
    inter = rng.normal(0, 0.8, (n_m, n_g, 1))
    runs = rng.normal(0, 0.5, (n_m, n_g, n_s))
    return game_scale[None, :, None] * np.exp(algo + inter + runs)


def accuracies(rng: np.random.Generator, n_m: int = 5, n_l: int = 10,
               n_s: int = 3) -> np.ndarray:
    p = rng.uniform(0.02, 0.9, (n_m, 1, 1)) * rng.uniform(0.5, 1, (1, n_l, 1))
    return np.clip(p + rng.normal(0, 0.01, (n_m, n_l, n_s)), 0, 1)


def flagged(scores: np.ndarray) -> bool:
    cube = eq.from_arrays(scores, outlier_threshold=None)
    return any("another scale" in w for w in _scale_warnings(cube))


def main() -> None:
    rng = np.random.default_rng(0)
    for metric in ("accuracy", "f1"):
        print(f"demo predictions, {metric}: {_scale_warnings(demo_cube(metric=metric, n_boot=50))}")
    for name, make in (("Atari-like log-normal", atari_like),
                       ("accuracies 0.02-0.9", accuracies)):
        rate = np.mean([flagged(make(rng)) for _ in range(1000)])
        print(f"{name}: false-alarm rate {rate:.3f} (1000 cubes)")
    hits = 0
    for _ in range(500):
        x = accuracies(rng)
        x[rng.integers(5)] *= 100
        hits += flagged(x)
    print(f"one model x100 among fractions: found in {hits} of 500")


if __name__ == "__main__":
    main()
