"""npm versioning: matches, intersects, pins (node-semver semantics)."""

from __future__ import annotations

import pytest

from agentic_codemod.adapters.npm import versioning


@pytest.mark.parametrize(
    ("version", "written", "expected"),
    [
        ("1.5.0", "^1.2.0", True),
        ("2.0.0", "^1.2.0", False),
        ("0.2.9", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.9.9", "1.x", True),
        ("2.0.0", ">=1 <2 || ^2", True),
        ("2.0.0-rc.1", "^2.0.0", False),  # npm hides prereleases from a range without one
        ("2.0.0-rc.2", "^2.0.0-rc.1", True),
        ("2.0.0", "latest", True),  # a dist-tag admits every version
        ("2.0.0", "not a range", False),
        ("v2.0.0", "*", False),  # a version is written plain
    ],
)
def test_matches(version: str, written: str, expected: bool) -> None:
    assert versioning.matches(version, written) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("^1.2", ">=1.5 <3", True),
        ("^1", "^2", False),
        ("<=1.0.0", ">=1.0.0", True),
        ("<1.0.0", ">=1.0.0", False),
        (">1.0.0", "<=1.0.0", False),
        ("1.x || 3.x", ">=2.5 <3.1", True),
        ("1.x || 3.x", ">=2.0.0 <3.0.0", False),
        ("*", "^9", True),
        ("2.0.0", "^2", True),
        ("2.0.0", "^1", False),
    ],
)
def test_intersects(a: str, b: str, expected: bool) -> None:
    assert versioning.intersects(a, b) is expected
    assert versioning.intersects(b, a) is expected


def test_an_unreadable_range_does_not_intersect_silently() -> None:
    with pytest.raises(ValueError, match="not an npm semver range"):
        versioning.intersects(">=foo", "^1")


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2.0.0", True),
        ("=2.0.0", True),
        ("v2.0.0", True),
        ("^2.0.0", False),
        ("2.x", False),
        ("2.0.1", False),
    ],
)
def test_pins_only_an_exact_version(written: str, expected: bool) -> None:
    assert versioning.pins(written, "2.0.0") is expected
