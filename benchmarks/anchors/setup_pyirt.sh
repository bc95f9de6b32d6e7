#!/usr/bin/env bash
# Build an isolated virtual env for py-irt, the peer behind benchmarks/anchors/pyirt_reference.json
# (run_pyirt.py). evaluq never imports py-irt: the tests read the JSON this env produced.
#
# Usage:  bash benchmarks/anchors/setup_pyirt.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: benchmarks/anchors/.venv-pyirt (git-ignored)
#   PYTHON    default: python3.11 / the pyenv 3.11.7, else python3 (py-irt 0.7 requires
#             Python < 3.12; on 3.12 pip falls back to the old py-irt 0.1.1)
# py-irt pulls torch and pyro-ppl from PyPI (torch's CUDA wheels too: a few GB; everything
# runs on the CPU). Prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/.venv-pyirt}"
py="${2:-}"
if [ -z "$py" ]; then
    for cand in python3.11 /root/.pyenv/versions/3.11.7/bin/python3 python3; do
        if "$cand" -c "import sys; assert (3, 9) <= sys.version_info < (3, 12)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "py-irt==0.7.1"
"$venv/bin/python" -c "import py_irt, torch, pyro" >/dev/null
echo "$venv/bin/python"
