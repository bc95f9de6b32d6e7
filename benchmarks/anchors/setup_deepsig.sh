#!/usr/bin/env bash
# Build an isolated virtual env for deep-significance (PyPI `deepsig`), the anchor of
# tests/test_almost_stochastic_order.py (benchmarks/anchors/deepsig_reference.json) and of
# benchmarks/bench_field_rliable.py.
#
# Usage:  bash benchmarks/anchors/setup_deepsig.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/deepsig (or $EVALUQ_DEEPSIG_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_DEEPSIG_VENV:-/work/peers/deepsig}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet deepsig
"$venv/bin/python" -c "import deepsig" >/dev/null
echo "$venv/bin/python"
