#!/usr/bin/env bash
# Build an isolated virtual env for arena-rank 0.1.1 (LMArena's Bradley-Terry ratings), the
# anchor of evaluq's ratings with ties="half" and sandwich intervals
# (benchmarks/anchors/arena_rank_reference.json, made by run_arena_rank.py).
#
# Usage:  bash benchmarks/anchors/setup_arena_rank.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/arena-rank (or $EVALUQ_ARENA_RANK_VENV)
#   PYTHON    default: python3.12
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-${EVALUQ_ARENA_RANK_VENV:-/work/peers/arena-rank}}"
py="${2:-python3.12}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "arena-rank==0.1.1" pandas
"$venv/bin/python" -c "import arena_rank" >/dev/null
echo "$venv/bin/python"
