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


def test_llmfao_with_prompt_clusters_writes_the_page_and_tables(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--cluster", "prompt",
                 "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "59 models, 8931 votes, 13 clusters of 'prompt'" in printed
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


def test_clustering_by_prompt_widens_the_intervals(tmp_path):
    """LLMFAO's 13 prompts: cluster-robust SEs are larger than the iid ones (issue 33: a median
    1.6x)."""
    main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--out", str(tmp_path / "iid")])
    main(["ratings", str(LLMFAO), *LEFT_RIGHT, "--cluster", "prompt",
          "--out", str(tmp_path / "cl")])
    iid = pd.read_csv(tmp_path / "iid" / "ratings.csv", index_col=0)["se"]
    cl = pd.read_csv(tmp_path / "cl" / "ratings.csv", index_col=0)["se"]
    assert np.median(cl / iid.loc[cl.index]) > 1.2


def test_unknown_winner_labels_name_the_flag_that_maps_them(capsys):
    code = main(["ratings", str(LLMFAO), "--model-a", "left", "--model-b", "right",
                 "--out", "unused"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--outcome left=model_a --outcome right=model_b --outcome tie=tie" in err
    assert "outcomes=" not in err


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
        main(["ratings", str(path), *LEFT_RIGHT, "--cluster", "prompt",
              "--out", str(tmp_path / name)])
    a = pd.read_csv(tmp_path / "a" / "ratings.csv", index_col=0)
    b = pd.read_csv(tmp_path / "b" / "ratings.csv", index_col=0)
    pd.testing.assert_frame_equal(a, b, rtol=1e-9)
