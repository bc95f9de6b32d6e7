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
    res = judges.ppi_mean(gold[labelled], score[labelled], score[~labelled], method=method)
    lo, hi = res.confidence_interval().values
    rows[method] = {"estimate": res.estimate, "lower": lo, "upper": hi, "width": hi - lo,
                    "covers truth": lo <= truth <= hi, "effective labels": res.n_effective,
                    "gain": res.gain}
binary = (score == 1.0).astype(float)
res = judges.ppi_mean(gold[labelled], binary[labelled], binary[~labelled],
                      method="rogan-gladen")
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
default = judges.ppi_mean(gold[labelled], score[labelled], score[~labelled])
print(default.method, "-", default.reason)
print(*default.notes, sep="\n")

# %% [markdown]
# ## Do the intervals cover? 21 model pairs, many random label subsets
#
# One draw of 28 labels proves nothing. `benchmarks/anchors/ppi_real.json` holds the
# coverage of ppi_py's own PPI++ interval (ppi-python 0.2.3, run in its own environment) on
# every model pair, over 2,000 random subsets of 10% labels, and the seeded generator of those
# subsets. We draw the first 300 subsets of each pair with the same generator, check that
# evaluq's PPI++ gives ppi_py's intervals, and compare the chain rule's coverage and width.

# %%
anchor = json.loads((ANCHORS / "ppi_real.json").read_text())
SEED = 20261127
N_SUB = 300


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
            res = judges.ppi_mean(gold[mask], score[mask], score[~mask], method=method)
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
