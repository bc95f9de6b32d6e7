"""``evaluq ratings``: the real command on real votes (LLMFAO) and on small files a user has."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluq.cli import main

LLMFAO = Path(__file__).parent / "data" / "llmfao" / "llmfao.csv"
LEFT_RIGHT = ["--model-a", "left", "--model-b", "right", "--outcome", "left=model_a",
              "--outcome", "right=model_b", "--outcome", "tie=tie"]


def _votes(tmp_path: Path, rows: list[tuple[str, str, str]], name: str = "votes.csv") -> Path:
    path = tmp_path / name
    pd.DataFrame(rows, columns=["model_a", "model_b", "winner"]).to_csv(path, index=False)
    return path


def test_llmfao_with_worker_clusters_writes_the_page_and_tables(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--cluster", "worker",
                 "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr()
    assert "59 models, 8931 votes, 124 clusters of 'worker'" in printed.out
    assert "EvaluqWarning: --cluster has 124 clusters for 59 free parameters" in printed.err
    page = (out / "ratings.html").read_text()
    for section in ('id="ratings"', 'id="ranks"', 'id="win-probability"', 'id="tiers"',
                    'id="reproducibility"'):
        assert section in page
    assert "http://" not in page
    assert "https://" not in page
    table = pd.read_csv(out / "ratings.csv", index_col=0)
    assert len(table) == 59
    assert table["rating"].is_monotonic_decreasing
    assert np.isclose(table["rating"].mean(), 1000.0)                # sum-zero on the Elo scale
    wins = pd.read_csv(out / "win_probability.csv", index_col=0)
    assert wins.shape == (59, 59)
    off_diagonal = ~np.eye(59, dtype=bool)
    both = wins.to_numpy()[off_diagonal] + wins.to_numpy().T[off_diagonal]
    assert (both <= 1.0 + 1e-12).all()           # P(a beats b) + P(b beats a) + P(tie) = 1
    assert (both > 0.5).all()


def test_clustering_by_worker_widens_the_intervals(tmp_path):
    """LLMFAO's 124 workers: cluster-robust SEs are larger than the iid ones (a median 1.3x;
    few clusters for 59 models: every direction at least the iid variance)."""
    main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--out", str(tmp_path / "iid")])
    main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--cluster", "worker",
          "--out", str(tmp_path / "cl")])
    iid = pd.read_csv(tmp_path / "iid" / "ratings.csv", index_col=0)["se"]
    cl = pd.read_csv(tmp_path / "cl" / "ratings.csv", index_col=0)["se"]
    assert np.median(cl / iid.loc[cl.index]) > 1.2
    assert (cl / iid.loc[cl.index]).min() >= 1.0 - 1e-9


def test_prompt_clusters_too_few_for_the_models_are_refused(tmp_path, capsys):
    """LLMFAO's 13 prompts cannot identify the covariance of 59 models' ratings (issue 33's
    prompt-clustered SEs came from a covariance of rank 12): rc 2, the counts and the
    remedy, no files."""
    assert main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--cluster", "prompt",
                 "--out", str(tmp_path / "cl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evaluq ratings: error: --cluster has 13 clusters, too few for the "
                          "covariance of the 59 free parameters")
    assert "or leave out --cluster" in err
    assert not (tmp_path / "cl" / "ratings.csv").exists()


def test_unknown_winner_labels_name_the_flag_that_maps_them(capsys, tmp_path):
    path = _votes(tmp_path, [("x", "y", "L"), ("y", "x", "R"), ("x", "y", "=")])
    assert main(["ratings", str(path), "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert "label(s) ['=', 'L', 'R']" in err
    assert "--outcome left=model_a --outcome right=model_b --outcome tie=tie" in err
    assert "outcomes=" not in err


def test_winner_labels_naming_the_model_columns_need_no_outcome_flags(tmp_path):
    """LLMFAO's winner says left / right / tie, the names of its model columns: read without
    --outcome flags, the files equal those the flags give."""
    with_flags, without = tmp_path / "flags", tmp_path / "bare"
    assert main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--out", str(with_flags)]) == 0
    assert main(["ratings", str(LLMFAO), "--model-a", "left", "--model-b", "right",
                 "--out", str(without)]) == 0
    for name in ("ratings.csv", "win_probability.csv"):
        assert (with_flags / name).read_bytes() == (without / name).read_bytes()


def test_one_outcome_flag_adds_a_label_to_the_built_in_ones(tmp_path):
    """The project's own arena battles say a / b / tie / bothbad: --outcome for one extra
    label keeps the built-in ones (before: 'a', 'b', 'tie' were then refused), and 'bothbad'
    is built in now; all give the files of the full mapping."""
    votes = pd.read_csv(BATTLES)
    votes["human"] = votes["human"].replace({"bothbad": "both bad"})
    path = tmp_path / "battles.csv"
    votes.to_csv(path, index=False)
    full, one = tmp_path / "full", tmp_path / "one"
    base = ["ratings", str(path), "--winner", "human"]
    assert main([*base, "--outcome", "a=model_a", "--outcome", "b=model_b", "--outcome",
                 "tie=tie", "--outcome", "both bad=tie", "--out", str(full)]) == 0
    assert main([*base, "--outcome", "both bad=tie", "--out", str(one)]) == 0
    for name in ("ratings.csv", "win_probability.csv"):
        assert (full / name).read_bytes() == (one / name).read_bytes()
    bare = tmp_path / "bare"
    assert main(["ratings", str(BATTLES), "--winner", "human", "--out", str(bare)]) == 0


def test_numeric_winner_labels_match_outcome_flags_written_as_numbers(tmp_path):
    """A winner column of 1 / 0 / 0.5 (read by pandas as 1.0 / 0.0 / 0.5): --outcome 1=model_a
    --outcome 0=model_b --outcome 0.5=tie reads it (before: refused, 'holds label(s)
    ['0.0', '0.5', '1.0']'), as the same votes spelled model_a / model_b / tie."""
    rows = [("x", "y", "model_a")] * 7 + [("x", "y", "model_b")] * 3 + [("y", "z", "tie")] * 2
    rows += [("y", "z", "model_a")] * 4 + [("z", "y", "model_a")] * 3 + [("x", "z", "model_b")]
    rows += [("z", "x", "model_b")] * 2
    words = _votes(tmp_path, rows, "words.csv")
    numbers = tmp_path / "numbers.csv"
    pd.read_csv(words).replace({"winner": {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}}).to_csv(
        numbers, index=False)
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["ratings", str(words), "--out", str(a)]) == 0
    assert main(["ratings", str(numbers), "--outcome", "1=model_a", "--outcome", "0=model_b",
                 "--outcome", "0.5=tie", "--out", str(b)]) == 0
    assert (a / "ratings.csv").read_bytes() == (b / "ratings.csv").read_bytes()


def test_a_malformed_outcome_flag_is_refused(capsys, tmp_path):
    path = _votes(tmp_path, [("x", "y", "model_a"), ("y", "x", "model_b")])
    assert main(["ratings", str(path), "--outcome", "left", "--out", str(tmp_path)]) == 2
    assert "--outcome takes LABEL=ROLE" in capsys.readouterr().err


def test_a_vote_of_a_model_against_itself_is_an_error_not_a_traceback(capsys, tmp_path):
    path = _votes(tmp_path, [("x", "y", "model_a"), ("x", "x", "tie"), ("y", "x", "model_a")])
    assert main(["ratings", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evaluq ratings: error:")
    assert "itself" in err


@pytest.mark.parametrize("ties", ["davidson", "half", "drop"])
def test_two_models_and_every_tie_rule(tmp_path, ties):
    rows = [("x", "y", "model_a")] * 7 + [("x", "y", "model_b")] * 3 + [("y", "x", "tie")] * 2
    path = _votes(tmp_path, rows)
    out = tmp_path / "o"
    assert main(["ratings", str(path), "--ties", ties, "--out", str(out)]) == 0
    table = pd.read_csv(out / "ratings.csv", index_col=0)
    assert list(table.index) == ["x", "y"]
    wins = pd.read_csv(out / "win_probability.csv", index_col=0)
    expected = {"half": 8 / 12, "drop": 7 / 10}.get(ties)
    if expected is not None:                    # two models: the closed form of the MLE
        assert wins.loc["x", "y"] == pytest.approx(expected, abs=1e-9)
    assert 'id="tiers"' in (out / "ratings.html").read_text()


def test_rows_in_another_order_give_the_same_files(tmp_path):
    votes = pd.read_csv(LLMFAO)
    shuffled = votes.sample(frac=1.0, random_state=1)
    shuffled.to_csv(tmp_path / "shuffled.csv", index=False)
    for name, path in (("a", LLMFAO), ("b", tmp_path / "shuffled.csv")):
        main(["ratings", str(path), *LEFT_RIGHT, "--cluster", "worker",
              "--out", str(tmp_path / name)])
    a = pd.read_csv(tmp_path / "a" / "ratings.csv", index_col=0)
    b = pd.read_csv(tmp_path / "b" / "ratings.csv", index_col=0)
    pd.testing.assert_frame_equal(a, b, rtol=1e-9)


STYLE = Path(__file__).parents[1] / "benchmarks" / "anchors" / "arena_style_votes.csv"
BATTLES = Path(__file__).parent / "data" / "judges" / "arena_battles.csv"
ARENA_LABELS = ["--outcome", "a=model_a", "--outcome", "b=model_b", "--outcome", "tie=tie",
                "--outcome", "bothbad=tie"]


def test_style_covariates_from_the_command_line(tmp_path, capsys):
    """``--covariate NAME=COL_A,COL_B`` is fit_ratings' ``covariates={NAME: (COL_A, COL_B)}``:
    the same ratings and coefficients, a covariates.csv and a section of the page."""
    from evaluq.ratings import fit_ratings

    out = tmp_path / "out"
    code = main(["ratings", str(STYLE), "--covariate", "length=tokens_a,tokens_b",
                 "--covariate", "headers=headers_a,headers_b", "--cluster", "prompt",
                 "--out", str(out)])
    assert code == 0
    assert "covariates (elo per SD of the covariate)" in capsys.readouterr().out
    expected = fit_ratings(pd.read_csv(STYLE), cluster="prompt", covariates={
        "length": ("tokens_a", "tokens_b"), "headers": ("headers_a", "headers_b")})
    table = pd.read_csv(out / "covariates.csv", index_col=0)
    np.testing.assert_allclose(table["coefficient"], expected.covariate_coefficient.values,
                               rtol=1e-12)
    ratings = pd.read_csv(out / "ratings.csv", index_col=0)["rating"]
    np.testing.assert_allclose(ratings, expected.rating.to_series().loc[ratings.index],
                               rtol=1e-12)
    page = (out / "ratings.html").read_text()
    assert 'id="covariates"' in page
    assert "(tokens_a - tokens_b) / (tokens_a + tokens_b)" in page


def test_judge_assisted_ratings_from_the_command_line(tmp_path, capsys):
    """``--judge COL --gold COL`` runs fit_judged_ratings on real arena battles with a tenth
    of the human votes kept; the page says what lambda and the gain were."""
    from evaluq.ratings import fit_judged_ratings

    votes = pd.read_csv(BATTLES)
    votes.loc[np.random.default_rng(0).random(len(votes)) > 0.1, "human"] = None
    path = tmp_path / "battles.csv"
    votes.to_csv(path, index=False)
    out = tmp_path / "out"
    code = main(["ratings", str(path), "--judge", "gpt4", "--gold", "human", *ARENA_LABELS,
                 "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "judge-assisted (PPI++): lambda" in printed
    outcomes = {"a": "model_a", "b": "model_b", "tie": "tie", "bothbad": "tie"}
    expected = fit_judged_ratings(pd.read_csv(path), judge="gpt4", gold="human",
                                  outcomes=outcomes)
    ratings = pd.read_csv(out / "ratings.csv", index_col=0)["rating"]
    np.testing.assert_allclose(ratings, expected.rating.to_series().loc[ratings.index],
                               rtol=1e-12)
    assert "Judge-assisted (PPI++)" in (out / "ratings.html").read_text()


@pytest.mark.parametrize(("flags", "message"), [
    (["--judge", "gpt4"], "--judge and --gold go together"),
    (["--lam", "0.5"], "--lam is PPI's weight"),
    (["--judge", "gpt4", "--gold", "human", "--covariate", "x"], "not available with --judge"),
    (["--covariate", "length=tokens_a"], "NAME=COL_A,COL_B"),
    (["--judge", "model_a", "--gold", "human"], "map them with --outcome LABEL=ROLE"),
    (["--judge", "gpt4", "--gold", "human", "--prior-sd", "2"],
     "--prior-sd is not available with --judge"),
    (["--judge", "gpt4", "--gold", "human", "--lam", "1.5"],
     "--lam (PPI++'s lambda) must be in [0, 1]: 0 is the gold-only estimate, 1 is PPI, and "
     "PPI++ tunes it within [0, 1] (ppi_py clips it there); got 1.5; leave out --lam to tune it"),
])
def test_ratings_flags_refused_with_their_remedy(flags, message, tmp_path, capsys):
    source = BATTLES if "--judge" in flags else STYLE
    code = main(["ratings", str(source), *flags, "--out", str(tmp_path / "out")])
    assert code == 2
    assert message in capsys.readouterr().err


def test_one_sided_human_votes_are_refused_with_the_flags_that_fix_them(tmp_path, capsys):
    """Every human vote for the left answer (a side-biased panel): before, 'error: Singular
    matrix' (numpy's LinAlgError); now what has no finite minimum and the remedies as flags,
    and the first remedy, --ties half, runs."""
    from tests.ratings.test_judged import simulate

    votes = simulate(3)
    votes.loc[votes.gold.notna(), "gold"] = "a"
    path = tmp_path / "one_sided.csv"
    votes.to_csv(path, index=False)
    flags = ["ratings", str(path), "--judge", "judge", "--gold", "gold"]
    assert main([*flags, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "Singular matrix" not in err
    assert "has no finite minimum with these" in err
    assert ("collect more gold votes, pass a --lam below 1 (e.g. --lam 0.5; --lam 0 is the gold "
            "votes alone), or use --ties half (or --ties drop)") in err
    assert main([*flags, "--ties", "half", "--out", str(tmp_path / "o")]) == 0


def test_a_model_without_human_votes_gets_no_rating_on_the_page(tmp_path, capsys):
    """A model no person voted on: no rating (an empty cell in ratings.csv, no rank), the
    reason printed and on the page, the other models ranked and tiered among themselves
    (before: the judge's biased rating with the narrowest interval)."""
    from tests.ratings.test_judged import simulate

    votes = simulate(12)
    votes.loc[(votes.model_a == "m4") | (votes.model_b == "m4"), "gold"] = None
    path = tmp_path / "no_gold.csv"
    votes.to_csv(path, index=False)
    out = tmp_path / "o"
    assert main(["ratings", str(path), "--judge", "judge", "--gold", "gold", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr()
    assert "model(s) ['m4'] have no gold vote" in printed.out
    assert "nan" not in printed.out.split("\n")[3]          # the judge-assisted line
    table = pd.read_csv(out / "ratings.csv", index_col=0)
    assert table.loc["m4", ["rating", "se", "lower", "upper", "rank"]].isna().all()
    assert table["rank"].dropna().tolist() == [1, 2, 3, 4]
    page = (out / "ratings.html").read_text()
    assert "have no gold vote" in page
    assert "worth nan" not in page


def test_a_model_that_never_lost_is_refused_with_the_flag_that_fixes_it(tmp_path, capsys):
    """The library's remedies (`prior_sd`, ties='drop') are named as the command's flags,
    and --prior-sd reaches the fit: finite ratings, the prior stated."""
    rows = [("A", "B", "model_a"), ("A", "C", "model_a"), ("B", "C", "model_a"),
            ("C", "B", "model_a")] * 5
    path = _votes(tmp_path, rows)
    out = tmp_path / "out"
    assert main(["ratings", str(path), "--ties", "davidson", "--out", str(out)]) == 2
    assert "use --ties drop (or --ties half)" in capsys.readouterr().err
    for ties in (["--ties", "drop"], []):          # the votes hold no tie: auto is drop
        assert main(["ratings", str(path), *ties, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "['A'] never lost" in err
        assert "pass --prior-sd SD" in err
    assert main(["ratings", str(path), "--ties", "drop", "--prior-sd", "2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "prior: Gaussian N(0, 2^2) on each logit strength" in printed
    ratings = pd.read_csv(out / "ratings.csv", index_col=0)
    assert np.isfinite(ratings["rating"]).all()
    assert ratings["rating"].idxmax() == "A"


def test_the_prior_only_warning_names_a_remedy_the_command_has(tmp_path, capsys):
    """With --prior-sd and a model that never lost, the library's warning pointed to
    fit_ratings_bayes(..., prior_sd=2), which `evaluq ratings` cannot run: the command says
    to rerun with a larger --prior-sd (a flag it has), the posterior being Python's."""
    import re

    from evaluq.cli import build_parser

    rows = [("A", "B", "model_a"), ("A", "C", "model_a"), ("B", "C", "model_a"),
            ("C", "B", "model_a")] * 5
    path = _votes(tmp_path, rows)
    assert main(["ratings", str(path), "--ties", "drop", "--prior-sd", "2",
                 "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "EvaluqWarning: only the prior keeps these ratings finite" in err
    assert "rerun with a --prior-sd larger than 2: ratings that move with it" in err
    assert "fit_ratings_bayes(..." not in err
    ratings = build_parser()._subparsers._group_actions[0].choices["ratings"]  # type: ignore[union-attr]
    flags = {s for a in ratings._actions for s in a.option_strings}
    assert set(re.findall(r"--[a-z][a-z-]+", err)) <= flags


def test_a_vote_file_that_is_not_utf8_names_encoding(tmp_path, capsys):
    """A vote file saved in cp1252 (a model named 'modèle'): refused naming --encoding, and
    with it the ratings of the same votes in UTF-8."""
    votes = pd.read_csv(LLMFAO)
    first = votes["left"].iloc[0]
    votes[["left", "right"]] = votes[["left", "right"]].replace(first, "modèle")
    votes.to_csv(tmp_path / "legacy.csv", index=False, encoding="cp1252")
    votes.to_csv(tmp_path / "utf8.csv", index=False)
    code = main(["ratings", str(tmp_path / "legacy.csv"), *LEFT_RIGHT, "--out",
                 str(tmp_path / "a")])
    assert code == 2
    assert "pass --encoding cp1252" in capsys.readouterr().err
    for name, extra in (("legacy.csv", ["--encoding", "cp1252"]), ("utf8.csv", [])):
        assert main(["ratings", str(tmp_path / name), *LEFT_RIGHT, *extra, "--out",
                     str(tmp_path / name[:-4])]) == 0
    a = pd.read_csv(tmp_path / "legacy" / "ratings.csv", index_col=0)
    pd.testing.assert_frame_equal(a, pd.read_csv(tmp_path / "utf8" / "ratings.csv", index_col=0))
    assert "modèle" in a.index


def test_repeated_rows_are_named_in_command_line_words(tmp_path, capsys):
    """The warning about copied rows says what to do with the file, not with a DataFrame."""
    battles = pd.read_csv(BATTLES)
    path = tmp_path / "twice.csv"
    pd.concat([battles, battles.iloc[:50]]).to_csv(path, index=False)
    assert main(["ratings", str(path), "--winner", "human", "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "EvaluqWarning: `votes` has 50 row(s) that repeat an earlier row" in err
    assert "remove the repeated lines from the file first" in err
    assert "drop_duplicates" not in err


def test_rows_repeated_across_files_are_named_by_their_own_file(tmp_path, capsys):
    """Two vote files, the second starting with a copy of the first's last 20 votes: the
    warning named rows 200-209 of the files run together; it names each repeat by its own
    file's row (counted from 0, as one file's are), and so does a refusal."""
    battles = pd.read_csv(BATTLES).iloc[:200]
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    battles.to_csv(first, index=False)
    battles.iloc[180:].to_csv(second, index=False)
    assert main(["ratings", str(first), str(second), "--winner", "human",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "`votes` has 20 row(s) that repeat an earlier row" in err
    assert f"(row(s) 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 of {second} and 10 more)" in err
    gap = battles.human.where(battles.index != 3)
    battles.assign(human=gap).to_csv(first, index=False)
    battles.iloc[5:].assign(human=gap.iloc[5:].where(battles.index[5:] != 7)).to_csv(
        second, index=False)
    assert main(["ratings", str(first), str(second), "--winner", "human",
                 "--out", str(tmp_path / "o")]) == 2
    assert f"at row(s) 3 of {first}, 2 of {second};" in capsys.readouterr().err


def test_a_bootstrap_refusal_names_the_ties_flag(tmp_path, capsys):
    rng = np.random.default_rng(3)
    winner = np.where(rng.random(300) < 0.6, "model_a", "model_b")
    winner[:2] = "tie"
    path = tmp_path / "few_ties.csv"
    pd.DataFrame({"model_a": "x", "model_b": "y", "winner": winner}).to_csv(path, index=False)
    assert main(["ratings", str(path), "--interval", "bootstrap", "--out",
                 str(tmp_path / "o")]) == 2
    assert ("use --interval sandwich, collect more votes, or use --ties half"
            in capsys.readouterr().err)


def test_a_covariate_refusal_names_each_row_by_its_own_file(tmp_path, capsys):
    """A missing covariate value in two vote files: the refusal names the rows as the votes'
    own messages do (each file's rows counted from 0, grouped by file), not as the rows of
    the files run together."""
    battles = pd.read_csv(BATTLES).iloc[:200].assign(len_a=10.0, len_b=12.0)
    battles.loc[3, "len_a"] = np.nan
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    battles.iloc[:100].to_csv(first, index=False)
    battles.iloc[100:].assign(len_b=battles.len_b.iloc[100:].where(
        ~battles.index[100:].isin([101, 102]))).to_csv(second, index=False)
    assert main(["ratings", str(first), str(second), "--winner", "human",
                 "--covariate", "length=len_a,len_b", "--out", str(tmp_path / "o")]) == 2
    assert f"at row(s) 3 of {first};" in capsys.readouterr().err
    battles.iloc[100:].to_csv(second, index=False)
    battles.iloc[:100].assign(len_a=np.nan).to_csv(first, index=False)
    assert main(["ratings", str(first), str(second), "--winner", "human",
                 "--covariate", "length=len_a,len_b", "--out", str(tmp_path / "o")]) == 2
    assert f"at row(s) 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 of {first} and 90 more;" \
        in capsys.readouterr().err


def test_eight_models_default_draws_let_the_tiers_reject(tmp_path, capsys):
    """Eight models' votes with the defaults warned 'With 1000 resamples ... no test can
    reject at alpha = 0.05, so every model stays in one tier. Use at least 1120 resamples':
    the command's own default could not give tiers. The sandwich's draws are now enough for
    the tiers' tests (40 per pair, rounded up to a thousand: 2,000 for 28 pairs), and the
    models far apart fall in different tiers."""
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(2000):
        a, b = rng.choice(8, 2, replace=False)
        win = rng.random() < 1.0 / (1.0 + np.exp(-0.3 * (a - b)))
        rows.append((f"m{a}", f"m{b}", "model_a" if win else "model_b"))
    out = tmp_path / "out"
    code = main(["ratings", str(_votes(tmp_path, rows)), "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "no test can reject" not in printed.err
    assert 'id="tiers"' in (out / "ratings.html").read_text()
    import evaluq as eq

    fit = eq.fit_ratings(tmp_path / "votes.csv")
    assert fit.draws.sizes["resample"] == 2000
    tiers = eq.leaderboard(fit.draws, observed=fit.rating)["tier"]
    assert tiers.min() == 1
    assert tiers.max() > 1
    boot = eq.fit_ratings(tmp_path / "votes.csv", interval="bootstrap", n_resamples=50)
    assert boot.draws.sizes["resample"] == 50
