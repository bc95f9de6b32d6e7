#!/usr/bin/env bash
# Build an isolated virtual env for ppi-python 0.2.3 (PyPI `ppi-python`, import `ppi_py`), the
# anchor of evaluq's judges (issue 32): benchmarks/anchors/ppi_reference.json and
# benchmarks/anchors/ppi_real.json, written by benchmarks/anchors/run_ppi.py.
#
# Usage:  bash benchmarks/anchors/setup_ppi.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/ppi (or $EVALUQ_PPI_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_PPI_VENV:-/work/peers/ppi}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "ppi-python==0.2.3"
"$venv/bin/python" -c "import ppi_py" >/dev/null
echo "$venv/bin/python"
