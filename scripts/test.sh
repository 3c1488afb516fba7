#!/usr/bin/env bash
# Install everything, then lint, type-check and run the whole test suite. pytest's exit 5 (no tests ran)
# is a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export AGNO_TELEMETRY=false

# gitlab-ci-local (npm) runs the CI file's jobs in its shell executor, which needs rsync. Both are
# optional: the tests that use them skip, with the reason, where they cannot be installed.
if [ "${CI:-}" = "true" ] || [ -n "${CODEMOD_CI_TOOLS:-}" ]; then
  if ! command -v rsync >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq rsync) >/dev/null 2>&1 || echo "test: rsync not installed" >&2
  fi
  if command -v npm >/dev/null 2>&1 && [ ! -x .cache/npm/node_modules/.bin/gitlab-ci-local ]; then
    npm install --silent --no-audit --no-fund --prefix .cache/npm gitlab-ci-local@4.72.0 >/dev/null 2>&1 \
      || echo "test: gitlab-ci-local not installed" >&2
  fi
  # The Cline CLI (alternative coder, tests/coders/): its own prefix, found there by coders/cline.py.
  if command -v npm >/dev/null 2>&1 && [ ! -x .cache/cline/node_modules/.bin/cline ]; then
    npm install --silent --no-audit --no-fund --prefix .cache/cline cline@3.0.65 >/dev/null 2>&1 \
      || echo "test: cline not installed" >&2
  fi
fi
# Headless Chromium (Debian package chromium) for the report pages' browser tests (tests/report), installed
# the way bootstrap installs bubblewrap: with apt as root; elsewhere those tests skip and say why (on CI,
# CI=true, they fail instead). Their screenshots land in test-artifacts/screenshots/.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    || echo "test: chromium not installed: the browser tests of tests/report will skip" >&2
fi
[ -d .cache/npm/node_modules/.bin ] && export PATH="$PWD/.cache/npm/node_modules/.bin:$PATH"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The suite on every core, at most 4 (pytest-xdist): most tests wait on git, installs and test processes,
# so two workers on 2 cores take about 17 minutes where one took 30. CODEMOD_TEST_WORKERS sets the number;
# 0 runs the tests one after the other in this process (as on one core).
cores=$(.venv/bin/python -c 'import os; print(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)')
workers="${CODEMOD_TEST_WORKERS:-$(( cores > 4 ? 4 : (cores > 1 ? cores : 0) ))}"
set +e
.venv/bin/python -m pytest -n "$workers" "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
[ "$code" -eq 0 ] || exit "$code"

# Benchmarks' --quick modes: smoke tests that they still run (they print figures; nothing is asserted).
for bench in rules_scale attacks redaction corpus; do
  .venv/bin/python "bench/$bench.py" --quick
done

# The benchmarks as smoke runs (no timing asserted): they must still run end to end.
.venv/bin/python bench/overhead.py --quick
.venv/bin/python bench/fleet.py --quick

# The LLM path as a user runs it: the mock endpoint via the task runner, then a run against it.
.venv/bin/task llm:up BACKEND=mock
trap '.venv/bin/task llm:down >/dev/null 2>&1 || true' EXIT
.venv/bin/task llm:status
.venv/bin/task demo:llm
.venv/bin/task demo:llm:npm   # the npm fixture's migration task, same endpoint
