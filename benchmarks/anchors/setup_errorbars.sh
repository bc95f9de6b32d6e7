#!/usr/bin/env bash
# errorbars (PyPI) in its own virtual env, for run_errorbars.py (errorbars_clusters.json).
#   bash benchmarks/anchors/setup_errorbars.sh [VENV]
set -euo pipefail
venv="${1:-/work/peers/errorbars}"
python3.12 -m venv "$venv" 2>/dev/null || /root/.pyenv/versions/3.12.1/bin/python -m venv "$venv"
"$venv/bin/pip" install -q errorbars
echo "installed: $("$venv/bin/python" -c 'from importlib import metadata; print(metadata.version("errorbars"))')"
