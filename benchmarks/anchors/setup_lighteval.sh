#!/usr/bin/env bash
# Build an isolated virtual env for Hugging Face's lighteval (PyPI `lighteval`), the tool that
# made the sample logs under tests/data/lighteval/ (benchmarks/anchors/make_lighteval_logs.py).
#
# evaluq never imports lighteval: the reader for its files uses the standard library and
# pandas. lighteval needs torch; the CPU wheel is enough (its `dummy` model).
# xxhash is held below 4: lighteval 0.13.0's details logger hashes str objects
# (xxhash.xxh64(doc.query)), which xxhash 4 refuses ("Strings must be encoded before hashing").
#
# Usage:  bash benchmarks/anchors/setup_lighteval.sh [VENV_DIR] [PYTHON]
#   VENV_DIR  default: /work/peers/lighteval
#   PYTHON    default: $LIGHTEVAL_PYTHON, else python3.11 / the pyenv 3.11.7, else python3
# Prints the venv's python path on its last line.
set -euo pipefail
venv="${1:-/work/peers/lighteval}"
py="${2:-${LIGHTEVAL_PYTHON:-}}"
if [ -z "$py" ]; then
    for cand in python3.11 /root/.pyenv/versions/3.11.7/bin/python3 python3; do
        if "$cand" -c "import sys; assert sys.version_info >= (3, 10)" >/dev/null 2>&1; then
            py="$cand"; break
        fi
    done
fi
if [ -z "$py" ]; then echo "setup_lighteval: no python found" >&2; exit 1; fi
mkdir -p "$(dirname "$venv")"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "torch==2.13.0"
"$venv/bin/python" -m pip install --quiet "lighteval==0.13.0" "xxhash==3.8.2"
"$venv/bin/python" -c "import lighteval" >/dev/null
echo "$venv/bin/python"
