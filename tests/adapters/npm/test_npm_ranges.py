"""npm ranges rewritten by strategy (before/after tables, each with cases that stay as written)."""

from __future__ import annotations

import pytest

from agentic_codemod.adapters.npm import versioning
from agentic_codemod.adapters.npm.ranges import new_range

BUMP = [
    ("1.4.0", "2.0.0"),
    ("=1.4.0", "=2.0.0"),
    ("^1.4.0", "^2.0.0"),
    ("^1", "^2"),
    ("~1.4", "~2.0"),
    ("~> 1.2", "~> 2.0"),
    ("1.x", "2.x"),
    ("1.4.x", "2.0.x"),
    ("1.*", "2.*"),
    ("1", "2"),
    ("v1.2.3", "v2.0.0"),
    (">=1.2.0", ">=2.0.0"),
    (">1.2.0", ">=2.0.0"),
    (">=1.2.0 <2.0.0", ">=2.0.0 <3.0.0"),
    (">=1 <2", ">=2 <3"),
    (">=1.2.0 <=1.9.0", ">=2.0.0 <3.0.0"),
    (">=1.2.0 <5", ">=2.0.0 <5"),
    ("^1.0.0 || ^1.5.0", "^2.0.0"),
    ("<2.0.0", ">=2.0.0 <3.0.0"),  # a cap alone gains a floor: <3.0.0 left every 1.x admitted
    ("<=1.9.0", ">=2.0.0 <3.0.0"),
    ("npm:acme-sdk@^1.0.0", "npm:acme-sdk@^2.0.0"),
    ("  ^1.2.3 ", "  ^2.0.0 "),
]
WIDEN = [
    ("^1.4.0", "^1.4.0 || ^2.0.0"),
    ("~1.4", "~1.4 || ~2.0"),
    ("1.x", "1.x || 2.x"),
    (">=1.2.0 <2.0.0", ">=1.2.0 <3.0.0"),
    ("1.4.0", "2.0.0"),  # an exact pin cannot be widened: replaced
    (">=1.2.0", ">=1.2.0"),  # admits the target: as written
    ("^2.0.0", "^2.0.0"),
]
REPLACE = [("^1.4.0", "^2.0.0"), (">=1.2.0", ">=1.2.0"), ("2.x", "2.x"), ("<2", ">=2.0.0 <3")]
PIN = [("^1.4.0", "2.0.0"), ("=1.4.0", "=2.0.0"), ("1.x || 2.x", "2.0.0"), ("npm:acme@^1", "npm:acme@2.0.0")]


@pytest.mark.parametrize(
    ("strategy", "cases"),
    [("bump", BUMP), ("auto", BUMP), ("widen", WIDEN), ("replace", REPLACE), ("pin", PIN)],
)
def test_ranges_are_rewritten_by_strategy_and_admit_the_target(
    strategy: str, cases: list[tuple[str, str]]
) -> None:
    for written, expected in cases:
        result = new_range(written, "2.0.0", strategy)
        assert result == expected, (strategy, written)
        assert versioning.matches("2.0.0", result)


@pytest.mark.parametrize(
    "written",
    [
        "*",
        "",
        "x",
        "latest",
        "next",
        "file:../sdk",
        "git+https://h/r.git",
        "github:acme/sdk",
        "workspace:*",
        "https://h/sdk.tgz",
    ],
)
def test_a_value_without_a_version_is_left_alone(written: str) -> None:
    assert new_range(written, "2.0.0", "bump") is None


def test_the_target_keeps_the_written_precision_only_when_it_says_the_same() -> None:
    assert new_range("^1.2", "2.1.3") == "^2.1.3"
    assert new_range("^1.2", "2.1.0") == "^2.1"
    assert new_range("^1.0.0", "2.0.0-rc.1") == "^2.0.0-rc.1"


@pytest.mark.parametrize(
    ("written", "target", "strategy", "message"),
    [
        ("1.2.3 - 1.9.0", "2.0.0", "bump", "hyphen range"),
        (">=foo", "2.0.0", "bump", "not an npm semver range"),
        ("^1.0.0", "2.0", "bump", "not a semver version"),
        ("^1.0.0", "v2.0.0", "bump", "not a semver version"),
        ("^1.0.0", "2.0.0", "sideways", "unknown range strategy"),
    ],
)
def test_what_cannot_be_rewritten_is_an_error(written: str, target: str, strategy: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        new_range(written, target, strategy)
