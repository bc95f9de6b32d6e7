#!/usr/bin/env bash
# Build an isolated virtual env for baycomp, the peer behind benchmarks/anchors/baycomp.json
# (run_baycomp.py). evaluq never imports baycomp: the tests read the JSON this env produced.
#
# Usage:  bash benchmarks/anchors/setup_baycomp.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: benchmarks/anchors/.venv-baycomp (git-ignored)
#   PYTHON    default: python3.12 / the pyenv 3.12.1, else python3
#   WITH_STAN=1 also installs PyStan 3 (for run_baycomp_hierarchical.py: baycomp's
#             HierarchicalTest; Stan compiles the model on first use, a few minutes)
# Prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/.venv-baycomp}"
py="${2:-}"
if [ -z "$py" ]; then
    for cand in python3.12 /root/.pyenv/versions/3.12.1/bin/python3 python3; do
        if "$cand" -c "import sys; assert sys.version_info >= (3, 10)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet baycomp
if [ "${WITH_STAN:-0}" = "1" ]; then
    "$venv/bin/python" -m pip install --quiet pystan
fi
"$venv/bin/python" -c "import baycomp" >/dev/null
echo "$venv/bin/python"
