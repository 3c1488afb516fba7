"""The sandbox tools an agent may call, as agno tools: thin wrappers over the Workspace and verification.

    tools = AgentTools(state, actor="coder", allowed=spec.tools, meter=meter, max_model_calls=40)
    Agent(tools=tools.functions(), tool_hooks=[tools.hook], ...)
    tools.edits            # successful edit calls in this agent run
    tools.verifications    # VerificationResult of every run_verification call
    tools.stopped          # the BudgetExceeded that ended the run, if one did

An allowlist name (the `tools:` field of an agent file) maps to functions below; nothing else exists:
no shell, no network. Every call goes through the Workspace, so it is checked (paths, deny globs,
allowed paths, budgets) and lands in trace.jsonl under the agent's name. A refusal or a file error goes
back to the model as text, so it can correct itself; a budget hit stops the agent (agno's StopAgentRun)
and fails the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agno.exceptions import StopAgentRun
from pydantic import BaseModel

from agentic_codemod.config import DIFF_CHARS, EVIDENCE_TAIL_CHARS, MAX_LISTED, OUTPUT_TAIL_CHARS
from agentic_codemod.errors import BudgetExceeded
from agentic_codemod.llm.factory import Meter
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools.workspace import Refused
from agentic_codemod.workflow.state import RunState

TOOLSETS: dict[str, tuple[str, ...]] = {
    "read": ("read_file",),
    "list": ("list_files",),
    "search": ("search_code",),
    "edit": ("write_file", "replace_in_file"),
    "diff": ("show_diff",),
    "run_verification": ("run_verification",),
}
EDIT_TOOLS = frozenset(TOOLSETS["edit"])


class AgentTools:
    def __init__(
        self,
        state: RunState,
        actor: str,
        allowed: list[str],
        meter: Meter,
        max_model_calls: int,
        max_tokens: int | None = None,
        clock: Any = None,
        role: str = "",
    ) -> None:
        if state.workspace is None:
            raise RuntimeError("internal: agent tools need the workspace made by intake")
        self.state, self.ws, self.actor = state, state.workspace, actor
        self.allowed = [name for key in allowed for name in TOOLSETS.get(key, ())]
        self.meter = meter
        self.max_tool_calls = state.settings.budgets.max_tool_calls
        self.max_model_calls = max_model_calls
        self.max_tokens = max_tokens
        self.calls = 0
        self._model_calls_at_start = meter.model_calls
        self.edits = 0
        self.verifications: list[VerificationResult] = []
        self.stopped: BudgetExceeded | None = None
        self.clock, self.role = clock, role  # llm_calls.Clock: the run's and the role's time budgets
        self.submitted: dict[str, Any] | None = None  # the arguments of submit_<Schema> (tool_call mode)

    def functions(self) -> list[Callable[..., str]]:
        table: dict[str, Callable[..., str]] = {
            "read_file": self.read_file,
            "list_files": self.list_files,
            "search_code": self.search_code,
            "write_file": self.write_file,
            "replace_in_file": self.replace_in_file,
            "show_diff": self.show_diff,
            "run_verification": self.run_verification,
        }
        return [table[name] for name in self.allowed]

    def hook(self, function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        """agno tool hook: counts calls, enforces the per-agent budgets, stops the agent on a budget hit
        (agno's `tool_call_limit` does not end the model loop)."""
        self.calls += 1
        self.meter.tool_calls += 1
        model_calls = self.meter.model_calls - self._model_calls_at_start
        if self.calls > self.max_tool_calls:
            self._stop(BudgetExceeded("max_tool_calls", self.max_tool_calls, self.calls))
        if model_calls > self.max_model_calls:
            self._stop(BudgetExceeded("max_model_calls", self.max_model_calls, model_calls))
        used = self.meter.tokens()
        if self.max_tokens is not None and used is not None and used > self.max_tokens:
            self._stop(BudgetExceeded("max_tokens", self.max_tokens, used))
        if self.clock is not None:
            try:
                self.clock.check(self.role)
            except BudgetExceeded as exc:
                self._stop(exc)
        if function_name not in self.allowed:  # agno only offers allowed tools; a model may still invent one
            self.state.trace.record(self.actor, function_name, arguments, "", "refused", "tool not allowed")
            return f"refused: {function_name} is not one of your tools ({', '.join(self.allowed)})"
        try:
            return function_call(**arguments)
        except BudgetExceeded as exc:
            self._stop(exc)

    def submit_function(self, schema: type[BaseModel]) -> Any:
        """The tool `submit_<Schema>` of structured output by tool call: its parameters are the schema;
        calling it ends the agent, and its arguments are validated like any structured reply."""
        from agno.tools.function import Function

        name = f"submit_{schema.__name__}"
        self.allowed.append(name)

        def submit(**arguments: Any) -> str:
            self.submitted = arguments
            self.state.trace.record(self.actor, name, {"fields": sorted(arguments)}, "submitted")
            return "submitted"

        return Function(
            name=name,
            description=f"Submit your final answer as a {schema.__name__}. Call it once, when you are done.",
            parameters=schema.model_json_schema(),
            entrypoint=submit,
            skip_entrypoint_processing=True,
            stop_after_tool_call=True,
        )

    @staticmethod
    def submit_instruction(schema: type[BaseModel]) -> str:
        return (
            f"When you have your answer, call the tool submit_{schema.__name__} with it as the arguments. "
            "Do not write the answer as text."
        )

    def _stop(self, exc: BudgetExceeded) -> None:
        self.stopped = exc
        raise StopAgentRun(str(exc), agent_message=f"stopped: {exc}")

    # -- the tools (docstrings are what the model reads) -----------------------------------------------

    def read_file(self, path: str) -> str:
        """Return the full text of one file of the repository.

        Args:
            path: repository-relative path, as list_files prints it.
        """
        return self._guard(lambda: self.ws.read(path, actor=self.actor))

    def list_files(self, path: str = ".") -> str:
        """List the files under a folder of the repository, one repository-relative path a line.

        Args:
            path: repository-relative folder; "." for the whole repository.
        """

        def run() -> str:
            found = self.ws.list(path, actor=self.actor)
            more = f"\n... {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
            return "\n".join(found[:MAX_LISTED]) + more or "(no files)"

        return self._guard(run)

    def search_code(self, pattern: str, glob: str | None = None) -> str:
        """Search the repository's text files with a regular expression (\\b, \\d, (?:...) work).

        Args:
            pattern: regular expression matched against each line.
            glob: optional file filter, e.g. "src/**".

        Returns "path:line: text" for each match.
        """
        return self._guard(
            lambda: "\n".join(self.ws.search(pattern, actor=self.actor, glob=glob)) or "(no match)"
        )

    def write_file(self, path: str, content: str) -> str:
        """Replace the whole content of a file (or create it). Only paths the plan allows may be written.

        Args:
            path: repository-relative path.
            content: the complete new text of the file.
        """
        return self._edit(path, lambda: self.ws.write(path, content, actor=self.actor))

    def replace_in_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact piece of text in a file. `old` must occur exactly once in the file.

        Args:
            path: repository-relative path.
            old: the exact text to replace, including indentation.
            new: the text to put in its place.
        """
        return self._edit(path, lambda: self.ws.replace(path, old, new, actor=self.actor))

    def show_diff(self) -> str:
        """Show the current change of the repository as a unified diff (new files included)."""

        def run() -> str:
            text = self.ws.diff(actor=self.actor)
            return cut(text, DIFF_CHARS) or "(no change)"

        return self._guard(run)

    def run_verification(self) -> str:
        """Run the repository's own test command on the current change and report the result.
        The command is fixed by the pipeline; you cannot change it."""
        state = self.state
        self.ws.count_call(self.actor, "run_verification")
        if state.test_command is None or state.env is None or state.runner is None:
            return "error: verification is not available in this step"
        phase = f"{self.actor}-check-{len(self.verifications) + 1}"
        from agentic_codemod.workflow.test_runs import timed_tests

        result = timed_tests(state, phase)  # charged to the run's verification time budget
        self.verifications.append(result)
        summary = describe(result)
        state.trace.record(
            self.actor, "run_verification", {"phase": phase, "command": result.command}, summary
        )
        tail = cut(result.output_tail, OUTPUT_TAIL_CHARS, tail=True)
        return f"{summary}\n\n--- output (tail) ---\n{tail}"

    # -- helpers ---------------------------------------------------------------------------------------

    def _edit(self, path: str, action: Callable[[], None]) -> str:
        def run() -> str:
            action()
            self.edits += 1
            return f"ok: {path} changed"

        return self._guard(run)

    def _guard(self, action: Callable[[], str]) -> str:
        """Refusals and file errors go back to the model as text; budget hits propagate to the hook."""
        try:
            return action()
        except Refused as exc:
            return f"refused: {exc.reason}" + (f": {exc.path!r}" if exc.path else "")
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            return f"error: {exc}"


def evidence(result: VerificationResult) -> str:
    """What a reviewer or the coder sees of one verification: result, real command, output tail."""
    tail = cut(result.output_tail, EVIDENCE_TAIL_CHARS, tail=True)
    return f"{describe(result)}\ncommand: {' '.join(result.command)}\n```text\n{tail}\n```"


def describe(result: VerificationResult) -> str:
    counts = result.tests
    tally = (
        f"{counts.passed} passed, {counts.failed} failed, {counts.errors} errors"
        if counts
        else "no test counts"
    )
    state = "PASSED" if result.passed else ("TIMED OUT" if result.timed_out else "FAILED")
    return f"verification {state}: exit {result.exit_code}, {tally}, {result.duration_s}s"


def cut(text: str, limit: int, tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    if tail:
        return f"[... {len(text) - limit} chars cut]\n" + text[-limit:]
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} chars cut ...]\n{text[-half:]}"
