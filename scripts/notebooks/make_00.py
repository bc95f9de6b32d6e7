"""Write notebooks/00_quickstart.ipynb from its cells (then run scripts/run_notebooks.py)."""

from __future__ import annotations

from _build import write_notebook

CELLS = [
    ("md", "# evaluq quickstart\n\nThe demo data: five scikit-learn classifiers, each trained "
     "with five seeds, on four of scikit-learn's bundled data sets (playing the role of "
     "languages). We score the predictions into an **evaluation cube** with paired bootstrap "
     "replicates and split the uncertainty into its components."),
    ("code", "import evaluq as eq\nfrom evaluq.demo import load_demo\n\n"
     "targets, labels, proba = load_demo()\n"
     "cube = eq.from_predictions(targets, labels, metric=\"accuracy\", n_boot=1000, rng=0)\n"
     "cube"),
    ("md", "Replicate *b* of a data set is the same resampled test set for every model and seed, "
     "so differences between models stay paired. The mean accuracy per model and data set:"),
    ("code", "cube.score.mean(\"seed\").to_pandas().round(4)"),
    ("md", "## Variance components\n\nBetween data sets, seed-to-seed and boot-to-boot "
     "(test-set sampling) standard deviations, and the standard error of the mean over data "
     "sets (given these data sets, and over a population of data sets):"),
    ("code", "components = eq.variance_components(cube)\n"
     "eq.variance_table(components).T.round(4)"),
    ("code", "components.sigma_boot.to_pandas().round(4)"),
    ("md", "## Keep the cube\n\nA cube round-trips through NetCDF losslessly, attributes "
     "included:"),
    ("code", "import tempfile, os\n"
     "path = os.path.join(tempfile.mkdtemp(), \"demo_cube.nc\")\n"
     "cube.to_netcdf(path)\n"
     "eq.open_cube(path).identical(cube)"),
]


def main() -> None:
    write_notebook(CELLS, "00_quickstart.ipynb")


if __name__ == "__main__":
    main()
