"""One run of the Cline CLI (npm `cline` 3.0.x) on a scratch directory, bounded by a wall clock.

    run_cline(workdir, prompt, config) -> ClineResult      never raises for Cline's own outcome
    find_cline(environ, roots) -> str | None               CODEMOD_CLINE, .cache/cline (bootstrap), PATH

Contract (FACTS.md "bmad-loop and Cline"): `cline --json -c DIR --data-dir DIR -P provider -m model PROMPT`
prints one JSON object per line and ends with `run_result {finishReason, usage, ...}`. Success is only
exit 0 AND a last run_result with finishReason "completed"; anything else is a failure with its reason.
SIGINT makes Cline exit 0 without a result and SIGTERM may not stop it, so the wall clock is enforced by
killing its whole process group (SIGKILL; it is started in a session of its own).

The provider is the run's OpenAI-compatible endpoint (`openai-compatible`, base URL and key of the coder's
role). Cline's state lives in `config.data_dir` (inside the run dir), never in the caller's ~/.cline; the
key Cline stores there (settings/providers.json) is deleted when the run ends, so it never lands in the
run's artifacts. Its environment is built from nothing but PATH, HOME (inside the data dir) and locale:
no variable of the caller reaches it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_codemod import json_input
from agentic_codemod.tools.process_group import stop_group

PROVIDER = "openai-compatible"
# The prompt is one argv entry: Linux caps one argument at 128 KiB.
MAX_PROMPT_BYTES = 100_000
# Cline's own limit on consecutive mistakes before it gives up (its --retries).
MAX_RETRIES = 2
AUTH_TIMEOUT_S = 120.0
PROBE_TIMEOUT_S = 5.0
CACHE_BIN = Path(".cache") / "cline" / "node_modules" / ".bin" / "cline"
# run_result texts that mean the endpoint, not the code: the run pauses (75) instead of failing.
UNREACHABLE = (
    "ECONNREFUSED",
    "fetch failed",
    "Unable to connect",
    "ENOTFOUND",
    "socket hang up",
    "ECONNRESET",
)


@dataclass(frozen=True)
class ClineConfig:
    binary: str
    model: str
    base_url: str
    data_dir: Path
    budget_s: float
    api_key: str = field(default="", repr=False)
    # "sandbox": bubblewrap, the endpoint its only network (cline_sandbox.py); "process": a plain
    # process group (only on the user's explicit --isolation process, as for the repository's code)
    isolation: str = "sandbox"
    bwrap: str = "bwrap"
    budget_name: str = "max_run_seconds"  # the config key that set budget_s (named when it runs out)


@dataclass
class ClineResult:
    ok: bool
    reason: str
    exit_code: int | None  # None: killed on the wall clock
    finish_reason: str | None = None
    killed: bool = False
    unreachable: bool = False  # the endpoint could not be reached: an environment fault
    usage: dict[str, Any] | None = None
    text: str = ""
    events: int = 0


def find_cline(environ: Mapping[str, str], roots: Iterable[Path] = ()) -> str | None:
    explicit = environ.get("CODEMOD_CLINE", "")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for root in roots:
        candidate = root / CACHE_BIN
        if os.access(candidate, os.X_OK):
            return str(candidate.resolve())
    return shutil.which("cline")


def endpoint_reachable(base_url: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when the endpoint answers HTTP at all (any status), else why it cannot be reached."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout_s):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: auth and model problems are Cline's to report
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"model endpoint {base_url} cannot be reached: {getattr(exc, 'reason', exc)}"


def run_cline(workdir: Path, prompt: str, config: ClineConfig) -> ClineResult:
    down = endpoint_reachable(config.base_url)
    if down:
        return ClineResult(False, down, None, unreachable=True)
    data, conf = config.data_dir / "data", config.data_dir / "config"
    home = config.data_dir / "home"
    for d in (data, conf, home):
        d.mkdir(parents=True, exist_ok=True)
    env = _environment(config.binary, home)
    common = ["--data-dir", str(data), "--config", str(conf)]
    log, err = config.data_dir / "cline.jsonl", config.data_dir / "cline.stderr"
    with contextlib.ExitStack() as stack:
        base_url, relay = config.base_url, None
        if config.isolation == "sandbox":
            from agentic_codemod.coders.cline_sandbox import Relay, RelayError
            from agentic_codemod.tools.sandbox import probe

            problem = probe(config.bwrap)
            if problem:
                reason = f"the sandbox for Cline cannot start: {problem} (or run with --isolation process)"
                return ClineResult(False, reason, None, unreachable=True)
            try:
                relay = stack.enter_context(Relay(config.base_url))
            except RelayError as exc:
                return ClineResult(False, f"{exc} (or run with --isolation process)", None, unreachable=True)
            base_url = relay.inner_url
        try:
            auth = _auth(config, base_url, common, env, workdir)
            if auth:
                return ClineResult(False, auth, None)
            argv = [config.binary, "--json", "-c", str(workdir), *common, "-P", PROVIDER, "-m", config.model]
            argv += ["--retries", str(MAX_RETRIES), _bounded(prompt)]
            cwd = workdir
            if relay is not None:
                from agentic_codemod.coders.cline_sandbox import sandboxed

                argv, cwd, env = sandboxed(argv, workdir, config.data_dir, relay, config.bwrap, env)
            code, killed = _run_bounded(argv, cwd, env, log, err, config.budget_s)
        finally:
            _forget_key(data)
    return judge(log.read_text(encoding="utf-8", errors="replace"), code, killed, config.budget_s)


def judge(output: str, code: int | None, killed: bool, budget_s: float) -> ClineResult:
    """Success only on exit 0 with a last run_result whose finishReason is "completed"."""
    events = [e for e in map(_json, output.splitlines()) if e is not None]
    results = [e for e in events if e.get("type") == "run_result"]
    last = results[-1] if results else {}
    finish = last.get("finishReason")
    finish = finish if isinstance(finish, str) else None
    text = str(last.get("text") or "")
    usage = last.get("usage") if isinstance(last.get("usage"), dict) else None
    if killed:
        reason = f"cline killed after the wall-clock budget of {budget_s:g} s (its process group)"
        ok, unreachable = False, False
    elif code == 0 and finish == "completed":
        reason, ok, unreachable = "completed", True, False
    else:
        shown = f"with finishReason {finish!r}: {text[:300]}" if results else "without a run_result"
        reason, ok = f"cline exited {code} {shown}", False
        unreachable = finish == "error" and any(word in text for word in UNREACHABLE)
    return ClineResult(
        ok,
        reason,
        None if killed else code,
        finish_reason=finish,
        killed=killed,
        unreachable=unreachable,
        usage=usage,
        text=text,
        events=len(events),
    )


def _auth(
    config: ClineConfig, base_url: str, common: list[str], env: dict[str, str], workdir: Path
) -> str | None:
    argv = [config.binary, "auth", "-p", PROVIDER, "-m", config.model, "-b", base_url, *common]
    argv += ["-k", config.api_key or "none"]
    try:
        done = subprocess.run(
            argv, cwd=workdir, env=env, capture_output=True, timeout=AUTH_TIMEOUT_S, start_new_session=True
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cline auth could not run: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"cline auth exited {done.returncode}: {tail}"
    return None


def _run_bounded(
    argv: list[str], cwd: Path, env: dict[str, str], log: Path, err: Path, budget_s: float
) -> tuple[int | None, bool]:
    with log.open("wb") as out, err.open("wb") as errors:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=errors,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout=budget_s), False
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
            return None, True
        except BaseException:  # cancelled (SIGINT/SIGTERM to the tool): Cline's group goes too
            kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            kill_group(proc.pid)  # children left behind by a Cline that exited


def kill_group(pgid: int) -> None:
    stop_group(pgid, grace_s=0)  # SIGTERM may not stop Cline (see above)


def _environment(binary: str, home: Path) -> dict[str, str]:
    node = shutil.which("node")
    dirs = [
        str(Path(binary).resolve().parent),
        *([str(Path(node).parent)] if node else []),
        "/usr/bin",
        "/bin",
    ]
    return {
        "PATH": os.pathsep.join(dict.fromkeys(dirs)),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "CI": "1",
    }


def _forget_key(data: Path) -> None:
    """The key Cline wrote into its data dir must not stay in the run dir (an artifact)."""
    for path in data.glob("settings/providers*.json"):
        path.unlink(missing_ok=True)


def _bounded(prompt: str) -> str:
    raw = prompt.encode("utf-8")
    if len(raw) <= MAX_PROMPT_BYTES:
        return prompt
    return raw[:MAX_PROMPT_BYTES].decode("utf-8", "ignore") + "\n[... prompt cut ...]"


def _json(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json_input.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
