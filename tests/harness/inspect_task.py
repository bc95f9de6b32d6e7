"""The harness tests' Inspect task: inspect_ai runs a small in-memory task offline.

The task: 12 questions, three on each of four passages (sample metadata ``passage``), three
epochs, three scorers: ``match`` (C / I), ``includes`` (C / I) and ``graded``, whose value
is a dict (``grade``: C / P / I, ``length``: the answer's length). The models are Inspect's
mock provider under their own names (``mockllm/alpha`` ...), each answering right with its
own probability, the same on every run for a question and epoch; every mock ``ModelOutput`` has a
``usage`` so that the mock provider never counts tokens with tiktoken (which downloads its
encoding).
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

SKILL = {"alpha": 0.8, "beta": 0.6, "gamma": 0.55}
"""Probability of a right answer per mock model."""
N_PASSAGES, N_QUESTIONS, EPOCHS = 4, 3, 3
ANSWERS = ("red", "green", "blue")


def _answer(passage: int, question: int) -> str:
    return ANSWERS[(2 * passage + question) % 3]


def _outputs(name: str, skill: float) -> Callable[..., Any]:
    """The mock model: right with probability ``skill``, by a hash of (question, epoch), so
    the same on every run whatever order Inspect runs the samples in (the solver writes the
    epoch into the prompt)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(messages, tools, tool_choice, config):
        text = messages[-1].text
        e, p, q = (int(x) for x in text.split("|")[0].split("-"))
        u = ((p * 7919 + q * 104729 + e * 1299709 + len(name) * 15485863) % 1000) / 1000
        right = _answer(p, q)
        content = right if u < skill else ("maybe " + right if u < skill + 0.1 else "purple")
        usage = ModelUsage(input_tokens=8, output_tokens=1, total_tokens=9)
        return ModelOutput.from_content(model=name, content=content).model_copy(
            update={"usage": usage})

    return generate


def _require_inspect() -> None:
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed "
                        "(pip install 'evaluq[inspect]')")


def make_task(*, epochs: int = EPOCHS, flaky: str | None = None, fail: str | None = None,
              name: str = "passages") -> Any:
    """The toy task; ``flaky``: a sample id on which the ``graded`` scorer raises; ``fail``:
    a sample id on which the solver raises."""
    _require_inspect()
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Score, accuracy, includes, match, mean, scorer
    from inspect_ai.solver import generate, solver

    @scorer(metrics={"grade": [accuracy()], "length": [mean()]})
    def graded():
        async def score(state, target):
            if state.sample_id == flaky:
                raise RuntimeError(f"graded cannot score {flaky}")
            text = state.output.completion
            grade = "C" if text == target.text else ("P" if target.text in text else "I")
            return Score(value={"grade": grade, "length": len(text)})
        return score

    @solver
    def tag_epoch():
        async def solve(state, generate_):
            if state.sample_id == fail:
                raise RuntimeError(f"the solver fails on {fail}")
            state.user_prompt.text = f"{state.epoch}-{state.user_prompt.text}"
            return state
        return solve

    samples = [Sample(input=f"{p}-{q}| Passage {p}, question {q}: which colour?",
                      target=_answer(p, q), id=f"p{p}-q{q}", metadata={"passage": f"P{p}"})
               for p in range(N_PASSAGES) for q in range(N_QUESTIONS)]
    return Task(dataset=MemoryDataset(samples, name="colours"),
                solver=[tag_epoch(), generate()], scorer=[match(), includes(), graded()],
                epochs=epochs, name=name)


def run_inspect(log_dir: Path, *, models: Sequence[str] = tuple(SKILL), log_format: str = "eval",
                task: Any = None, **eval_kwargs: Any) -> list[Any]:
    """Run Inspect offline on the toy task; the logs go to ``log_dir``."""
    _require_inspect()
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    mocks = [get_model(f"mockllm/{m}", custom_outputs=_outputs(m, SKILL.get(m, 0.5)))
             for m in models]
    with warnings.catch_warnings():
        # inspect_ai 0.3.285 builds its retry policy with tenacity's deprecated `initial=`,
        # and leaves anyio streams for the garbage collector (collected here, not in a test)
        warnings.filterwarnings("ignore", "The 'initial' parameter is deprecated",
                                DeprecationWarning)
        warnings.simplefilter("ignore", ResourceWarning)
        logs = inspect_eval(task if task is not None else make_task(), model=mocks,
                            log_dir=str(log_dir), log_format=log_format, display="none",
                            log_realtime=False, **eval_kwargs)
        gc.collect()
    return logs


JUDGED_PASSAGES, LABELLED_EVERY = 12, 3
"""The judged task: 12 passages x 3 questions; the human scorer labels every third sample."""


def make_judged_task(*, epochs: int = 2) -> Any:
    """A task scored by a lenient model-graded scorer (``judge``: 1 for the right colour, 0.5
    for a hedged one, 0 otherwise, and 1 for the hedge of a model named ``beta``: a judge that
    favours one model) and a human scorer (``human``: strict match) that scores only every
    third sample (None elsewhere, as a human who labelled a subset)."""
    _require_inspect()
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate, solver

    @scorer(metrics=[mean()])
    def judge():
        async def score(state, target):
            text = state.output.completion
            if text == target.text:
                return Score(value=1.0)
            hedged = target.text in text
            favoured = "beta" in str(state.model)
            return Score(value=(1.0 if favoured else 0.5) if hedged else 0.0)
        return score

    @scorer(metrics=[mean()])
    def human():
        async def score(state, target):
            index = int(str(state.sample_id).split("-")[0][1:]) * N_QUESTIONS + int(
                str(state.sample_id).split("-q")[1])
            if index % LABELLED_EVERY:
                return None
            return Score(value=1.0 if state.output.completion == target.text else 0.0)
        return score

    @solver
    def tag_epoch():
        async def solve(state, generate_):
            state.user_prompt.text = f"{state.epoch}-{state.user_prompt.text}"
            return state
        return solve

    samples = [Sample(input=f"{p}-{q}| Passage {p}, question {q}: which colour?",
                      target=_answer(p, q), id=f"p{p}-q{q}", metadata={"passage": f"P{p}"})
               for p in range(JUDGED_PASSAGES) for q in range(N_QUESTIONS)]
    return Task(dataset=MemoryDataset(samples, name="colours"),
                solver=[tag_epoch(), generate()], scorer=[judge(), human()],
                epochs=epochs, name="judged")
