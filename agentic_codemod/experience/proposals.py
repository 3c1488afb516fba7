"""A run proposes lessons only from its own real failures, as an artifact; it never publishes them.

Sources, each backed by the run's artifacts:
  - a detect-only rule whose matches are still in the candidate while verification is red with
    failures the change introduced  -> a lesson about that construct (the rule id)
  - a gate that failed on the frozen candidate                          -> `gate:<name>`
  - an error finding of a reviewer that no gate or verification already reports -> `review`
Anything else, a clean success included, is an explicit NO_ENTRY with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentic_codemod.experience.records import PROPOSED, Cue, Evidence, Lesson, NoEntry, write_lessons
from agentic_codemod.experience.validation import validate
from agentic_codemod.status import Status

if TYPE_CHECKING:
    from agentic_codemod.workflow.codemod import Rule
    from agentic_codemod.workflow.state import RunState

NOTHING_TO_LEARN = {
    Status.SUCCEEDED: "a clean success: nothing failed",
    Status.NOTHING_TO_DO: "no change was tried",
    Status.PAUSED: "an environment fault is not a lesson about code",
    Status.CANCELLED: "the run was cancelled",
    Status.BAD_INPUT: "bad input is the caller's error, not a lesson",
    Status.FAILED: "a crash is a defect of the tool, recorded in run.json",
}


def propose(state: RunState) -> list[Lesson] | NoEntry:
    status = state.manifest.status
    if status in NOTHING_TO_LEARN:
        return NoEntry(reason=f"status {status}: {NOTHING_TO_LEARN[status]}")
    lessons = [*_construct_lessons(state), *_gate_lessons(state), *_review_lessons(state)]
    detail = "no detect-only match left red, no failed gate, no reviewer finding of its own"
    return lessons or NoEntry(reason=f"status {status}: {detail}")


def write_proposals(state: RunState) -> Path | None:
    """Write lessons.proposed.jsonl in the run dir (after run.json, which the evidence points at).

    A proposal the validator rejects is replaced by a NO_ENTRY naming the problems. Never raises: the
    run's other artifacts matter more than its lessons."""
    target = state.paths.artifact(PROPOSED)
    try:
        result: list[Lesson] | NoEntry = propose(state)
    except Exception as exc:
        result = NoEntry(reason=f"could not propose lessons: {type(exc).__name__}: {exc}")
    try:
        write_lessons(target, result)
        problems = validate(target) if isinstance(result, list) else []
        if problems:
            write_lessons(
                target, NoEntry(reason="proposal rejected by the validator: " + "; ".join(problems))
            )
        return target
    except Exception:
        return None


def _construct_lessons(state: RunState) -> list[Lesson]:
    from agentic_codemod.adapters import get_adapter
    from agentic_codemod.workflow import codemod

    last, target = state.last_verification, state.task.sdk.to
    introduced = state.manifest.classification == "introduced"
    if last is None or last.passed or not introduced or not state.paths.worktree.is_dir():
        return []
    versioning = get_adapter(state.task.sdk.ecosystem).versioning
    detect_only = [r for r in state.rules if not r.fixable and r.applies_to(target, versioning)]
    matches = codemod.find_matches(detect_only, state.paths.worktree) if detect_only else []
    error = next((ln[1:].strip() for ln in last.output_tail.splitlines() if ln.startswith("E ")), "")
    out = []
    for rule in detect_only:
        where = sorted({f"{m.file}:{m.line}" for m in matches if m.rule_id == rule.id})
        if where:
            linked = any(w.rsplit(":", 1)[0] in last.output_tail for w in where)
            out.append(_construct_lesson(state, rule, where, error, linked))
    return out


def _construct_lesson(state: RunState, rule: Rule, where: list[str], error: str, linked: bool) -> Lesson:
    m, sdk, last = state.manifest, state.task.sdk, state.verifications[-1]
    items = state.plan.requires_human if state.plan else []
    pointers = [f"plan.json#/requires_human/{i}" for i, h in enumerate(items) if h.rule_id == rule.id]
    counts = last.tests
    tally = f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no counts"
    broke = f"`{error}`" if error else "red tests"
    not_before = f"Targets below {rule.breaks_in}, where the usage still works; " if rule.breaks_in else ""
    return Lesson(
        id=f"{rule.id}@{m.run_id}",
        cue=Cue(
            ecosystem=sdk.ecosystem,
            sdk=sdk.name,
            construct_=rule.id,
            target=f">={rule.breaks_in}" if rule.breaks_in else "",
        ),
        lesson=f"{rule.id} flags a real break on {sdk.name} {sdk.to}, not a warning: the rules left "
        f"{', '.join(where)} and verification failed with {broke}; fix what it flags ({rule.message}) "
        "before verifying.",
        evidence=Evidence(
            run_id=m.run_id,
            paths=[f"run.json#/verifications/{len(state.verifications) - 1}", *pointers, "changes.patch"],
            results=[f"verification {last.phase}: exit {last.exit_code}, {tally}", f"gate: {m.reason}"],
        ),
        confidence="medium" if linked else "low",
        confidence_reason="one run; the failing output names the file the rule flagged"
        if linked
        else "one run; the failing output does not name the flagged file, so the link is circumstantial",
        counter_example=not_before + "a flagged usage that never resolves to a changed API.",
        source_run=m.run_id,
    )


def _gate_lessons(state: RunState) -> list[Lesson]:
    out = []
    for i, gate in enumerate(state.manifest.gates):
        if gate.get("passed", True):
            continue
        said = "; ".join(str(f.get("message", "")) for f in gate.get("findings", [])) or "no findings"
        text = (
            f"The {gate.get('name')} gate rejected a candidate ({said}): plan changes that stay clear of it."
        )
        why = "a deterministic gate finding on the frozen candidate"
        out.append(_finding_lesson(state, f"gate:{gate.get('name')}", "", text, f"run.json#/gates/{i}", why))
    return out


def _review_lessons(state: RunState) -> list[Lesson]:
    verdict = state.verdict
    if verdict is None or verdict.verdict == "approve":
        return []
    # The tool's own findings (gates, the mechanical review) carry codes and are reported elsewhere; a
    # lesson comes only from what a reviewer found itself (its findings carry no code).
    why = "one reviewer's judgement of one candidate, not a test result"
    return [
        _finding_lesson(
            state,
            "review",
            f"-{i + 1}",
            f"The reviewer said {verdict.verdict}: {f.message}" + (f" ({f.path})" if f.path else "") + ".",
            f"review.json#/findings/{i}",
            why,
        )
        for i, f in enumerate(verdict.findings)
        if f.severity == "error" and not f.code
    ]


def _finding_lesson(state: RunState, construct: str, suffix: str, text: str, path: str, why: str) -> Lesson:
    m, sdk = state.manifest, state.task.sdk
    return Lesson(
        id=f"{construct}{suffix}@{m.run_id}",
        cue=Cue(ecosystem=sdk.ecosystem, sdk=sdk.name, construct_=construct),
        lesson=text,
        evidence=Evidence(
            run_id=m.run_id, paths=[path, "changes.patch"], results=[f"{m.status}: {m.reason}"]
        ),
        confidence="low" if construct == "review" else "medium",
        confidence_reason=why,
        counter_example="A task with other allowed paths, criteria or tests: re-check against its own plan.",
        source_run=m.run_id,
    )
