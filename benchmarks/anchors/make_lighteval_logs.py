"""Make the lighteval sample logs under ``tests/data/lighteval/`` with lighteval itself.

Runs in lighteval's own virtual env (``benchmarks/anchors/setup_lighteval.sh``), never in
evaluq's, fully offline: two custom tasks (one Python file, lighteval's ``--custom-tasks``
format) over a tiny local JSON-lines data set (24 questions, four on each of six passages) and
lighteval's ``dummy`` model (``DummyModelConfig``: random log-likelihoods seeded by ``seed``,
the answer "random baseline" to every generation) under three names and three seeds, with
``save_details=True`` (the CLI's ``--save-details``).

* ``toy_mc``: multiple choice (three choices), metrics ``acc`` (``Metrics.loglikelihood_acc``)
  and ``acc_norm`` (``LogLikelihoodAccMetric(normalization=LogProbCharNorm())``);
* ``toy_gen``: generation, metric ``em`` (``Metrics.exact_match``); the gold answer is
  "random baseline" on a third of the questions, so the dummy model scores there.

Each doc carries its passage in ``Doc.specific`` (``{"passage": ..., "question": ...}``), so
the details files say which passage (cluster) a question belongs to.

lighteval's CLI has no ``dummy`` model type, so each evaluation runs through lighteval's
documented Python API (``EvaluationTracker``, ``PipelineParameters``, ``Pipeline``), one
process per model (``python make_lighteval_logs.py --run NAME SEED``), with the task folder as
working directory and ``output_dir=".."``. One workaround is needed to run offline:
lighteval 0.13.0's task registry imports every built-in task module, and some of them reach the
network when imported (``tiny_benchmarks`` downloads a pickle from GitHub; ``mt_bench`` asks
the Hub for its judge model), so ``Registry.load_all_task_configs`` is replaced by one that
loads the custom tasks file only, through lighteval's own ``create_custom_tasks_module`` and
``_extract_configs``. Nothing that lighteval writes is touched.

It writes the task file and the data into ``tests/data/lighteval/task/``, lighteval's output
into ``tests/data/lighteval/results/<model>/results_<date>.json`` and
``tests/data/lighteval/details/<model>/<date>/details_<task>|0_<date>.parquet``, and the
commands with the versions into ``tests/data/lighteval/MANIFEST.json``. The test suite reads
the committed files; it never runs lighteval.

Usage::

    bash benchmarks/anchors/setup_lighteval.sh         # once: /work/peers/lighteval
    /work/peers/lighteval/bin/python benchmarks/anchors/make_lighteval_logs.py
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "tests" / "data" / "lighteval"
TASK_DIR = ROOT / "task"
DATA_DIR_NAME = "toy_data"
"""The local data set folder (``hf_repo`` of the tasks, relative to the task folder)."""
TASKS_FILE = "toy_tasks.py"
TASKS = "toy_mc|0,toy_gen|0"
MODELS = {"dummy-a": 1, "dummy-b": 2, "dummy-c": 3}
"""Model name (``DummyModelConfig.model_name``, which lighteval records) -> ``seed``."""
CACHE_DIR = "/tmp/lighteval-dummy-cache"
"""lighteval's sample cache (``ModelConfig.cache_dir``), emptied before each run."""

TOY_TASKS = '''\
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
    return f"{line['passage']}\\nQuestion: {line['question']}\\nAnswer:"


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
    stop_sequence=["\\n"],
    metrics=[Metrics.exact_match],
    version=0,
)

TASKS_TABLE = [toy_mc, toy_gen]
'''


def write_task() -> None:
    """The custom tasks file and the data set (six passages, four questions each)."""
    shutil.rmtree(TASK_DIR, ignore_errors=True)
    (TASK_DIR / DATA_DIR_NAME).mkdir(parents=True)
    (TASK_DIR / TASKS_FILE).write_text(TOY_TASKS)
    choices = ["red", "green", "random baseline"]
    rows = []
    for p in range(6):
        for k in range(4):
            label = (2 * p + k) % 3
            rows.append({"passage": f"Passage {p}.", "question": f"question {k} on passage {p}",
                         "choices": choices, "label": label, "answer": choices[label]})
    (TASK_DIR / DATA_DIR_NAME / "test.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))


def python_call(model: str, seed: int) -> str:
    """The lighteval Python API calls of one run (working directory: the task folder)."""
    return (
        f"Pipeline(tasks={TASKS!r}, pipeline_parameters=PipelineParameters("
        f"launcher_type=ParallelismManager.NONE, custom_tasks_directory={TASKS_FILE!r}), "
        f"evaluation_tracker=EvaluationTracker(output_dir='..', save_details=True), "
        f"model_config=DummyModelConfig(model_name={model!r}, seed={seed:d}, "
        f"cache_dir={CACHE_DIR!r})); "
        f"pipeline.evaluate(); pipeline.show_results(); pipeline.save_and_push_results()"
    )


def run_one(model: str, seed: int) -> None:
    """One lighteval evaluation, in this process (cwd: the task folder)."""
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.models.dummy.dummy_model import DummyModelConfig
    from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters
    from lighteval.tasks.registry import Registry

    def custom_tasks_only(custom_tasks=None, load_multilingual=False):
        # The only workaround: skip the import of lighteval's built-in task modules (some of
        # them reach the network when imported); load the custom tasks the way lighteval does.
        return Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks))

    Registry.load_all_task_configs = staticmethod(custom_tasks_only)

    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    tracker = EvaluationTracker(output_dir="..", save_details=True)
    params = PipelineParameters(launcher_type=ParallelismManager.NONE,
                                custom_tasks_directory=TASKS_FILE)
    pipeline = Pipeline(tasks=TASKS, pipeline_parameters=params, evaluation_tracker=tracker,
                        model_config=DummyModelConfig(model_name=model, seed=seed,
                                                      cache_dir=CACHE_DIR))
    pipeline.evaluate()
    pipeline.show_results()
    pipeline.save_and_push_results()


def main() -> int:
    write_task()
    for sub in ("results", "details"):
        shutil.rmtree(ROOT / sub, ignore_errors=True)
    hf_home = tempfile.mkdtemp(prefix="lighteval-hf-home-")
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", HF_HOME=hf_home)
    calls = []
    try:
        for model, seed in MODELS.items():
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run", model,
                            str(seed)], cwd=TASK_DIR, env=env, check=True,
                           stdout=subprocess.DEVNULL)
            calls.append(python_call(model, seed))
    finally:
        shutil.rmtree(hf_home, ignore_errors=True)
        shutil.rmtree(CACHE_DIR, ignore_errors=True)
    manifest = {
        "made_by": "benchmarks/anchors/make_lighteval_logs.py",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "working_directory": "tests/data/lighteval/task",
        "environment": "HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "
                       "HF_HOME=<fresh temporary folder>",
        "commands": [f"python ../../../../benchmarks/anchors/make_lighteval_logs.py --run {m} {s}"
                     for m, s in MODELS.items()],
        "lighteval_python_api_calls": calls,
        "workaround": "lighteval.tasks.registry.Registry.load_all_task_configs replaced by one "
                      "that loads the custom tasks file only (built-in task modules reach the "
                      "network when imported)",
        "python": sys.version.split()[0],
        "lighteval_version": importlib.metadata.version("lighteval"),
        "torch_version": importlib.metadata.version("torch"),
        "datasets_version": importlib.metadata.version("datasets"),
        "transformers_version": importlib.metadata.version("transformers"),
        "pyarrow_version": importlib.metadata.version("pyarrow"),
        "xxhash_version": importlib.metadata.version("xxhash"),
    }
    (ROOT / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--run":
        run_one(sys.argv[2], int(sys.argv[3]))
        raise SystemExit(0)
    raise SystemExit(main())
