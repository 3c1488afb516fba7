"""What a fleet value may contain (agentic_codemod/fleet/values.py): accepted and refused, per kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.config import FLEET_MAX_VALUE_CHARS
from agentic_codemod.errors import InputError
from agentic_codemod.fleet.repos import load_fleet
from agentic_codemod.fleet.values import Kind, check_link, check_value

ACCEPTED: list[tuple[Kind, str]] = [
    ("project", "shop/billing"),
    ("project", "group/sub.group/my_project-2"),
    ("ref", "main"),
    ("ref", "release/2.0+hotfix"),
    ("ref", "user@feature"),
    ("url", "https://pypi.example/simple"),
    ("url", "http://127.0.0.1:8080/simple/?x=1"),
    ("url", "file:///srv/wheels"),
    ("path", "../wheels"),
    ("path", "/opt/wheel-house/py3.11"),
]

REFUSED: list[tuple[Kind, str, str]] = [
    ("project", "", "is empty"),
    ("project", "billing", "group/name"),
    ("project", "shop/.hidden", "starts with a letter"),
    ("project", "shop//x", "starts with a letter"),
    ("project", "shop/x.git", "'.git'"),
    ("project", "shop/$CI_PROJECT_PATH", "'$'"),
    ("project", "shop/x y", "a space"),
    ("ref", "-b", "starts with '-'"),
    ("ref", "a..b", "check-ref-format"),
    ("ref", "topic.lock", "check-ref-format"),
    ("ref", "topic/", "check-ref-format"),
    ("ref", "@", "check-ref-format"),
    ("ref", "a\\b", "'\\\\'"),
    ("ref", "a\x00b", "control"),
    ("ref", "a\u2028b", "control or space"),
    ("ref", "main\r", "a carriage return"),
    ("url", "ftp://x/simple", "scheme"),
    ("url", "https:///simple", "no host"),
    ("url", "https://x/simple;rm", "';'"),
    ("url", "https://x/simple|sh", "'|'"),
    ("url", 'https://x/"a"', "'\"'"),
    ("path", "~/wheels", "'~'"),
    ("path", "wheels*", "'*'"),
    ("path", "\uff57heels", "'\uff57'"),  # a full-width letter w: not ASCII
    ("path", "x" * (FLEET_MAX_VALUE_CHARS + 1), "at most"),
]


@pytest.mark.parametrize(("kind", "value"), ACCEPTED)
def test_ordinary_values_are_accepted(kind: Kind, value: str) -> None:
    assert check_value(kind, value) == value


@pytest.mark.parametrize(("kind", "value", "said"), REFUSED)
def test_values_a_shell_git_or_gitlab_would_read_are_refused(kind: Kind, value: str, said: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_value(kind, value)
    assert said in str(caught.value), str(caught.value)


def test_a_find_links_entry_is_a_url_or_a_path() -> None:
    assert check_link("https://x/links/") == "https://x/links/"
    assert check_link("../wheels") == "../wheels"
    with pytest.raises(ValueError, match="scheme"):
        check_link("gopher://x/links")
    with pytest.raises(ValueError, match="':'"):
        check_link("c:wheels")


def test_the_error_names_the_file_the_entry_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yml"
    path.write_text(
        "defaults: {find_links: [ok, 'bad dir']}\nrepos: [{name: a, project: g/a}, {name: b, project: g/b}]\n"
    )
    with pytest.raises(InputError) as caught:
        load_fleet(path)
    assert f"{path}: field 'defaults.find_links': entry 1: contains a space" in str(caught.value)
    path.write_text("repos: [{name: a, project: g/a}, {name: b, project: g/b, target_branch: 'x$y'}]\n")
    with pytest.raises(InputError) as caught:
        load_fleet(path)
    assert f"{path}: repos[1] (name 'b'), field 'target_branch': contains '$'" in str(caught.value)
