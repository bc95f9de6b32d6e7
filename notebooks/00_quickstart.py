# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # evaluq quickstart
#
# The demo data: five scikit-learn classifiers, each trained with five seeds, on four of scikit-learn's bundled data sets (playing the role of languages). We score the predictions into an **evaluation cube** with paired bootstrap replicates and split the uncertainty into its components.

# %%
import evaluq as eq
from evaluq.demo import load_demo

targets, labels, proba = load_demo()
cube = eq.from_predictions(targets, labels, metric="accuracy", n_boot=1000, rng=0)
cube

# %% [markdown]
# Replicate *b* of a data set is the same resampled test set for every model and seed, so differences between models stay paired. The mean accuracy per model and data set:

# %%
cube.score.mean("seed").to_pandas().round(4)

# %% [markdown]
# ## Variance components
#
# Between data sets, seed-to-seed and boot-to-boot (test-set sampling) standard deviations, and the standard error of the mean over data sets (given these data sets, and over a population of data sets):

# %%
components = eq.variance_components(cube)
eq.variance_table(components).T.round(4)

# %%
components.sigma_boot.to_pandas().round(4)

# %% [markdown]
# ## Keep the cube
#
# A cube round-trips through NetCDF losslessly, attributes included:

# %%
import tempfile, os
path = os.path.join(tempfile.mkdtemp(), "demo_cube.nc")
cube.to_netcdf(path)
eq.open_cube(path).identical(cube)
