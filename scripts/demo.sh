#!/usr/bin/env bash
# The main job on the bundled fixture: install, then run the rule-fixable task (expect exit 0) and the full
# task (offline mode cannot finish it: expect an honest non-zero exit). Artifacts land in runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export AGNO_TELEMETRY=false
rm -rf runs/demo && mkdir -p runs/demo
.venv/bin/python fixtures/materialize.py fixtures/acme-app runs/demo/acme-app >/dev/null

run() {  # run TASK RUN_DIR — prints the summary, returns the exit code
  set +e
  .venv/bin/agentic-codemod run --repo runs/demo/acme-app --task "$1" --offline --run-dir "$2" \
    --find-links fixtures/.wheelhouse --no-index
  local code=$?
  set -e
  return $code
}

echo "== rule-fixable task (acme-sdk 2.0.0) =="
rules=0; run fixtures/tasks/acme-sdk-2-rules.yml runs/demo/rules || rules=$?
echo "== full task (acme-sdk 2.1.0), offline =="
full=0; run fixtures/tasks/acme-sdk-2.yml runs/demo/full || full=$?

echo "rule-fixable task: exit $rules (expected 0); full task offline: exit $full (expected 1 or 3)"
[ "$rules" -eq 0 ] && { [ "$full" -eq 1 ] || [ "$full" -eq 3 ]; }
# The npm fixture (fixtures/npm-app, its SDK from a local registry): a plain bump 0, a breaking one 3, the
# migration task offline 1 or 3. LLM mode on both fixtures: `task llm:up BACKEND=mock`, then
# `task demo:llm` and `task demo:llm:npm` (README "LLM mode").
bash fixtures/npm-registry/demo.sh
