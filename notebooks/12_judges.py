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
# # Judge scores and human labels
#
# Most evaluations of language models are now scored by another model, an **LLM judge**, with
# human labels on a small subset. The judge is cheap but biased, and its bias can differ
# between the models it grades; the human labels are unbiased but few. `evaluq.judges`
# combines the two: the judge's scores on every item, corrected by the human labels where
# they exist, with an interval that is honest about both.
#
# The data here are real: 6,791 battles of the 2023 **Chatbot Arena** among seven models, each
# with the arena user's vote (the gold label) and the verdicts of three LLM judges on the
# same battle: GPT-4 (`gpt-4-0125-preview`), Claude 3 Opus and GPT-3.5. The LLM verdicts were
# collected by Chatzi et al. (2024, *Prediction-Powered Ranking of Large Language Models*,
# NeurIPS; MIT licence), the human votes are LMSYS's (Zheng et al. 2023); only battle numbers,
# model names and verdicts are shipped (`tests/data/judges/README.md`).
#
# The question of every section: with the human vote known on only **10% of the battles**,
# how close do we get to the answer all the human votes give, and does the interval say so?

# %%
import json
from pathlib import Path

import numpy as np
import pandas as pd

import evaluq as eq
from evaluq import judges

DATA = Path("../tests/data/judges")
ANCHORS = Path("../benchmarks/anchors")
battles = pd.read_csv(DATA / "arena_battles.csv")
JUDGES = {"gpt4": "GPT-4", "claude3": "Claude 3 Opus", "gpt35": "GPT-3.5"}
print(len(battles), "battles;", battles.model_a.nunique(), "models")
battles.head()

# %% [markdown]
# ## How good are the judges?
#
# A verdict is `a` (the first answer shown is better), `b`, `tie`, or for humans also
# `bothbad`. The judges agree with the human vote on 40-54% of battles: arena votes are noisy,
# and the judges are weak by that yardstick. GPT-3.5 says `a` in 87% of battles, a position
# bias no human shows.

# %%
shares = pd.DataFrame({name: battles[col].value_counts(normalize=True)
                       for col, name in {"human": "human", **JUDGES}.items()}).fillna(0)
shares.loc["agreement with the human vote"] = {
    name: (battles[col] == battles.human).mean() for col, name in JUDGES.items()}
shares = shares.round(3)
shares

# %% [markdown]
# ## One comparison, 10% of the human votes
#
# GPT-4 against Vicuna-13B: 283 battles. The quantity is GPT-4's **win rate** by human vote
# (ties and "both bad" count as no win), known here from all 283 votes: that is the truth
# the estimates below are judged against. We keep 28 human votes, chosen at random, and the
# judge's verdict on every battle, coded per battle as 1 (GPT-4's answer preferred), 0.5 (tie)
# or 0 (Vicuna's preferred).


# %%
def pair_arrays(first: str, second: str, judge: str) -> tuple[np.ndarray, np.ndarray]:
    """Gold (1 = the human preferred `first`) and the judge's score of `first`, per battle."""
    sub = battles[((battles.model_a == first) & (battles.model_b == second))
                  | ((battles.model_a == second) & (battles.model_b == first))]
    side = np.where(sub.model_a == first, "a", "b")
    gold = (sub.human.to_numpy() == side).astype(float)
    verdict = sub[judge].to_numpy()
    score = np.where(verdict == side, 1.0, np.where(verdict == "tie", 0.5, 0.0))
    return gold, score


gold, score = pair_arrays("gpt-4", "vicuna-13b", "gpt4")
rng = np.random.default_rng(7)
labelled = np.zeros(gold.size, bool)
labelled[rng.choice(gold.size, 28, replace=False)] = True
truth = gold.mean()
print(f"truth (all {gold.size} human votes): {truth:.3f}; "
      f"raw judge mean: {score.mean():.3f}; 28 labels")

rows = {}
for method in ("classical", "ppi", "ppi++", "chain-rule"):
    res = judges.ppi_mean(gold[labelled], score[labelled], score[~labelled], method=method,
                          rng=0)
    lo, hi = res.confidence_interval().values
    rows[method] = {"estimate": res.estimate, "lower": lo, "upper": hi, "width": hi - lo,
                    "covers truth": lo <= truth <= hi, "effective labels": res.n_effective,
                    "gain": res.gain}
binary = (score == 1.0).astype(float)
res = judges.ppi_mean(gold[labelled], binary[labelled], binary[~labelled],
                      method="rogan-gladen", rng=0)
lo, hi = res.confidence_interval().values
rows["rogan-gladen (0/1 judge)"] = {"estimate": res.estimate, "lower": lo, "upper": hi,
                                    "width": hi - lo, "covers truth": lo <= truth <= hi,
                                    "effective labels": res.n_effective, "gain": res.gain}
methods = pd.DataFrame(rows).T
methods

# %% [markdown]
# The default (`method=None`) picks the chain rule here, because the judge's scores take three
# values, and says why; its notes say when the judge is too weak to help much:

# %%
default = judges.ppi_mean(gold[labelled], score[labelled], score[~labelled], rng=0)
print(default.method, "-", default.reason)
print(*default.notes, sep="\n")

# %% [markdown]
# ## Do the intervals cover? 21 model pairs, many random label subsets
#
# One draw of 28 labels proves nothing. `benchmarks/anchors/ppi_real.json` holds the
# coverage of ppi_py's own PPI++ interval (ppi-python 0.2.3, run in its own environment) on
# every model pair, over 2,000 random subsets of 10% labels, and the seeded generator of those
# subsets. We draw the first 200 subsets of each pair with the same generator, check that
# evaluq's PPI++ gives ppi_py's intervals, and compare the chain rule's coverage and width.

# %%
anchor = json.loads((ANCHORS / "ppi_real.json").read_text())
SEED = 20261127
N_SUB = 200


def subsets(n_items: int, index: int) -> np.ndarray:
    """Labelled positions of every subset of file `index` (the generator of ppi_real.json)."""
    keys = np.random.default_rng([SEED, index]).random((2000, n_items))
    return np.argsort(keys, axis=1, kind="stable")[:N_SUB, :round(0.1 * n_items)]


records = []
max_diff = 0.0
for name, entry in anchor["files"].items():
    first, second = name.split("__")
    gold, score = pair_arrays(first, second, "gpt4")
    truth = gold.mean()
    cover = {"ppi++": [], "chain-rule": []}
    width = {"ppi++": [], "chain-rule": []}
    for r, lab in enumerate(subsets(gold.size, entry["index"])):
        mask = np.zeros(gold.size, bool)
        mask[lab] = True
        for method in cover:
            res = judges.ppi_mean(gold[mask], score[mask], score[~mask], method=method, rng=r)
            lo, hi = res.confidence_interval().values
            cover[method].append(lo <= truth <= hi)
            width[method].append(hi - lo)
            if method == "ppi++" and r < 3:
                ref = entry["settings"]["gpt4/three_level"]["ppi++"]["first3_ci"][r]
                max_diff = max(max_diff, abs(lo - ref[0]), abs(hi - ref[1]))
    ppi_py = entry["settings"]["gpt4/three_level"]["ppi++"]
    records.append({"pair": name, "battles": gold.size, "truth": truth,
                    "ppi_py PPI++ coverage (2000)": ppi_py["coverage"],
                    "PPI++ coverage": np.mean(cover["ppi++"]),
                    "chain rule coverage": np.mean(cover["chain-rule"]),
                    "PPI++ width": np.mean(width["ppi++"]),
                    "chain rule width": np.mean(width["chain-rule"])})
table = pd.DataFrame(records).set_index("pair")
print(f"evaluq's PPI++ against ppi_py's intervals: largest difference {max_diff:.1e}")
table.round(3)

# %%
balanced = table[(table.truth >= 0.2) & (table.truth <= 0.8)]
summary = pd.DataFrame({"all 21 pairs": table.mean(numeric_only=True),
                        "15 pairs with win rate in [0.2, 0.8]": balanced.mean(numeric_only=True)})
summary.drop(["battles", "truth"]).round(3)

# %% [markdown]
# Where a model almost never wins (the Alpaca pairs, win rates 0.05-0.08), most subsets of
# 21-29 labels hold one win or none: the normal-theory intervals (gold-only, PPI, PPI++)
# shrink towards a point and cover far less than 95%, and the chain rule's Beta posteriors,
# which keep a width, still fall short. Such a mean needs more labels than 10% of a few hundred
# battles, whatever the method. On the balanced pairs PPI++ stays a little under 95%, while
# the chain rule reaches it with narrower intervals: the reason it is the default for
# discrete judge scores.

# %% [markdown]
# ## All seven models at once: `judged_means`
#
# The same battles as one per-item table: two rows per battle (one per model), the gold label
# 1 if the human preferred that model (else 0), the GPT-4 judge's score of that model (1, 0.5
# or 0), and the gold label hidden (NaN) outside a random 10% of the battles. A model's mean is
# its win rate against the other six; two models share the battles they fought each other,
# and their paired difference uses those. The truth is again the win rate by all human votes.

# %%
rows = []
for side, this, other in (("a", "model_a", "model_b"), ("b", "model_b", "model_a")):
    part = pd.DataFrame({"item": battles.battle, "model": battles[this],
                         "opponent": battles[other],
                         "gold": (battles.human == side).astype(float)})
    part["judge"] = np.where(battles.gpt4 == side, 1.0,
                             np.where(battles.gpt4 == "tie", 0.5, 0.0))
    rows.append(part)
table = pd.concat(rows, ignore_index=True)
truth = table.groupby("model").gold.mean()
raw = table.groupby("model").judge.mean()

rng = np.random.default_rng(32)
labelled_battles = rng.choice(battles.battle, size=len(battles) // 10, replace=False)
observed = table.assign(gold=table.gold.where(table.item.isin(labelled_battles)))
print(f"{len(observed)} rows, {observed.gold.notna().sum()} with a gold label")
result = judges.judged_means(observed, model="model", item="item", judge="judge", gold="gold",
                             rng=0)
print(result.method, "-", result.reason)
result

# %%
ci = result.confidence_interval()
models_table = pd.DataFrame({
    "truth (all votes)": truth, "raw judge mean": raw,
    "corrected": result.estimate.to_series(),
    "lower": ci.sel(ci_bound="lower").to_series(), "upper": ci.sel(ci_bound="upper").to_series(),
    "gain": result.per_model["gain"].to_series()})
models_table["covers"] = ((models_table.lower <= models_table["truth (all votes)"])
                          & (models_table["truth (all votes)"] <= models_table.upper))
models_table.sort_values("truth (all votes)", ascending=False).round(3)

# %% [markdown]
# The raw judge means sit 6 to 20 points above the truth (the judge calls many battles a tie,
# worth 0.5, that the human vote counts as no win, and it favours some models); they keep
# the humans' order here, but shrink GPT-4's lead over Claude-v1 from 8 points to 1. The
# corrected means sit around the truth with intervals that say how far off they may be.
# One of the seven misses: Claude-v1, in every method below too, because the 10% of battles
# drawn hold few of its wins; a 95% interval misses one time in twenty.
#
# **Paired differences.** A difference between two models is estimated from the battles they
# share; its standard error uses the covariance of the two estimates (no anchor gives this),
# and the p-values are Holm-adjusted over all 21 pairs.

# %%
diff = result.differences.drop_dims("ci_bound").to_dataframe().reset_index()
diff = diff[diff.model < diff.model_b]
true_diff = {(a, b): truth[a] - truth[b] for a, b in zip(diff.model, diff.model_b, strict=True)}
diff["true difference"] = [true_diff[a, b] for a, b in zip(diff.model, diff.model_b,
                                                            strict=True)]
cols = ["model", "model_b", "n_shared", "difference", "se_difference", "p_holm",
        "true difference"]
diff[cols].sort_values("p_holm").round(3).head(10)

# %% [markdown]
# **Transport check.** Does the judge score every model's answers the same way given the
# human verdict? If it is lenient for one model, that model's correction borrows the others'
# relation wrongly, so a flagged model falls back to its own gold labels (gain 1 above, and
# the `TransportWarning`). Here five of the seven models are flagged: given the human's
# verdict, the GPT-4 judge scores Claude-v1, GPT-4 and GPT-3.5 much higher than the others
# (part of it is the coding: a gold 0 lumps losses with ties, and a human tie of a strong
# model is often the judge's win). The check says so, rather than letting a judge that
# favours some models move the leaderboard.

# %%
result.transport.to_dataframe().round(3)

# %% [markdown]
# **The methods side by side**, without the transport check's fallback (`transport_alpha=None`):
# gold-only, PPI++ and the chain rule on the same 10% of battles, each model's estimate and
# interval width. With a judge this weak the three are within a point or two of each other,
# and the corrected intervals are only a few per cent (at most 10%) narrower than gold-only:
# the judge's verdicts are worth little next to 10% of the human votes.

# %%
side = {"truth (all votes)": truth, "raw judge mean": raw}
for method in ("classical", "ppi++", "chain-rule"):
    res = judges.judged_means(observed, method=method, transport_alpha=None, rng=0)
    bounds = res.confidence_interval()
    side[method] = res.estimate.to_series()
    side[f"{method} width"] = (bounds.sel(ci_bound="upper")
                               - bounds.sel(ci_bound="lower")).to_series()
pd.DataFrame(side).sort_values("truth (all votes)", ascending=False).round(3)

# %% [markdown]
# The draws have the layout every rank and pairwise function of evaluq takes:

# %%
eq.leaderboard(result.draws)

# %% [markdown]
# ## How many labels to buy? `label_budget`
#
# From a pilot (the 28 labelled GPT-4 against Vicuna battles of the first section), the
# number of gold labels an interval of a given width needs, with the judge scoring 2,000
# battles and without it. With a judge this weak (correlation about 0.4 with the human vote)
# it saves about one label in seven: the budget says so before any label is bought.

# %%
gold, score = pair_arrays("gpt-4", "vicuna-13b", "gpt4")
for width in (0.3, 0.2, 0.1):
    plan = judges.label_budget(gold[labelled], score[labelled], score[~labelled], width=width,
                               n_judged=2000)
    print(f"width {width}: {int(plan.n_gold)} gold labels with the judge, "
          f"{int(plan.n_gold_only)} without (ppi corr {float(plan.ppi_corr):.2f})")
