"""`agentic-codemod gate worktree`: the deterministic gates (and the semantic gate) on a live worktree.

    agentic-codemod gate worktree [--worktree DIR] [--base REV] [--task FILE] [--allowed-path GLOB ...]
        [--deny-glob GLOB ...] [--semantic MODE] [--config FILE] [--verify-cmd CMD] [--run-dir DIR]
        [--unavailable-exit-code N] [--bmad-loop]

Exit codes: 0 every gate passed, 1 a gate failed, 2 bad input, 75 the semantic service is unavailable
(or --unavailable-exit-code: bmad-loop's [verify] commands pause on 126).

--task takes a task file (YAML) or a BMAD story (Markdown, stories.py). A task file inside the worktree is
read from the base commit, never from the worktree the coder just edited: a change cannot widen its own
scope. A task file (YAML) that the candidate changes fails the scope gate; a story may change (BMAD's dev
agent records its progress there), its scope still comes from the base.

--bmad-loop: the bmad-loop hook contract (docs/integrations/bmad-loop.md). Unset options come from the
hook's environment (BMAD_LOOP_WORKTREE, BMAD_LOOP_RUN_DIR, BMAD_LOOP_STORY_KEY, BMAD_LOOP_SETTING_*);
everything goes to stdout, and the last line is the veto: {"veto": {"action": "defer", ...}} when a gate
fails, "pause" on an environment fault or a configuration error, nothing when all pass. bmad-loop reads
stdout and then stderr as one text, so nothing is written to stderr in this mode.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily: `agentic-codemod --help` must stay light
    from agentic_codemod.semantic.settings import SemanticSettings
    from agentic_codemod.task import TaskSpec
    from agentic_codemod.worktree_gate import Request, Scope, WorktreeVerdict

SETTING = "BMAD_LOOP_SETTING_"
VERDICT_FILE = "worktree-gate.json"
MODES = ("off", "advisory", "required")


def add_worktree_gate_parser(gate: argparse.ArgumentParser) -> None:
    """Add `worktree` beside `semantic` under the CLI's `gate` parser (semantic/cli.add_gate_parser)."""
    subs = next(a for a in gate._actions if isinstance(a, argparse._SubParsersAction))
    p = subs.add_parser(
        "worktree",
        help="scope, deny globs, test tampering, dependency files (+ semantic) on a git worktree",
        epilog="exit codes: 0 pass, 1 a gate failed, 2 bad input, 75 semantic service unavailable",
    )
    p.add_argument("--worktree", type=Path, help="the git worktree to check (default: cwd)")
    p.add_argument("--base", help="commit or ref the change is measured from (default: HEAD)")
    p.add_argument("--task", type=Path, help="task file (YAML) or BMAD story (.md) giving the scope")
    p.add_argument("--allowed-path", action="append", default=[], metavar="GLOB", help="(repeatable)")
    p.add_argument("--deny-glob", action="append", default=[], metavar="GLOB", help="(repeatable)")
    p.add_argument("--semantic", choices=MODES, help="semantic gate mode (default: the config's)")
    p.add_argument("--config", type=Path, help="settings file (YAML); reads gates.semantic")
    p.add_argument("--verify-cmd", help="shell command whose real result the semantic gate sees")
    p.add_argument("--run-dir", type=Path, help="where changes.patch, run.json and the verdicts go")
    from agentic_codemod.semantic.cli import _exit_code

    p.add_argument(
        "--unavailable-exit-code",
        type=_exit_code,
        metavar="N",
        help="exit code when the semantic service is unavailable (default 75; bmad-loop [verify]: 126)",
    )
    stdout = p.add_mutually_exclusive_group()
    stdout.add_argument("--bmad-loop", action="store_true", help="read BMAD_LOOP_* and print the veto line")
    from agentic_codemod.cli import add_json_option

    add_json_option(stdout, "the verdict (worktree-gate.json)")
    p.set_defaults(handler=worktree_gate_command)


def worktree_gate_command(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    environ = os.environ if env is None else env
    from agentic_codemod.errors import EXIT_BAD_INPUT, EXIT_UNAVAILABLE, InputError
    from agentic_codemod.tools.safe_git import GitError
    from agentic_codemod.worktree_gate import check_worktree

    try:
        request = build_request(args, environ)
        verdict = check_worktree(request, environ)
    except InputError as exc:
        return _report_error(args, f"configuration: {exc}", EXIT_BAD_INPUT)
    except (GitError, OSError) as exc:
        return _report_error(args, f"environment: {exc}", EXIT_UNAVAILABLE)
    _write_verdict(request.run_dir, verdict)
    if args.json:
        from agentic_codemod.cli import print_json

        print_json(verdict.to_dict())
    else:
        _report(args, verdict)
    return verdict.exit_code


def build_request(args: argparse.Namespace, env: Mapping[str, str]) -> Request:
    from agentic_codemod.errors import InputError
    from agentic_codemod.worktree_gate import Request

    hook = _hook_values(env) if args.bmad_loop else {}
    worktree = (args.worktree or Path(hook.get("worktree") or ".")).resolve()
    if not worktree.is_dir():
        raise InputError(
            f"{worktree}: the worktree is not a directory", hint="--worktree or BMAD_LOOP_WORKTREE"
        )
    base = args.base or hook.get("base_ref") or "HEAD"
    task = args.task or (Path(hook["task_file"]) if hook.get("task_file") else None)
    allowed = [*args.allowed_path, *_split(hook.get("allowed_paths", ""))]
    deny = [*args.deny_glob, *_split(hook.get("deny_globs", ""))]
    scope = load_scope(worktree, base, task, allowed, deny, _split(hook.get("bookkeeping_paths", "")))
    semantic = _semantic_settings(args.config or _path(hook.get("codemod_config")))
    mode = args.semantic or hook.get("semantic_gate") or ""
    if mode:
        if mode not in MODES:
            raise InputError(f"{SETTING}SEMANTIC_GATE: {mode!r} is not one of {', '.join(MODES)}")
        semantic = semantic.model_copy(update={"mode": mode})
    if args.unavailable_exit_code is not None:
        semantic = semantic.model_copy(update={"unavailable_exit_code": args.unavailable_exit_code})
    return Request(
        worktree=worktree,
        scope=scope,
        base=base,
        semantic=semantic,
        verify_cmd=args.verify_cmd or hook.get("verify_cmd", ""),
        run_dir=(args.run_dir or hook_run_dir(env)) if args.bmad_loop else args.run_dir,
    )


def load_scope(
    worktree: Path,
    base: str,
    task: Path | None,
    allowed: list[str],
    deny: list[str],
    bookkeeping: list[str] | None = None,
) -> Scope:
    """The scope from the task file (read from the base commit when it lies in the worktree) or settings;
    `bookkeeping` (the orchestrator's own files, e.g. bmad-loop's sprint-status.yaml) is allowed on top of
    a scope, never instead of one."""
    from agentic_codemod.errors import InputError
    from agentic_codemod.worktree_gate import Scope

    if task is None:
        if not allowed:
            raise InputError(
                "no scope: give --task (or the setting task_file) or --allowed-path (setting allowed_paths)",
                hint="the gate never lets a change through without allowed paths",
            )
        return Scope("worktree", _checked_globs([*allowed, *(bookkeeping or [])]), deny)
    path = task if task.is_absolute() else worktree / task
    text, relative = _task_text(worktree, base, path)
    if path.suffix.lower() in (".md", ".markdown"):
        from agentic_codemod.stories import story_to_task

        spec = story_to_task(text, path)
        extra = [relative] if relative else []  # the dev agent records its progress in the story
    else:
        spec = _task_from_yaml(text, path)
        extra = []
    return Scope(
        spec.id,
        [*spec.allowed_paths, *extra, *_checked_globs([*allowed, *(bookkeeping or [])])],
        [*spec.deny_globs, *deny],
        spec.acceptance_criteria,
        spec.sdk,
        str(path),
    )


def _checked_globs(allowed: list[str]) -> list[str]:
    """Allowed paths from settings, held to the task file's rules (task.TaskSpec.allowed_paths)."""
    from agentic_codemod.errors import InputError
    from agentic_codemod.tools.paths import Refused, matches_everything, normalise

    spelled = []
    for entry in allowed:
        try:
            norm = normalise(entry)
        except Refused as exc:
            raise InputError(f"{SETTING}ALLOWED_PATHS: {entry!r}: {exc.reason}") from exc
        if matches_everything(norm):
            raise InputError(f"{SETTING}ALLOWED_PATHS: {entry!r} allows every path: name directories")
        spelled.append(norm)
    return spelled


def _task_text(worktree: Path, base: str, path: Path) -> tuple[str, str | None]:
    from agentic_codemod.errors import InputError
    from agentic_codemod.tools.snapshot import GitError, read_blob, resolve_base

    # Lexically, never through symlinks: a link the unit planted in its worktree must not lead the
    # gate to a file of its choosing; whatever lies in the worktree is read from the base commit.
    lexical = Path(os.path.normpath(path if path.is_absolute() else Path.cwd() / path))
    try:
        relative = lexical.relative_to(worktree).as_posix()
    except ValueError:
        relative = None
    if relative is None:
        try:
            return path.read_text(encoding="utf-8"), None
        except FileNotFoundError as exc:
            raise InputError(f"{path}: task file not found") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read task file: {exc}") from exc
    try:
        data = read_blob(worktree, resolve_base(worktree, base), relative)
    except GitError as exc:
        raise InputError(
            f"{path}: the task file is not committed at {base}",
            hint="commit it on the base branch: a task file the coder could write could widen its scope",
        ) from exc
    return data.decode("utf-8", "replace"), relative


def _task_from_yaml(text: str, path: Path) -> TaskSpec:
    import yaml

    from agentic_codemod.errors import InputError
    from agentic_codemod.yaml_input import safe_load  # the parser a run reads the same task with

    try:
        raw = safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: cannot read task file: {exc}".splitlines()[0]) from exc
    if not isinstance(raw, dict):
        raise InputError(f"{path}: a task file must be a YAML mapping")
    return _validated(raw, str(path))


def _validated(raw: dict[str, object], where: str) -> TaskSpec:
    from pydantic import ValidationError

    from agentic_codemod.config import first_error
    from agentic_codemod.errors import InputError
    from agentic_codemod.task import TaskSpec

    try:
        return TaskSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{where}: {first_error(exc)}") from exc


def _semantic_settings(path: Path | None) -> SemanticSettings:
    from agentic_codemod.semantic.cli import _settings

    return _settings(path)


def _hook_values(env: Mapping[str, str]) -> dict[str, str]:
    keys = ["task_file", "allowed_paths", "deny_globs", "semantic_gate", "codemod_config", "verify_cmd"]
    keys += ["bookkeeping_paths"]
    values = {k: env.get(SETTING + k.upper(), "").strip() for k in (*keys, "base_ref")}
    values["worktree"] = env.get("BMAD_LOOP_WORKTREE", "") or env.get("BMAD_LOOP_REPO_ROOT", "")
    return values


def hook_run_dir(env: Mapping[str, str]) -> Path | None:
    """BMAD_LOOP_RUN_DIR/agentic-codemod/<story key>: the evidence stays with bmad-loop's run."""
    run_dir = env.get("BMAD_LOOP_RUN_DIR", "")
    if not run_dir:
        return None
    key = re.sub(r"[^A-Za-z0-9._-]", "_", env.get("BMAD_LOOP_STORY_KEY", "") or "unit").lstrip(".") or "unit"
    return Path(run_dir) / "agentic-codemod" / key


def _split(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,\n]", text) if part.strip()]


def _path(text: str | None) -> Path | None:
    return Path(text) if text else None


def _write_verdict(run_dir: Path | None, verdict: WorktreeVerdict) -> None:
    if run_dir is None:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / VERDICT_FILE).write_text(json.dumps(verdict.to_dict(), indent=2) + "\n", encoding="utf-8")


def _report(args: argparse.Namespace, verdict: WorktreeVerdict) -> None:
    for gate in verdict.gates:
        print(f"gate {gate['name']}: {'passed' if gate['passed'] else 'FAILED'}")
    for reason in verdict.reasons:
        print(f"  {reason}")
    sha = verdict.candidate_sha256[:12]
    print(f"worktree gate: {verdict.outcome} (exit {verdict.exit_code}), candidate {sha}")
    if args.bmad_loop and verdict.outcome != "pass":
        action = "pause" if verdict.outcome == "unavailable" else "defer"
        print(veto_line(action, f"agentic-codemod gate: {verdict.summary}"))


def _report_error(args: argparse.Namespace, message: str, code: int) -> int:
    if args.bmad_loop:
        print(f"worktree gate: {message} (exit {code})")
        print(veto_line("pause", f"agentic-codemod gate: {message}"))
    else:
        print(f"agentic-codemod: error: {message}", file=sys.stderr)
    return code


def veto_line(action: str, reason: str) -> str:
    """One line of JSON (json.dumps escapes newlines and quotes): bmad-loop reads the last line only."""
    return json.dumps({"veto": {"action": action, "reason": " ".join(reason.split())[:2000]}})
