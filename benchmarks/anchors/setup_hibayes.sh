#!/usr/bin/env bash
# HiBayES (UK AI Security Institute; NumPyro, CPU) in its own venv, from its GitHub source.
# The source is the `fetch` mirror of UKGovernmentBEIS/hibayes (git directory given as $1,
# default /work/.mirror/UKGovernmentBEIS+hibayes/repo); only PyPI is used for the dependencies.
# evaluq never imports HiBayES: benchmarks/anchors/run_hibayes.py writes hibayes_judge.json.
set -euo pipefail
GIT_DIR=${1:-/work/.mirror/UKGovernmentBEIS+hibayes/repo}
VENV=${VENV:-/work/peers/hibayes}
SRC=${SRC:-/work/peers/hibayes-src}
PY=${PY:-/root/.pyenv/versions/3.12.1/bin/python}
rm -rf "$SRC" && mkdir -p "$SRC"
# the mirror lacks its largest files (docs figures): take only what the package needs
git --git-dir="$GIT_DIR" archive HEAD pyproject.toml README.md LICENSE src examples/llm-as-a-judge-usecases | tar -x -C "$SRC"
git --git-dir="$GIT_DIR" rev-parse HEAD > "$SRC/COMMIT"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet "$SRC"
"$VENV/bin/python" -c "import hibayes, numpyro, jax; print('hibayes ok; numpyro', numpyro.__version__, 'jax', jax.__version__)"
