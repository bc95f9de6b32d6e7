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
# # Metrics when the targets carry measurement error
#
# A regression target measured in a lab, a label assigned by a tired annotator: the target is
# itself a random draw, so the metric computed against it is a random variable even for a fixed
# model. Michelucci & Venturini (2021) give its mean and variance; `eq.measurement_error` gives
# those (corrected where the paper is wrong) and the **full distribution**: a scaled noncentral
# chi-square for the MSE, a generalized chi-square (Imhof's inversion) for unequal noise, folded
# normals for the MAE and an exact Poisson-binomial for accuracy under label flips. Formulas and
# errata: `formulas.md` §4.
#
# Every closed form below is checked against a plain numpy simulation written in the notebook,
# independent of the library.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import erf

import evaluq as eq

me = eq.measurement_error
rng = np.random.default_rng(2021)
N_SIM = 200_000  # simulated measurement replications

# %% [markdown]
# ## MSE with equal measurement error: a noncentral chi-square
#
# 25 items, true targets `ybar_i`, a model's predictions `yhat_i`, targets measured with SD sigma
# = 0.5. With `d_i = ybar_i - yhat_i`, `M MSE / sigma^2 ~ chi'^2(df = M, nc = sum d_i^2 /
# sigma^2)`, so `E[MSE] = mean(d_i^2) + sigma^2` and `Var[MSE] = (2 sigma^4 + 4 sigma^2
# mean(d_i^2)) / M`.

# %%
m = 25
ybar = rng.normal(10.0, 2.0, m)
yhat = ybar + rng.normal(0.0, 0.4, m)
sigma = 0.5
dist = me.mse_distribution(ybar, yhat, sigma)
print(dist)

# independent simulation: measure the targets N_SIM times, score the same predictions
y_meas = ybar + sigma * rng.standard_normal((N_SIM, m))
mse_sim = ((y_meas - yhat) ** 2).mean(axis=1)
iv = dist.interval(0.95).values
q = dist.quantile([0.025, 0.5, 0.975]).values
pd.DataFrame({
    "exact": [float(me.expected_mse(ybar, yhat, sigma)), float(me.var_mse(ybar, yhat, sigma)),
              *q, 0.95],
    "simulation": [mse_sim.mean(), mse_sim.var(ddof=1),
                   *np.quantile(mse_sim, [0.025, 0.5, 0.975]),
                   np.mean((mse_sim >= iv[0]) & (mse_sim <= iv[1]))],
}, index=["E[MSE]", "Var[MSE]", "2.5%", "median", "97.5%",
          "P(MSE in 95% interval)"]).round(6)

# %% [markdown]
# The observed MSE of this model will fall in the printed interval 95% of the times the targets
# are re-measured: differences between two models smaller than this spread are measurement noise,
# not model quality.
#
# ## Unequal measurement error: a generalized chi-square (Imhof)
#
# With a different sigma per item the MSE is a weighted sum of noncentral chi-squares. The moments
# keep their closed forms; the distribution comes from Imhof's (1961) numerical inversion of the
# characteristic function (`method="imhof"`, chosen automatically). Here sigma_i ranges over
# 0.05-1.2, and three items are known exactly (sigma = 0):

# %%
sigma_i = rng.uniform(0.05, 1.2, m)
sigma_i[:3] = 0.0
t0 = time.perf_counter()
dist_u = me.mse_distribution(ybar, yhat, sigma_i)
levels = [0.01, 0.025, 0.25, 0.5, 0.75, 0.975, 0.99]
q_imhof = dist_u.quantile(levels).values
t_imhof = time.perf_counter() - t0
y_meas = ybar + sigma_i * rng.standard_normal((N_SIM, m))
mse_sim_u = ((y_meas - yhat) ** 2).mean(axis=1)
q_sim = np.quantile(mse_sim_u, levels)
# s.e. of a simulated quantile: sqrt(p (1 - p) / n) / density, density from the exact CDF
h = 1e-4 * float(dist_u.mean)
dens = np.array([(float(dist_u.cdf(x + h)) - float(dist_u.cdf(x - h))) / (2 * h)
                 for x in q_imhof])
se = np.sqrt(np.array(levels) * (1 - np.array(levels)) / N_SIM) / dens
print(f"method={dist_u.method!r}; 7 quantiles in {t_imhof:.2f} s")
pd.DataFrame({"Imhof": q_imhof, "simulation": q_sim, "z": (q_sim - q_imhof) / se},
             index=pd.Index(levels, name="level")).round(5)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
ax = axes[0]
ax.hist(mse_sim, bins=120, density=True, color="0.8", label="simulated MSE")
x = np.linspace(mse_sim.min(), mse_sim.max(), 400)
scale = sigma**2 / m
nc = float(((ybar - yhat) ** 2).sum() / sigma**2)
ax.plot(x, stats.ncx2.pdf(x / scale, df=m, nc=nc) / scale, "C0",
        label="scaled noncentral chi-square")
for v in iv:
    ax.axvline(v, color="C3", ls="--", lw=1)
ax.set(title=f"equal sigma = {sigma}: density, 95% interval", xlabel="MSE")
ax.legend()
ax = axes[1]
xs = np.sort(mse_sim_u)
ax.plot(xs[::200], np.arange(1, xs.size + 1)[::200] / xs.size, color="0.6", lw=4,
        label="simulated MSE (ECDF)")
grid = np.linspace(xs[0], np.quantile(xs, 0.9995), 40)
ax.plot(grid, [float(dist_u.cdf(g)) for g in grid], "C0.", label="Imhof CDF")
approx = me.mse_distribution(ybar, yhat, float(np.sqrt(np.mean(sigma_i**2))))
ax.plot(grid, [float(approx.cdf(g)) for g in grid], "C1--",
        label="ncx2 with the RMS sigma (wrong)")
ax.set(title="unequal sigma: CDF", xlabel="MSE")
ax.legend()
fig.tight_layout()
plt.show()
print("95% interval, Imhof:            ", dist_u.confidence_interval(0.95).values.round(4))
print("95% interval, ncx2 at RMS sigma:", approx.confidence_interval(0.95).values.round(4))
print("simulated 2.5% / 97.5% quantiles:", np.quantile(mse_sim_u, [0.025, 0.975]).round(4))

# %% [markdown]
# Replacing the unequal sigmas by their root mean square gets the mean right but not the spread:
# the generalized chi-square is needed for the interval.
#
# ## MAE: folded normals
#
# `|y_i - yhat_i|` is folded normal with mean `mu_i = sigma_i sqrt(2/pi) exp(-d_i^2 / (2
# sigma_i^2)) + d_i (1 - 2 Phi(-d_i / sigma_i))` and variance `d_i^2 + sigma_i^2 - mu_i^2`. An
# item with sigma_i = 0 gives exactly `mu_i = |d_i|` and variance 0 (no division by zero, no
# warning); the three exact items above are such items.

# %%
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("error")  # sigma = 0 must be silent
    e_mae = float(me.expected_mae(ybar, yhat, sigma_i))
    v_mae = float(me.var_mae(ybar, yhat, sigma_i))
    exact_items = float(me.expected_mae(ybar[:3], yhat[:3], 0.0))
    exact_items_var = float(me.var_mae(ybar[:3], yhat[:3], 0.0))
mae_sim = np.abs(y_meas - yhat).mean(axis=1)
pd.DataFrame({
    "exact": [e_mae, v_mae, exact_items, exact_items_var],
    "simulation / direct": [mae_sim.mean(), mae_sim.var(ddof=1),
                            np.abs(ybar[:3] - yhat[:3]).mean(), 0.0],
}, index=["E[MAE]", "Var[MAE]", "E[MAE], sigma = 0 items",
          "Var[MAE], sigma = 0 items"]).round(7)


# %% [markdown]
# **Erratum (the paper's Var[MAE], eqs. 41-42 / Table 2).** The paper subtracts `d sqrt(2/pi)
# exp(-d^2/(2 sigma^2)) + d erf(d / (sqrt(2) sigma))` instead of the squared folded mean `mu_i^2`.
# On 10 items with d = 0.5, sigma = 1.5:

# %%
def paper_var_mae(d, s):
    per_item = (d**2 + s**2 - d * np.sqrt(2 / np.pi) * np.exp(-(d**2) / (2 * s**2))
                - d * erf(d / (np.sqrt(2) * s)))
    return per_item.sum() / d.size**2

d, s = np.full(10, 0.5), np.full(10, 1.5)
sim = np.abs(d + s * rng.standard_normal((N_SIM, 10))).mean(axis=1)
pd.Series({"evaluq var_mae": float(me.var_mae(d, np.zeros(10), s)),
           "paper eqs. 41-42": paper_var_mae(d, s),
           "simulation": sim.var(ddof=1),
           "simulation s.e.": sim.var(ddof=1) * np.sqrt(2 / (N_SIM - 1)),
           "paper formula at d = 0.4, sigma = 0.5": paper_var_mae(np.full(10, 0.4),
                                                              np.full(10, 0.5)),
           }).round(6).to_frame("Var[MAE]")

# %% [markdown]
# The paper's formula gives 2.2 times the true variance here, and a negative "variance" elsewhere.
#
# ## Accuracy when labels flip
#
# A binary classifier with true accuracy a = 0.85 on M = 200 items, each observed label flipped
# with probability q = 0.05. The paper's check value `E[a_r] = a + q (1 - 2a)` = 0.815. Exactly,
# `M a_r ~ Bin(M a, 1 - q) + Bin(M (1 - a), q)`, so evaluq gives the whole distribution and an
# exact interval.

# %%
m_acc = 200
y_true = np.ones(m_acc, dtype=int)
y_pred = np.r_[np.ones(170, dtype=int), np.zeros(30, dtype=int)]  # a = 0.85
acc = me.accuracy_distribution(y_true, y_pred, q=0.05)
print(acc)
# simulate: flip each observed label with probability q, score the fixed predictions
flips = rng.random((N_SIM, m_acc)) < 0.05
observed = np.where(flips, 1 - y_true, y_true)
acc_sim = (observed == y_pred).mean(axis=1)
iv_acc = acc.confidence_interval(0.95).values
pd.DataFrame({
    "evaluq": [float(acc.mean), float(acc.variance), *iv_acc,
               float(acc.coverage(0.95))],
    "simulation": [acc_sim.mean(), acc_sim.var(ddof=1), np.nan, np.nan,
                   np.mean((acc_sim >= iv_acc[0] - 1e-12) & (acc_sim <= iv_acc[1] + 1e-12))],
    "paper": [0.815, 0.05 * 0.95, np.nan, np.nan, np.nan],
}, index=["E[a_r]", "Var[a_r]", "95% lower", "95% upper", "coverage"]).round(6)

# %% [markdown]
# **Erratum:** the paper's `Var[a_r] = q (1 - q)` = 0.0475 is missing the 1/M: the simulated
# variance is 0.000238 = q (1 - q) / 200. (Its "0.815%" is 0.815, a proportion.) The exact
# interval [0.785, 0.845] holds the observed accuracy with probability >= 95% (exactly the printed
# coverage, because the distribution is discrete).
#
# ### Per-item flip probabilities
#
# Hard items are mislabelled more often: give each item its own q_i. The accuracy is then a
# Poisson-binomial (a sum of independent Bernoullis with `pi_i = 1 - q_i` where the prediction is
# right, `q_i` where it is wrong), still exact:

# %%
q_i = np.where(np.arange(m_acc) % 4 == 0, 0.2, 0.02)  # a quarter of the items are hard
acc_i = me.accuracy_distribution(y_true, y_pred, q=q_i)
flips = rng.random((N_SIM, m_acc)) < q_i
acc_sim_i = (np.where(flips, 1 - y_true, y_true) == y_pred).mean(axis=1)
iv_i = acc_i.confidence_interval(0.95).values
pmf_sim = np.bincount(np.rint(acc_sim_i * m_acc).astype(int), minlength=m_acc + 1) / N_SIM
pd.DataFrame({
    "exact": [float(acc_i.mean), float(acc_i.variance), *iv_i, float(acc_i.coverage(0.95))],
    "simulation": [acc_sim_i.mean(), acc_sim_i.var(ddof=1), np.nan, np.nan,
                   np.mean((acc_sim_i >= iv_i[0] - 1e-12) & (acc_sim_i <= iv_i[1] + 1e-12))],
}, index=["E[a_r]", "Var[a_r]", "95% lower", "95% upper", "coverage"]).round(6)

# %%
print("max |exact pmf - simulated pmf| =",
      round(float(np.abs(acc_i.pmf.values - pmf_sim).max()), 5),
      " (simulation s.e. at the mode ~",
      round(float(np.sqrt(acc_i.pmf.max() * (1 - acc_i.pmf.max()) / N_SIM)), 5), ")")

# %% [markdown]
# ### K classes: a label-noise transition matrix
#
# Three sentiment classes; `T[j, l] = P(observed label l | true label j)`: neutral is confused
# with both neighbours, negative and positive are rarely swapped. Item i's observed label agrees
# with the prediction with probability `T[y_i, yhat_i]`:

# %%
T = np.array([[0.90, 0.08, 0.02],
              [0.10, 0.80, 0.10],
              [0.02, 0.08, 0.90]])
m3 = 300
y3 = rng.integers(0, 3, m3)
yhat3 = np.where(rng.random(m3) < 0.8, y3, rng.integers(0, 3, m3))
acc3 = me.accuracy_distribution(y3, yhat3, transition=T)
# simulate noisy labels row by row of T
u = rng.random((N_SIM // 4, m3))
noisy = (u[..., None] > np.cumsum(T[y3], axis=1)[None]).sum(-1)
acc_sim3 = (noisy == yhat3).mean(axis=1)
iv3 = acc3.confidence_interval(0.95).values
pd.DataFrame({
    "exact": [(yhat3 == y3).mean(), float(acc3.mean), float(acc3.variance), *iv3],
    "simulation": [np.nan, acc_sim3.mean(), acc_sim3.var(ddof=1),
                   *np.quantile(acc_sim3, [0.025, 0.975])],
}, index=["accuracy vs true labels", "E[a_r]", "Var[a_r]", "95% lower",
          "95% upper"]).round(6)

# %% [markdown]
# The accuracy measured against noisy labels is biased (here downwards: 0.877 against the true
# labels, 0.770 expected against the noisy ones) and has its own spread from the label noise
# alone, on top of the test-set sampling error. A binary transition matrix `[[1-q, q], [q, 1-q]]`
# reproduces the flip-probability results exactly.
