"""Environment templates: a runner's byte-compiled venvs per dependency set, copied into each run.

    registry_part(root, plan) -> Part               what of the plan installs from the index alone
    template_key(part, settings, installer, caller, seed) -> str
                                                    sha256 of everything that decides what it holds
    cache_root(settings) -> Path                    python.cache_dir, $CODEMOD_CACHE_DIR, ~/.cache/...
    ensure(part, key, settings, installer, box, runner, caller, seed) -> (Path | None, [ProcessResult])
    instantiate(template, env_dir)                  a private copy for one run (marks the template used)
    prune(envs, keep_s, keep=, max_count=)          templates unused for python.env_template_keep_s go,
                                                    and the least recently used beyond
                                                    python.env_template_max_count

Repositories of a fleet (and runs of one repository) mostly install the same packages; building and
byte-compiling them is most of an install. A template is built ONCE per dependency set and copied (never
hardlinked: the run's later installs write into its venv) into the run's environment, whose own install
(the project, its build, editables, whatever the template left out) then runs on top of it as before.

Why a template cannot be poisoned by a repository:
  - it holds only the registry part: named requirements without URL or path, from the plan's direct
    requirements and its requirements/constraint files inside the repository; no project, no editable;
    before it, the seed of `python -m venv` (pip, setuptools), offline from the interpreter's own
    wheels (seed.py);
  - it is built with `--no-build` (wheels only, so no setup.py or build backend runs) into a fresh venv,
    in a sandbox that sees an empty directory instead of the repository; that step alone sees the
    shared uv cache (writable), and starts no Python that could run a .pth file of the registry part
    (uv starts the venv's Python before it installs; by then only the seed is there);
  - byte-compiling (which starts the template's Python) runs in a second box without the shared cache
    and without network; it leaves the seed's packages uncompiled (seed.py: pip is for the tests that
    call it);
  - it is published by an atomic rename and never written again; runs see only their copy; the
    repository's own code never runs where the shared cache or a template is mounted.
A template resolved against an index goes stale as the index moves: its key holds a time bucket of
python.env_template_ttl_s (a wheel-dirs-only build with --no-index has none).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agentic_codemod.adapters.python import index_front, pep508, pip_config, requirement_options
from agentic_codemod.adapters.python.install_plan import InstallPlan
from agentic_codemod.adapters.python.installer import Installer
from agentic_codemod.adapters.python.seed import Seed
from agentic_codemod.adapters.types import ProcessResult, Runner
from agentic_codemod.config import CACHE_DIR_VARIABLE, Settings
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.private import private

if TYPE_CHECKING:
    from agentic_codemod.tools.sandbox import Box

FORMAT = "agentic-codemod/env-template@1"
MAX_INCLUDE_DEPTH = 8


@dataclass(frozen=True)
class Part:
    requirements: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.requirements


def registry_part(root: Path, plan: InstallPlan) -> Part:
    """The plan's named registry requirements and constraints (files followed through -r/-c inside
    `root`); anything else (URLs, paths, editables, the project, options) is left to the run's own
    install on top of the template. Empty (no template) when a file checks hashes: a template installed
    without them would let the run's install skip the check."""
    requirements = [r for r in plan.requirements if _registry(r)]
    constraints: list[str] = []
    try:
        for file in plan.requirement_files:
            _read(root, root / file, requirements, constraints, 0)
        for file in plan.constraint_files:
            _read(root, root / file, constraints, constraints, 0)
    except _HashChecked:
        return Part()
    return Part(sorted(set(requirements)), sorted(set(constraints)))


class _HashChecked(Exception):
    pass


def template_key(
    part: Part,
    settings: Settings,
    installer: Installer,
    caller: Mapping[str, str],
    found: Seed | None,
    now: float | None = None,
) -> str:
    """`caller`: the caller's pip configuration (pip_config.read_caller_config); `found`: the seed."""
    index, ttl = settings.packages, settings.python.env_template_ttl_s
    remote = not index.local_only or any("://" in link for link in index.local)
    facts = {
        "format": FORMAT,
        "installer": [installer.name, installer.version],
        "python": [sys.version, str(Path(sys.base_prefix).resolve()), platform.machine()],
        "requirements": part.requirements,
        "constraints": part.constraints,
        "seed": [found.label, str(found.directory)] if found else None,
        "index_url": index.index_url,
        "no_index": index.local_only,
        "find_links": [_links_fingerprint(link) for link in index.local],
        "caller": {k: v for k, v in sorted(caller.items()) if k in pip_config.UV_KEYS},
        "time_bucket": int((time.time() if now is None else now) // ttl) if remote and ttl else None,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:32]


def cache_root(settings: Settings) -> Path:
    configured = settings.python.cache_dir or os.environ.get(CACHE_DIR_VARIABLE)
    root = Path(configured) if configured else Path.home() / ".cache" / "agentic-codemod"
    return root.expanduser().resolve()


def ensure(
    part: Part,
    key: str,
    settings: Settings,
    installer: Installer,
    box: Box,
    runner: Any,
    caller: Mapping[str, str],
    found: Seed | None,
) -> tuple[Path | None, list[ProcessResult]]:
    """The template for `key`, built now when missing (None when it cannot be: the run installs
    everything itself). `box` is the run's install box, `runner` the SandboxRunner to box with it,
    `caller` the caller's pip configuration (its index, certificates ... as for the run's install),
    `found` the seed installed first (none when None)."""
    root = cache_root(settings)
    template = root / "envs" / key
    shared_uv = root / "uv"
    for folder in (root, root / "envs", shared_uv):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    others = [str(f) for f in (root, root / "envs", shared_uv) if not private(f)]
    if others:  # another user could have put anything there: no template, the run installs it all
        _trace(runner, key, f"not used: {', '.join(others)} can be written by others than this user")
        return None, []
    if (template / "template.json").exists():
        if _intact(template, key):
            return template, []
        _trace(runner, key, f"not used: {template} is not a template this user built for this key")
        return None, []
    build = Path(tempfile.mkdtemp(prefix=f".build-{key[:12]}-", dir=root / "envs"))
    scratch = Path(tempfile.mkdtemp(prefix=".scratch-", dir=root / "envs"))
    try:
        venv = build / "venv"
        log = _build(venv, scratch, shared_uv, part, settings, installer, box, runner, caller, found)
        if not all(r.ok for r in log):
            return None, log
        meta = {
            "format": FORMAT,
            "key": key,
            "seed": found.label if found else "",
            **dataclasses.asdict(part),
        }
        (venv / "template.json").write_text(json.dumps(meta, indent=2))
        for path, mode in ((venv / "template.json", 0o644), (venv, 0o755)):  # _intact's, whatever the umask
            path.chmod(mode)
        try:
            venv.rename(template)  # atomic; a concurrent build of the same key may have won
        except OSError:
            if not (template / "template.json").is_file():
                return None, log
        keep_s, max_count = settings.python.env_template_keep_s, settings.python.env_template_max_count
        prune(root / "envs", keep_s, keep=template, max_count=max_count)
        return template, log
    finally:
        shutil.rmtree(build, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _intact(template: Path, key: str) -> bool:
    """The template folder and its record as this user's build left them: no link, no one else's, and
    the record names `key` in this format (a folder renamed or planted under another key is not it)."""
    record = template / "template.json"
    if not (private(template) and private(record, regular=True)):
        return False
    try:
        meta = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("key") == key and meta.get("format") == FORMAT


def _trace(runner: Any, key: str, outcome: str) -> None:
    trace = getattr(runner, "trace", None)
    if trace is not None:
        trace.record("verification", "environment_template", {"template": key}, outcome)


def instantiate(template: Path, env_dir: Path) -> ProcessResult | None:
    """Copy the template into the (empty) run environment; a ProcessResult for the install log. None
    (and `env_dir` emptied again) when the template went away meanwhile (pruned)."""
    start = time.monotonic()
    try:
        os.utime(template / "template.json")  # last used: what prune() goes by
        repo_copy.copy_tree(template, env_dir)
    except OSError:
        shutil.rmtree(env_dir, ignore_errors=True)
        env_dir.mkdir(parents=True, exist_ok=True)
        return None
    (env_dir / "template.json").unlink(missing_ok=True)
    return ProcessResult(
        argv=["copy", str(template), str(env_dir)],
        exit_code=0,
        duration_s=time.monotonic() - start,
        output_tail=f"environment template {template.name} copied",
    )


def prune(
    envs: Path, keep_s: float, *, keep: Path, max_count: int | None = None, now: float | None = None
) -> list[str]:
    """Delete the templates no run has copied for `keep_s`, and beyond `max_count` (`keep` counted) the
    least recently copied ones (each renamed away first, so a run never starts copying half of one; a
    run copying one meanwhile fails its copy and installs everything itself); the names deleted, oldest
    first. A runner building a template per dependency set would otherwise fill its disk within the
    keep time (a test suite's builds: 26 GB in a day)."""
    limit = (time.time() if now is None else now) - keep_s
    used: list[tuple[float, Path]] = []
    for template in envs.iterdir():
        stamp = template / "template.json"
        if template == keep or template.name.startswith("."):
            continue
        try:
            used.append((stamp.stat().st_mtime, template))
        except OSError:
            continue  # not a template (yet): a build's own rename has not happened
    used.sort(key=lambda pair: (-pair[0], pair[1].name))  # most recently copied first
    room = len(used) if max_count is None else max(max_count - 1, 0)  # `keep` takes one place
    gone: list[str] = []
    for rank, (stamp_time, template) in sorted(enumerate(used), key=lambda x: (x[1][0], x[1][1].name)):
        if stamp_time >= limit and rank < room:
            continue
        trash = envs / f".trash-{template.name}"
        try:
            template.rename(trash)
        except OSError:
            continue
        shutil.rmtree(trash, ignore_errors=True)
        gone.append(template.name)
    return gone


def uncompiled(found: Seed) -> str:
    """compileall's -x: the seed's packages (seed.Seed.uncompiled; also where the registry part upgraded
    one of them)."""
    return "/site-packages/(" + "|".join(re.escape(name) for name in found.uncompiled) + ")/"


def _build(
    venv: Path,
    scratch: Path,
    shared_uv: Path,
    part: Part,
    settings: Settings,
    installer: Installer,
    box: Box,
    runner: Any,
    caller: Mapping[str, str],
    found: Seed | None,
) -> list[ProcessResult]:
    """Create the venv, seed it, install the registry part, byte-compile: each step boxed, until one
    fails. The seed goes first: uv starts the venv's Python, which runs the .pth files installed in it,
    and then only the interpreter's own wheels are there."""
    python, timeout = venv / "bin" / "python", settings.budgets.install_timeout_s
    (scratch / "requirements.txt").write_text("".join(f"{r}\n" for r in part.requirements))
    (scratch / "constraints.txt").write_text("".join(f"{c}\n" for c in part.constraints))
    files = InstallPlan(requirement_files=["requirements.txt"], constraint_files=["constraints.txt"])
    compile_all = [str(python), "-m", "compileall", "-q", "-j", "0"]
    compile_all += ["-x", uncompiled(found)] if found is not None else []
    fetch = _boxed(runner, box, scratch, (venv.parent, shared_uv))
    compile_box = _boxed(runner, box, scratch, (venv.parent,), network=False)  # no shared cache
    log: list[ProcessResult] = []
    for argv in (
        installer.venv_command(venv),
        *([installer.seed_command(python, found, shared_uv)] if found else []),
    ):
        log.append(fetch(argv, cwd=scratch, timeout_s=timeout, env=None))
        if not log[-1].ok:
            return log
    # The wheels the repository names run their .pth files when the venv's Python starts (the compile):
    # the install goes through the index front as the project's does, and leaves no copy of a key behind.
    with index_front.front(caller, settings.packages, index_front.limits(settings, caller)) as fronted:
        sources = settings.model_copy(update={"packages": fronted.packages})
        install = installer.install_command(python, sources, files, shared_uv)
        install = [a for a in install if a != "--compile-bytecode"] + ["--no-build"]
        variables = installer.install_env(fronted.caller, pip_config.cert_copies(fronted.caller, scratch))
        log.append(fetch(install, cwd=scratch, timeout_s=timeout, env=variables))
    repo_copy.remove(scratch / pip_config.CERT_DIR)
    if log[-1].ok:
        log.append(compile_box([*compile_all, str(venv / "lib")], cwd=scratch, timeout_s=timeout, env=None))
    return log


def _boxed(runner: Any, box: Box, scratch: Path, writable: Sequence[Path], *, network: bool = True) -> Runner:
    template_box = box.for_template(scratch, writable)
    template_box = dataclasses.replace(template_box, network=template_box.network and network)
    return cast(Runner, runner.boxed(template_box))


def _registry(text: str) -> bool:
    requirement = pep508.parse(text)
    return requirement is not None and requirement.url is None


def _read(root: Path, path: Path, into: list[str], constraints: list[str], depth: int) -> None:
    """The registry requirements of `path` and what it includes. An include is taken from the folder of
    the file as named, as pip, uv and dependency_files.py take it, never from where a link leads."""
    real = path.resolve()
    if depth > MAX_INCLUDE_DEPTH or not real.is_file() or not real.is_relative_to(root.resolve()):
        return
    try:
        text = requirement_options.decode(real.read_bytes())
    except (OSError, ValueError):
        return
    options, _problems = requirement_options.scan(text)
    for option in options:
        if option.name in ("--hash", "--require-hashes"):
            raise _HashChecked
        if option.name == "requirement" and _registry(option.value):
            into.append(option.value.strip())
        elif option.name == "--requirement":
            _read(root, path.parent / option.value, into, constraints, depth + 1)
        elif option.name == "--constraint":
            _read(root, path.parent / option.value, constraints, constraints, depth + 1)


def _links_fingerprint(link: str) -> object:
    """A local wheel dir by what it holds (name, size, mtime); a URL as itself."""
    path = Path(link)
    if "://" in link or not path.is_dir():
        return link
    entries = sorted(p for p in path.iterdir() if p.is_file())
    return [str(path.resolve()), [(p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in entries]]
