"""Attacks on the file boundary: every spelling of "outside", symlinks, hard links, devices, .git, deny globs.

Each attack is one test id. `attempt` (conftest.py) asserts the refusal, its trace line, that no secret was
traced and that nothing outside the worktree (or inside .git) changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Refused

Run = Callable[[Any], object]


def write(path: str) -> Run:
    return lambda a: a.ws.write(path, "pwned = True\n", "coder")


def read(path: str) -> Run:
    return lambda a: a.ws.read(path, "coder")


def outside_abs(a: Any) -> object:
    return a.ws.write(str(a.outside()), "pwned\n", "coder")


def attack(id: str, run: Run, reason: str, setup: Run | None = None, raises: type = Refused) -> Any:
    return pytest.param(run, reason, raises, setup, id=id)


# -- setups: what a hostile repository (or a test command run earlier) leaves in the worktree ---------------


def plant_file_symlink(a: Any) -> None:
    os.symlink("../../sibling.txt", a.root / "src/link.py")


def plant_dir_symlink(a: Any) -> None:
    os.symlink("../../outside_dir", a.root / "src/vendor")


def plant_absolute_symlink(a: Any) -> None:
    os.symlink("/etc/passwd", a.root / "src/passwd.py")


def plant_dev_null_symlink(a: Any) -> None:
    os.symlink("/dev/null", a.root / "src/null.py")


def plant_loop(a: Any) -> None:
    os.symlink("loop.py", a.root / "src/loop.py")


def plant_hard_link(a: Any) -> None:
    os.link(a.outside(), a.root / "src/hard.py")


def plant_device(a: Any) -> None:
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    os.mknod(a.root / "src/dev.py", 0o600 | 0o020000, os.makedev(1, 3))  # S_IFCHR, like /dev/null


def plant_fifo(a: Any) -> None:
    os.mkfifo(a.root / "src/pipe.py")


def symlink_during_run(a: Any) -> None:
    """A legitimate write, then (as a test command would) a symlink appears, then a write through it."""
    a.ws.write("src/ok.py", "ok = 1\n", "coder")
    os.symlink("../../outside_dir", a.root / "src/late")
    a.ws.write("src/late/keep.txt", "pwned\n", "coder")


def swap_file(a: Any) -> None:
    """Between the check of src/app.py and its use, src/app.py becomes a symlink to an outside file."""
    done = []

    def hook(dir_fd: int, name: str) -> None:
        if name == "app.py" and not done:
            done.append(name)
            os.unlink(a.root / "src/app.py")
            os.symlink("../../sibling.txt", a.root / "src/app.py")

    a.ws.fs.between_check_and_use = hook


def swap_dir(a: Any) -> None:
    """Between the check of src/ and descending into it, src/ becomes a symlink to an outside directory."""
    done = []

    def hook(dir_fd: int, name: str) -> None:
        if name == "src" and not done:
            done.append(name)
            os.rename(a.root / "src", a.root / "src_real")
            os.symlink("../outside_dir", a.root / "src")

    a.ws.fs.between_check_and_use = hook


def trace_inside_worktree(a: Any) -> None:
    a.trace = Trace(a.root / "run" / "trace.jsonl", a.trace.redactor)
    a.trace.record("system", "start", {}, "ok")
    a.workspace()


SPELLINGS = [
    attack("dotdot-write", write("../sibling.txt"), "escapes"),
    attack("dotdot-read", read("../sibling.txt"), "escapes"),
    attack("dotdot-read-secrets", read("../secrets.env"), "escapes"),
    attack("dotdot-nested", write("src/../../sibling.txt"), "escapes"),
    attack("dotdot-inner", write("src/../README.md"), "escapes"),
    attack("percent-encoded", write("%2e%2e/sibling.txt"), "percent"),
    attack("percent-encoded-slash", write("..%2Fsibling.txt"), "percent"),
    attack("percent-double-encoded", write("%252e%252e/sibling.txt"), "percent"),
    attack("backslash", write("..\\sibling.txt"), "escapes"),
    attack("backslash-nested", write("src\\..\\..\\sibling.txt"), "escapes"),
    attack("mixed-separators", write("src/..\\../sibling.txt"), "escapes"),
    attack("trailing-dots", write("..../sibling.txt"), "trailing dot"),
    attack("trailing-space-dotdot", write(".. /sibling.txt"), "trailing dot or space"),
    attack("trailing-dot-env", read(".env."), "trailing dot"),
    attack("trailing-space-ci", write(".gitlab-ci.yml "), "trailing dot or space"),
    attack("trailing-dot-git", write(".git./config"), "trailing dot"),
    attack("absolute-sibling-write", outside_abs, "absolute"),
    attack("absolute-etc-passwd", read("/etc/passwd"), "absolute"),
    attack("absolute-windows-drive", read("C:\\Windows\\win.ini"), "absolute"),
    attack("absolute-unc", read("\\\\host\\share\\x"), "absolute"),
    attack("home-tilde", write("~/.bashrc"), "absolute"),
    attack("nul-byte", write("src/app.py\x00.txt"), "control"),
    attack("zero-width-git", write(".g\u200bit/config"), "invisible"),
    attack("fullwidth-dotenv", read("\uff0eenv"), "NFKC"),  # refused by spelling before the secret globs
    attack("ntfs-short-git", write("GIT~1/config"), "inside .git"),
    attack("list-parent", lambda a: a.ws.list("..", "coder"), "escapes"),
    attack("delete-outside", lambda a: a.ws.delete("../sibling.txt", "coder"), "escapes"),
    attack("replace-outside", lambda a: a.ws.replace("../sibling.txt", "outside", "x", "coder"), "escapes"),
]

LINKS_AND_DEVICES = [
    attack("symlink-file-write", write("src/link.py"), "symlink", plant_file_symlink),
    attack("symlink-file-read", read("src/link.py"), "symlink", plant_file_symlink),
    attack(
        "symlink-file-delete", lambda a: a.ws.delete("src/link.py", "coder"), "symlink", plant_file_symlink
    ),
    attack("symlink-dir-write", write("src/vendor/keep.txt"), "symlink", plant_dir_symlink),
    attack("symlink-dir-read", read("src/vendor/keep.txt"), "symlink", plant_dir_symlink),
    attack("symlink-dir-list", lambda a: a.ws.list("src/vendor", "coder"), "symlink", plant_dir_symlink),
    attack("symlink-absolute-read", read("src/passwd.py"), "symlink", plant_absolute_symlink),
    attack("symlink-loop", read("src/loop.py"), "symlink", plant_loop),
    attack("symlink-created-during-run", symlink_during_run, "symlink"),
    attack("swap-file-between-check-and-write", write("src/app.py"), "between check and use", swap_file),
    attack("swap-file-between-check-and-read", read("src/app.py"), "between check and use", swap_file),
    attack("swap-dir-between-check-and-write", write("src/app.py"), "between check and use", swap_dir),
    attack("hard-link-write", write("src/hard.py"), "hard link", plant_hard_link),
    attack(
        "hard-link-replace",
        lambda a: a.ws.replace("src/hard.py", "outside", "x", "coder"),
        "hard link",
        plant_hard_link,
    ),
    attack("hard-link-delete", lambda a: a.ws.delete("src/hard.py", "coder"), "hard link", plant_hard_link),
    attack("dev-null-symlink-write", write("src/null.py"), "symlink", plant_dev_null_symlink),
    attack("device-file-read", read("src/dev.py"), "device", plant_device),
    attack("device-file-write", write("src/dev.py"), "device", plant_device),
    attack("fifo-read", read("src/pipe.py"), "fifo", plant_fifo),
    attack("fifo-write", write("src/pipe.py"), "fifo", plant_fifo),
]

GIT_AND_SPECIAL = [
    attack("git-hooks-pre-commit", write(".git/hooks/pre-commit"), "inside .git"),
    attack("git-config", write(".git/config"), "inside .git"),
    attack("git-config-read", read(".git/config"), "inside .git"),
    attack("git-head-delete", lambda a: a.ws.delete(".git/HEAD", "coder"), "inside .git"),
    attack("git-upper-case", write(".GIT/config"), "inside .git"),
    attack("git-nested", write("src/.git/config"), "inside .git"),
    attack("git-list", lambda a: a.ws.list(".git", "coder"), "inside .git"),
    attack("dotenv-read", read(".env"), "secret file"),
    attack("write-a-directory", write("src"), "is a directory"),
    attack("write-the-root", write("."), "worktree root"),
    attack("file-as-directory", write("src/app.py/x.py"), "not a directory"),
    attack("trace-file-in-worktree", write("run/trace.jsonl"), "trace file", trace_inside_worktree),
    attack("search-redos", lambda a: a.ws.search(r"(a+)+$", "coder"), "nested quantifier"),
]

# A concrete path for every default deny glob, written in lower, upper and mixed case.
DENY_EXAMPLES = {
    ".gitlab-ci.yml": ".gitlab-ci.yml",
    "**/.gitlab-ci.yml": "ci/.gitlab-ci.yml",
    ".git": ".git",
    ".git/**": ".git/info/exclude",
    "**/.git/**": "vendor/.git/config",
    "Dockerfile*": "Dockerfile.prod",
    "**/Dockerfile*": "docker/Dockerfile",
    "*.pem": "server.pem",
    "**/*.pem": "certs/server.pem",
    ".env*": ".env.local",
    "**/.env*": "config/.env",
    "apm.yml": "apm.yml",
    "**/apm.yml": "pkg/apm.yml",
    "apm.lock.yaml": "apm.lock.yaml",
    "**/apm.lock.yaml": "pkg/apm.lock.yaml",
    "apm-policy.yml": "apm-policy.yml",
    ".apm/**": ".apm/agents/coder.agent.md",
    "**/.apm/**": "pkg/.apm/instructions/security.instructions.md",
    "apm_modules/**": "apm_modules/acme/apm.yml",
    "**/apm_modules/**": "sub/apm_modules/x.md",
    ".github/**": ".github/workflows/ci.yml",
    "**/.github/**": "sub/.github/workflows/ci.yml",
    ".gitlab/**": ".gitlab/ci/deploy.yml",
    "**/.gitlab/**": "sub/.gitlab/ci.yml",
    "*.gitlab-ci.yml": "ci/deploy.gitlab-ci.yml",
    ".gitattributes": "src/.gitattributes",
    ".gitmodules": ".gitmodules",
    "sitecustomize.py": "src/sitecustomize.py",
    "usercustomize.py": "src/usercustomize.py",
    "*.pth": "src/evil.pth",
    "setup.py": "setup.py",
    "*constraints*.txt": "src/constraints.txt",
    "*.lock": "poetry.lock",
    "pylock.toml": "pylock.toml",
    "pylock.*.toml": "pylock.dev.toml",
    "package-lock.json": "package-lock.json",
    "npm-shrinkwrap.json": "npm-shrinkwrap.json",
    "pnpm-lock.yaml": "pnpm-lock.yaml",
    "bun.lockb": "bun.lockb",
}
CASES = {
    "lower": str.lower,
    "upper": str.upper,
    "mixed": lambda s: "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(s)),
}


def deny_reason(glob: str) -> str:
    if glob in (".git", ".git/**", "**/.git/**"):
        return "inside .git"
    if glob.endswith((".pem", ".env*")):
        return "secret file"
    return "deny glob"


def write_anywhere(path: str) -> Run:
    """allowed_paths ["**"]: the deny glob alone must stop the write."""

    def run(a: Any) -> object:
        a.workspace(allowed=("**",))
        return a.ws.write(path, "pwned\n", "coder")

    return run


DENY_GLOBS = [
    attack(f"deny-{glob}-{case}", write_anywhere(fold(DENY_EXAMPLES[glob])), deny_reason(glob))
    for glob in DEFAULT_DENY_GLOBS
    for case, fold in CASES.items()
]


@pytest.mark.parametrize(
    ("run", "reason", "raises", "setup"), SPELLINGS + LINKS_AND_DEVICES + GIT_AND_SPECIAL + DENY_GLOBS
)
def test_attack_on_the_file_boundary_is_refused(attempt, run, reason, raises, setup) -> None:  # type: ignore[no-untyped-def]
    attempt(run, reason, raises, setup)


def test_every_default_deny_glob_is_attacked() -> None:
    assert set(DENY_EXAMPLES) == set(DEFAULT_DENY_GLOBS)
