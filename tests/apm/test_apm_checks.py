"""The pure checks behind load_context: identities, pins, patterns, hidden characters, hooks."""

from __future__ import annotations

import hashlib
import random
import unicodedata
from pathlib import Path

import pytest
from apm_project import write

from agentic_codemod.apm.integrity import _is_hidden, content_hash, find_hooks, hidden_characters
from agentic_codemod.apm.manifest import normalise_local, remote_identity
from agentic_codemod.apm.policy import TAG_RE, matches_pattern


@pytest.mark.parametrize(
    ("entry", "identity"),
    [
        ("acme/pkg", "github.com/acme/pkg"),
        ("gitlab.example.com/acme/sub/pkg", "gitlab.example.com/acme/sub/pkg"),
        ("https://GitLab.example.com/acme/pkg.git", "gitlab.example.com/acme/pkg"),
        ("git@gitlab.example.com:acme/pkg.git", "gitlab.example.com/acme/pkg"),
        ("ssh://git@gitlab.example.com:2222/acme/pkg.git", "gitlab.example.com/acme/pkg"),
    ],
)
def test_remote_identity_is_host_qualified(entry: str, identity: str) -> None:
    assert remote_identity(entry) == identity


@pytest.mark.parametrize(
    ("raw", "norm"),
    [("./a/b/", "./a/b"), ("a//b", "./a/b"), ("./a/./b", "./a/b"), ("../x", "../x"), ("/abs/x/", "/abs/x")],
)
def test_local_paths_are_normalised(raw: str, norm: str) -> None:
    assert normalise_local(raw) == norm


@pytest.mark.parametrize("ref", ["v1.2.3", "1.2.3", "v2.0.0-rc.1", "v1.0.0+build.7"])
def test_release_tags_are_pins(ref: str) -> None:
    assert TAG_RE.match(ref)


@pytest.mark.parametrize(
    "ref", ["main", "v1", "v1.2", "^1.2.3", "~1.2.3", ">=1.0.0", "1.x", "*", "0123abc", "a" * 40, "v1.2.3 "]
)
def test_branches_ranges_and_shas_are_not_pins(ref: str) -> None:
    assert not TAG_RE.match(ref)


@pytest.mark.parametrize(
    ("identity", "pattern", "expected"),
    [
        ("./fixtures/packages/x", "./fixtures/packages/**", True),
        ("./fixtures/packages/x/y", "./fixtures/packages/*", False),
        ("./fixtures/other", "./fixtures/packages/**", False),
        ("gitlab.example.com/acme/pkg", "gitlab.example.com/acme/*", True),
        ("gitlab.example.com/acme/pkg", "acme/**", False),
        ("github.com/acme/pkg", "acme/**", False),
    ],
)
def test_allow_patterns_use_apm_globs_on_host_qualified_identities(
    identity: str, pattern: str, expected: bool
) -> None:
    assert matches_pattern(identity, pattern) is expected


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain ascii\nand tabs\t\r\n", []),
        ("\ufeffleading BOM is fine", []),
        ("emoji \u2714\ufe0f ok, accents é ü and CJK 漢字", []),
        ("a\u202eb", [(1, 2, "U+202E RIGHT-TO-LEFT OVERRIDE")]),
        ("x\ny\u200bz", [(2, 2, "U+200B ZERO WIDTH SPACE")]),
        ("tag \U000e0069", [(1, 5, "U+E0069 TAG LATIN SMALL LETTER I")]),
        ("ansi \x1b[31m", [(1, 6, "U+001B unnamed")]),
        ("mid\ufeffdle", [(1, 4, "U+FEFF ZERO WIDTH NO-BREAK SPACE")]),
    ],
)
def test_hidden_characters(text: str, found: list[tuple[int, int, str]]) -> None:
    assert list(hidden_characters(text)) == found


def test_hidden_characters_are_every_character_the_rule_refuses_wherever_it_stands() -> None:
    """Against the rule applied to every character in turn (lines and columns counted one by one), on
    random texts of line breaks, printable ASCII and characters on both sides of the rule."""

    def one_by_one(text: str) -> list[tuple[int, int, str]]:
        found, line, col = [], 1, 0
        for index, char in enumerate(text):
            col += 1
            if char == "\n":
                line, col = line + 1, 0
            elif _is_hidden(char) and not (index == 0 and char == "\ufeff"):
                found.append((line, col, f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"))
        return found

    alphabet = "ab \t\n\r~\x00\x1b\x7f\x85\u00ad\u200b\u202e\u2028\ufeff\ufe0e\ufe0f\U000e0041\U000e0100é中"
    rng = random.Random(13)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert list(hidden_characters(text)) == one_by_one(text), repr(text)


def test_hooks_are_found_in_every_place_apm_reads_them(tmp_path: Path) -> None:
    write(tmp_path / ".apm" / "hooks" / "a.json", "{}")
    write(tmp_path / "hooks" / "b.json", "{}")
    write(tmp_path / "deep" / "x.hooks.json", "{}")
    write(tmp_path / "plugin.json", '{"hooks": {"Stop": []}}')
    write(tmp_path / ".claude-plugin" / "plugin.json", '{"name": "no hooks here"}')
    write(tmp_path / ".apm" / "skills" / "s" / "SKILL.md", "hooks are mentioned, that is fine")
    assert sorted(find_hooks(tmp_path)) == [
        ".apm/hooks/a.json",
        "deep/x.hooks.json",
        "hooks/b.json",
        "plugin.json",
    ]


def test_a_plugin_manifest_nested_past_jsons_depth_counts_as_declaring_hooks(tmp_path: Path) -> None:
    """json raises RecursionError (no ValueError) for it: the scan crashed; now it is unreadable, and an
    unreadable plugin manifest is taken as declaring hooks (fail closed)."""
    write(tmp_path / "plugin.json", '{"hooks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    write(tmp_path / ".claude-plugin" / "plugin.json", '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert sorted(find_hooks(tmp_path)) == [".claude-plugin/plugin.json", "plugin.json"]


def test_content_hash_of_an_empty_tree_is_the_empty_digest(tmp_path: Path) -> None:
    assert content_hash(tmp_path) == "sha256:" + hashlib.sha256(b"").hexdigest()
    assert content_hash(tmp_path / "missing") == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_content_hash_excludes_git_pycache_and_root_pin_only(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "a")
    base = content_hash(tmp_path)
    write(tmp_path / ".git" / "HEAD", "ref")
    write(tmp_path / "x" / "__pycache__" / "m.pyc", "c")
    write(tmp_path / ".apm-pin", "{}")
    assert content_hash(tmp_path) == base
    write(tmp_path / "sub" / ".apm-pin", "{}")  # only the root marker is excluded
    assert content_hash(tmp_path) != base
