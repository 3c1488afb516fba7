#!/usr/bin/env bash
# Install everything, then lint, type-check and run the whole test suite. pytest's exit 5 (no tests ran)
# is a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export AGNO_TELEMETRY=false
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$code"
