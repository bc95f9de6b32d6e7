#!/usr/bin/env bash
# Build an isolated virtual env for evalica 0.4.2, the anchor of evaluq's pairwise-vote ratings
# (benchmarks/anchors/evalica_reference.json, made by run_evalica.py) and the baseline of
# benchmarks/bench_ratings.py (run_evalica.py time).
#
# Usage:  bash benchmarks/anchors/setup_evalica.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/evalica (or $EVALUQ_EVALICA_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_EVALICA_VENV:-/work/peers/evalica}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "evalica==0.4.2" pandas scipy
"$venv/bin/python" -c "import evalica" >/dev/null
echo "$venv/bin/python"
