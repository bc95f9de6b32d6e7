"""Make the lm-evaluation-harness sample logs under ``tests/data/lm_eval/`` with lm-eval itself.

Runs in lm-eval's own virtual env (``benchmarks/anchors/setup_lmeval.sh``), never in evaluq's,
fully offline: two local YAML tasks over a tiny local JSON-lines data set (24 questions, four
on each of six passages) and lm-eval's ``dummy`` model (random log-likelihoods, the answer
"lol" to every generation) under three names and three seeds, with ``--log_samples``.

* ``toy_mc``: multiple choice (three choices), metrics ``acc`` and ``acc_norm``;
* ``toy_gen``: generation, metric ``exact_match`` under two filters (``strict``: a regular
  expression, ``loose``: the raw answer), so the samples carry one record per (doc, filter).

It writes the task files and the data into ``tests/data/lm_eval/task/``, the logs into
``tests/data/lm_eval/logs/<model>/`` (``results_<date>.json`` plus one
``samples_<task>_<date>.jsonl`` per task) and the commands with the versions into
``tests/data/lm_eval/MANIFEST.json``. The test suite reads the committed files; it never runs
lm-eval.

Usage::

    bash benchmarks/anchors/setup_lmeval.sh            # once: /work/peers/lmeval
    /work/peers/lmeval/bin/python benchmarks/anchors/make_lm_eval_samples.py
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "tests" / "data" / "lm_eval"
TASK_DIR = ROOT / "task"
LOG_DIR = ROOT / "logs"
MODELS = {"dummy-a": 1, "dummy-b": 2, "dummy-c": 3}
"""Model name (``pretrained=`` of the model args, which lm-eval records) -> ``--seed``."""

TOY_MC = """\
task: toy_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: toy.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{passage}}\\nQuestion: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: "{{label}}"
metric_list:
  - metric: acc
  - metric: acc_norm
"""

TOY_GEN = """\
task: toy_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: toy.jsonl
test_split: test
output_type: generate_until
doc_to_text: "{{passage}}\\nQuestion: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
generation_kwargs:
  until: ["\\n"]
filter_list:
  - name: strict
    filter:
      - function: regex
        regex_pattern: "^(red|green|lol)$"
      - function: take_first
  - name: loose
    filter:
      - function: take_first
metric_list:
  - metric: exact_match
"""


def write_task() -> None:
    """The two task files and the data set (six passages, four questions each)."""
    TASK_DIR.mkdir(parents=True, exist_ok=True)
    (TASK_DIR / "toy_mc.yaml").write_text(TOY_MC)
    (TASK_DIR / "toy_gen.yaml").write_text(TOY_GEN)
    choices = ["red", "green", "lol"]
    rows = []
    for p in range(6):
        for k in range(4):
            label = (2 * p + k) % 3
            rows.append({"passage": f"Passage {p}.", "question": f"question {k} on passage {p}",
                         "choices": choices, "label": label, "answer": choices[label]})
    (TASK_DIR / "toy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def command(model: str, seed: int) -> list[str]:
    """The lm-eval command line for one model (run with the task folder as working dir)."""
    return ["lm_eval", "run", "--model", "dummy", "--model_args", f"pretrained={model}",
            "--tasks", "toy_mc", "toy_gen", "--include_path", ".", "--log_samples",
            "--output_path", "../logs", "--seed", str(seed), "--batch_size", "1"]


def main() -> int:
    write_task()
    shutil.rmtree(LOG_DIR, ignore_errors=True)
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    lm_eval = str(Path(sys.executable).with_name("lm_eval"))
    commands = []
    for model, seed in MODELS.items():
        cmd = command(model, seed)
        subprocess.run([lm_eval, *cmd[1:]], cwd=TASK_DIR, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        commands.append(" ".join(cmd))
    manifest = {
        "made_by": "benchmarks/anchors/make_lm_eval_samples.py",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "working_directory": "tests/data/lm_eval/task",
        "environment": "HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1",
        "commands": commands,
        "python": sys.version.split()[0],
        "lm_eval_version": importlib.metadata.version("lm_eval"),
        "torch_version": importlib.metadata.version("torch"),
        "datasets_version": importlib.metadata.version("datasets"),
    }
    (ROOT / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
