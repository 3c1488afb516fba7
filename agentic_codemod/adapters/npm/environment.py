"""The environment verification runs in: the repository's packages installed by npm into the run's
environment directory, never into the repository.

    prepare_environment(root, env_dir, settings, runner, pins) -> VerificationEnv
        the repository copy is copied to ENV/project (without node_modules and .git), then
            npm ci --ignore-scripts …            (npm install --no-package-lock … without a lockfile)
            npm install --no-save --ignore-scripts --prefer-offline NAME@RANGE
                                                 only when the lock holds a version outside the pin's range
            npm rebuild                          install scripts, after the credentials are gone
    install_dependencies(root, env, settings, runner, pins) -> ProcessResult
        npm install --no-save --ignore-scripts --prefer-offline NAME@VERSION, then npm rebuild NAME: the
        baseline plus the bumped package at exactly its target; nothing else is asked for. Before it,
        ENV holds only ENV/project, whose .npmrc, package.json and lockfile are the candidate's (npm
        then installs what the refreshed lockfile locks), and NAME is gone from node_modules; after
        it, NAME must be a folder of its own holding package NAME (not a workspace's link, an alias or
        an override)
    installed_versions(root, env, runner) -> {name: version}    read from ENV/project/node_modules
                                                                (package.json files; no code runs)
    copy_environment(env, dest) -> VerificationEnv | None       ENV copied (links kept as links), for
                                                                the bump while the baseline's tests run
    version_matches(version, range) -> bool                     node-semver
    check_test_requirement(entry) -> why not                    npm installs what package.json and
                                                                its lockfile declare: never an entry

Every npm call that installs uses the run's install cache (sandbox.install_cache_of: the sandbox's HOME
is empty for each call); the installs after the first read what it fetched (SAME_RUN). Only npm writes
what a later call reads there: `npm rebuild`, whose install scripts are repository code, runs with an
empty folder in the cache's place, discarded afterwards.

The package sources of the tool's settings (packages.index_url / local / local_only: --index-url,
--find-links, --no-index) are pip's terms and left unread: npm takes its registry from the caller's npm
configuration (npm_config_registry, the user .npmrc; npm_config.py), tokens redacted.

npm failing because the registry cannot be reached (ENOTFOUND, ECONNREFUSED, ETIMEDOUT, EAI_AGAIN …)
raises EnvironmentUnavailable (exit 75, the run pauses): that is not the code's fault. Any other failure
is data in `install_log` / the returned ProcessResult.

`pins` are written as VERSIONING.requirement writes them ("acme-sdk@^1.2.0", "acme-sdk@2.0.0"; a name
followed directly by a range or `==VERSION` is read too). Install scripts are repository code: they
run only inside the sandbox, and only in `npm rebuild`, which runs without the caller's credentials.
VerificationEnv.interpreter is the node the tests run with; VerificationEnv.root the environment directory.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentic_codemod import json_input
from agentic_codemod.adapters.npm import LOCKFILES, versioning
from agentic_codemod.adapters.npm.update import run_npm
from agentic_codemod.adapters.types import ProcessResult, Runner, VerificationEnv
from agentic_codemod.config import ENV_LISTED_MAX, ENV_MANIFEST_MAX_BYTES, Settings
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.sandbox import install_cache_of, install_cache_set_aside
from agentic_codemod.tools.untrusted_file import read_regular

QUIET = ["--no-audit", "--no-fund", "--ignore-scripts"]
# An install after the run's first one reads what that one fetched (the registry's documents and
# tarballs, minutes old) from the run's cache instead of asking the registry whether each is still
# current; what the cache lacks still comes from the registry. Both environments then see one registry.
SAME_RUN = ["--prefer-offline"]
PROJECT = "project"  # ENV/project: the copy npm installs into
SKIPPED = ("node_modules", ".git")
# What npm reads of ENV/project besides node_modules: the candidate's, put back before each of the bump's
# npm calls (_as_the_candidate).
NPM_READS = (".npmrc", "package.json", *LOCKFILES)
HIDDEN_LOCKFILE = ".package-lock.json"  # npm's record of what it installed, inside node_modules
# npm's error codes for a registry it cannot reach (not a package or version it could not find).
NETWORK_ERRORS = re.compile(
    r"\b(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|"
    r"UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN|CERT_HAS_EXPIRED)\b"
)
PIN = re.compile(r"^(?P<name>@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)(?P<range>.*)$")


def node_modules(env_root: Path) -> Path:
    """Where the environment's packages are (a test run must see it as the project's node_modules)."""
    return env_root / PROJECT / "node_modules"


def prepare_environment(
    root: Path, env_dir: Path, settings: Settings, runner: Runner, pins: Sequence[str]
) -> VerificationEnv:
    timeout = settings.budgets.install_timeout_s
    project = env_dir / PROJECT
    if project.exists():
        shutil.rmtree(project)
    shutil.copytree(root, project, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED))
    env = VerificationEnv(
        interpreter=Path(shutil.which("node") or "node"),
        root=env_dir,
        install_log=[],
        links={"node_modules": node_modules(env_dir)},
    )
    locked = any((project / name).is_file() for name in LOCKFILES)
    argv = ["npm", "ci", *QUIET] if locked else ["npm", "install", "--no-package-lock", *QUIET]
    env.install_log.append(_npm(argv, project, runner, timeout))
    if not env.install_log[-1].ok:
        return env
    installed = installed_versions(root, env, runner) or {}
    for name, wanted in (_pin(p) for p in pins):
        if not versioning.matches(installed.get(name, ""), wanted):
            argv = ["npm", "install", "--no-save", *QUIET, *SAME_RUN, f"{name}@{wanted}"]
            env.install_log.append(_npm(argv, project, runner, timeout))
            if not env.install_log[-1].ok:
                return env
    env.install_log.append(_scripts(["npm", "rebuild"], project, runner, timeout))
    return env


def install_dependencies(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, pins: Sequence[str]
) -> ProcessResult:
    timeout = settings.budgets.install_timeout_s
    project = env.root / PROJECT
    wanted = [_pin(p) for p in pins]
    if not wanted:
        return ProcessResult(argv=[], exit_code=0, duration_s=0.0, output_tail="nothing to install")
    refused = _as_the_candidate(root, env.root) or _afresh(env.root, [n for n, _ in wanted])
    if refused is not None:
        env.install_log.append(refused)
        return refused
    argv = ["npm", "install", "--no-save", *QUIET, *SAME_RUN, *(f"{n}@{r}" for n, r in wanted)]
    result = _npm(argv, project, runner, timeout)
    env.install_log.append(result)
    if not result.ok:
        return result
    linked = _not_from_a_registry(env.root, [n for n, _ in wanted])
    if linked is not None:
        env.install_log.append(linked)
        return linked
    rebuild = _scripts(["npm", "rebuild", *(n for n, _ in wanted)], project, runner, timeout)
    env.install_log.append(rebuild)
    return rebuild if not rebuild.ok else result


def uninstall(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, names: Sequence[str]
) -> ProcessResult:
    """Remove `names` from the environment's node_modules (package.json and the lockfile stay)."""
    refused = _as_the_candidate(root, env.root)
    if refused is not None:
        env.install_log.append(refused)
        return refused
    argv = ["npm", "uninstall", "--no-save", *QUIET, "--", *names]
    result = _npm(argv, env.root / PROJECT, runner, settings.budgets.install_timeout_s)
    env.install_log.append(result)
    return result


def installed_versions(root: Path, env: VerificationEnv, runner: Runner) -> dict[str, str] | None:
    """{path: version} of every package in the environment's node_modules, by its path below it as a
    lockfile keys it: top-level ones by name (scoped ones too), copies nested inside another package as
    `a/node_modules/b`; None when there is no node_modules. Read from package.json files (no code runs);
    a link out of the environment is not read. None (unreadable, never a partial list) past
    ENV_LISTED_MAX packages."""
    modules = node_modules(env.root)
    if not modules.is_dir():
        return None
    inside = env.root.resolve()
    found: dict[str, str] = {}
    try:
        for package, path in _walk(modules):
            if not package.resolve().is_relative_to(inside):
                continue  # a link out of the environment (a file: or link: package) is not read
            manifest = read_manifest(package)
            if isinstance(manifest, dict) and isinstance(manifest.get("version"), str):
                found[path] = manifest["version"]
    except OverflowError:
        return None
    return dict(sorted(found.items()))


def _walk(modules: Path) -> Iterator[tuple[Path, str]]:
    """(folder, path as a lockfile keys it) of every package below `modules`, copies nested inside another
    package too, never below a link (a workspace's, or a loop); OverflowError past ENV_LISTED_MAX."""
    todo, seen = [(modules, "")], 0
    while todo:
        folder, prefix = todo.pop()
        for package in _packages(folder):
            seen += 1
            if seen > ENV_LISTED_MAX:
                raise OverflowError(f"more than {ENV_LISTED_MAX} packages in node_modules")
            path = prefix + package.relative_to(folder).as_posix()
            yield package, path
            nested = package / "node_modules"
            if not package.is_symlink() and nested.is_dir() and not nested.is_symlink():
                todo.append((nested, f"{path}/node_modules/"))


def holding(env: VerificationEnv, name: str, given: Sequence[str], settings: Settings) -> list[str]:
    """What the host reads in the environment's node_modules that says it holds package `name`, whatever
    installed_versions listed: a folder of that name at any depth (node loads it through its index.js
    whether or not its package.json reads: an install script can remove that, helper-49), a folder whose
    package.json names it (an alias), or a package whose dependencies or non-optional peers name it (by
    name or alias). Bounded like the listing (past ENV_LISTED_MAX packages, that is what it says)."""
    found: list[str] = []
    try:
        for package, path in _walk(node_modules(env.root)):
            manifest = read_manifest(package)
            manifest = manifest if isinstance(manifest, dict) else {}
            if path == name or path.endswith(f"/node_modules/{name}") or manifest.get("name") == name:
                found.append(f"node_modules/{path}")  # by its folder, or an alias's (`"a": "npm:NAME@1"`)
            found += [f"node_modules/{path} {d}" for d in _depends_on(manifest, name)]
    except OverflowError as exc:
        found.append(str(exc))
    return found


def _depends_on(manifest: dict[str, object], name: str) -> list[str]:
    """The entries of a package.json that make npm install `name` beside it: dependencies and peers not
    marked optional, by name or as an alias (`npm:NAME@range`). optionalDependencies and optional peers
    need not be installed, so they say nothing (helper-50: a false exit 3)."""
    meta = manifest.get("peerDependenciesMeta")
    optional = (
        {k for k, v in meta.items() if isinstance(v, dict) and v.get("optional")}
        if isinstance(meta, dict)
        else set()
    )
    found = []
    for key in ("dependencies", "peerDependencies"):
        wanted = manifest.get(key)
        for dep, spec in wanted.items() if isinstance(wanted, dict) else ():
            alias = spec.lower() if isinstance(spec, str) else ""  # npm reads `NPM:` as `npm:` too
            aliased = alias == f"npm:{name}" or alias.startswith(f"npm:{name}@")
            if (dep == name or aliased) and not (key == "peerDependencies" and dep in optional):
                found.append(f"{key}: {dep} {spec}")
    return found


def read_manifest(package: Path) -> object | None:
    """`package`/package.json parsed, read on the host without following a link at the file, from a
    regular file of at most ENV_MANIFEST_MAX_BYTES; None otherwise. An install script could put a link to
    a host file there, or a FIFO that blocks a plain read."""
    data = read_regular(package / "package.json", ENV_MANIFEST_MAX_BYTES)
    if data is None:
        return None
    try:
        return json_input.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, or nested past what json_input reads
        return None


def _packages(modules: Path) -> list[Path]:
    """The package folders of one node_modules folder (scoped ones inside their @scope folder)."""
    try:
        entries = sorted(modules.iterdir())
    except OSError:
        return []
    folders = [p for p in entries if not p.name.startswith((".", "@"))]
    for scope in (p for p in entries if p.name.startswith("@") and p.is_dir() and not p.is_symlink()):
        folders += sorted(scope.iterdir())
    return folders


def copy_environment(env: VerificationEnv, dest: Path) -> VerificationEnv | None:
    """`env` copied to the empty or missing `dest` (symlinks stay links: node_modules/.bin's are relative),
    for the bump to install into while the baseline's tests run on `env`; None when it cannot be. A path
    of the original that something installed still names is not mounted where the copy's tests run."""
    if not repo_copy.copy_into_empty(env.root, dest):
        return None
    links = {"node_modules": node_modules(dest)}
    return VerificationEnv(env.interpreter, dest, list(env.install_log), links, dict(env.install))


def version_matches(version: str, specifier: str) -> bool:
    """Whether `version` is inside `specifier` (npm semantics; `==X` is read as the exact version X)."""
    text = specifier.strip()
    return versioning.matches(version, "=" + text[2:] if text.startswith("==") else text)


def _npm(argv: list[str], project: Path, runner: Runner, timeout: float) -> ProcessResult:
    """One npm call that may reach the registry, with the run's install cache (ENV/../install-cache); an
    unreachable registry pauses the run."""
    result = run_npm(argv, project, runner, timeout, cache=install_cache_of(project.parent))
    found = NETWORK_ERRORS.search(result.output_tail) if not result.ok else None
    if found is not None:
        raise EnvironmentUnavailable(
            f"the npm registry cannot be reached while installing into {project}: {found.group(1)}",
            hint="check the registry settings (npm_config_registry, ~/.npmrc) and the network, then resume",
        )
    return result


def _as_the_candidate(root: Path, env_root: Path) -> ProcessResult | None:
    """Before an npm call after the baseline's install scripts ran (the bump's environment is a copy of
    what they left): what npm reads besides node_modules is the tool's and the candidate's. npm reads
    .npmrc, package.json and the lockfile of ENV/project, and walks up to ENV for a workspace root; an
    install script could have written `registry=` into an .npmrc, a workspace named like the target into
    package.json, a lockfile entry `resolved` at a server of its own, or ENV/package.json making
    ENV/project a workspace of ENV: the bump would then install a package of the script's choosing under
    the target's name. So every entry of ENV besides ENV/project goes, and ENV/project's NPM_READS are
    `root`'s (the candidate's disposable copy, which no script has run in: the repository's .npmrc,
    checked at intake, the bumped package.json and the refreshed lockfile, which npm then installs
    exactly, so an `uninstall` afterwards keeps the target), removed where `root` has none. A failed
    result (nothing run) when ENV/project is no longer the tool's folder."""
    project = env_root / PROJECT
    if project.is_symlink() or not project.is_dir():
        return _refused(f"{project} is not a folder any more: the baseline's install scripts replaced it")
    for entry in env_root.iterdir():
        if entry.name != PROJECT:
            repo_copy.remove(entry)
    for name in NPM_READS:
        source = root / name
        repo_copy.discard(project / name)
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, project / name)
    return None


def _afresh(env_root: Path, names: Sequence[str]) -> ProcessResult | None:
    """Before the bump's install: the packages it asks for removed from node_modules, and npm's record of
    what it installed there (node_modules/.package-lock.json), so npm extracts each from the registry's
    tarball. An install script of the baseline could have left a folder that claims the target's version,
    which npm would keep as installed. A failed result (nothing run) for a name that is not a package's,
    or where node_modules (or a package's @scope folder) is a link: nothing is removed through one."""
    modules = node_modules(env_root)
    if modules.is_symlink() or not modules.is_dir():  # a link planted there would be followed here
        return _refused(f"{modules} is not a folder: an install script replaced it; nothing installed")
    for name in names:
        if any(part in ("", ".", "..") for part in name.split("/")):
            return _refused(f"{name!r} is not a package name: nothing installed")
        scope = (modules / name).parent
        if scope != modules and scope.is_symlink():
            return _refused(f"{scope} is a link: an install script replaced it; nothing installed")
        repo_copy.discard(modules / name)
    repo_copy.discard(modules / HIDDEN_LOCKFILE)
    return None


def _not_from_a_registry(env_root: Path, names: Sequence[str]) -> ProcessResult | None:
    """After the bump's install, before any script runs: each package it asked for is a folder of its own
    named as the package (npm links a workspace or a `file:` package of the same name in its place, and an
    alias or an override can put another package there). A failed result naming the first that is not."""
    modules = node_modules(env_root)
    for name in names:
        folder = modules / name
        if folder.is_symlink() or not folder.is_dir():
            return _refused(
                f"node_modules/{name} is a link or missing after the install: npm took a workspace or a "
                f"local package named {name}, not the registry's"
            )
        manifest = read_manifest(folder)
        found = manifest.get("name") if isinstance(manifest, dict) else None
        if found != name:
            return _refused(f"node_modules/{name} holds package {found!r}, not {name}: an alias or override")
    return None


def _refused(why: str) -> ProcessResult:
    return ProcessResult(argv=[], exit_code=None, duration_s=0.0, output_tail=why, error=why)


def _scripts(argv: list[str], project: Path, runner: Runner, timeout: float) -> ProcessResult:
    """`npm rebuild`: install scripts, repository code. They never see the run's install cache, and what
    they write in its place is gone before any later npm call reads it (sandbox.install_cache_set_aside)."""
    with install_cache_set_aside(project.parent):
        return runner(argv, cwd=project, timeout_s=timeout)


def _pin(pin: str) -> tuple[str, str]:
    found = PIN.match(pin.strip())
    if found is None or not found.group("range").strip():
        raise ValueError(f"not a package with a range: {pin!r}")
    wanted = found.group("range").strip()
    if wanted.startswith("=="):
        wanted = wanted[2:]
    elif wanted.startswith("@"):
        wanted = wanted[1:]
    return found.group("name"), wanted.replace(",", " ")


def check_test_requirement(entry: str) -> str | None:
    """npm has no test requirements beside the project's own: it installs what package.json declares."""
    return "npm installs what package.json and its lockfile declare; declare test packages there"
