#!/usr/bin/env bash
# The README's screenshots (docs/img/) of report.html and fleet.html, from real runs, never drawn by hand:
#   report.png          the README demo's full task (offline: requires a human), runs/demo/full
#   report-approved.png the README demo's rule-fixable task (approved), runs/demo/rules
#   report-llm.png      the LLM demo (task demo:llm) on the mock endpoint, runs/demo-llm/run
#   fleet.png           a local fleet of the generated repositories bench/fleet.py uses, every kind once
# Needs headless Chromium (Debian package chromium; scripts/test.sh installs it as root).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || { echo "screenshots: install chromium (apt-get install chromium)" >&2; exit 2; }
export AGNO_TELEMETRY=false

bash scripts/demo.sh                       # bootstrap, then runs/demo/rules (exit 0) and runs/demo/full (3)

.venv/bin/task llm:up BACKEND=mock
trap '.venv/bin/task llm:down >/dev/null 2>&1 || true' EXIT
.venv/bin/task demo:llm                    # runs/demo-llm/run

fleet=runs/screenshots-fleet
rm -rf "$fleet"
.venv/bin/python - "$fleet" <<'PY'
import sys
from pathlib import Path

sys.path[:0] = ["tests/fleet", "fixtures"]
from fleet_repos import VARIANTS, make_fleet
from wheelhouse import build_wheelhouse

make_fleet(Path(sys.argv[1]), list(VARIANTS), Path(build_wheelhouse(Path("fixtures/.wheelhouse").resolve())))
PY
code=0
.venv/bin/agentic-codemod fleet --task fixtures/tasks/acme-sdk-2-rules.yml --repos "$fleet/fleet.yml" \
  --local --jobs 2 --fleet-dir "$fleet/out" --context . >/dev/null || code=$?
case "$code" in 0|1|3|75) ;; *) echo "screenshots: the fleet command failed (exit $code)" >&2; exit 1 ;; esac

.venv/bin/python - <<'PY'
import sys
from pathlib import Path

sys.path.insert(0, "tests/report")
from browser import Browser, find_chromium

out = Path("docs/img")
pages = {
    "report.png": Path("runs/demo/full/report.html"),
    "report-approved.png": Path("runs/demo/rules/report.html"),
    "report-llm.png": Path("runs/demo-llm/run/report.html"),
    "fleet.png": Path("runs/screenshots-fleet/out/fleet.html"),
}
with Browser(find_chromium() or "chromium") as browser:
    for name, page in pages.items():
        shot = browser.open(page).screenshot(name, height=1500, directory=out)
        print(f"screenshots: {shot} <- {page}")
PY
