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
[ "$code" -eq 0 ] || exit "$code"

# The LLM path as a user runs it: the mock endpoint via the task runner, then a run against it.
.venv/bin/task llm:up BACKEND=mock
trap '.venv/bin/task llm:down >/dev/null 2>&1 || true' EXIT
.venv/bin/task llm:status
.venv/bin/task demo:llm
