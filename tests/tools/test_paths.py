"""Spelling rules shared by the workspace and the scope gate."""

from __future__ import annotations

import pytest

from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.tools.paths import Refused, allowed_by, denied_by, inside_git, matches, normalise


@pytest.mark.parametrize(
    ("spelled", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src\\app.py", "src/app.py"),
        (".", ""),
        ("", ""),
        ("src/./pkg/", "src/pkg"),
    ],
)
def test_plain_spellings_are_normalised(spelled: str, expected: str) -> None:
    assert normalise(spelled) == expected


@pytest.mark.parametrize(
    ("spelled", "reason"),
    [
        ("../x", "escapes"),
        ("src/../../x", "escapes"),
        ("src/../x", "escapes"),
        ("..\\x", "escapes"),
        ("src/..\\..\\x", "escapes"),
        ("%2e%2e/x", "percent"),
        ("%252e%252e/x", "percent"),
        ("/etc/passwd", "absolute"),
        ("\\\\server\\share", "absolute"),
        ("C:\\Windows\\x", "absolute"),
        ("c:x", "absolute"),
        ("~/.ssh/id_rsa", "absolute"),
        (".env.", "trailing dot"),
        ("src./x", "trailing dot"),
        ("..../x", "trailing dot"),
        (".gitlab-ci.yml ", "trailing dot or space"),
        (" src/x", "trailing dot or space"),
        ("src/a\x00.py", "control"),
        ("src/a\n.py", "control"),
        (".g\u200bit/config", "invisible"),
        ("src/\u202eyp.a", "invisible"),
    ],
)
def test_unusual_spellings_are_refused(spelled: str, reason: str) -> None:
    with pytest.raises(Refused) as caught:
        normalise(spelled)
    assert reason in caught.value.reason
    assert isinstance(caught.value, PermissionError)


def test_non_string_is_refused() -> None:
    with pytest.raises(Refused):
        normalise(b"src/app.py")  # type: ignore[arg-type]


EXAMPLES = {
    ".gitlab-ci.yml": ".gitlab-ci.yml",
    "**/.gitlab-ci.yml": "sub/.gitlab-ci.yml",
    ".git": ".git",
    ".git/**": ".git/config",
    "**/.git/**": "sub/.git/config",
    "Dockerfile*": "Dockerfile.prod",
    "**/Dockerfile*": "docker/Dockerfile",
    "*.pem": "key.pem",
    "**/*.pem": "certs/key.pem",
    ".env*": ".env.local",
    "**/.env*": "config/.env",
    "apm.yml": "apm.yml",
    "**/apm.yml": "pkg/apm.yml",
    "apm.lock.yaml": "apm.lock.yaml",
    "**/apm.lock.yaml": "pkg/apm.lock.yaml",
    "apm-policy.yml": "apm-policy.yml",
    ".apm/**": ".apm/agents/coder.agent.md",
    "**/.apm/**": "pkg/.apm/skills/x.md",
    "apm_modules/**": "apm_modules/pkg/apm.yml",
    "**/apm_modules/**": "sub/apm_modules/x",
    ".github/**": ".github/workflows/ci.yml",
    "**/.github/**": "pkg/.github/CODEOWNERS",
    ".gitlab/**": ".gitlab/merge_request_templates/x.md",
    "**/.gitlab/**": "pkg/.gitlab/ci/x.yml",
    "*.gitlab-ci.yml": "templates/build.gitlab-ci.yml",
    ".gitattributes": ".gitattributes",
    ".gitmodules": "vendor/.gitmodules",
    "sitecustomize.py": "sitecustomize.py",
    "usercustomize.py": "usercustomize.py",
    "*.pth": "site/zz.pth",
    "setup.py": "sub/setup.py",
    "*constraints*.txt": "requirements/pip-constraints-dev.txt",
    "*.lock": "sub/Pipfile.lock",
    "pylock.toml": "sub/pylock.toml",
    "pylock.*.toml": "sub/pylock.test.toml",
    "package-lock.json": "web/package-lock.json",
    "npm-shrinkwrap.json": "web/npm-shrinkwrap.json",
    "pnpm-lock.yaml": "web/pnpm-lock.yaml",
    "bun.lockb": "web/bun.lockb",
}


def test_every_default_deny_glob_has_an_example() -> None:
    assert set(EXAMPLES) == set(DEFAULT_DENY_GLOBS)


@pytest.mark.parametrize("glob", DEFAULT_DENY_GLOBS)
@pytest.mark.parametrize("case", [str.lower, str.upper, str.swapcase])
def test_deny_globs_match_in_any_case(glob: str, case) -> None:  # type: ignore[no-untyped-def]
    assert denied_by(case(EXAMPLES[glob]), DEFAULT_DENY_GLOBS)


@pytest.mark.parametrize(
    "path", ["src/app.py", "docs/environment.md", "tests/test_pem.py", "requirements.txt"]
)
def test_ordinary_paths_are_not_denied(path: str) -> None:
    assert denied_by(path, DEFAULT_DENY_GLOBS) is None


def test_deny_globs_match_parent_directories() -> None:
    assert denied_by("apm_modules/pkg/deep/file.md", ["apm_modules/**"]) == "apm_modules/**"
    assert denied_by("secrets/x.txt", ["secrets"]) == "secrets"
    assert denied_by("a/secrets/x.txt", ["secrets"]) == "secrets"


def test_deny_globs_fold_compatibility_characters() -> None:
    assert denied_by("\uff0eenv", [".env*"])  # fullwidth dot


@pytest.mark.parametrize(
    ("path", "globs", "allowed"),
    [
        ("src/a/b.py", ["src/**"], True),
        ("src/a.py", ["src"], True),
        ("srcx/a.py", ["src/**"], False),
        ("src/a.py", ["*.py"], False),
        ("setup.py", ["*.py"], True),
        ("SRC/a.py", ["src/**"], False),
        ("requirements.txt", ["requirements*.txt"], True),
        ("anything/at/all", ["**"], True),
        ("src/a.py", [], False),
    ],
)
def test_allowed_paths(path: str, globs: list[str], allowed: bool) -> None:
    assert allowed_by(path, globs) is allowed


@pytest.mark.parametrize(
    "path", [".git", ".git/config", ".GIT/hooks/pre-commit", "sub/.Git/x", "GIT~1/config"]
)
def test_git_directories_are_recognised(path: str) -> None:
    assert inside_git(path)


def test_gitignore_and_similar_names_are_not_git_dirs() -> None:
    assert not inside_git(".gitignore")
    assert not inside_git("src/.github/workflows/x.yml")


def test_search_glob_matches_names_or_paths() -> None:
    assert matches("src/pkg/a.py", "*.py")
    assert matches("src/pkg/a.py", "src/**/*.py")
    assert not matches("src/pkg/a.py", "tests/**")


@pytest.mark.parametrize("spelled", ["a/" * 2100, "x" * 256, "src/" + "é" * 128])
def test_overlong_paths_are_refused(spelled: str) -> None:
    with pytest.raises(Refused, match="longer than"):
        normalise(spelled)
