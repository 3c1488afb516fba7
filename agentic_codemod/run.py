"""`agentic-codemod run`: one repository, one task, one run directory of evidence."""

from __future__ import annotations

import json
import os
import signal
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from agentic_codemod import __version__, startup
from agentic_codemod.config import Settings
from agentic_codemod.errors import Cancelled, CodemodError
from agentic_codemod.models import RunManifest
from agentic_codemod.status import Status
from agentic_codemod.task import TaskSpec

if TYPE_CHECKING:
    from agentic_codemod.tools.trace import Redactor
    from agentic_codemod.workflow.brains import Brain


@dataclass(frozen=True)
class RunOptions:
    task: TaskSpec
    repo: Path
    run_dir: Path
    settings: Settings
    offline: bool = True
    context_root: Path = Path(".")
    coder: str = "agno"  # "cline": the Cline CLI as the coder (coders/cline_brain.py)


def _a_run_wrote(manifest: Path) -> bool:
    """Whether `manifest` is a run.json this tool wrote (a run before the run marker): a caller's own
    run.json marks nothing."""
    try:
        data = json.loads(manifest.read_bytes()) if manifest.is_file() else None
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "run_id" in data and "tool_version" in data


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def execute(options: RunOptions) -> RunManifest:
    """Run the workflow and always write the artifacts. Never raises for a run outcome."""
    from agentic_codemod import experience
    from agentic_codemod.tools import repo_copy
    from agentic_codemod.tools.sandbox import discard_install_cache
    from agentic_codemod.tools.trace import Redactor, Trace
    from agentic_codemod.workflow import artifacts
    from agentic_codemod.workflow.state import RunPaths, RunState

    os.environ["AGNO_TELEMETRY"] = "false"
    settings = options.settings.for_task(options.task.deny_globs, options.task.budgets)
    if options.task.verification is not None:  # the task's verification fields win over the config's
        settings = settings.model_copy(
            update={"verification": options.task.verification.over(settings.verification)}
        )
    paths = RunPaths(options.run_dir.resolve())
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    manifest = RunManifest(
        run_id=f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}",
        tool_version=__version__,
        mode="offline" if options.offline else "llm",
        started_at=now(),
        task=options.task.model_dump(mode="json", by_alias=True),
        repo=str(options.repo),
    )
    redactor = Redactor.from_environment(dict(os.environ), settings.secret_name_markers)
    for secret in settings.packages.secrets():  # `--index-url https://TOKEN@host/...` (helper-41)
        redactor.add(secret)
    # The caller's index credentials (the sandboxed tools get them) go to the redactor before the first
    # trace record. pip says them from a process of its own: it answers while the workflow's modules load.
    caller_secrets = _in_background(_caller_credentials, dict(os.environ))
    trace_path = paths.artifact("trace.jsonl")
    trace_path.unlink(missing_ok=True)
    state = RunState(
        task=options.task,
        settings=settings,
        repo=options.repo,
        paths=paths,
        manifest=manifest,
        context_root=options.context_root.resolve(),
        trace=Trace(trace_path, redactor, field_chars=settings.budgets.trace_field_chars),
    )
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        from agentic_codemod.workflow.pipeline import run_workflow

        startup.loaded()  # the workflow's modules are in (the command line deferred collection until now)
        _learn(redactor, caller_secrets)
        # A run before this one in the same run dir (killed before its end, or a runner that reuses the
        # dir) left its environments, copies and cache: what its repository's code wrote there is never
        # what this run installs into, tests with or reads (an install copies a template over what is there).
        # Only a dir a run marked is emptied so: folders of the same names in a dir of the caller's stay.
        if paths.run_marker.exists() or _a_run_wrote(paths.artifact("run.json")):
            for leftover in paths.made_by_a_run():
                repo_copy.remove(leftover)
        paths.run_marker.touch()
        discard_install_cache(paths.env_dir)
        run_workflow(state, _brain(options))
        if state.stopped is not None:
            manifest.end(Status.NOTHING_TO_DO, state.stopped)
    except CodemodError as exc:
        manifest.end(exc.status, str(exc))
        manifest.error = f"{type(exc).__name__}: {exc}"
    except KeyboardInterrupt as interrupt:  # SIGINT, or SIGTERM turned into one by _raise_interrupt
        cancel = Cancelled(f"the run was cancelled ({interrupt or 'SIGINT'})")
        manifest.end(cancel.status, str(cancel))
    except Exception as exc:  # a crash inside a step: the run fails, the evidence stays
        manifest.end(Status.FAILED, f"{type(exc).__name__}: {exc}")
        manifest.error = manifest.reason
    finally:
        signal.signal(signal.SIGTERM, previous)
        if caller_secrets.done() and caller_secrets.exception() is None:  # a run stopped before its workflow
            _learn(redactor, caller_secrets)
        manifest.finished_at = now()
        try:
            discard_install_cache(paths.env_dir)  # the run dir a CI job uploads holds none of it
        except OSError as exc:  # the artifacts are written all the same
            state.notes.append(f"the run's install cache could not be emptied: {exc}")
        artifacts.write_all(paths, artifacts.settle(state))
        experience.write_proposals(state)  # after run.json: proposals cite it as evidence
        from agentic_codemod.report import write_after_run

        write_after_run(paths.run_dir)  # report.html, read back from the artifacts just written
    return manifest


def _caller_credentials(environ: dict[str, str]) -> list[str]:
    from agentic_codemod.adapters import registry

    return [secret for adapter in registry().values() for secret in adapter.credentials(environ)]


def _in_background(read: Callable[[dict[str, str]], list[str]], environ: dict[str, str]) -> Future[list[str]]:
    """read(environ) in a daemon thread: a run cancelled meanwhile exits without waiting for it."""
    answer: Future[list[str]] = Future()

    def target() -> None:
        try:
            answer.set_result(read(environ))
        except BaseException as exc:  # the run's thread raises it where it needs the answer
            answer.set_exception(exc)

    threading.Thread(target=target, name="caller-credentials", daemon=True).start()
    return answer


def _learn(redactor: Redactor, secrets: Future[list[str]]) -> None:
    for secret in secrets.result():
        redactor.add(secret)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _brain(options: RunOptions) -> Brain:
    if options.offline:
        from agentic_codemod.workflow.brains import RuleBrain

        return RuleBrain()
    if options.coder == "cline":
        from agentic_codemod.coders.cline_brain import ClineBrain

        return ClineBrain()
    from agentic_codemod.llm.brain import LlmBrain

    return LlmBrain()
