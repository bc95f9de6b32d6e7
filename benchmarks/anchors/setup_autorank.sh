#!/usr/bin/env bash
# Build an isolated virtual env for autorank, the peer behind benchmarks/anchors/autorank.json
# (run_autorank.py). evaluq never imports autorank: the tests read the JSON this env produced.
#
# Usage:  bash benchmarks/anchors/setup_autorank.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: benchmarks/anchors/.venv-autorank (git-ignored)
#   PYTHON    default: python3.12 / the pyenv 3.12.1, else python3
# Prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/.venv-autorank}"
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
"$venv/bin/python" -m pip install --quiet autorank
"$venv/bin/python" -c "import autorank" >/dev/null
echo "$venv/bin/python"
