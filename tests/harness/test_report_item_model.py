"""The item model in the report (issue 22, item 5): ``eq.report(..., bayes=True,
item_scores=...)`` and ``evaluq report --from inspect --bayes`` on real Inspect logs fit
``fit_items`` instead of the cube model, with the LOO comparison and the predictive checks."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.cli import main
from evaluq.errors import CubeError
from evaluq.reporting import _build, _item_model

from .inspect_task import EPOCHS, N_PASSAGES, N_QUESTIONS

FAST = ["--n-resamples", "200", "--n-boot", "200", "--quiet"]
QUICK = {"draws": 300, "tune": 300, "chains": 2}
COLS = {"model": "model", "item": "item", "language": "task", "seed": "epoch"}


class FakeFit:
    """A stand-in for the cube model's fit (the report's contract), from resamples."""

    def __init__(self, aggregated):
        self.aggregated = aggregated

    def rank_probabilities(self, scope="benchmark"):
        return eq.rank_distribution(self.aggregated)

    def pairwise_differences(self, scope="benchmark", rope=None):
        return eq.pairwise_differences(self.aggregated)

    def compare_frequentist(self):
        return self.aggregated["observed"].to_series().to_frame()

    def diagnostics(self):
        return pd.DataFrame({"r_hat": [1.0]})


def _ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


@pytest.fixture(scope="module")
def table(inspect_logs):
    return eq.read_inspect_logs(inspect_logs["eval"])


@pytest.fixture(scope="module")
def report(table):
    cube = eq.from_items(table, score="match", n_boot=200, **COLS)
    scores = eq.item_scores(table, score="match", **COLS)
    return eq.report(cube, None, n_resamples=200, replication="nonparametric",
                     languages="fixed", bayes=True, bayes_options=QUICK, item_scores=scores,
                     progress=False)


def test_item_table_is_the_long_table(table):
    scores = eq.item_scores(table, score="match", **COLS)
    long = _item_model.item_table(scores)
    assert len(long) == len(table) == 3 * N_PASSAGES * N_QUESTIONS * EPOCHS
    by_hand = table.groupby("model")["match"].mean()
    np.testing.assert_allclose(long.groupby("model")["score"].mean(), by_hand)
    assert long["item"].nunique() == N_PASSAGES * N_QUESTIONS


def test_report_fits_the_item_model_instead_of_the_cube_model(report, table):
    analysis = report.analyses["match"]
    assert analysis.fit is None                       # no cube model
    res = analysis.item_model
    assert res.fit is not None
    assert res.fit.form == "marginal"
    ids = _ids(report.html)
    assert "item-model" in ids
    assert "posterior" not in ids
    tables = analysis.tables()
    scores = tables["item_model_scores"]
    assert set(scores.columns.get_level_values(0)) == {"benchmark", "new_items"}
    np.testing.assert_allclose(scores[("benchmark", "P(best)")].sum(), 1.0)
    raw = table.groupby("model")["match"].mean()
    # the benchmark-scope score is near the observed accuracy (12 items x 3 epochs)
    np.testing.assert_allclose(scores[("benchmark", "mean")], raw[scores.index], atol=0.08)
    pairs = tables["item_model_pairs"]
    assert len(pairs) == 3
    assert pairs[("benchmark", "P(>)")].between(0, 1).all()
    loo = tables["item_model_loo"]
    # 3 epochs per item: the beta-binomial (run drift) joins the comparison
    assert set(loo.index) == {"binomial, item effects", "binomial, no item effects",
                              "beta-binomial (run drift)"}
    assert {"elpd", "elpd_diff", "dse", "pareto_k_above_0.7"} <= set(loo.columns)
    assert "whole response pattern" in loo.attrs["caption"]
    checks = tables["item_model_checks"]
    assert set(checks["check"]) == {"prior", "posterior"}
    assert {"accuracy", "item_spread", "epoch_agreement"} <= set(checks["statistic"])
    assert checks["passed"].dtype == bool
    for text in ("Model comparison (PSIS-LOO)", "Predictive checks", "elpd_diff", "passed"):
        assert text in report.html


def test_the_item_section_has_one_figure(report):
    section = next(s for s in report.sections["match"] if s.id == "item-model")
    assert section.figures == 1
    assert section.body.count('<img class="figure"') == 1


def test_cli_bayes_from_inspect_logs(inspect_logs, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_item_model, "FIT_DEFAULTS", QUICK)
    code = main(["report", str(inspect_logs["eval"]), "--from", "inspect", "--bayes",
                 "--out", str(tmp_path), "--format", "html,csv", *FAST])
    assert code == 0, capsys.readouterr().err
    page = (tmp_path / "report.html").read_text()
    assert "item-model" in _ids(page)
    assert "posterior" not in _ids(page)
    loo = pd.read_csv(tmp_path / "match_item_model_loo.csv")
    assert len(loo) == 3
    checks = pd.read_csv(tmp_path / "match_item_model_checks.csv")
    assert set(checks["check"]) == {"prior", "posterior"}
    assert (tmp_path / "match_item_model_scores.csv").is_file()


def test_fractional_scores_fall_back_to_the_cube_model(table, monkeypatch):
    """``grade`` has partial credit (0.5): no family of the item model fits it, so the cube
    model is fitted (a stand-in here) and the page says why."""
    calls = []

    def fake(cube, rng, options):
        calls.append(options)
        return FakeFit(eq.aggregate(eq.resample(cube, n_resamples=200, rng=1)))

    monkeypatch.setattr(_build, "_fit", fake)
    rows = table[table["grade"].notna()]
    cube = eq.from_items(rows, score="grade", n_boot=100, **COLS)
    scores = eq.item_scores(rows, score="grade", **COLS)
    assert set(np.unique(scores.values)) >= {0.5}
    rep = eq.report(cube, None, n_resamples=200, bayes=True, item_scores=scores,
                    progress=False)
    res = rep.analyses["grade"].item_model
    assert res.fit is None
    assert res.reason
    assert calls == [{}]
    assert {"item-model", "posterior"} <= set(_ids(rep.html))
    assert "The item model was not fitted" in rep.html


def test_a_family_joins_the_comparison_with_one_line(table, monkeypatch):
    """An entry of COMPARED that does not apply to the data is not fitted and the page says
    why; the comparison keeps the other fits. Beta-binomial needs 2 epochs per item."""
    monkeypatch.setattr(_item_model, "COMPARED", (
        *_item_model.COMPARED, ("unknown family", {"family": "poisson"})))
    one_epoch = table[table["epoch"] == table["epoch"].min()]
    scores = eq.item_scores(one_epoch, score="match", **COLS)
    res = _item_model.fit_item_model(scores, QUICK, 0)
    assert set(res.comparison.index) == {"bernoulli, item effects",
                                         "binomial, no item effects"}
    assert any(n.startswith("unknown family: not fitted (`family`") for n in res.notes)
    assert any(n.startswith("beta-binomial (run drift): not fitted") and "2 epochs" in n
               for n in res.notes)


def test_item_scores_argument_errors(table):
    cube = eq.from_items(table, score="match", n_boot=100, **COLS)
    scores = eq.item_scores(table, score="match", **COLS)
    kw = {"n_resamples": 100, "progress": False}
    with pytest.raises(TypeError, match="`item_scores` must be the DataArray of "
                                        "evaluq.item_scores"):
        eq.report(cube, None, item_scores=scores.to_dataset(), **kw)
    with pytest.raises(CubeError, match=r"`item_scores` names metrics \['nope'\]"):
        eq.report(cube, None, item_scores={"nope": scores}, **kw)
    with pytest.raises(ValueError, match="`item_scores` must map metric name"):
        eq.report({"x": cube, "y": cube}, None, item_scores=scores, **kw)
    with pytest.raises(TypeError, match=r"`item_scores\['match'\]` must be the DataArray"):
        eq.report(cube, None, item_scores={"match": 3}, **kw)
    with pytest.raises(TypeError, match="`item_scores` must be the DataArray"):
        eq.reporting.analyse(cube, n_resamples=100, item_scores="x")
    with pytest.raises(TypeError, match=r"dims model, seed, item"):
        _item_model.item_table(scores.rename(item="question"))


def test_cli_learned_item_distribution(inspect_logs, tmp_path, capsys, monkeypatch):
    """``--item-distribution learned``: the item model is the binomial 1PL with a learned
    distribution of item difficulty, compared by LOO with the other fits (normal items)."""
    monkeypatch.setattr(_item_model, "FIT_DEFAULTS", QUICK)
    code = main(["report", str(inspect_logs["eval"]), "--from", "inspect", "--bayes",
                 "--item-distribution", "learned", "--out", str(tmp_path), "--format",
                 "html,csv", *FAST])
    assert code == 0, capsys.readouterr().err
    loo = pd.read_csv(tmp_path / "match_item_model_loo.csv")
    assert "binomial, item effects, learned item distribution" in set(loo["fit"])
    assert len(loo) == 3
    page = (tmp_path / "report.html").read_text()
    assert "integrated out over a learned distribution" in page


def test_cli_item_distribution_needs_logs_and_bayes(inspect_logs, tmp_path, capsys):
    code = main(["report", str(inspect_logs["eval"]), "--from", "inspect",
                 "--item-distribution", "learned", "--out", str(tmp_path), *FAST])
    assert code == 2
    assert "--item-distribution set the Bayesian fit: add --bayes" in capsys.readouterr().err
    csv = tmp_path / "runs.csv"
    pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "score": [0.1, 0.2]}).to_csv(
        csv, index=False)
    code = main(["report", str(csv), "--score", "score", "--bayes", "--item-distribution",
                 "learned", "--out", str(tmp_path), *FAST])
    assert code == 2
    assert "--item COL (a per-item table) or harness logs with --from inspect|lm-eval" in \
        capsys.readouterr().err


def test_the_checks_advice_reaches_the_page(table, monkeypatch):
    """When the predictive checks flag the items' shape, their advice is a note of the
    section, with the command line's flag (the check itself: tests/test_item_density.py)."""
    from evaluq.item_model._fit import ItemFit

    real = ItemFit.predictive_checks

    def flagged(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        out.attrs["advice"] = "refit with fit_items(..., item_distribution='learned')"
        return out

    monkeypatch.setattr(ItemFit, "predictive_checks", flagged)
    scores = eq.item_scores(table, score="match", **COLS)
    res = _item_model.fit_item_model(scores, QUICK, 0)
    assert any(n.startswith("predictive checks: refit with") and
               n.endswith("(evaluq report: --item-distribution learned)") for n in res.notes)


def test_loo_caption_says_once_what_one_observation_is(report):
    caption = report.analyses["match"].tables()["item_model_loo"].attrs["caption"]
    assert caption.count("is one observation") == 1
    assert "one observation is one item" not in caption
