"""LlmBrain: agents compiled from the APM context fill the model's roles (ARCHITECTURE.md §3, §4, §6).

The Python code knows steps, not agents: `state.context.agent_for_step(step)` gives the name,
instructions, tools allowlist, output and model role of whatever agent file serves the step.

Fail-closed rules kept here:
- a structured reply that does not validate is a failed step (CandidateRejected), never a string;
- the coder must end with a successful edit; a tool call that arrived as text, or no tool call at all,
  fails the run naming the likely cause (the endpoint's tool parser);
- an endpoint fault is classified by meaning (errors.py): transient (down, timeout, 429, 503) pauses
  the run with exit 75, permanent (auth, unknown model, unsupported request, context) ends it with 1 or 2;
- the reviewer sees only the acceptance criteria, the frozen patch and the verification evidence;
  gate findings of severity error force `reject`, and an unusable reply is `unsure`, never `approve`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agentic_codemod.errors import CandidateRejected, EnvironmentUnavailable, ServiceTimeout
from agentic_codemod.llm.agent_replies import silent_failure
from agentic_codemod.llm.agent_runner import AgentRunner
from agentic_codemod.llm.agent_tools import AgentTools, cut, describe, evidence
from agentic_codemod.llm.factory import ModelsConfig, RoleConfig
from agentic_codemod.models import (
    ChangePlan,
    Finding,
    MergeRequestDraft,
    RepoProfile,
    ReviewVerdict,
    VerificationResult,
)
from agentic_codemod.mr_text import model_markdown
from agentic_codemod.workflow.brains import bound_draft, mechanical_review, templated_draft
from agentic_codemod.workflow.state import RunState

S = TypeVar("S", bound=BaseModel)


class LlmBrain:
    name = "agents"
    mode = "llm"
    addresses_human_items = True
    reads_baseline = True  # the coder's first try starts from the baseline's failures

    def __init__(self, models: ModelsConfig | None = None) -> None:
        self._runner = AgentRunner(models)

    # -- the Brain protocol ------------------------------------------------------------------------

    def recon(self, state: RunState) -> list[str]:
        facts = state.profile.model_dump_json(indent=1, exclude={"notes"}) if state.profile else "{}"
        prompt = _sections(
            ("Task", _task(state)),
            ("Facts the pipeline already found", f"```json\n{facts}\n```"),
            (
                "Ask",
                "Survey the repository with your tools and answer with a RepoProfile. Put in `notes` "
                "what a migration must watch out for, each with file and line.",
            ),
        )
        profile, _, spec = self._run(state, "recon", prompt, RepoProfile)
        notes = [f"{spec.name}: {note}" for note in profile.notes]
        mine = {d.file for d in state.profile.sdk_declarations} if state.profile else set()
        theirs = {d.file for d in profile.sdk_declarations}
        if theirs != mine:
            notes.append(
                f"{spec.name} reports declarations in {sorted(theirs)}; the adapter found {sorted(mine)}"
            )
        return notes

    def plan(self, state: RunState, plan: ChangePlan) -> ChangePlan:
        prompt = _sections(
            ("Task", _task(state)),
            ("Repository profile", state.profile.model_dump_json(indent=1) if state.profile else "none"),
            ("Migration notes", _migration_notes(state)),
            ("Draft plan from the rules", f"```json\n{plan.model_dump_json(indent=1)}\n```"),
            (
                "Ask",
                "Refine the draft: ordered steps, and every usage the rules cannot fix under "
                "requires_human with file and line. Answer with the whole ChangePlan.",
            ),
        )
        refined, _, spec = self._run(state, "plan", prompt, ChangePlan)
        if refined.nothing_to_do:
            state.notes.append(f"{spec.name} said nothing to do; the rules found work, so the plan stands")
        if set(refined.allowed_paths) - set(plan.allowed_paths):
            state.notes.append(f"{spec.name} asked for paths outside the task's allowed_paths; ignored")
        return plan.model_copy(
            update={
                "steps": refined.steps or plan.steps,
                "acceptance_criteria": _union(plan.acceptance_criteria, refined.acceptance_criteria),
                "requires_human": _union(plan.requires_human, refined.requires_human),
            }
        )

    def implement(self, state: RunState, iteration: int, failure: VerificationResult | None) -> bool:
        plan = state.plan
        red = failure if failure is not None and failure.phase != "baseline" and not failure.passed else None
        if red is None and not (plan and plan.requires_human):
            state.trace.record(
                "pipeline",
                "implement",
                {"iteration": iteration},
                "nothing for the coder yet: verify the rules' result first",
            )
            return True
        prompt = _sections(
            ("Task", _task(state)),
            (
                "Plan",
                plan.model_dump_json(
                    indent=1, include={"steps", "requires_human", "allowed_paths", "lessons"}
                )
                if plan
                else "none",
            ),
            ("Migration notes", _migration_notes(state)),
            ("Failing verification", evidence(red) if red else "not run yet after the rules"),
            (
                "Ask",
                "Make the change with your edit tools, run run_verification, check with show_diff, then "
                "stop with a short summary. Stay inside the allowed paths; never edit tests.",
            ),
        )
        content, tools, spec = self._run(state, "implement", prompt, None)
        text = content if isinstance(content, str) else str(content or "")
        state.trace.record(
            spec.name,
            "implement",
            {"iteration": iteration},
            f"{tools.edits} edit(s), {len(tools.verifications)} verification(s): {text[:300]}",
        )
        if tools.edits == 0:
            raise silent_failure(spec.name, tools.calls, text)
        return True

    def review(self, state: RunState, gate_findings: list[Finding]) -> ReviewVerdict:
        spec = state.context.agent_for_step("review")
        gates = mechanical_review(state, gate_findings, reviewer=spec.name)
        patch = state.paths.artifact("changes.patch").read_text(encoding="utf-8", errors="replace")
        last = state.last_verification
        criteria = state.plan.acceptance_criteria if state.plan else state.task.acceptance_criteria
        prompt = _sections(
            ("Acceptance criteria", "\n".join(f"- {c}" for c in criteria)),
            (
                "Candidate patch",
                f"sha256 {state.candidate.sha256 if state.candidate else 'none'}\n```diff\n{patch}\n```",
            ),
            ("Verification evidence", evidence(last) if last else "no verification ran"),
            ("Ask", "Judge the patch against every criterion. Answer with a ReviewVerdict."),
        )
        limit = self._role(state, spec.model_role).max_input_chars
        try:
            if len(prompt) > limit:  # a patch the reviewer cannot see whole is not reviewed
                raise CandidateRejected(
                    f"the review input ({len(prompt)} chars) exceeds max_input_chars {limit}"
                )
            verdict, _, _ = self._run(state, "review", prompt, ReviewVerdict)
        except ServiceTimeout as exc:  # a timeout is not an approval: the verdict is unsure
            verdict = ReviewVerdict(verdict="unsure", reviewer=spec.name, summary=f"review timed out: {exc}")
        except EnvironmentUnavailable as exc:
            state.verdict = ReviewVerdict(verdict="unsure", reviewer=spec.name, summary=f"no review: {exc}")
            raise
        except CandidateRejected as exc:  # an unusable reply is not a verdict
            verdict = ReviewVerdict(
                verdict="unsure", reviewer=spec.name, summary=f"unusable review reply: {exc}"
            )
        # Finding codes are the tool's: a model's findings never carry one (nothing takes them for a gate's).
        own = [f.model_copy(update={"code": ""}) for f in verdict.findings]
        verdict = verdict.model_copy(update={"reviewer": spec.name, "findings": own})
        if verdict.verdict == "approve" and any(f.severity == "error" for f in verdict.findings):
            verdict = verdict.model_copy(  # an approval that lists its own errors is no approval
                update={"verdict": "unsure", "summary": f"approve with error findings — {verdict.summary}"}
            )
        if gates.verdict == "reject":
            errors = [f for f in gates.findings if f.severity == "error"]
            verdict = verdict.model_copy(
                update={
                    "verdict": "reject",
                    "findings": [*errors, *verdict.findings],
                    "summary": f"gates: {gates.summary}; {spec.name}: {verdict.verdict} — {verdict.summary}",
                }
            )
        return verdict

    def scribe(self, state: RunState) -> MergeRequestDraft:
        verdict, plan = state.verdict, state.plan
        approved = verdict is not None and verdict.verdict == "approve"
        prompt = _sections(
            ("Task", _task(state)),
            ("Plan", plan.model_dump_json(indent=1, include={"steps", "requires_human"}) if plan else "none"),
            ("Review", verdict.model_dump_json(indent=1) if verdict else "none"),
            ("Verification", describe(state.last_verification) if state.last_verification else "none"),
            ("Candidate patch", f"```diff\n{_patch(state)}\n```"),
            ("Ask", "Write the merge request. Answer with a MergeRequestDraft."),
        )
        draft, _, _ = self._run(state, "scribe", prompt, MergeRequestDraft)
        templated = templated_draft(state)
        details = f"<details><summary>Run evidence</summary>\n\n{templated.description}\n</details>\n"
        # The model read the candidate patch (the repository's words): its Markdown keeps its headings and
        # lists, nothing else of it renders (mr_text.model_markdown), and it cannot open anything that
        # would swallow the evidence after it. The title is the tool's: GitLab reads mentions, references
        # and links in a title with no Markdown step an escape could stop.
        described = model_markdown(draft.description.rstrip())
        return bound_draft(templated.title, f"{described}\n\n{details}", state, ready=approved)

    # -- running one agent (agent_runner.py) ---------------------------------------------------

    def _role(self, state: RunState, name: str) -> RoleConfig:
        return self._runner.role(state, name)

    def _run(
        self, state: RunState, step: str, prompt: str, schema: type[S] | None
    ) -> tuple[Any, AgentTools, Any]:
        return self._runner.run(state, step, prompt, schema)


# -- helpers -------------------------------------------------------------------------------------------


def _task(state: RunState) -> str:
    t = state.task
    criteria = "\n".join(f"- {c}" for c in t.acceptance_criteria)
    return (
        f"{t.title} ({t.id}): {t.sdk.name} {t.sdk.from_range} -> {t.sdk.to} ({t.sdk.ecosystem})\n"
        f"allowed paths: {', '.join(t.allowed_paths)}\nacceptance criteria:\n{criteria}"
    )


def _migration_notes(state: RunState) -> str:
    skill = state.skill
    if skill is None:
        return "none installed"
    parts = [skill.notes.strip()]
    for ref in skill.references:
        parts.append(f"### {ref.name}\n{ref.read_text(encoding='utf-8', errors='replace').strip()}")
    return cut("\n\n".join(parts), state.settings.context_budget_bytes)


def _patch(state: RunState) -> str:
    path = state.paths.artifact("changes.patch")
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _sections(*parts: tuple[str, str]) -> str:
    return "\n\n".join(f"## {title}\n{body}" for title, body in parts)


def _union(first: list[Any], second: list[Any]) -> list[Any]:
    return [*first, *(item for item in second if item not in first)]
