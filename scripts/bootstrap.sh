#!/usr/bin/env bash
# Set up everything on a fresh machine with python3 >= 3.11 and git: the venv, the tool with its extras,
# the fixture wheelhouse (so fixture runs need no registry) and the installed APM context.
set -euo pipefail
cd "$(dirname "$0")/.."
export AGNO_TELEMETRY=false PIP_DISABLE_PIP_VERSION_CHECK=1

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "python3 >= 3.11 is required")'
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade "pip>=24"
.venv/bin/python -m pip install --quiet -e '.[dev,apm,semantic]'
.venv/bin/python fixtures/wheelhouse.py >/dev/null
# The pipeline's own context (apm.yml → apm_modules/), verified against apm.lock.yaml.
.venv/bin/apm install --frozen >/dev/null
