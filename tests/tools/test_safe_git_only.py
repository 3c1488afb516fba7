"""Every git process of the package starts in tools/safe_git.py (hardening flags, scrubbed env, timeout).

The scan reads the package's source: an argv literal that starts with "git", a command string that starts
with "git " handed to a process call, or `shutil.which("git")`, anywhere outside safe_git.py, is a git
call that bypasses the helper.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "agentic_codemod"
HELPER = PACKAGE / "tools" / "safe_git.py"
PROCESS_CALLS = frozenset(
    {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system", "popen"}
    | {"execv", "execve", "execvp", "execvpe", "execl", "execlp", "spawnv", "spawnvp", "posix_spawn"}
    | {"posix_spawnp", "create_subprocess_exec", "create_subprocess_shell"}
)


def _is_git(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() == "git"


def _names(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def git_calls(source: str, name: str = "<source>") -> list[str]:
    """Where `source` starts git itself: `file:line what`."""
    tree = ast.parse(source, name)
    # A list of words that is only searched or looped over ("git" in a list of source kinds) starts nothing.
    searched = {id(n.comparators[0]) for n in ast.walk(tree) if isinstance(n, ast.Compare) and n.comparators}
    searched |= {id(n.iter) for n in ast.walk(tree) if isinstance(n, ast.For | ast.comprehension)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple) and node.elts and _is_git(node.elts[0]):
            if id(node) not in searched:
                found.append(f"{name}:{node.lineno} argv starting with 'git'")
        elif isinstance(node, ast.Call):
            called = _names(node.func)
            if called == "which" and node.args and _is_git(node.args[0]):
                found.append(f"{name}:{node.lineno} which('git')")
            elif called in PROCESS_CALLS:
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and str(arg.value).strip().split(" ", 1)[0] == "git":
                        found.append(f"{name}:{node.lineno} {called}({str(arg.value)[:30]!r})")
    return found


@pytest.mark.parametrize(
    "source",
    [
        'subprocess.run(["git", "status"], cwd=root)',
        "subprocess.Popen(('git', 'push', url))",
        'os.system("git fetch origin")',
        'subprocess.check_output("git rev-parse HEAD", shell=True)',
        'os.execvp("git", ["git", "log"])',
        'git = shutil.which("git")',
        'argv = ["git", "-C", str(root), "diff"]',
    ],
)
def test_the_scan_finds_a_git_call(source: str) -> None:
    assert git_calls(source)


@pytest.mark.parametrize(
    "source",
    [
        '__all__ = ["EMPTY_TREE", "git"]',
        'checked(["init", "--bare"], cwd=d)',
        'x = {"git": url}',
        'if any(k in value for k in ("git", "path", "url")): pass',
        'if kind in ["git", "url"]: pass',
    ],
)
def test_the_scan_leaves_names_and_helper_calls_alone(source: str) -> None:
    assert git_calls(source) == []


def test_no_git_process_starts_outside_safe_git() -> None:
    sources = [p for p in sorted(PACKAGE.rglob("*.py")) if p != HELPER]
    assert len(sources) > 50 and HELPER.is_file()
    found = [
        hit for p in sources for hit in git_calls(p.read_text(encoding="utf-8"), str(p.relative_to(PACKAGE)))
    ]
    assert found == [], (
        "git started outside tools/safe_git.py (use run_git / checked / Scratch):\n" + "\n".join(found)
    )
    assert git_calls(HELPER.read_text(encoding="utf-8")), "the helper itself no longer starts git?"
