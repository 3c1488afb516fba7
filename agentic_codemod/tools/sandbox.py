"""Where the repository's own code runs: a bubblewrap sandbox around every install and test process.

    probe(bwrap="bwrap") -> str | None        why bwrap cannot start here (None: it can)
    Box(isolation, repo, mounts, network, memory_bytes)
    box.wrap(argv, cwd, env) -> (argv, cwd, env)   the command as the sandbox runs it

The repository's code (setup.py and build backends during install, conftest.py and tests during
verification) is as hostile as the model. Inside the sandbox (isolation "sandbox"):

    namespaces      new pid, ipc, uts, net, user and cgroup namespaces; net is shared only for an install
                    that must reach a package index (never for tests); inside, an ordinary uid, not root
    environment     --clearenv, then only the scrubbed allowlist; HOME and TMPDIR on a tmpfs
    file system     the system (/usr, a few /etc files) and the Python installation read-only; the
                    repository copy at REPO_MOUNT; the verification venv read-only while tests run;
                    wheel directories read-only. Not there: the run dir, the tool's clone and its .git,
                    the caller's HOME, the parent's /proc.
    lifetime        --die-with-parent; every process dies with the pid namespace when the command ends
    limits          wall clock (the caller's timeout) and address space per process (prlimit)

Isolation "process" (explicit --isolation process) runs the same command as a plain process group with
the scrubbed environment: nothing above but the environment and the group kill holds.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentic_codemod.tools import repo_copy

Isolation = Literal["sandbox", "process"]
ISOLATIONS: tuple[Isolation, ...] = ("sandbox", "process")

REPO_MOUNT = Path("/codemod/repo")
HOME_MOUNT = Path("/codemod/home")
TMP_MOUNT = Path("/tmp")
# System paths the sandbox sees read-only (missing ones are skipped; top-level symlinks stay symlinks).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
)
# Only an install that reaches a package index sees these (name resolution). Not the machine's pip
# configuration (/etc/pip.conf, /etc/xdg/pip): it may hold index credentials, and the installs get what
# they need of it explicitly (adapters/python/pip_config.py; helper-41: a build backend read a password
# from /etc/pip.conf while the installer went through the index front).
NETWORK_ETC_FILES = ("/etc/resolv.conf",)
# Folders inside what the sandbox sees that hold a machine's private keys: an empty tmpfs in their place.
# The sandbox's uid maps to the caller's outside, so where the tool runs as root (a CI container), files
# only root may read (mode 0600 under /etc/ssl/private) would be the sandbox user's own (the red-team's
# reproduction listed /etc/ssl/private from a conftest).
MASKED_PATHS = ("/etc/ssl/private",)
PROBE_TIMEOUT_S = 20.0
# HOME is empty inside, so no ~/.gitconfig: test suites that make commits (version-from-git tools and
# the like) get a neutral identity, as on a CI runner.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "agentic-codemod sandbox",
    "GIT_AUTHOR_EMAIL": "sandbox@agentic-codemod.invalid",
    "GIT_COMMITTER_NAME": "agentic-codemod sandbox",
    "GIT_COMMITTER_EMAIL": "sandbox@agentic-codemod.invalid",
}
# Who the repository's code is inside the sandbox: an ordinary user, never root, whoever runs the tool
# (mapped to the caller's own uid outside), so permission checks behave as on a developer's machine.
SANDBOX_UID = 1000


@dataclass(frozen=True)
class Mount:
    source: Path
    writable: bool = False
    target: Path | None = None  # None: the same path inside

    @property
    def inside(self) -> Path:
        return self.target or self.source


@dataclass(frozen=True)
class Box:
    """One sandboxed process: the repository copy it works on and what else it may see."""

    isolation: Isolation
    repo: Path  # host directory of the repository copy (REPO_MOUNT inside the sandbox)
    mounts: tuple[Mount, ...] = ()
    network: bool = False
    memory_bytes: int | None = None
    bwrap: str = "bwrap"
    home: Path | None = None  # process isolation only: HOME and TMPDIR on the host
    tmp: Path | None = None
    env_overrides: Mapping[str, str] = field(default_factory=dict)
    venv: Path | None = None  # activated as tox and CI do: its bin/ first on PATH, VIRTUAL_ENV set
    hidden: tuple[Path, ...] = ()  # the caller's secret files: shown empty wherever the box shows them

    def inside(self, host: Path | str) -> str:
        """The path a sandboxed process uses for a host path (identity under process isolation)."""
        text = str(host)
        if self.isolation != "sandbox":
            return text
        for source, target in self._translations():
            if text == source or text.startswith(source + "/"):
                return target + text[len(source) :]
        return text

    def wrap(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]
    ) -> tuple[list[str], Path, dict[str, str]]:
        inner_env = {**env, **self.env_overrides}
        if self.venv is not None:
            inner_env["PATH"] = f"{self.venv / 'bin'}:{inner_env.get('PATH', '/usr/bin:/bin')}"
            inner_env["VIRTUAL_ENV"] = str(self.venv)
        if self.isolation != "sandbox":
            if self.home is not None and self.tmp is not None:
                inner_env.update(_home_env(self.home, self.tmp))
            return [str(a) for a in argv], cwd, inner_env
        inner_env.update(_home_env(HOME_MOUNT, TMP_MOUNT))
        inner_env.update({k: v for k, v in GIT_IDENTITY.items() if k not in inner_env})
        command = [self.inside(a) for a in argv]
        if self.memory_bytes:
            command = [_prlimit(), f"--as={self.memory_bytes}", "--", *command]
        outer = [self.bwrap, *self._options(inner_env), "--chdir", self.inside(cwd), "--", *command]
        return outer, self.repo, {"PATH": env.get("PATH", "/usr/bin:/bin")}

    def sees(self, host: Path) -> bool:
        """Whether a process in this box sees the host file `host` at its own path (links resolved): the
        system paths, the Python installation and this tool's environment, the box's mounts at their own
        place. Everything, under process isolation."""
        if self.isolation != "sandbox":
            return True
        given, real = Path(host).absolute(), Path(host).resolve()
        places = [Path(p) for p in SYSTEM_PATHS if Path(p).exists()]
        places += python_prefixes()
        places += [m.source for m in self.mounts if m.target is None]
        places += [p.resolve() for p in places]
        # the path as given is what the box starts (a link outside every mount is not there), and where
        # it leads is what runs
        return all(any(p == place or p.is_relative_to(place) for place in places) for p in (given, real))

    def for_template(self, scratch: Path, writable: Sequence[Path]) -> Box:
        """This install box around a build of the runner's shared environment templates: an empty
        `scratch` dir for the repository, `writable` (the template, the shared cache) and the
        read-only wheel dirs; not the run's venv or install cache."""
        mounts = (*(Mount(p, writable=True) for p in writable), *(m for m in self.mounts if not m.writable))
        return dataclasses.replace(self, repo=scratch, mounts=mounts, venv=None)

    def _translations(self) -> list[tuple[str, str]]:
        pairs = [(str(self.repo), str(REPO_MOUNT))]
        pairs += [(str(m.source), str(m.inside)) for m in self.mounts]
        return sorted(pairs, key=lambda p: len(p[0]), reverse=True)

    def _options(self, env: Mapping[str, str]) -> list[str]:
        opts = ["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"]
        opts += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        opts += ["--share-net"] if self.network else []
        for name, value in sorted(env.items()):
            opts += ["--setenv", name, value]
        # tmpfs first: a Python installation or a venv that lives under /tmp is bound on top of it
        opts += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", str(TMP_MOUNT), "--tmpfs", str(HOME_MOUNT)]
        opts += _system_mounts(network=self.network)
        opts += ["--bind", str(self.repo), str(REPO_MOUNT)]
        for mount in self.mounts:
            opts += ["--bind" if mount.writable else "--ro-bind", str(mount.source), str(mount.inside)]
        for path in self._shown(self.hidden):  # last: over whatever mount shows them
            opts += ["--ro-bind", str(_empty_file()), path]
        return opts

    def _shown(self, files: tuple[Path, ...]) -> list[str]:
        """Where the box shows each of `files` (a regular file, followed through links): under the system
        paths, the Python installations, or a mount (as the box names it). A file the box does not show
        is left alone: bwrap could not create its mount point under a read-only folder."""
        shown: list[str] = []
        identity = [Path(p) for p in SYSTEM_PATHS if Path(p).is_dir() and not Path(p).is_symlink()]
        identity += [*python_prefixes(), *(Path(f) for f in (*ETC_FILES, *NETWORK_ETC_FILES))]
        for file in files:
            try:
                real = file.resolve(strict=True)
            except (OSError, RuntimeError):
                continue
            if not real.is_file() or any(real.is_relative_to(m) for m in MASKED_PATHS):
                continue  # (a masked folder is an empty read-only tmpfs: nothing to hide, nowhere to bind)
            if any(real == d or real.is_relative_to(d) for d in identity):
                shown.append(str(real))
            for mount in self.mounts:
                if real.is_relative_to(mount.source):
                    shown.append(str(mount.inside / real.relative_to(mount.source)))
            if real.is_relative_to(self.repo):
                shown.append(str(REPO_MOUNT / real.relative_to(self.repo)))
        return sorted(set(shown))


@functools.cache
def _empty_file() -> Path:
    """An empty regular file of this process's, bound over a hidden file (a reader sees it empty; the
    host's /dev/null would be a device the box may not open: npm would fail on its global npmrc)."""
    folder = Path(tempfile.mkdtemp(prefix="codemod-empty-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "empty"
    path.write_bytes(b"")
    path.chmod(0o444)
    return path


def _home_env(home: Path, tmp: Path) -> dict[str, str]:
    return {"HOME": str(home), "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp)}


@functools.cache
def _prlimit() -> str:
    return shutil.which("prlimit", path="/usr/bin:/bin") or "prlimit"


@functools.cache
def _system_mounts(*, network: bool) -> tuple[str, ...]:
    opts: list[str] = []
    for path in SYSTEM_PATHS:
        p = Path(path)
        if p.is_symlink():
            opts += ["--symlink", str(p.readlink()), path]
        elif p.is_dir():
            opts += ["--ro-bind", path, path]
    for path in (*ETC_FILES, *(NETWORK_ETC_FILES if network else ())):
        opts += ["--ro-bind-try", path, path]
    for path in MASKED_PATHS:
        if Path(path).is_dir() and not Path(path).is_symlink():
            opts += ["--tmpfs", path, "--remount-ro", path]
    for prefix in python_prefixes():
        opts += ["--ro-bind", str(prefix), str(prefix)]
    return tuple(opts)


def python_prefixes() -> list[Path]:
    """The Python installation the venvs are made from, and this tool's own environment (whose pip
    installs into a verification venv), when they live outside the system paths."""
    found: list[Path] = []
    for prefix in (sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)):
        p = Path(prefix).resolve()
        if any(p == Path(s) or p.is_relative_to(s) for s in SYSTEM_PATHS):
            continue
        if not any(p == f or p.is_relative_to(f) for f in found):
            found = [f for f in found if not f.is_relative_to(p)] + [p]
    return found


@functools.cache
def probe(bwrap: str = "bwrap") -> str | None:
    """None when bwrap can start a sandbox like the ones above on this machine, else why not."""
    path = shutil.which(bwrap)
    if path is None:
        return f"{bwrap} is not installed"
    argv = [path, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"]
    argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    argv += [*_system_mounts(network=False), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if done.returncode != 0:
        return f"{bwrap} failed: {done.stderr.decode('utf-8', 'replace').strip()[-300:]}"
    return None


REPORTS_MOUNT = Path("/codemod/reports")


def install_cache_of(env_dir: Path) -> Path:
    """The installer's cache of one run (beside its venv): writable for the run's installs only. The
    runner's shared cache is never mounted where the repository's code runs."""
    return env_dir.parent / "install-cache"


def discard_install_cache(env_dir: Path) -> None:
    """The run's install cache emptied: after a box in which repository code ran with it mounted (a
    build backend, an install script), so that what that code wrote there (a package document or a
    wheel claiming to be a release) is never what a later install reads; and when the run ends, so that
    the run dir a CI job uploads holds none of it (the registry's documents, request URLs). Nothing is
    followed: a link planted inside goes with the rest."""
    cache = install_cache_of(env_dir)
    repo_copy.remove(cache)
    cache.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def install_cache_set_aside(env_dir: Path) -> Iterator[None]:
    """For a box in which repository code runs and nothing is installed (npm rebuild: install scripts):
    the run's install cache moved out of its place (the box binds an empty folder there), and back
    afterwards, what the box wrote there discarded. No box runs meanwhile that mounts the cache."""
    cache = install_cache_of(env_dir)
    aside = cache.with_name(f"{cache.name}.aside")
    repo_copy.remove(aside)
    if cache.exists():
        cache.rename(aside)
    cache.mkdir(parents=True)
    try:
        yield
    finally:
        repo_copy.remove(cache)
        if aside.exists():
            aside.rename(cache)
        else:
            cache.mkdir(parents=True)


@dataclass(frozen=True)
class Policy:
    """The boxes of one run: installs see the venv and the run's install cache writable and the wheel
    dirs; tests see the venv read-only, a report dir, and no network."""

    isolation: Isolation
    env_dir: Path
    wheel_dirs: tuple[Path, ...] = ()
    index_network: bool = False  # installs reach a package index (else wheel dirs only, no network)
    memory_bytes: int | None = None
    home: Path | None = None  # process isolation: HOME and TMPDIR in the run dir
    tmp: Path | None = None
    bwrap: str = "bwrap"
    hidden: tuple[Path, ...] = ()  # the caller's secret files (Box.hidden)

    def for_install(self, repo: Path) -> Box:
        cache = install_cache_of(self.env_dir)
        for d in (self.env_dir, cache):
            d.mkdir(parents=True, exist_ok=True)  # bwrap binds only what exists
        mounts: tuple[Mount, ...] = (Mount(self.env_dir, writable=True), Mount(cache, writable=True))
        mounts += tuple(Mount(d) for d in self.wheel_dirs if d.is_dir())
        return self._box(repo, mounts, network=self.index_network)

    def for_lock(self, repo: Path, cache: Path | None) -> Box:
        """A lock tool's box: the index's network and wheel dirs as an install has them, the venv
        read-only (a lock tool may read it, never install into it: it can run the project's build
        backend, repository code, which could leave there a package under the target's name that the
        bump's install would keep), and `cache` (the run's install cache, or none) writable."""
        mounts: tuple[Mount, ...] = (Mount(self.env_dir),) if self.env_dir.is_dir() else ()
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            mounts += (Mount(cache, writable=True),)
        mounts += tuple(Mount(d) for d in self.wheel_dirs if d.is_dir())
        return self._box(repo, mounts, network=self.index_network)

    def for_tests(self, repo: Path, reports: Path) -> Box:
        return self._box(repo, (Mount(self.env_dir), Mount(reports, True, REPORTS_MOUNT)), network=False)

    def _box(self, repo: Path, mounts: tuple[Mount, ...], *, network: bool) -> Box:
        return Box(
            self.isolation,
            repo,
            mounts,
            network=network,
            memory_bytes=self.memory_bytes,
            bwrap=self.bwrap,
            home=self.home,
            tmp=self.tmp,
            venv=self.env_dir,
            hidden=self.hidden,
        )
