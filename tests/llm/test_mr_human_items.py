"""The MR's "Needs a human" list says an item was handed to the coder only where the outcome counts it as
worked off: a detect-only rule's match in a file the candidate changes. Every other item (a lockfile whose
versions no test ran, a file a rule could not edit ...) stays a human's, whatever the candidate touched."""

from __future__ import annotations

from pathlib import Path

from run_state import make_state

from agentic_codemod.models import Candidate, ChangePlan, HumanItem
from agentic_codemod.workflow.brains import templated_draft


def test_only_a_rule_match_in_a_changed_file_is_said_to_be_handed_to_the_coder(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    state.addresses_human_items = True
    state.plan = ChangePlan(
        task_id="t",
        sdk="acme-sdk",
        target_version="2.0.0",
        requires_human=[
            HumanItem(reason="dynamic attribute access", file="src/reports.py", line=2, rule_id="ACME900"),
            HumanItem(reason="uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0", file="uv.lock"),
        ],
    )
    state.candidate = Candidate(base_commit="0" * 40, sha256="0" * 64, files=["src/reports.py", "uv.lock"])
    lines = templated_draft(state).description.splitlines()
    rule = next(line for line in lines if "dynamic attribute access" in line)
    lock = next(line for line in lines if "uv.lock locks gear" in line)
    assert "handed to the coder" in rule
    assert "handed to the coder" not in lock
