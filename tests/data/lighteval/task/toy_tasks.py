"""Two toy lighteval custom tasks over the local data set ./toy_data/test.jsonl.

Made by benchmarks/anchors/make_lighteval_logs.py (evaluq); our own toy data, no licence
restriction. Load with lighteval's custom tasks option (this file's TASKS_TABLE).
"""

from lighteval.metrics.dynamic_metrics import LogLikelihoodAccMetric
from lighteval.metrics.metrics import Metrics
from lighteval.metrics.normalizations import LogProbCharNorm
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def _query(line):
    return f"{line['passage']}\nQuestion: {line['question']}\nAnswer:"


def toy_mc_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=_query(line),
        choices=[f" {c}" for c in line["choices"]],
        gold_index=line["label"],
        specific={"passage": line["passage"], "question": line["question"]},
    )


def toy_gen_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=_query(line),
        choices=[line["answer"]],
        gold_index=0,
        specific={"passage": line["passage"], "question": line["question"]},
    )


toy_mc = LightevalTaskConfig(
    name="toy_mc",
    prompt_function=toy_mc_prompt,
    hf_repo="toy_data",
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    metrics=[Metrics.loglikelihood_acc, LogLikelihoodAccMetric(normalization=LogProbCharNorm())],
    version=0,
)

toy_gen = LightevalTaskConfig(
    name="toy_gen",
    prompt_function=toy_gen_prompt,
    hf_repo="toy_data",
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=8,
    stop_sequence=["\n"],
    metrics=[Metrics.exact_match],
    version=0,
)

TASKS_TABLE = [toy_mc, toy_gen]
