#!/usr/bin/env bash
# Build an isolated virtual env for rliable (PyPI `rliable`), the anchor of
# tests/test_rliable_methods.py (benchmarks/anchors/rliable_reference.json) and of
# benchmarks/bench_field_rliable.py.
#
# rliable's stratified bootstrap subclasses arch's IIDBootstrap, and arch does not import with
# pandas 3: pandas is pinned below 3.
#
# Usage:  bash benchmarks/anchors/setup_rliable.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/rliable (or $EVALUQ_RLIABLE_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_RLIABLE_VENV:-/work/peers/rliable}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet rliable "pandas<3"
"$venv/bin/python" -c "import rliable.library, rliable.metrics" >/dev/null
echo "$venv/bin/python"
