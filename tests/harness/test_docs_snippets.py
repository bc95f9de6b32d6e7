"""Every Python block of the README and of the guides runs as written, the way a new user
copies them: one namespace per page, the blocks in order, in a folder holding the files they
name (``results.csv``, Inspect logs in ``logs/``, lm-eval's output in ``output/``, ...).

A statement followed by a comment ``# SomeError: message`` documents that it raises: the test
checks that it does, with that message (a ``...`` stands for the rest, or for words left
out). A comment ``# SomeWarning: message`` documents a warning, checked the same way. The
README's tour names the user's own data (``targets``, ``votes``, ...): the test gives them
(:data:`PLACEHOLDERS`), as a user's notebook would.

Found by running the blocks (session 26): the harness guide's ``table`` was overwritten by
its lm-eval line, whose scores have other names; the design-effect example named data it
never made; the README's tour mixed its cubes.

Lives beside the harness tests for their Inspect logs fixture.
"""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guides").glob("*.md"))]
LM_EVAL_LOGS = ROOT / "tests" / "data" / "lm_eval" / "logs"
LIGHTEVAL = ROOT / "tests" / "data" / "lighteval"

SKIP: dict[tuple[str, int], str] = {
    ("cluster.md", 1): "starts a dask LocalCluster and connects to a scheduler host",
}
"""Blocks that cannot run here, each with its reason."""

PLACEHOLDERS: dict[str, str] = {
    "README.md": """
import numpy as np
import pandas as pd
_g = np.random.default_rng(0)
targets = _g.integers(0, 2, 400)
predictions = {m: np.where(_g.random((3, 400)) < p, targets, 1 - targets)
               for m, p in (("bert", 0.80), ("xlm-r", 0.84))}
h0, h1 = predictions["bert"][0], predictions["xlm-r"][0]
y_mean, y_pred, y_sd = _g.normal(3, 1, 50), _g.normal(3, 1, 50), np.full(50, 0.5)
ratings = _g.integers(1, 5, (3, 40)).astype(float)
correct_a, correct_b = _g.random(30) < 0.9, _g.random(30) < 0.8
_models = np.array(["a", "b", "c", "d"])
_pairs = _g.choice(4, (600, 2))
_pairs = _pairs[_pairs[:, 0] != _pairs[:, 1]]
votes = pd.DataFrame({"model_a": _models[_pairs[:, 0]], "model_b": _models[_pairs[:, 1]],
                      "winner": _g.choice(["model_a", "model_b", "tie"], len(_pairs)),
                      "prompt": _g.integers(0, 100, len(_pairs))})
gold = _g.random(100) < 0.7
judge_on_labelled = np.where(_g.random(100) < 0.85, gold, ~gold).astype(float)
judge_on_unlabelled = (_g.random(2000) < 0.7).astype(float)
_items = [(m, i) for m in ("a", "b") for i in range(200)]
labelled = pd.DataFrame(_items, columns=["model", "item"]).assign(
    judge=(_g.random(400) < 0.7).astype(float),
    human=np.where(_g.random(400) < 0.25, (_g.random(400) < 0.7).astype(float), np.nan))
""",
}
"""The user's own data that a page names without making, made as a notebook would."""

_EXPECTED = re.compile(r"#\s*(\w+(?:Error|Exception|Warning)):\s*(.*)")


def _blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def _expected(lines: list[str], end: int) -> tuple[str, str] | None:
    """The error or warning documented by the comment lines after line ``end`` (1-based):
    its class name and message, continuation comment lines joined."""
    if end >= len(lines) or not (match := _EXPECTED.match(lines[end].strip())):
        return None
    text = [match.group(2)]
    for line in lines[end + 1:]:
        stripped = line.strip()
        if not stripped.startswith("#") or _EXPECTED.match(stripped):
            break
        text.append(stripped.lstrip("#").strip())
    return match.group(1), " ".join(text)


def _says(actual: str, documented: str) -> bool:
    """The documented message, its '...' standing for words left out, is what was said."""
    said = " ".join(actual.split())
    position = 0
    for part in (" ".join(p.split()) for p in documented.split("...")):
        if not part:
            continue
        found = said.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def _run_statement(code: Any, namespace: dict[str, Any], expected: tuple[str, str] | None,
                   where: str) -> None:
    raised: Exception | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(code, namespace)
        except Exception as err:
            raised = err
    if expected is None or expected[0].endswith("Warning"):
        if raised is not None:
            raise AssertionError(f"{where} raised {type(raised).__name__}: {raised}") from raised
        if expected is not None:
            said = [str(w.message) for w in caught if w.category.__name__ == expected[0]]
            assert any(_says(s, expected[1]) for s in said), (
                f"{where}: no {expected[0]} saying {expected[1]!r}; warned: {said}")
        return
    assert raised is not None, f"{where} does not raise the documented {expected[0]}"
    assert type(raised).__name__ == expected[0], f"{where}: {raised!r}"
    assert _says(str(raised), expected[1]), (f"{where} says {str(raised)!r}, the page "
                                             f"{expected[1]!r}")


def _run_block(source: str, namespace: dict[str, Any], where: str) -> None:
    """Run a block statement by statement, checking its documented errors and warnings."""
    lines = source.splitlines()
    for statement in ast.parse(source).body:
        end = statement.end_lineno or statement.lineno
        code = compile(ast.Module(body=[statement], type_ignores=[]), where, "exec")
        _run_statement(code, namespace, _expected(lines, end),
                       f"{where} line {statement.lineno}")


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory, inspect_logs: dict[str, Path],
                judged_logs: Path) -> Path:
    """The files the pages name: a long table of runs with bootstrap rows (CSV and parquet),
    Inspect logs with a passage per sample, lm-eval's ``--log_samples`` output."""
    import evaluq as eq

    folder = tmp_path_factory.mktemp("user")
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, n_boot=50,
                            model_means=[20, 22, 27], sigma_between=3.0, rng=4)
    full = cube.score.to_dataframe().reset_index().assign(bootstrap=np.nan)
    boot = cube.boot_score.to_dataframe().reset_index().rename(columns={"boot_score": "score"})
    runs = pd.concat([full, boot], ignore_index=True)
    runs.rename(columns={"model": "system", "language": "lang", "bootstrap": "boot",
                         "score": "bleu"}).to_csv(folder / "results.csv", index=False)
    runs.rename(columns={"model": "system", "language": "task", "bootstrap": "replicate",
                         "score": "bleu"}).to_parquet(folder / "scores.parquet", index=False)
    shutil.copytree(inspect_logs["eval"], folder / "logs")
    shutil.copytree(LM_EVAL_LOGS, folder / "output")
    for part in ("results", "details"):
        shutil.copytree(LIGHTEVAL / part, folder / "lighteval-out" / part)
    shutil.copytree(judged_logs, folder / "LOGS")
    _command_files(folder)
    return folder


def _command_files(folder: Path) -> None:
    """The files the pages' commands name: a per-item table (``items.csv``), judge scores
    with human labels on some rows (``judged.csv``), a table of three metrics
    (``flores.tsv``) and one label per line (``targets.txt``, ``baseline.txt``,
    ``new.txt``)."""
    import evaluq as eq

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = eq.read_inspect_logs(folder / "logs", metadata=["passage"])
        judged = eq.read_inspect_logs(folder / "LOGS")
    table.rename(columns={"item": "id", "model": "system", "match": "correct"}).to_csv(
        folder / "items.csv", index=False)
    judged.groupby(["model", "item"], as_index=False)[["judge", "human"]].mean().rename(
        columns={"item": "id"}).to_csv(folder / "judged.csv", index=False)
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, model_means=[30, 32, 35],
                            sigma_between=4.0, rng=5)
    flores = cube.score.to_dataframe().reset_index().rename(
        columns={"model": "system", "language": "lp", "score": "BLEU"})
    flores.assign(chrF=flores["BLEU"] + 25, COMET=flores["BLEU"] + 50).to_csv(
        folder / "flores.tsv", sep="\t", index=False)
    g = np.random.default_rng(6)
    targets = g.integers(0, 2, 500)
    for name, p in (("targets", 1.0), ("baseline", 0.78), ("new", 0.83)):
        labels = np.where(g.random(500) < p, targets, 1 - targets)
        (folder / f"{name}.txt").write_text("\n".join(map(str, labels)) + "\n")


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.name)
def test_every_block_of_the_page_runs_as_written(page, user_folder, tmp_path, monkeypatch):
    blocks = _blocks(page)
    work = tmp_path / "work"
    shutil.copytree(user_folder, work)
    monkeypatch.chdir(work)
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    exec(PLACEHOLDERS.get(page.name, ""), namespace)
    import matplotlib.pyplot as plt

    from evaluq.metrics import _base

    # a page may register a metric of its own (metrics.md): the other tests see the registry
    # as it was
    monkeypatch.setattr(_base, "_REGISTRY", dict(_base._REGISTRY))
    try:
        for i, block in enumerate(blocks):
            if (page.name, i) in SKIP:
                continue
            _run_block(block, namespace, f"{page.name} block {i}")
    finally:
        plt.close("all")


def _commands(page: Path) -> list[str]:
    """The ``evaluq`` commands of the page's console blocks (``$ `` prompts and ``\\``
    continuations)."""
    out = []
    for block in re.findall(r"```(?:console|bash|shell|sh)\n(.*?)```",
                            page.read_text(encoding="utf-8"), flags=re.S):
        for command in re.sub(r"\\\n\s*", " ", block).splitlines():
            command = command.strip().removeprefix("$ ")
            if command.startswith("evaluq "):
                out.append(command)
    return out


@pytest.mark.parametrize("page", [p for p in PAGES if _commands(p)], ids=lambda p: p.name)
def test_every_command_of_the_page_runs_as_written(page, user_folder, tmp_path, monkeypatch,
                                                   capsys):
    from evaluq.cli import main

    work = tmp_path / "work"
    shutil.copytree(user_folder, work)
    monkeypatch.chdir(work)
    for command in _commands(page):
        args = shlex.split(command)[1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # the terminal shows them; not checked here
            code = main([*args, "--quiet"] if args[0] == "report" else args)
        assert code == 0, f"{page.name}: {command}: {capsys.readouterr().err}"


def test_the_skipped_blocks_exist():
    """Each skip names a block that is there (a page edited under it fails here)."""
    names = {p.name: len(_blocks(p)) for p in PAGES}
    for (name, i), reason in SKIP.items():
        assert i < names.get(name, 0), f"{name} block {i} ({reason}) is not on the page"


@pytest.mark.parametrize(("actual", "documented", "says"), [
    ("`votes`: the ratings are infinite: model(s) ['y'] never won", "the ratings ... never won",
     True),
    ("a b c", "a ... d", False),
    ("a  b\nc", "a b c", True),
])
def test_a_documented_message_is_matched_with_its_ellipses(actual, documented, says):
    assert _says(actual, documented) is says


def test_a_documented_error_that_is_not_raised_fails_and_one_that_is_passes():
    """The check can fail: a block documenting an error its statement does not raise, or
    another message, or an undocumented error."""
    raises = 'int("x")\n# ValueError: invalid literal for int() ... \'x\'\n'
    _run_block(raises, {}, "raises")
    with pytest.raises(AssertionError, match="does not raise the documented ValueError"):
        _run_block('int("1")\n# ValueError: invalid literal\n', {}, "quiet")
    with pytest.raises(AssertionError, match="the page"):
        _run_block('int("x")\n# ValueError: something else\n', {}, "other message")
    with pytest.raises(AssertionError, match="raised ValueError"):
        _run_block('int("x")\n', {}, "undocumented")
    with pytest.raises(AssertionError, match="no UserWarning"):
        _run_block('import warnings\nwarnings.warn("a")\n# UserWarning: b\n', {}, "warning")
