"""The glob engine behind deny globs and allowed paths is pathspec's gitignore pattern; these are the places
where the wrapper in tools/paths.py keeps it stricter than (or different from) plain gitignore."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.errors import InputError
from agentic_codemod.task import load_task
from agentic_codemod.tools.paths import (
    Refused,
    allowed_by,
    check_glob,
    denied_by,
    matches,
    matches_everything,
)


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("keys/a.pem", "*.pem"),  # a glob without `/` matches a component at any depth
        ("keys/a.pem/inner.txt", "*.pem"),  # ... and everything in a directory it matches
        (".git", ".git/**"),  # `dir/**` also denies dir itself
        ("sub/.git", "**/.git/**"),
        ("DOCKERFILE.prod", "Dockerfile*"),  # case-folded
        ("\uff44ocs/x", "docs/**"),  # NFKC-folded (a full-width d)
    ],
)
def test_deny_globs_match_where_gitignore_alone_would_not_or_more(path: str, glob: str) -> None:
    assert denied_by(path, [glob]) == glob


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("a/src/x.py", "src/**"),  # a glob with `/` is anchored at the root
        ("src", "src/*.py"),
        ("x/.gitx", ".git/**"),
    ],
)
def test_deny_globs_do_not_float_when_anchored(path: str, glob: str) -> None:
    assert denied_by(path, [glob]) is None


def test_every_default_deny_glob_is_a_valid_pattern() -> None:
    for glob in DEFAULT_DENY_GLOBS:
        denied_by("src/app.py", [glob])  # compiles; raises Refused if pathspec rejects it


@pytest.mark.parametrize(
    ("path", "globs", "allowed"),
    [
        ("app.py", ["*.py"], True),
        ("src/app.py", ["*.py"], False),  # allowed globs are anchored: not gitignore's any-depth rule
        ("src/app.py", ["src/**"], True),
        ("src", ["src/**"], True),
        ("!x", ["!x"], True),  # `!` is a literal, never a negation
        ("y", ["!x"], False),
        ("#notes", ["#notes"], True),  # `#` is a literal, never a comment
    ],
)
def test_allowed_paths(path: str, globs: list[str], allowed: bool) -> None:
    assert allowed_by(path, globs) is allowed


def test_an_invalid_glob_is_refused_not_skipped() -> None:
    with pytest.raises(Refused, match="not a valid glob"):
        allowed_by("a", ["[z-a]"])
    with pytest.raises(Refused, match="not a valid glob"):
        denied_by("a", ["[z-a]"])


@pytest.mark.parametrize("glob", ["**", "*", "**/*", "./**", "?*"])
def test_patterns_that_allow_everything_are_recognised(glob: str) -> None:
    assert matches_everything(glob)


@pytest.mark.parametrize("glob", ["src/**", "*.py", "[a-m]*"])
def test_narrower_patterns_are_not(glob: str) -> None:
    assert not matches_everything(glob)


@pytest.mark.parametrize(
    ("path", "glob", "hit"),
    [
        ("src/app.py", "*.py", True),  # no `/`: the file name
        ("src/app.py", "src/*.py", True),
        ("src/app.py/x.txt", "src/*.py", False),  # a full-path match, not a file inside a match
        ("src/pkg/a.py", "src/**", True),
        ("src/pkg/a.py", "src/**/*.py", True),
        ("lib/a.py", "src/**", False),
    ],
)
def test_matches_is_a_whole_path_match(path: str, glob: str, hit: bool) -> None:
    assert matches(path, glob) is hit


@pytest.mark.parametrize("glob", ["config/**.yml", "deploy/**secret*", "a**/b", "**x"])
def test_a_double_star_inside_a_component_is_refused_never_read_as_one_star(glob: str) -> None:
    """gitignore reads `config/**.yml` as `config/*.yml`; the old engine let it span folders. Neither
    quietly: such a deny glob would cover less than its author meant."""
    with pytest.raises(Refused, match="must be a whole path component"):
        denied_by("config/prod/db.yml", [glob])
    with pytest.raises(Refused, match="must be a whole path component"):
        check_glob(glob)


def test_a_task_with_such_a_glob_is_refused_when_loaded(tmp_path: Path) -> None:
    task = tmp_path / "task.yml"
    task.write_text(
        "id: t\ntitle: t\nsdk: {name: acme-sdk, ecosystem: python, from: '>=1,<2', to: '2.0.0'}\n"
        "allowed_paths: ['src/**']\ndeny_globs: ['config/**.yml']\n"
    )
    with pytest.raises(
        InputError, match=r"deny_globs.*entry 0 'config/\*\*\.yml'.*whole path component"
    ) as caught:
        load_task(task)
    assert caught.value.exit_code == 2
