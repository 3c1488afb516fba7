#!/usr/bin/env bash
# Set up everything on a fresh machine with python3 >= 3.11 and git: the venv, the tool with its extras,
# the fixture wheelhouse (so fixture runs need no registry) and the installed APM context.
set -euo pipefail
cd "$(dirname "$0")/.."
export AGNO_TELEMETRY=false PIP_DISABLE_PIP_VERSION_CHECK=1

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "python3 >= 3.11 is required")'
quietly() {  # run a step; show its output only when it fails
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "bootstrap: failed: $*" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
echo "bootstrap: installing into .venv (python, tool, extras, fixture wheelhouse, APM context)"
# The sandbox around the repository's code (bubblewrap). Installed where this user can; elsewhere a run
# pauses with exit 75 and names the fix (or runs with the explicit --isolation process).
if ! command -v bwrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    quietly apt-get update -qq || true
    quietly env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap \
      || echo "bootstrap: bubblewrap not installed: runs will pause (75) until it is" >&2
  else
    echo "bootstrap: bubblewrap (bwrap) is missing: install it (e.g. apt-get install bubblewrap)" >&2
  fi
fi
# Node and npm: the npm adapter runs them (its tests and the npm fixture use a local registry).
if ! command -v npm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    quietly apt-get update -qq || true
    quietly env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm \
      || echo "bootstrap: nodejs/npm not installed: the npm adapter's tests will skip" >&2
  else
    echo "bootstrap: npm is missing: install nodejs and npm (the npm adapter's tests skip without)" >&2
  fi
fi
[ -x .venv/bin/python ] || quietly python3 -m venv .venv
quietly .venv/bin/python -m pip install --upgrade "pip>=24"
quietly .venv/bin/python -m pip install -e '.[dev,apm,semantic,uv,lock]'
quietly .venv/bin/python fixtures/wheelhouse.py
# The pipeline's own context (apm.yml → apm_modules/), verified against apm.lock.yaml.
quietly .venv/bin/apm install --frozen
