#!/usr/bin/env bash
# bayes_evals in its own virtual env (it is not on the package index): pass a checkout of
# github.com/sambowyer/bayes_evals (commit b9711844e00e9664258de321966ecd258a7273d6 was used for bayes_evals_paired.json).
#   bash benchmarks/anchors/setup_bayes_evals.sh /path/to/bayes_evals [VENV]
set -euo pipefail
src="$1"
venv="${2:-/work/peers/bayes_evals}"
python3.12 -m venv "$venv" 2>/dev/null || /root/.pyenv/versions/3.12.1/bin/python -m venv "$venv"
"$venv/bin/pip" install -q "$src"
echo "installed: $("$venv/bin/python" -c 'from importlib import metadata; print(metadata.version("bayes_evals"))')"
