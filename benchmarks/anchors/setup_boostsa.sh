#!/usr/bin/env bash
# Build an isolated virtual env for BooStSa (PyPI `boostsa`), the anchor of
# benchmarks/bench_bootstrap_test.py.
#
# boostsa 0.2.13 pins an old pip and scipy and depends on the deprecated `sklearn` PyPI
# package (which refuses to install), and it fails on pandas 3 (DataFrame.append) and numpy
# >= 2.3. So its own dependencies are installed by hand with working pins and boostsa itself
# with --no-deps.
#
# Usage:  bash benchmarks/anchors/setup_boostsa.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: benchmarks/anchors/.venv-boostsa (git-ignored)
#   PYTHON    default: $BOOSTSA_PYTHON, else python3.11 / the pyenv 3.11.7, else python3
# Prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/.venv-boostsa}"
py="${2:-${BOOSTSA_PYTHON:-}}"
if [ -z "$py" ]; then
    for cand in python3.11 /root/.pyenv/versions/3.11.7/bin/python3 python3.12 python3; do
        if "$cand" -c "import sys; assert sys.version_info >= (3, 11)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
if [ -z "$py" ]; then echo "setup_boostsa: no python found" >&2; exit 1; fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "pandas<3" "numpy<2.3" scipy scikit-learn tqdm
"$venv/bin/python" -m pip install --quiet --no-deps "boostsa==0.2.13"
"$venv/bin/python" -c "import boostsa; from boostsa import Bootstrap" >/dev/null
echo "$venv/bin/python"
