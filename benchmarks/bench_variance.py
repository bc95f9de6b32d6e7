"""Benchmark: variance_components on 10 models x 100 languages x 10 seeds x 1000 replicates.

Target: under 2 s. Prints the time and peak memory of evaluq's vectorised computation, and
compares with a baseline run in the same process: the per-(model, language) loop over a long
pandas table that tools like the multilingual paper's take (groupby + numpy per group).

Run: ``python benchmarks/bench_variance.py``
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import evaluq as eq

N_MODELS, N_LANGUAGES, N_SEEDS, N_BOOT = 10, 100, 10, 1000


def baseline(cube) -> dict[tuple[str, str], tuple[float, float]]:
    """Per-(model, language) Python loop: seed SD and mean boot SD per cell."""
    out = {}
    score, boot = cube.score.values, cube.boot_score.values
    for i, m in enumerate(cube.model.values):
        for j, lang in enumerate(cube.language.values):
            seed_sd = float(np.std(score[i, j], ddof=1))
            boot_sd = float(np.mean([np.std(boot[i, j, s], ddof=1) for s in range(N_SEEDS)]))
            out[(m, lang)] = (seed_sd, boot_sd)
    return out


def pandas_baseline(cube) -> float:
    """Long-table route: groupby on a tidy table of every replicate, timed without building it."""
    df = cube.boot_score.to_dataframe().reset_index()
    start = time.perf_counter()
    per_seed = df.groupby(["model", "language", "seed"])["boot_score"].std()
    per_seed.groupby(["model", "language"]).mean()
    per_boot = df.groupby(["model", "language", "bootstrap"])["boot_score"].std()
    per_boot.groupby(["model", "language"]).std()
    return time.perf_counter() - start


def main() -> None:
    cube = eq.simulate_cube(n_models=N_MODELS, n_languages=N_LANGUAGES, n_seeds=N_SEEDS,
                            n_boot=N_BOOT, rng=0)
    size = cube.boot_score.nbytes / 2**20
    print(f"cube: {dict(cube.boot_score.sizes)}, boot_score {size:.0f} MiB")
    eq.variance_components(cube)  # warm up
    times = []
    for _ in range(3):
        start = time.perf_counter()
        vc = eq.variance_components(cube)
        times.append(time.perf_counter() - start)
    best = min(times)
    tracemalloc.start()
    eq.variance_components(cube)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"evaluq.variance_components: {best:.3f} s (best of 3), peak extra memory "
          f"{peak / 2**20:.0f} MiB   target < 2 s: {'PASS' if best < 2 else 'FAIL'}")

    start = time.perf_counter()
    ref = baseline(cube)
    base_time = time.perf_counter() - start
    print(f"baseline per-cell Python loop (seed and boot SDs only): {base_time:.3f} s")
    print(f"speed ratio: {base_time / best:.1f}x")
    pandas_time = pandas_baseline(cube)
    print(f"baseline pandas groupby on the long table (boot SD and its SE only): "
          f"{pandas_time:.3f} s, ratio {pandas_time / best:.1f}x")
    m, lang = cube.model.values[3], cube.language.values[42]
    assert np.isclose(ref[(m, lang)][0], vc.sigma_seed.sel(model=m, language=lang).item())
    assert np.isclose(ref[(m, lang)][1], vc.sigma_boot.sel(model=m, language=lang).item())
    print("baseline and evaluq agree")


if __name__ == "__main__":
    main()
