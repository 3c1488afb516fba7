"""git that trusts nothing it did not make: no caller environment, no user or system config, no hooks,
no attributes, and for what the tool computes, not even the repository's own config.

    run_git(argv, cwd=..., env=None, stdin=None, timeout_s=GIT_TIMEOUT_S) -> CompletedProcess[bytes]
        one git process: HOME is an empty temporary directory, every GIT_* and secret of the caller is
        dropped, system and global config are off, hooks, fsmonitor, attribute files, pagers and
        credential helpers are switched off on the command line (raises OSError / TimeoutExpired)
    Scratch(objects)          a throwaway bare repository that borrows `objects` as an alternate: it reads
                              the repository's objects and nothing else of it (no config, no in-tree
                              .gitattributes: a bare repository has no work tree to read them from)
    git_dir(root) / objects_dir(root)          where a repository keeps its metadata and objects
    read_ref(root, name) -> commit id | None   loose and packed refs read as data, without running git

Repository-level config and attributes cannot be switched off by flags alone in git 2.39, so hashing,
diffing and reading blobs happen in a Scratch; `run_git` in a real repository is only for the tool's own
fresh clones and for publishing.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from agentic_codemod.config import GIT_TIMEOUT_S

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# The only variables a git process inherits from the caller.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
# Settings that would run a program, read a file outside the repository or wait for a human.
SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.pager=cat",
    "core.askPass=",
    "credential.helper=",
    "protocol.ext.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "color.ui=false",
    f"attr.tree={EMPTY_TREE}",  # git >= 2.42: no attributes from a tree in bare repositories
)
_REF = re.compile(r"(?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+")
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


def clean_env(home: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update(
        HOME=home,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_ATTR_SOURCE=EMPTY_TREE,  # git >= 2.40: attributes from the empty tree, i.e. none
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
    )
    env.update(extra or {})
    return env


def run_git(
    argv: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git <SAFE_CONFIG> <argv>` in cwd; `env` adds to the scrubbed environment."""
    config = [arg for item in SAFE_CONFIG for arg in ("-c", item)]
    with tempfile.TemporaryDirectory(prefix="codemod-git-home-") as home:
        return subprocess.run(
            ["git", *config, *argv],
            cwd=cwd,
            env=clean_env(home, env),
            input=stdin,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )


def checked(argv: list[str] | tuple[str, ...], **kwargs: object) -> bytes:
    """run_git, raising GitError on a failure, a timeout or a git that cannot start."""
    try:
        done = run_git(argv, **kwargs)  # type: ignore[arg-type]
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(argv[:3])}: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()[-600:]
        raise GitError(f"git {' '.join(argv[:3])}: {message}")
    return done.stdout


def _init_bare(repo: Path) -> None:
    """Exactly what `git init --quiet --bare --template=` writes (git 2.x, no user or system config), made
    without a git process: a scratch repository is made for every snapshot and blob read of a run."""
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (repo / sub).mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/master\n")
    (repo / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n")


class Scratch:
    """A throwaway bare repository in a temporary directory; `objects` is borrowed read-only."""

    def __init__(self, objects: Path | None = None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="codemod-scratch-")
        self.dir = Path(self._tmp.name)
        self.repo = self.dir / "scratch.git"
        _init_bare(self.repo)
        if objects is not None:
            (self.repo / "objects" / "info").mkdir(parents=True, exist_ok=True)
            (self.repo / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")

    @property
    def objects(self) -> Path:
        return self.repo / "objects"

    def git(
        self,
        *args: str,
        stdin: bytes | None = None,
        index: Path | None = None,
        work_tree: Path | None = None,
    ) -> bytes:
        env = {"GIT_DIR": str(self.repo)}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        if work_tree is not None:
            env["GIT_WORK_TREE"] = str(work_tree)
        return checked(list(args), cwd=work_tree or self.dir, env=env, stdin=stdin)

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Scratch:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def git_dir(root: Path) -> Path:
    """The repository's git directory: `.git`, the target of a `.git` file, or root itself if bare."""
    dot = root / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot
    if dot.is_file() and not dot.is_symlink():
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:") :].strip())
            return target if target.is_absolute() else (root / target).resolve()
    if (root / "objects").is_dir() and (root / "HEAD").is_file():
        return root
    raise GitError(f"{root}: not a git repository")


def _common_dir(gd: Path) -> Path:
    common = gd / "commondir"
    if common.is_file():
        target = Path(common.read_text(encoding="utf-8").strip())
        return target if target.is_absolute() else (gd / target).resolve()
    return gd


def objects_dir(root: Path) -> Path:
    return _common_dir(git_dir(root)) / "objects"


def read_ref(root: Path, name: str) -> str | None:
    """The object id a ref name points to, read as data (git's lookup order); None if it points nowhere."""
    if _HEX.fullmatch(name):
        return name
    if not _REF.fullmatch(name) or ".." in name or name.endswith(".lock"):
        raise GitError(f"not a ref name the tool resolves: {name!r}")
    gd = git_dir(root)
    for candidate in (
        name,
        f"refs/{name}",
        f"refs/tags/{name}",
        f"refs/heads/{name}",
        f"refs/remotes/{name}",
        f"refs/remotes/{name}/HEAD",
    ):
        found = _follow(gd, candidate, depth=0)
        if found:
            return found
    return None


def _follow(gd: Path, ref: str, depth: int) -> str | None:
    if depth > 5 or not _REF.fullmatch(ref) or ".." in ref:
        return None
    common = _common_dir(gd)
    home = gd if "/" not in ref else common  # HEAD and other pseudo refs are per work tree
    loose = home / ref
    if loose.is_file():
        value = loose.read_text(encoding="utf-8", errors="replace").strip()
        if value.startswith("ref:"):
            return _follow(gd, value[4:].strip(), depth + 1)
        return value if _HEX.fullmatch(value) else None
    packed = common / "packed-refs"
    if packed.is_file() and ref.startswith("refs/"):
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            oid, _, refname = line.partition(" ")
            if refname == ref and _HEX.fullmatch(oid):
                return oid
    return None
