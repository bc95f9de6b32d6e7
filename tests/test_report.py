"""eq.report: one self-contained HTML page whose sections are functions of the results."""

from __future__ import annotations

import base64
import html
import itertools
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.reporting import sections

FREQUENTIST_IDS = ["data", "variance", "leaderboard", "ranks", "tiers", "field",
                   "reproducibility"]


class FakeFit:
    """The hierarchical fit's contract, from real numbers: resamples reshaped to (chain, draw).

    ``rank_probabilities`` and ``pairwise_differences`` return the Datasets of
    ``eq.rank_distribution`` / ``eq.pairwise_differences`` on the draws; ``compare_frequentist``
    and ``diagnostics`` are tables computed from the (chain, draw) array.
    """

    def __init__(self, aggregated: xr.Dataset, n_chains: int = 2) -> None:
        self.aggregated = aggregated
        n = aggregated.sizes["resample"] // n_chains * n_chains
        res = aggregated["resampled"].isel(resample=slice(0, n)).transpose("resample", "model")
        self.draws = xr.DataArray(res.values.reshape(n_chains, -1, res.shape[1]),
                                  dims=("chain", "draw", "model"),
                                  coords={"model": res.model.values})
        self.calls: list[tuple[str, str]] = []

    def rank_probabilities(self, scope: str = "benchmark") -> xr.Dataset:
        self.calls.append(("rank_probabilities", scope))
        return eq.rank_distribution(self.aggregated)

    def pairwise_differences(self, scope: str = "benchmark", rope=None) -> xr.Dataset:
        self.calls.append(("pairwise_differences", scope))
        return eq.pairwise_differences(self.aggregated)

    def compare_frequentist(self) -> pd.DataFrame:
        post = self.draws.mean(("chain", "draw")).to_series()
        table = pd.DataFrame({"posterior mean": post,
                              "resampling observed": self.aggregated["observed"].to_series()})
        table.attrs["caption"] = "posterior mean versus observed aggregate"
        return table

    def diagnostics(self) -> pd.DataFrame:
        x = self.draws.values                       # (chain, draw, model)
        n = x.shape[1]
        within = x.var(axis=1, ddof=1).mean(axis=0)
        between = n * x.mean(axis=1).var(axis=0, ddof=1)
        rhat = np.sqrt(((n - 1) / n * within + between / n) / within)
        return pd.DataFrame({"r_hat": rhat}, index=pd.Index(self.draws.model.values,
                                                            name="model"))


@pytest.fixture(scope="module")
def cube():
    return eq.simulate_cube(n_models=4, model_means=[0.0, 0.3, 1.5, 2.0], sigma_between=0.5,
                            rng=3)


@pytest.fixture(scope="module")
def rep(cube, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "report.html"
    return eq.report(cube, out, n_resamples=300, rng=5, progress=False, command="pytest")


class _Tables(HTMLParser):
    """The cells of every <table> (stdlib parser: no lxml needed)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _frames(page: str) -> list[pd.DataFrame]:
    """Every HTML table as a DataFrame: first row the header, first column the index."""
    parser = _Tables()
    parser.feed(page)
    out = []
    for rows in parser.tables:
        header = rows[0]
        body = [r for r in rows[1:] if len(r) == len(header) and r[0] and any(r[1:])]
        out.append(pd.DataFrame([r[1:] for r in body], index=[r[0] for r in body],
                                columns=header[1:]))
    return out


def _ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


def _images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


def test_report_is_one_self_contained_file(rep):
    page = rep.path.read_text(encoding="utf-8")
    assert page == rep.html
    assert _ids(page) == FREQUENTIST_IDS
    # no network: no script, no external URL of any kind
    assert "<script" not in page.lower()
    assert not re.search(r'(src|href)="(?!data:|#)', page)
    assert "http://" not in page
    assert "https://" not in page
    images = _images(page)
    assert len(images) == sum(s.figures for s in rep.sections["simulated"]) == 6
    assert all(img[:8] == b"\x89PNG\r\n\x1a\n" for img in images)
    # the table of contents links every section
    assert re.findall(r'<a href="#([^"]+)"', page) == FREQUENTIST_IDS


def test_a_report_prints_as_a_few_lines_not_its_page(rep):
    """In a terminal or a notebook's text output: before, the dataclass repr printed the
    whole HTML page (hundreds of kB) and every cube and table of the analyses."""
    text = repr(rep)
    assert len(text) < 600
    assert text.startswith("Report(written to ")
    name, analysis = next(iter(rep.analyses.items()))
    sizes = " x ".join(f"{n} {'replicate' if d == 'bootstrap' else d}s"
                       for d, n in analysis.cube.sizes.items())
    assert f"{name!r}: Analysis({name}: {sizes}; " in text
    assert repr(analysis) in text


def test_report_numbers_are_the_analysis_numbers(rep, cube):
    a = rep.analyses["simulated"]
    agg = eq.aggregate(eq.resample(cube, n_resamples=300, rng=5))
    pd.testing.assert_frame_equal(a.leaderboard, eq.leaderboard(agg))
    shown = next(t for t in _frames(rep.html) if "p_best" in t.columns)
    np.testing.assert_allclose(shown["observed"].astype(float), a.leaderboard["observed"],
                               rtol=1e-3)
    assert list(shown.index) == list(a.leaderboard.index)
    assert a.leaderboard.attrs["caption"] in rep.html.replace("&#x27;", "'")


def test_reproducibility_section_lists_settings_and_command(rep):
    a = rep.analyses["simulated"]
    assert a.settings["rng"] == 5
    assert a.settings["replication"] == "parametric"
    body = next(s for s in rep.sections["simulated"] if s.id == "reproducibility").body
    assert "<pre><code>pytest</code></pre>" in body
    for key in ("rng", "n_resamples", "replication", "languages", "alpha", "adjustment"):
        assert f"<th>{key}</th>" in body
    assert "<th>numpy</th>" in body
    assert "<th>evaluq</th>" in body
    assert "not an integer" not in body
    gen = sections._reproducibility_section({"rng": np.random.default_rng(0)})
    assert "not an integer" in gen.body


def test_posterior_sections_from_a_fit(cube):
    agg = eq.aggregate(eq.resample(cube, n_resamples=300, rng=5))
    fit = FakeFit(agg)
    rep = eq.report(cube, None, n_resamples=300, rng=5, fit=fit, progress=False)
    assert rep.path is None
    assert _ids(rep.html) == [*FREQUENTIST_IDS[:-1], "posterior", "reproducibility"]
    ranks = next(s for s in rep.sections["simulated"] if s.id == "ranks")
    assert ranks.figures == 2
    assert "posterior" in ranks.body
    post = next(s for s in rep.sections["simulated"] if s.id == "posterior")
    assert "posterior mean versus observed aggregate" in post.body
    assert "r_hat" in post.body
    assert "Sampler diagnostics" in post.body
    assert ("rank_probabilities", "benchmark") in fit.calls
    assert ("pairwise_differences", "benchmark") in fit.calls
    assert len(_images(rep.html)) == 8
    tables = rep.analyses["simulated"].tables()
    assert set(tables) == {"leaderboard", "pairwise", "variance", "ranks",
                           "interval_estimates", "multi_aso", "probability_of_improvement",
                           "posterior_vs_frequentist", "diagnostics"}
    np.testing.assert_allclose(tables["diagnostics"]["r_hat"], 1.0, atol=0.05)


def test_several_metrics_give_one_block_each(cube):
    other = cube.assign_attrs(metric="chrF")
    rep = eq.report({"BLEU": cube, "chrF": other}, None, n_resamples=100, progress=False)
    ids = _ids(rep.html)
    assert ids == [f"m0-{i}" for i in FREQUENTIST_IDS] + [f"m1-{i}" for i in FREQUENTIST_IDS]
    assert '<h2 class="metric">BLEU</h2>' in rep.html
    # same rng: the two metrics' resamples are paired (identical cubes, identical results)
    pd.testing.assert_frame_equal(rep.analyses["BLEU"].leaderboard,
                                  rep.analyses["chrF"].leaderboard, check_exact=False)


def test_progress_line_goes_to_stderr(cube, capsys):
    eq.report(cube, None, n_resamples=50, progress=True)
    err = capsys.readouterr().err
    assert "[evaluq report] 1/9 variance components" in err
    assert err.rstrip().endswith("9/9 done")


def test_auto_modes_without_bootstrap_replicates(cube):
    a = eq.reporting.analyse(cube.drop_vars("boot_score"), n_resamples=100)
    assert (a.settings["replication"], a.settings["languages"]) == ("nonparametric", "bootstrap")
    one = eq.reporting.analyse(cube.drop_vars("boot_score").isel(seed=[0]), n_resamples=100)
    assert (one.settings["replication"], one.settings["languages"]) == ("none", "bootstrap")
    summary = eq.from_summary(pd.DataFrame({"model": ["a", "a", "b", "b"],
                                            "language": ["x", "y"] * 2,
                                            "mean": [1.0, 2.0, 1.5, 2.5],
                                            "sd_seed": [0.1] * 4, "sd_boot": [0.2] * 4}),
                             n_seeds=3)
    b = eq.reporting.analyse(summary, n_resamples=100)
    assert (b.settings["replication"], b.settings["languages"]) == ("parametric", "fixed")


def test_data_summary_counts_missing_cells_and_warns_on_scale(cube):
    score = cube.score.copy()
    score[0, 0, :] = np.nan
    score[1, 2, 0] = np.nan
    broken = cube.assign(score=score)
    s = sections._data_summary(broken)
    table = _frames(s.body)[1]
    assert table.loc["score", "missing"] == "6"
    assert table.loc["boot_score", "missing"] == "0"
    assert "No score at all for 1 (model, language) cells: m0/l00." in s.body
    warned = sections._data_summary(cube, bounds=(0.0, 1.0))
    assert "lie outside the bounds [0, 1]" in warned.body
    outside = int(((cube.score < 0) | (cube.score > 1)).sum())
    assert warned.notes[0].startswith(f"{outside} of {cube.score.size} scores")
    flat = cube.assign(score=cube.score.isel(seed=[0] * 5).assign_coords(seed=range(5)))
    assert not sections._scale_warnings(flat)       # no spread is a remark, not a scale verdict
    assert "identical scores for every seed" in sections._data_summary(flat).body


def test_data_summary_names_many_source_files_by_their_folder(cube):
    """A harness log directory's cube lists one file per model and task in its source; the
    summary says how many and where (the whole list made the value column so wide that every
    other value sat out of view)."""
    files = [f"/logs/{m}/samples_{t}.jsonl" for m in "abc" for t in ("mc", "gen")]
    c = cube.assign_attrs(source="; ".join(files), loader="from_items")
    facts = _frames(sections._data_summary(c).body)[0]
    assert facts.loc["source", "value"] == "6 files under /logs (from_items)"
    assert c.attrs["source"].count(";") == 5                  # the cube keeps the full list


def test_sections_compose_into_a_page(cube):
    agg = eq.aggregate(eq.resample(cube, n_resamples=100, rng=0))
    with pytest.warns(eq.errors.EvaluqWarning, match="significance tiers: With 100"):
        tiers = eq.significance_groups(agg)
    page = sections.render_page("Mine", [(None, [
        sections._tiers_section(agg, tiers),
        sections._ranks_section(eq.rank_distribution(agg))])])
    assert _ids(page) == ["tiers", "ranks"]
    assert "<title>Mine</title>" in page


def test_report_validation(cube, tmp_path):
    with pytest.raises(TypeError, match="`cube` must be a cube"):
        eq.report(cube.score, None)
    with pytest.raises(ValueError, match="`cube` is an empty mapping"):
        eq.report({}, None)
    with pytest.raises(TypeError, match=r"`cube\['x'\]` must be an xarray Dataset"):
        eq.report({"x": 1}, None)
    with pytest.raises(ValueError, match="`n_resamples` must be >= 10"):
        eq.report(cube, None, n_resamples=5, progress=False)
    with pytest.raises(TypeError, match="`bayes` must be True or False"):
        eq.report(cube, None, bayes="yes", progress=False)
    with pytest.raises(CubeError, match=r"`fit` names metrics \['nope'\]"):
        eq.report(cube, None, fit={"nope": object()}, progress=False)
    with pytest.raises(ValueError, match="`fit` must map metric name"):
        eq.report({"a": cube, "b": cube}, None, fit=object(), progress=False)


def test_bayes_fits_the_hierarchical_model_lazily(cube, monkeypatch):
    import sys
    import types

    calls = []

    def fit_hierarchical(c, **kwargs):
        calls.append(kwargs)
        return FakeFit(eq.aggregate(eq.resample(c, n_resamples=100, rng=0)))

    fake = types.ModuleType("evaluq.hierarchical")
    fake.fit_hierarchical = fit_hierarchical
    monkeypatch.setitem(sys.modules, "evaluq.hierarchical", fake)
    rep = eq.report(cube, None, n_resamples=100, rng=9, bayes=True,
                    bayes_options={"draws": 50}, progress=False)
    assert calls == [{"model": "crossed", "draws": 50, "rng": 9}]   # the fit's own defaults
    assert "posterior" in _ids(rep.html)
    assert rep.analyses["simulated"].settings["bayes_options"] == {"draws": 50}
    # without the module: a clear error, and nothing is imported when bayes=False
    monkeypatch.setitem(sys.modules, "evaluq.hierarchical", None)
    with pytest.raises(ImportError, match="bayes=True needs evaluq.hierarchical"):
        eq.report(cube, None, n_resamples=100, bayes=True, progress=False)
    eq.report(cube, None, n_resamples=100, bayes=False, progress=False)


def test_tiers_section_warns_when_too_few_resamples_can_reject(cube):
    few = eq.aggregate(eq.resample(cube, n_resamples=100, rng=0))   # floor 2/101, 6 pairs
    said = ("With 100 resamples the smallest p-value is 2/(n+1) = 0.0198, 0.119 after Holm's "
            "adjustment over 6 pairs: no test can reject at alpha = 0.05, so every model stays "
            "in one tier. Use at least 240 resamples.")
    # in a notebook, significance_groups and leaderboard say it too (they said nothing)
    with pytest.warns(eq.errors.EvaluqWarning) as caught:
        tiers = eq.significance_groups(few)
    assert str(caught[0].message) == f"significance tiers: {said}"
    assert tiers.attrs["cannot_reject"] == said
    assert (tiers.values == 1).all()
    with pytest.warns(eq.errors.EvaluqWarning, match="Use at least 240 resamples"):
        eq.leaderboard(few)
    s = sections._tiers_section(few, tiers)
    assert s.notes == [said]
    enough = eq.aggregate(eq.resample(cube, n_resamples=300, rng=0))
    assert sections._tiers_section(enough, eq.significance_groups(enough)).notes == []
    bh = sections._tiers_section(few, eq.significance_groups(few, adjustment="bh"))
    assert bh.notes == []


def test_tiers_section_draws_the_critical_difference_diagram():
    """The tiers section's figure is Demšar's CD diagram of the cube (issue 19); the tier
    diagram only where the CD does not apply (a model missing a language)."""
    from evaluq.reporting.sections import _tiers_section

    cube = eq.simulate_cube(n_models=3, n_languages=6, rng=0)
    agg = eq.aggregate(eq.resample(cube, n_resamples=200, rng=0))
    tiers = eq.significance_groups(agg)
    section = _tiers_section(agg, tiers, cd=eq.critical_difference(cube))
    assert 'alt="critical-difference diagram"' in section.body
    assert 'alt="tier diagram"' in _tiers_section(agg, tiers).body


# --- the field's methods: rliable and ASO (issue 19) --------------------------------------------

def test_field_section_holds_rliable_and_aso_with_the_reports_rng(cube, rep):
    """The section's numbers are eq.interval_estimates / eq.multi_aso with the report's
    resamples and rng, and its tables are exported with the others."""
    section = next(s for s in rep.sections["simulated"] if s.id == "field")
    assert section.figures == 2
    assert "Probability of improvement" in section.body
    analysis = rep.analyses["simulated"]
    tables = analysis.tables()
    est = eq.interval_estimates(cube, aggregates=("median", "iqm", "mean"), n_resamples=300,
                                rng=5)
    table = tables["interval_estimates"]
    np.testing.assert_allclose(table["iqm"], est.estimate.sel(aggregate="iqm").values,
                               rtol=1e-12)
    np.testing.assert_allclose(table["iqm lower"],
                               est.ci.sel(aggregate="iqm", ci_bound="lower").values, rtol=1e-12)
    eps = eq.multi_aso(cube, rng=5)
    np.testing.assert_allclose(tables["multi_aso"].values, eps.values, rtol=1e-12)
    poi = eq.probability_of_improvement(cube, n_resamples=300, rng=5)
    got = tables["probability_of_improvement"]
    for (x, y), row in got.iterrows():
        assert row["estimate"] == poi.estimate.sel(model=x, model_b=y).item()
        assert row["upper"] == poi.ci.sel(model=x, model_b=y, ci_bound="upper").item()
    assert len(got) == cube.sizes["model"] * (cube.sizes["model"] - 1)
    # the simulated scores are not in [0, 1]: no optimality gap, and the page says why
    assert "optimality_gap" not in table.columns
    assert "optimality gap (to the target 1) is left out" in section.body
    assert "multi_aso" in analysis.to_dict()["tables"]


def test_field_section_has_the_optimality_gap_for_scores_in_0_1():
    cube = eq.from_arrays(np.random.default_rng(1).uniform(0.2, 0.9, (3, 4, 3)))
    rep = eq.report(cube, None, n_resamples=200, rng=0, progress=False)
    table = rep.analyses[next(iter(rep.analyses))].tables()["interval_estimates"]
    assert list(table.columns[::3]) == ["median", "iqm", "mean", "optimality_gap"]


def test_field_section_is_skipped_with_one_seed(cube):
    one = eq.reporting.analyse(cube.drop_vars("boot_score").isel(seed=[0]), n_resamples=100,
                               rng=0)
    assert "need at least 2 seeds (runs)" in one.field_methods.reason
    assert "has 1 seed(s)" in one.field_methods.reason
    assert "multi_aso" not in one.tables()
    section = sections._field_methods_section(None, None, None,
                                             reason=one.field_methods.reason)
    assert section.figures == 0
    assert "has 1 seed(s)" in section.body
    summary = eq.from_summary(pd.DataFrame({"model": ["a", "a", "b", "b"],
                                            "language": ["x", "y"] * 2,
                                            "mean": [1.0, 2.0, 1.5, 2.5],
                                            "sd_seed": [0.1] * 4, "sd_boot": [0.2] * 4}),
                             n_seeds=3)
    rep = eq.report(summary, None, n_resamples=100, rng=0, progress=False)
    field = next(s for sec in rep.sections.values() for s in sec if s.id == "field")
    assert "(summary statistics only)" in field.body
    assert field.figures == 0


def test_field_section_leaves_out_a_run_missing_on_some_languages_and_names_it(cube):
    """rliable's matrix is runs x tasks: a run missing on one language is left out of that
    section on every language, named on the page; the estimates equal rliable's on the cube
    with that run NaN throughout (every other section keeps its other scores)."""
    from evaluq.reporting._build import _field_methods

    holed = cube.copy(deep=True)
    holed["score"][0, 0, 0] = np.nan
    with pytest.warns(eq.MissingDataWarning, match="1 run missing"):
        rep = eq.report(holed, None, n_resamples=200, rng=0, progress=False)
    section = next(s for s in rep.sections["simulated"] if s.id == "field")
    assert section.figures == 2
    model, seed = holed.model.values[0], holed.seed.values[0]
    language = holed.language.values[0]
    assert f"{model} seed {seed} (missing on {language})" in html.unescape(section.body)
    dropped = holed.copy(deep=True)
    dropped["score"][0, :, 0] = np.nan
    got = _field_methods(holed, 200, 0.95, 0).estimates
    want = eq.field.interval_estimates(dropped, n_resamples=200, rng=0,
                                       aggregates=[str(a) for a in got.aggregate.values])
    for name in want.data_vars:
        np.testing.assert_array_equal(got[name].values, want[name].values)


def _field_section(scores: np.ndarray) -> tuple[int, str]:
    """The field-methods section of the report of these scores: (figures, its text)."""
    rep = eq.report(eq.from_arrays(scores), None, n_resamples=100, rng=0, progress=False)
    section = next(s for sec in rep.sections.values() for s in sec if s.id == "field")
    return section.figures, html.unescape(section.body)


def test_field_section_gives_its_reason_when_a_model_is_left_with_one_run():
    scores = np.array([[[0.5, 0.52], [0.6, np.nan]], [[0.4, 0.41], [0.7, 0.72]]])
    with pytest.warns(eq.MissingDataWarning):
        figures, body = _field_section(scores)
    assert figures == 0
    assert "1 run(s) missing on some languages are left out" in body
    assert "skipped" in body
    assert "needs at least 2 models and 2 seeds" in body


def test_field_section_says_so_when_no_run_has_every_language():
    """Seeds numbered per language (each run misses the other languages): no run is left for
    rliable's runs x languages matrices. The section says why, with no numpy warning about
    an all-NaN slice (before: 'RuntimeWarning: All-NaN slice encountered' in the CLI)."""
    scores = np.array([[[0.5, 0.52, np.nan, np.nan], [np.nan, np.nan, 0.6, 0.61]],
                       [[0.4, 0.41, np.nan, np.nan], [np.nan, np.nan, 0.7, 0.72]]])
    figures, body = _field_section(scores)
    assert figures == 0
    assert "No run has a score on every language" in body
    assert "are the seeds numbered alike on every language?" in body


def test_one_model_report_shows_its_interval_estimates_and_says_what_is_left_out():
    """rliable's interval estimates describe one model's runs; the probability of
    improvement and ASO compare models and are left out, with the reason on the page."""
    cube = eq.simulate_cube(n_models=1, n_languages=4, n_seeds=5, rng=3)
    rep = eq.report(cube, None, n_resamples=200, rng=0, progress=False)
    section = next(s for sec in rep.sections.values() for s in sec if s.id == "field")
    assert section.figures == 1
    assert "One model: its interval estimates are shown" in html.unescape(section.body)
    got = rep.analyses[next(iter(rep.analyses))].field_methods.estimates
    want = eq.field.interval_estimates(cube, n_resamples=200, rng=0,
                                       aggregates=[str(a) for a in got.aggregate.values])
    np.testing.assert_array_equal(got["ci"].values, want["ci"].values)
    assert "1 model × 4 languages × 5 seeds" in rep.html


def test_a_long_table_scrolls_in_its_own_box_and_a_short_one_does_not():
    """A report on 200 models put 200-row tables one after another (and 19,900 pairs) in the
    page: a table longer than ``LONG_TABLE`` rows scrolls in a box, its header row in view,
    and says so; its caption and notes stay below it, outside the box."""
    index = pd.Index([f"model-{i}" for i in range(sections.LONG_TABLE + 1)], name="model")
    table = pd.DataFrame({"mean": np.arange(len(index)) / 7.0}, index=index)
    table.attrs["caption"] = "Means."
    long = sections._table_html(table)
    assert long.startswith(f'<p class="caption">{len(index)} rows: the table scrolls')
    box = re.search(r'<div class="table-wrap long">(.*?)</div>', long, re.S)
    assert box is not None
    assert box.group(1).count("<tr") == len(index) + 2                       # two header rows
    assert "Means." not in box.group(1)
    assert "Means." in long
    short = sections._table_html(table.iloc[:sections.LONG_TABLE])
    assert "long" not in short
    assert short.startswith('<div class="table-wrap">')
    assert ".table-wrap.long thead tr:first-child th { position: sticky" in sections._CSS


def test_one_score_per_model_on_one_language_is_refused_not_certain():
    """One language and one seed (no replicates, no SDs): 'auto' resampled with no noise and
    a bootstrap over the one language, which redraws it every time: SDs of 1e-15, z of
    1e14, every pair 'significant' and p_best 1. The report refuses, naming what would
    measure the uncertainty; the functions give NaN with the reason, or refuse, as for
    replication='none' with fixed languages."""
    one = eq.simulate_cube(n_models=3, n_languages=1, n_seeds=1, model_means=[0.6, 0.7, 0.8],
                           rng=0).drop_vars(["boot_score", "bootstrap"])
    with pytest.raises(CubeError, match="one score per model on one language.*several runs "
                                        "\\(`seed=`\\).*\\(`item=`"):
        eq.report(one, out=None, progress=False)
    agg = eq.aggregate(eq.resample(one, replication="none", languages="bootstrap",
                                   n_resamples=50, rng=0))
    assert np.isnan(agg["sd"].values).all()
    assert "a single language to redraw" in agg["sd"].attrs["nan_reason"]
    with pytest.raises(CubeError, match="redraws nothing"):
        eq.leaderboard(agg)
    two = eq.simulate_cube(n_models=3, n_languages=2, n_seeds=1, rng=0).drop_vars(
        ["boot_score", "bootstrap"])
    spread = eq.aggregate(eq.resample(two, replication="none", languages="bootstrap",
                                      n_resamples=50, rng=0))
    assert (spread["sd"].values > 1e-6).all()


def test_the_notebook_view_links_the_page_and_shows_the_escaped_leaderboard(tmp_path):
    """It was one line, "evaluq report of ... written to <code>path</code>", unescaped."""
    cube = eq.simulate_cube(n_models=3, n_languages=3, rng=0).assign_attrs(metric="acc<b>")
    out = tmp_path / "a&b"
    shown = eq.report(cube, out=out, n_resamples=200, rng=0)._repr_html_()
    assert "acc&lt;b&gt;" in shown
    assert "acc<b>" not in shown
    assert 'href="file://' in shown
    assert "a&amp;b" in shown
    assert shown.count("<table") == 1
    assert "m0" in shown


def test_the_posterior_is_thinned_to_the_memory_budget_not_refused(monkeypatch):
    """At 200 models x 60 languages the report's default posterior (1,000 draws x 4 chains)
    needs 2.9 GiB at once, and `evaluq report --bayes` stopped with 'lower `draws`' after the
    resampling: the report keeps the most draws that fit (at least 250), and says so."""
    from evaluq._validation import memory_budget
    from evaluq.errors import EvaluqWarning
    from evaluq.hierarchical import _fit

    real = _fit.trace_bytes                       # a small cube standing for a large one
    monkeypatch.setattr(_fit, "trace_bytes", lambda *args: 2000 * real(*args))
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, rng=1)
    kept = memory_budget() // _fit.trace_bytes(3, 4, 1, 2)
    assert 250 <= kept < 1000
    with pytest.warns(EvaluqWarning, match=f"keeps {kept} draws per chain, not 1000"):
        rep = eq.report(cube, None, n_resamples=100, rng=0, bayes=True, progress=False,
                        bayes_options={"chains": 2, "tune": 200})
    assert rep.analyses["simulated"].fit.idata.posterior.sizes["draw"] == kept
    assert f"Posterior of the hierarchical model (2 chains x {kept} draws)" in rep.html


def test_report_says_when_nemenyi_cannot_separate_any_pair():
    """Over 2 languages the CD of 3 models (2.34) is above 2, the largest difference of mean
    ranks: critical_difference warns (naming the languages needed); the report's figure
    caption says it instead of a warning from inside the report."""
    cube = eq.simulate_cube(n_models=3, n_languages=2, model_means=[0.0, 1.0, 2.0], rng=1)
    with pytest.warns(eq.errors.EvaluqWarning, match="Nemenyi over 2 languages"):
        eq.critical_difference(cube)
    rep = eq.report(cube, None, n_resamples=50, rng=0, progress=False)
    tiers = next(s for s in rep.sections[next(iter(rep.sections))] if s.id == "tiers")
    assert ("With 2 languages the critical difference (2.34) is not below 2, the largest "
            "difference of mean ranks 3 models can have: this test cannot separate any pair"
            ) in tiers.body


def _first_table(body):
    """The body rows of the first ``<table>`` of ``body``: each a list of its cells' text."""
    table = body[body.index("<table"):body.index("</table>")]
    tbody = table[table.index("<tbody>"):]
    return [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", tbody, re.S)]


def test_more_pairs_than_a_page_holds_show_each_model_against_the_next():
    """Before: the page held all 19,900 rows of 200 models' pairwise table (6 MB of HTML in
    a collapsed box) and their 200 x 200 multi-ASO matrix. Beyond ``PAGE_ROWS`` pairs the
    page shows each model against the next on the leaderboard (the rows of the full table,
    in the leaderboard's order), beyond ``MATRIX_MODELS`` models eps_min of each model and
    the next both ways, each saying that the whole table is the one written beside it."""
    n = 33                                              # 528 pairs > PAGE_ROWS = 500
    assert n * (n - 1) // 2 > sections.PAGE_ROWS
    cube = eq.simulate_cube(n_models=n, n_languages=4, n_seeds=2, n_boot=None,
                            model_means=np.linspace(0, 3, n), rng=5)
    agg = eq.aggregate(eq.resample(cube, n_resamples=100, replication="nonparametric",
                                   rng=0))
    pw = eq.pairwise_differences(agg)
    with pytest.warns(eq.errors.EvaluqWarning, match="no test can reject"):
        board = eq.leaderboard(agg)
    body = sections._leaderboard_section(agg, pw, board).body
    shown = _first_table(body[body.index("<details>"):])
    order = list(board.index)
    assert len(shown) == n - 1
    full = eq.pairwise_table(pw, unique=True)
    for row, (a, b) in zip(shown, itertools.pairwise(order), strict=True):
        first, second, observed = row[0], row[1], float(row[2])
        assert {first, second} == {a, b}
        assert observed == pytest.approx(full.loc[(first, second), "observed"], rel=1e-3)
    assert f"Shown: each model against the next ({n - 1} of {n * (n - 1) // 2:,} rows)" in body
    assert "every pair is in the pairwise file" in body
    nine = agg.isel(model=slice(0, 9))
    with pytest.warns(eq.errors.EvaluqWarning, match="no test can reject"):
        few = sections._leaderboard_section(nine, eq.pairwise_differences(nine),
                                            eq.leaderboard(nine)).body
    assert "All pairwise differences (table)" in few
    assert "Shown:" not in few
    # multi-ASO: the matrix up to MATRIX_MODELS models, each model and the next beyond
    small = cube.isel(model=slice(0, sections.MATRIX_MODELS + 1))
    est = eq.interval_estimates(small, n_resamples=50, rng=0)
    poi = eq.probability_of_improvement(small, n_resamples=50, rng=0)
    eps = eq.multi_aso(small, rng=0, n_resamples=50)
    body = sections._field_methods_section(est, poi, eps).body
    aso = _first_table(body[body.rindex("<table"):])
    pairs, _ = sections._improvement_pairs(est, poi)
    assert len(aso) == len(pairs) == sections.MATRIX_MODELS
    for row, (a, b) in zip(aso, pairs, strict=True):
        assert row[:2] == [str(a), str(b)]
        assert float(row[2]) == pytest.approx(float(eps.sel(model=a, model_b=b)), abs=1e-3)
        assert float(row[3]) == pytest.approx(float(eps.sel(model=b, model_b=a)), abs=1e-3)
    assert "the whole matrix is the table multi_aso written beside this page" in body
    fewer = cube.isel(model=slice(0, sections.MATRIX_MODELS))
    body = sections._field_methods_section(
        eq.interval_estimates(fewer, n_resamples=50, rng=0),
        eq.probability_of_improvement(fewer, n_resamples=50, rng=0),
        eq.multi_aso(fewer, rng=0, n_resamples=50)).body
    matrix = _first_table(body[body.rindex("<table"):])
    assert len(matrix) == sections.MATRIX_MODELS
    assert len(matrix[0]) == sections.MATRIX_MODELS + 1


def test_a_tall_figure_scrolls_in_its_own_box():
    """Before: a report on 200 models held five figures 20 to 50 inches tall (one row per
    model or pair) one after the other in the page. A figure taller than ``TALL_FIGURE``
    pixels scrolls in a box, as a long table does, and its caption says so."""
    from matplotlib.figure import Figure

    tall = Figure(figsize=(2, 16))
    tall.subplots().plot([0, 1])
    out = sections._figure_html(tall, alt="tall", caption="Rows.")
    png = base64.b64decode(re.search(r'base64,([^"]*)"', out).group(1))
    height = int.from_bytes(png[20:24], "big")
    assert height > sections.TALL_FIGURE
    assert '<div class="figure-scroll"><img class="figure" alt="tall"' in out
    assert (f"<figcaption>Rows. ({height / 150:.0f} inches tall: the figure scrolls in its "
            "box" in out)
    short = Figure(figsize=(2, 10))
    short.subplots().plot([0, 1])
    assert "figure-scroll" not in sections._figure_html(short, alt="short")
    assert ".figure-scroll { max-height: 56rem; overflow-y: auto;" in sections._CSS


def test_many_models_rank_heatmap_shows_the_best_expected_ranks(monkeypatch):
    """Before: the rank heatmap of 200 models was 200 x 200 cells, 49 x 30 inches, nearly
    white on a 0-1 scale. Beyond ``RANK_MODELS`` models it draws those with the best
    expected rank over every rank, on a scale up to the largest probability shown, and
    says so; the rliable panel of many models follows the figures' (IQM) order."""
    n = sections.RANK_MODELS + 5
    cube = eq.simulate_cube(n_models=n, n_languages=4, n_seeds=3, n_boot=None,
                            model_means=np.linspace(0, 2, n), sigma_between=0.3, rng=2)
    ranks = eq.rank_distribution(eq.aggregate(eq.resample(
        cube, n_resamples=100, replication="nonparametric", rng=0)))
    drawn = []
    real = eq.plots.rank_heatmap

    def spy(r, **kw):
        fig = real(r, **kw)
        drawn.append((r, fig))
        return fig

    monkeypatch.setattr(eq.plots, "rank_heatmap", spy)
    monkeypatch.setattr(sections, "_close", lambda fig: None)    # keep it to look at
    section = sections._ranks_section(ranks)
    ((shown, fig),) = drawn
    best = ranks["model"].values[np.argsort(ranks["expected_rank"].values,
                                            kind="stable")[:sections.RANK_MODELS]]
    assert sorted(shown["model"].values.tolist()) == sorted(best.tolist())
    image = fig.axes[0].images[0]
    assert image.get_array().shape == (sections.RANK_MODELS, n)
    top = float(shown["probability"].max())
    assert image.get_clim() == pytest.approx((0.0, top))
    assert (f"With {n} models the heatmaps show the {sections.RANK_MODELS} with the best "
            f"expected rank, over all {n} ranks, on a colour scale from 0 to {top:.2g}"
            in section.body)
    assert "figure-row" not in section.body     # one figure: its own width, not 520 px
    # rliable's panel: in the probability-of-improvement figure's order
    orders = []
    panel = eq.plots.interval_estimates_panel
    monkeypatch.setattr(eq.plots, "interval_estimates_panel",
                        lambda est, **kw: orders.append(list(est["model"].values))
                        or panel(est, **kw))
    small = cube.isel(model=slice(0, 10))
    est = eq.interval_estimates(small, n_resamples=30, rng=0)
    poi = eq.probability_of_improvement(small, n_resamples=30, rng=0)
    body = sections._field_methods_section(est, poi, eq.multi_aso(small, rng=0,
                                                                  n_resamples=30)).body
    pairs, _ = sections._improvement_pairs(est, poi)
    assert orders == [[pairs[0][0], *(b for _, b in pairs)]]
    assert "Models in the order of the probability-of-improvement figure below." in body
