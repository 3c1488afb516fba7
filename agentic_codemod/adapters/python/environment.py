"""The isolated environment verification runs in: a venv filled by uv (pip where uv cannot start).

    prepare_environment(root, env_dir, settings, runner, pins) -> VerificationEnv
        the environment template of the plan's registry part copied in when there is one (built now
        when missing, env_template.py), else `uv venv` / `python -m venv --without-pip`; either way
        seeded first with what `python -m venv` gives (pip, setuptools before 3.12: seed.py); then the
        whole install plan (see install_plan for what) installed on top by installer.py, under what the
        repository's lockfiles lock as constraints (lockfile.constraints); the venv writes no bytecode,
        in any of its interpreters (no_bytecode)
    install_dependencies(root, env, settings, runner, pins) -> ProcessResult
        the baseline environment plus the change the bump makes: only `pins`, nothing else upgraded
    holding(env, name, import names, settings) -> [str]
        what the host reads in site-packages that says the environment holds `name` (installed_files)
    copy_environment(env, dest) -> VerificationEnv | None
        the baseline environment copied for the bump, while the baseline's tests run on the original:
        only a venv uv made relocatable and installed into (else None)

Failures are data in `install_log` / the returned ProcessResult; the caller counts a failed install as
a failed verification. The one exception: the installer failing because the package index cannot be
reached raises EnvironmentUnavailable (exit 75, the run pauses) — that is not the code's fault.
The caller's pip configuration (pip.conf files, PIP_* variables: index, extra index, trusted host,
certificates, proxy) is read with pip's own reader and handed to the sandboxed installer explicitly
(pip_config.py): index URLs as variables (never on a recorded command line), certificate files
copied into the repository copy. The tool's packages.index_url / local / local_only win over it.
`env.install` says which installer ran (run.json `installs`; uv that does not start falls back to pip),
the template and the seed ("pip 23.2.1, ...", or seed.NONE where this Python ships no ensurepip wheels).
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentic_codemod import json_input
from agentic_codemod.adapters.python import (
    LOCKFILES,
    env_template,
    imports,
    index_front,
    installed_files,
    installer,
    lockfile,
    pip_config,
    seed,
)
from agentic_codemod.adapters.python.install_plan import InstallPlan, asked_extras, plan_install
from agentic_codemod.adapters.types import ProcessResult, Runner, VerificationEnv
from agentic_codemod.config import PYVENV_CFG_MAX_BYTES, Settings
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.sandbox import discard_install_cache, install_cache_of
from agentic_codemod.tools.untrusted_file import read_regular

INSPECT_TIMEOUT_S = 60.0  # listing what an environment holds
# Written in the disposable copy the baseline install runs on (never in the candidate): the versions the
# repository's lockfiles lock, as the install's constraints.
LOCK_CONSTRAINTS = ".agentic-codemod-locked.txt"

# Lower-cased fragments of pip's and uv's output that mean "the index could not be reached", not
# "bad requirements".
NETWORK_FAILURE_MARKERS = (
    "failed to establish a new connection",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname provided",
    "nameresolutionerror",
    "network is unreachable",
    "connection refused",
    "connection reset by peer",
    "connecttimeouterror",
    "read timed out",
    "proxyerror",
    "certificate verify failed",
    "could not fetch url",
    # uv's wording
    "dns error",
    "tcp connect error",
    "error sending request for url",
    "invalid peer certificate",
)


def prepare_environment(
    root: Path, env_dir: Path, settings: Settings, runner: Runner, pins: Sequence[str]
) -> VerificationEnv:
    """Create the venv and install the repository's requirements into it, together with `pins`
    (requirement strings of the tool's own: the bumped package at its `from` range, so the baseline
    tests the highest version both the task and the repository allow, or the one its lockfile locks),
    under the versions the repository's lockfiles lock (run.json `installs.baseline.locked`)."""
    chosen = installer.choose(settings)
    caller = caller_pip_config(settings)
    plan = plan_install(root, settings)
    plan = replace(plan, requirements=[*plan.requirements, *pins])
    found = seed.find()
    install = {"installer": chosen.name, "template": "", "seed": found.label if found else seed.NONE}
    locked, read, unread = lockfile.constraints(root, LOCKFILES, settings.budgets.max_lockfile_bytes)
    if unread:  # there, but nothing of it holds the baseline: said, not silently dropped
        install["locked_unread"] = ", ".join(unread)
    if plan.left_out:  # lint-only packages, groups declared nowhere
        install["left_out"] = "; ".join(plan.left_out)
    if plan.unread:  # lines the repository's install reads through substitutions the tool cannot resolve
        install["unread"] = "; ".join(plan.unread)
    if locked:  # the baseline tests what the repository's lockfile ships, not the newest its ranges admit
        repo_copy.write_new(root / LOCK_CONSTRAINTS, "".join(f"{line}\n" for line in locked))
        plan = replace(plan, constraint_files=[*plan.constraint_files, LOCK_CONSTRAINTS])
        install["locked"] = f"{', '.join(read)}: {len(locked)} version(s) as constraints"
    extras = asked_extras(root, plan)
    if extras:  # what capping reads a cap in an extra by (run.json installs.baseline.extras_asked)
        install["extras_asked"] = "; ".join(
            f"{key}[{','.join(names)}]" for key, names in sorted(extras.items())
        )
    env = VerificationEnv(venv_python(env_dir), env_dir, install=install, extras=extras)
    from_template = _from_template(root, env, settings, runner, plan, chosen, caller, found)
    if not from_template and not _create(root, env, settings, runner, chosen, found):
        return env
    no_bytecode(env_dir)
    if not plan.empty:
        env.install_log.append(_install(root, env, settings, runner, plan, caller))
    # That install built the project (setup.py, a build backend: repository code) with the run's install
    # cache mounted: nothing it wrote there (an index page, a wheel claiming to be a release) is what the
    # bump's install of the target reads.
    discard_install_cache(env_dir)
    return env


def install_dependencies(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, pins: Sequence[str]
) -> ProcessResult:
    """The baseline environment plus the change the bump makes: only `pins` (the bumped package at
    exactly its target) are installed, with what they require; every other installed version is kept
    where it satisfies them (no --upgrade). Each pin is installed afresh (InstallPlan.reinstall): the
    baseline's build backend ran with this environment writable and could have left a dist-info that
    claims the target's version over other code, which an install would keep as satisfied. pip has no
    per-package reinstall: where pip installs, the pins go in as usual (with what they require), then once
    more with --force-reinstall --no-deps (a pip uninstall removes only what the dist-info's RECORD
    lists, and a planted dist-info lists its own). An installer leaves what a RECORD does not list, so
    then, read on the host before any repository code runs there again, for each distribution the install
    wrote (the pins, and what it added or replaced: installed_files.written), nothing unlisted may stand
    before a module its new RECORD lists (installed_files.unlisted; a failed result names it), and the
    bytecode of its .py files is written afresh (installed_files.fresh_bytecode; the installer compiles
    nothing, InstallPlan.host_compiles). The result is also appended to `env.install_log`."""
    caller = caller_pip_config(settings)
    names = [name for name in map(_pinned_name, pins) if name is not None]
    plan = InstallPlan(requirements=list(pins), reinstall=names, host_compiles=True)
    before = installed_files.dist_infos(env.root)
    result = _install(root, env, settings, runner, plan, caller)
    planted = _not_as_installed(env.root, before, names) if result.ok else None
    if planted is not None:
        why = f"{planted}: code the baseline's install ran left it, and Python would import it"
        result = ProcessResult(
            argv=result.argv, exit_code=None, duration_s=result.duration_s, output_tail=why, error=why
        )
    env.install_log.append(result)
    return result


def _not_as_installed(env_root: Path, before: set[installed_files.DistInfo], pins: list[str]) -> str | None:
    """Why what the bump's install wrote is not as its installer wrote it (installed_files), or None once
    the bytecode of each of those distributions is written afresh."""
    try:
        wrote = installed_files.written(env_root, before, pins)
    except OSError as exc:
        return f"a folder on the way to the environment's site-packages is not its own ({exc})"
    planted = next(filter(None, (installed_files.unlisted(env_root, n) for n in wrote)), None)
    if planted is not None:
        return planted
    try:
        for name in wrote:
            installed_files.fresh_bytecode(env_root, name)
    except OSError as exc:
        return f"the bytecode of {', '.join(wrote)} cannot be written afresh ({exc})"
    return None


def uninstall(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, names: Sequence[str]
) -> ProcessResult:
    """Remove `names` (plain package names) from the environment: what the refreshed lockfile no longer
    locks. uv where it installed, else pip; the result is also appended to `env.install_log`."""
    timeout = settings.budgets.install_timeout_s
    python = str(env.interpreter)
    if env.install.get("installer") == "uv" and (uv := installer.find_uv()) is not None:
        argv = [uv.program, "pip", "uninstall", "--python", python, "--no-config", "--", *names]
    else:
        argv = [sys.executable, "-P", "-m", "pip", "--python", python, "uninstall", "-y", "--", *names]
    result = runner(argv, cwd=root, timeout_s=timeout)
    env.install_log.append(result)
    return result


def _create(
    root: Path,
    env: VerificationEnv,
    settings: Settings,
    runner: Runner,
    chosen: installer.Installer,
    found: seed.Seed | None,
) -> bool:
    """A venv of its own (no template): created, then seeded as `python -m venv` would be; pip where
    uv does not start. False when either step failed (the log says why)."""
    timeout = settings.budgets.install_timeout_s
    created = runner(chosen.venv_command(env.root), cwd=root, timeout_s=timeout)
    if chosen.name == "uv" and did_not_start(created):
        env.install_log.append(created)
        chosen = installer.PIP
        env.install["installer"] = chosen.name
        created = runner(chosen.venv_command(env.root), cwd=root, timeout_s=120.0)
    env.install_log.append(created)
    if not created.ok or found is None:
        return created.ok
    cache = install_cache_of(env.root) if chosen.name == "uv" else None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    seeded = runner(chosen.seed_command(env.interpreter, found, cache), cwd=root, timeout_s=timeout)
    env.install_log.append(seeded)
    return seeded.ok


def did_not_start(result: ProcessResult) -> bool:
    """The installer program could not be executed (missing, not executable), as opposed to failing."""
    if result.timed_out:
        return False
    # bwrap's own line is all a box prints whose program could not start; anywhere else in the output it
    # is what the install ran (helper-41: a build backend printing it made the tool fall back to pip)
    text = result.output_tail.lstrip()
    return result.exit_code is None or result.exit_code in (126, 127) or text.startswith("bwrap: execvp")


def _from_template(
    root: Path,
    env: VerificationEnv,
    settings: Settings,
    runner: Runner,
    plan: InstallPlan,
    chosen: installer.Installer,
    caller: dict[str, str],
    found: seed.Seed | None,
) -> bool:
    """Copy the environment template of the plan's registry part into `env` (built first when missing,
    seeded with `found`). Only with uv, inside a sandbox box (the template build needs one) and when
    templates are on."""
    box = getattr(runner, "box", None)
    if chosen.name != "uv" or box is None or not settings.python.env_template_ttl_s:
        return False
    part = env_template.registry_part(root, plan)
    if part.empty:
        return False
    key = env_template.template_key(part, settings, chosen, caller, found)
    template, log = env_template.ensure(part, key, settings, chosen, box, runner, caller, found)
    if template is None:  # the build is in the trace; the run installs everything itself
        _pause_when_unreachable(env, next((r for r in log if not r.ok), None))
        return False
    copied = env_template.instantiate(template, env.root)
    if copied is None:  # pruned meanwhile: the run installs everything itself
        return False
    env.install_log.append(copied)
    env.install["template"] = key
    trace = getattr(runner, "trace", None)
    if trace is not None:  # the audit trail says where the environment came from
        arguments = {"template": key, "requirements": part.requirements, "constraints": part.constraints}
        trace.record("verification", "environment_template", arguments, f"duration={copied.duration_s:.2f}s")
    return True


@functools.cache
def listing_program() -> str:
    """installed_listing.py as one `python -c` argument for the environment's own interpreter, without its
    docstrings and comments (the argv goes to the trace and the report)."""
    tree = ast.parse((Path(__file__).parent / "installed_listing.py").read_text(encoding="utf-8"))
    documented = (n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef))
    for node in documented:
        if ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def installed_versions(root: Path, env: VerificationEnv, runner: Runner) -> dict[str, str] | None:
    """What is installed in the environment, by canonical name; None when it cannot be read. The listing
    runs the environment's interpreter, where code an install left runs too (a .pth file, sitecustomize):
    one that leaves out a distribution whose dist-info folder the host sees in site-packages is forged or
    broken, and None (a run that reads "not installed" from it may end untested: install_repository)."""
    # -I: the listing's cwd is off sys.path (a json.py or __future__.py there would run in the listing)
    argv = [str(env.interpreter), "-I", "-c", listing_program()]
    result = runner(argv, cwd=root, timeout_s=INSPECT_TIMEOUT_S)
    if not result.ok:
        return None
    try:
        found = json_input.loads(result.output_tail.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    if not isinstance(found, dict):
        return None
    listing = {str(k): str(v) for k, v in found.items()}
    return listing if _on_disk(env.root) <= listing.keys() else None


def holding(env: VerificationEnv, name: str, given: Sequence[str], settings: Settings) -> list[str]:
    """What the host reads in the environment that says it holds distribution `name`, whatever the listing
    says (installed_files.holding), with the SDK's import names as first_import takes them."""
    modules = imports.import_names(name, settings.packages.local, given)
    return installed_files.holding(env.root, canonicalize_name(name), modules)


def _on_disk(env_root: Path) -> set[str]:
    """The canonical names of the environment's dist-info folders, read on the host (no code runs); a
    name no listing can hold where a folder on the way to site-packages is a link, or there are several."""
    try:
        sites = installed_files.site_packages(env_root)
    except OSError:
        return {"(a link on the way to site-packages)"}
    if len(sites) > 1:
        return {"(more than one site-packages)"}
    return {
        installed_files.dist_name(name)
        for _site, name, _inode, _ctime in installed_files.dist_infos(env_root)
    }


def copy_environment(env: VerificationEnv, dest: Path) -> VerificationEnv | None:
    """`env` copied to the empty or missing `dest`, for the bump to install into while the baseline's tests
    run on `env` (workflow/baseline_run.py); None where the copy would not be the same environment. Only a
    venv that uv made relocatable (pyvenv.cfg `relocatable = true`) and installed into: its scripts find
    their interpreter beside them. pip's and `python -m venv`'s name the original's interpreter by its
    absolute path, so a copy would run the baseline's packages. (A path of the original that something
    installed still names is not mounted where the copy's tests run: they fail, never pass on it.)"""
    if env.install.get("installer") != "uv" or not _relocatable(env.root):
        return None
    if not repo_copy.copy_into_empty(env.root, dest):
        return None
    return VerificationEnv(
        venv_python(dest),
        dest,
        list(env.install_log),
        dict(env.links),
        dict(env.install),
        {name: list(extras) for name, extras in env.extras.items()},
    )


def _relocatable(env_dir: Path) -> bool:
    data = read_regular(env_dir / "pyvenv.cfg", PYVENV_CFG_MAX_BYTES)  # the baseline's install wrote ENV
    try:
        lines = (data or b"").decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return False
    return any(line.replace(" ", "").lower() == "relocatable=true" for line in lines)


def version_matches(version: str, specifier: str) -> bool:
    """Whether `version` is inside `specifier` (PEP 440); an unparsable one never is."""
    try:
        return Version(version) in SpecifierSet(specifier)
    except (InvalidVersion, InvalidSpecifier):
        return False


def pip_install_command(python: Path, settings: Settings, plan: InstallPlan, *, upgrade: bool) -> list[str]:
    """This interpreter's pip, installing `plan` into the environment whose interpreter is `python`."""
    argv = installer.PIP.install_command(python, settings, InstallPlan(), None)
    return argv + (["--upgrade"] if upgrade else []) + plan.pip_args()


# A start-up line of the venv (site runs it in every interpreter of the venv): no .pyc is written beside
# the repository's modules, also by a test's child process whose environment has no PYTHONDONTWRITEBYTECODE
# (jupyter_core runs `python jupyter witness` with env={"PATH": ""}): such bytecode in the test copy is
# what the shadowing check must refuse, since it cannot tell it from planted code.
NO_BYTECODE_PTH = "_agentic_codemod_no_bytecode.pth"


def no_bytecode(env_dir: Path) -> None:
    """Write NO_BYTECODE_PTH into the venv's site-packages (the tests mount the venv read-only)."""
    for site_packages in sorted(env_dir.glob("lib/python*/site-packages")) or sorted(
        env_dir.glob("Lib/site-packages")
    ):
        (site_packages / NO_BYTECODE_PTH).write_text("import sys; sys.dont_write_bytecode = True\n")


def venv_python(env_dir: Path) -> Path:
    if sys.platform == "win32":
        return env_dir / "Scripts" / "python.exe"
    return env_dir / "bin" / "python"


def index_unreachable(result: ProcessResult) -> str | None:
    """The line of pip's output saying the index could not be reached, when that is why it failed."""
    if result.ok:
        return None
    for line in result.output_tail.splitlines():
        if any(marker in line.lower() for marker in NETWORK_FAILURE_MARKERS):
            return line.strip()
    return None


def _install(
    root: Path,
    env: VerificationEnv,
    settings: Settings,
    runner: Runner,
    plan: InstallPlan,
    caller: dict[str, str],
) -> ProcessResult:
    if plan.empty:
        return ProcessResult(argv=[], exit_code=0, duration_s=0.0, output_tail="nothing to install")
    chosen = installer.find_uv() if env.install.get("installer") == "uv" else None
    with index_front.front(caller, settings.packages, index_front.limits(settings, caller)) as box:
        # the install runs the repository's build backend: it gets the front's URLs, no credential
        if box.packages is not settings.packages:
            env.install["index_front"] = "the caller's index credentials held by the tool's local front"
            settings = settings.model_copy(update={"packages": box.packages})
        result = _run_install(root, env, settings, runner, plan, box.caller, chosen or installer.PIP)
        if chosen is not None and did_not_start(result):
            env.install["installer"] = installer.PIP.name
            result = _run_install(root, env, settings, runner, plan, box.caller, installer.PIP)
    _pause_when_unreachable(env, result, box.unreachable)
    return result


def caller_pip_config(settings: Settings) -> dict[str, str]:
    """The caller's pip configuration for an install (the sandbox clears the environment and HOME), or
    none where the install reaches nothing over the network (`--no-index` with local folders): its index
    credentials and client key would serve nothing there but the repository's build backend, which runs
    in the same install."""
    return pip_config.read_caller_config(os.environ) if settings.packages.reach_network else {}


def _pause_when_unreachable(
    env: VerificationEnv, result: ProcessResult | None, fronted: Sequence[str] = ()
) -> None:
    """`fronted`: what the index front could not reach (the installer saw only its 502)."""
    reason = index_unreachable(result) if result is not None else None
    if reason is None and result is not None and not result.ok and fronted:
        reason = fronted[0]
    if reason is not None:
        raise EnvironmentUnavailable(
            f"the package index cannot be reached while installing into {env.root}: {reason}",
            hint="check --index-url / --find-links (packages.index_url / packages.local in the config) "
            "and the network, then resume",
        )


def _run_install(
    root: Path,
    env: VerificationEnv,
    settings: Settings,
    runner: Runner,
    plan: InstallPlan,
    caller: dict[str, str],
    chosen: installer.Installer,
) -> ProcessResult:
    if chosen.name == "uv":
        cache = install_cache_of(env.root)
        cache.mkdir(parents=True, exist_ok=True)
        argv = chosen.install_command(env.interpreter, settings, plan, cache)
        variables = chosen.install_env(caller, pip_config.cert_copies(caller, root))
    else:
        if plan.reinstall:  # pip's reinstall takes the whole call (InstallPlan.reinstall): a plain one first
            plain = _run_install(root, env, settings, runner, replace(plan, reinstall=[]), caller, chosen)
            if not plain.ok:
                return plain
            env.install_log.append(plain)
        extra = tuple(pip_config.cert_args(caller, root))
        argv = chosen.install_command(env.interpreter, settings, plan, None, extra=extra)
        variables = chosen.install_env(caller, {})
    return runner(argv, cwd=root, timeout_s=settings.budgets.install_timeout_s, env=variables)


def _pinned_name(pin: str) -> str | None:
    """The distribution a pin names ("acme-sdk==2.0.0", "gear==1.1.0; marker"); None for a string that
    is no requirement (the installer refuses it anyway)."""
    try:
        return canonicalize_name(Requirement(pin).name)
    except InvalidRequirement:
        return None
