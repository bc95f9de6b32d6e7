#!/usr/bin/env bash
# Build an isolated virtual env for lm-evaluation-harness (PyPI `lm-eval`), the tool that made
# the sample logs under tests/data/lm_eval/ (benchmarks/anchors/make_lm_eval_samples.py).
#
# evaluq never imports lm-eval: evaluq.io.read_lm_eval_samples reads its files with the standard
# library and pandas. lm-eval needs torch; the CPU wheel is enough (the `dummy` model).
#
# Usage:  bash benchmarks/anchors/setup_lmeval.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/lmeval
#   PYTHON    default: $LMEVAL_PYTHON, else python3.11 / the pyenv 3.11.7, else python3
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-/work/peers/lmeval}"
py="${2:-${LMEVAL_PYTHON:-}}"
if [ -z "$py" ]; then
    for cand in python3.11 /root/.pyenv/versions/3.11.7/bin/python3 python3; do
        if "$cand" -c "import sys; assert sys.version_info >= (3, 10)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
if [ -z "$py" ]; then echo "setup_lmeval: no python found" >&2; exit 1; fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "torch==2.13.0"
"$venv/bin/python" -m pip install --quiet "lm-eval==0.4.13"
"$venv/bin/python" -c "import lm_eval" >/dev/null
echo "$venv/bin/python"
