#!/usr/bin/env bash
# Build an isolated virtual env for cje-eval 0.9.3 (PyPI `cje-eval`, import `cje`), the
# anchor of evaluq's judge transport check (issue 32): benchmarks/anchors/cje_reference.json,
# written by benchmarks/anchors/run_cje.py.
#
# Usage:  bash benchmarks/anchors/setup_cje.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/cje (or $EVALUQ_CJE_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_CJE_VENV:-/work/peers/cje}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "cje-eval==0.9.3"
"$venv/bin/python" -c "import cje" >/dev/null
echo "$venv/bin/python"
