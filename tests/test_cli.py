"""The command line: demo and errors."""

from __future__ import annotations

import pytest

from evaluq import __version__
from evaluq.cli import main


def test_demo_prints_the_whole_analysis(capsys):
    assert main(["demo", "--n-boot", "50", "--n-resamples", "500", "--no-bayes"]) == 0
    out = capsys.readouterr().out
    assert "Variance components" in out
    assert "sigma_between" in out
    assert "Leaderboard on THESE data sets" in out
    assert "Leaderboard on NEW data sets" in out
    assert "P(rank = r)" in out
    assert "Pairwise differences" in out
    assert "method 'berg-kirkpatrick'" in out
    assert "method 'paired'" in out
    assert "cross_entropy[eps=1e-06]" in out
    for model in ("knn", "logreg", "mlp", "naive_bayes", "random_forest"):
        assert model in out


@pytest.mark.slow
def test_demo_prints_the_posterior_rank_report(capsys):
    assert main(["demo", "--n-boot", "50", "--n-resamples", "500"]) == 0
    out = capsys.readouterr().out
    assert "Hierarchical Bayesian model" in out
    assert "Posterior P(rank = r) on THESE data sets" in out
    assert "Posterior P(rank = r) on a NEW data set" in out
    assert "P(best) resampling" in out
    assert "Posterior beside frequentist" in out
    assert "divergences 0" in out


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert __version__ in capsys.readouterr().out


def test_errors_exit_2(capsys):
    assert main(["demo", "--n-boot", "1"]) == 2
    assert "--n-boot must be >= 2" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["report", "-", "--score", "score"], ["ratings", "-"],
                                  ["test", "-", "h0.txt", "h1.txt"]])
def test_standard_input_is_refused_with_the_remedy(capsys, argv):
    """``... | evaluq report -`` (standard input, as many tools take it) was read as a file
    named '-' ("unknown suffix ''"): it is refused, saying to save the table to a file."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"evaluq {argv[0]}: error: '-' (standard input) is not read" in err
    assert "save the table first" in err
