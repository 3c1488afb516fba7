"""The part of bmad-loop that runs a declarative plugin hook, as its plugin-authoring guide and its hook
bus (bmad-code-org/bmad-loop: docs/plugin-authoring-guide.md, src/bmad_loop/plugins/bus.py and
manifest.py) describe it. bmad-loop is installed from git, which the test machines cannot reach, so the
contract is restated here and the tests run the hook command exactly this way:

- the manifest: [plugin] name + api_version (1) required; [hooks.<stage>] needs cmd, timeout_sec >= 1,
  blocking, fail_closed; {scripts} in cmd expands to the plugin's directory;
- the hook runs as `subprocess.run(cmd, shell=True, cwd=<worktree>, env=..., capture_output=True,
  text=True, errors="replace", timeout=timeout_sec)`; the output read is stdout + stderr;
- env = the orchestrator's environment + BMAD_LOOP_* fields (empty ones left out) + each resolved
  setting as BMAD_LOOP_SETTING_<KEY upper-cased> = str(value);
- the last non-empty line, if it is a JSON object, may carry {"veto": {"action": skip|defer|pause}};
  an explicit veto replaces the implicit "a blocking hook's non-zero exit defers"; a timeout or launch
  failure of a blocking, fail_closed hook defers.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VETO_ACTIONS = ("skip", "defer", "pause")
SUPPORTED_API = {1}


@dataclass(frozen=True)
class Hook:
    stage: str
    cmd: str
    timeout_sec: int
    blocking: bool
    fail_closed: bool


@dataclass(frozen=True)
class Plugin:
    name: str
    directory: Path
    doc: dict[str, Any]
    hooks: dict[str, Hook]
    settings: dict[str, Any]  # the manifest's defaults

    def render(self, cmd: str) -> str:
        return cmd.replace("{scripts}", str(self.directory))


@dataclass(frozen=True)
class HookOutcome:
    returncode: int | None  # None: timed out
    output: str
    last_line: str
    veto: dict[str, str] | None  # the resolved veto (explicit, or implied by the exit), None: go on


def load_plugin(directory: Path) -> Plugin:
    doc = tomllib.loads((directory / "plugin.toml").read_text(encoding="utf-8"))
    meta = doc["plugin"]
    assert str(meta["name"]).strip(), "[plugin] name is required"
    assert int(meta["api_version"]) in SUPPORTED_API, "api_version must be supported"
    hooks = {}
    for stage, raw in (doc.get("hooks") or {}).items():
        assert str(raw.get("cmd", "")), f"[hooks.{stage}] requires a cmd"
        timeout = int(raw.get("timeout_sec", 120))
        assert timeout >= 1
        hooks[stage] = Hook(
            stage,
            str(raw["cmd"]),
            timeout,
            bool(raw.get("blocking", False)),
            bool(raw.get("fail_closed", False)),
        )
    settings = {}
    for entry in doc.get("settings") or []:
        kind = entry["type"]
        assert kind in ("bool", "int", "float", "str", "select"), entry
        if kind == "select":
            assert entry["options"] and entry["default"] in entry["options"], entry
        settings[str(entry["key"]).strip()] = entry.get("default")
    return Plugin(str(meta["name"]), directory, doc, hooks, settings)


def hook_env(
    plugin: Plugin, fields: dict[str, str], overrides: dict[str, Any], base: dict[str, str]
) -> dict[str, str]:
    env = dict(base)
    env.update({k: v for k, v in fields.items() if v != ""})
    env["BMAD_LOOP_PLUGIN"] = plugin.name
    for key, value in {**plugin.settings, **overrides}.items():
        env[f"BMAD_LOOP_SETTING_{key.upper()}"] = str(value)
    return env


def last_json(output: str) -> dict[str, Any] | None:
    for line in reversed(output.splitlines()):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{") and line.endswith("}"):
            try:
                payload = json.loads(line)
            except json.JSONDecodeError:
                return None
            return payload if isinstance(payload, dict) else None
        return None
    return None


def run_hook(
    plugin: Plugin,
    stage: str,
    *,
    worktree: Path,
    fields: dict[str, str],
    settings: dict[str, Any] | None = None,
    base_env: dict[str, str] | None = None,
) -> HookOutcome:
    hook = plugin.hooks[stage]
    env = hook_env(plugin, {"BMAD_LOOP_STAGE": stage, **fields}, settings or {}, base_env or dict(os.environ))
    try:
        proc = subprocess.run(
            plugin.render(hook.cmd),
            shell=True,
            cwd=str(worktree),
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=hook.timeout_sec,
        )
    except (subprocess.TimeoutExpired, OSError) as exc:
        veto = (
            {"action": "defer", "reason": f"errored: {exc}"} if hook.blocking and hook.fail_closed else None
        )
        return HookOutcome(None, "", "", veto)
    output = proc.stdout + proc.stderr
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    payload = last_json(output) or {}
    veto = payload.get("veto")
    if not (isinstance(veto, dict) and veto.get("action") in VETO_ACTIONS):
        veto = None
        if hook.blocking and proc.returncode != 0:
            veto = {"action": "defer", "reason": f"exited {proc.returncode}: {output.strip()[-500:]}"}
    return HookOutcome(proc.returncode, output, lines[-1] if lines else "", veto)
