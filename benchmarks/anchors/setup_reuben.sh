#!/usr/bin/env bash
# Build an isolated virtual env for reuben (the multilingual paper's CLI), the anchor of
# benchmarks/bench_leaderboard.py. reuben is not on the package index: pass a local checkout.
# Its code is never copied into this repository: the venv points at the checkout (.pth file).
#
# Usage:  bash benchmarks/anchors/setup_reuben.sh REUBEN_CHECKOUT [VENV_DIR] [PYTHON]
#   VENV_DIR  default: benchmarks/anchors/.venv-reuben (git-ignored)
#   PYTHON    default: $REUBEN_PYTHON, else python3.12 / the pyenv 3.12.1, else python3
#             (reuben requires Python >= 3.12)
# Prints the venv's python path on its last line.
set -euo pipefail
if [ $# -lt 1 ]; then echo "usage: $0 REUBEN_CHECKOUT [VENV_DIR] [PYTHON]" >&2; exit 2; fi
src="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${2:-$here/.venv-reuben}"
py="${3:-${REUBEN_PYTHON:-}}"
if [ -z "$py" ]; then
    for cand in python3.12 /root/.pyenv/versions/3.12.1/bin/python3 python3; do
        if "$cand" -c "import sys; assert sys.version_info >= (3, 12)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# reuben's own dependencies (from its pyproject.toml); reuben itself is put on the path from
# the checkout (its build backend reads the version from git, which a plain copy may lack)
"$venv/bin/python" -m pip install --quiet "click>=8.1" "rich>=13.7" "pandas>=2.1" \
    "numpy>=1.26" "scipy>=1.11" "pydantic>=2.7" "pyyaml>=6.0"
purelib="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$src" > "$purelib/reuben-checkout.pth"
"$venv/bin/python" -c "import reuben.analysis_pipeline" >/dev/null
echo "$venv/bin/python"
