"""The merge request says when the check of where the tests load the SDK from could not answer: an
approved change whose tests may not have run the installed target reads so (helper-37: a green run whose
answer was "unknown" said nothing of it in merge_request.md or report.html)."""

from __future__ import annotations

from pathlib import Path

import pytest
from run_state import make_state

from agentic_codemod.models import VerificationResult
from agentic_codemod.workflow.brains import templated_draft

CAUTION = "from could not be checked (run.json `sdk_resolution`: unknown)"


@pytest.mark.parametrize(("answer", "said"), [("unknown", True), ("installed", False), (None, False)])
def test_an_unknown_answer_of_the_last_run_is_said_in_the_merge_request(
    tmp_path: Path, answer: str | None, said: bool
) -> None:
    state = make_state(tmp_path)
    state.verifications.append(
        VerificationResult(
            phase="iteration-1",
            command=["pytest"],
            exit_code=1,
            duration_s=1.0,
            passed=True,
            sdk_resolution=answer,  # type: ignore[arg-type]
        )
    )
    text = templated_draft(state).description
    assert (CAUTION in text) is said, text
    if said:
        assert "does not show that they ran the installed 2.1.0" in text
