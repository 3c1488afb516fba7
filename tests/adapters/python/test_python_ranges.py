"""Range strategies (Renovate's rangeStrategy) for every style: each result admits the target, keeps the
operator style, never adds a cap, and (bump, pin) no longer admits the old version."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from agentic_codemod.adapters.python.ranges import admitted, new_range

TARGET, OLD = "2.0.0", "1.4.0"

# (written, style) -> expected text for auto, bump, replace, widen, pin
TABLE = {
    ("==1.4.0", "pep440"): ("==2.0.0", "==2.0.0", "==2.0.0", "==2.0.0", "==2.0.0"),
    ("== 1.4.0", "pep440"): ("== 2.0.0", "== 2.0.0", "== 2.0.0", "== 2.0.0", "== 2.0.0"),
    ("===1.4.0", "pep440"): ("===2.0.0", "===2.0.0", "===2.0.0", "===2.0.0", "===2.0.0"),
    ("~=1.4", "pep440"): ("~=2.0", "~=2.0", "~=2.0", ">=1.4,<3.0", "==2.0.0"),
    ("~=1.4.0", "pep440"): ("~=2.0.0", "~=2.0.0", "~=2.0.0", ">=1.4.0,<3.0.0", "==2.0.0"),
    ("==1.*", "pep440"): ("==2.*", "==2.*", "==2.*", ">=1,<3", "==2.0.0"),
    (">=1.2", "pep440"): (">=2.0.0", ">=2.0.0", ">=1.2", ">=1.2", "==2.0.0"),
    (">1.2", "pep440"): (">=2.0.0", ">=2.0.0", ">1.2", ">1.2", "==2.0.0"),
    (">=1.2,<2", "pep440"): (">=2.0.0,<3", ">=2.0.0,<3", ">=2.0.0,<3", ">=1.2,<3", "==2.0.0"),
    (">=1.2, <2.0", "pep440"): (">=2.0.0, <3.0", ">=2.0.0, <3.0", ">=2.0.0, <3.0", ">=1.2, <3.0", "==2.0.0"),
    (">=1.2,<3", "pep440"): (">=2.0.0,<3", ">=2.0.0,<3", ">=1.2,<3", ">=1.2,<3", "==2.0.0"),
    (">=1.2,<=1.9", "pep440"): (">=2.0.0,<3.0", ">=2.0.0,<3.0", ">=2.0.0,<3.0", ">=1.2,<3.0", "==2.0.0"),
    (">=1.2,!=2.0.0,<2", "pep440"): (">=2.0.0,<3", ">=2.0.0,<3", ">=2.0.0,<3", ">=1.2,<3", "==2.0.0"),
    ("<2", "pep440"): (">=2.0.0,<3", ">=2.0.0,<3", ">=2.0.0,<3", "<3", "==2.0.0"),
    ("!=1.3,<2.0", "pep440"): (
        ">=2.0.0,!=1.3,<3.0",
        ">=2.0.0,!=1.3,<3.0",
        ">=2.0.0,!=1.3,<3.0",
        "!=1.3,<3.0",
        "==2.0.0",
    ),
    ("<2", "poetry"): (">=2.0.0,<3", ">=2.0.0,<3", ">=2.0.0,<3", "<3", "2.0.0"),
    ("^1.4", "poetry"): ("^2.0.0", "^2.0.0", "^2.0.0", "^1.4 || ^2.0.0", "2.0.0"),
    ("~1.4", "poetry"): ("~2.0.0", "~2.0.0", "~2.0.0", "~1.4 || ~2.0.0", "2.0.0"),
    ("1.4.0", "poetry"): ("2.0.0", "2.0.0", "2.0.0", "2.0.0", "2.0.0"),
    ("1.4.*", "poetry"): ("2.0.*", "2.0.*", "2.0.*", "1.4.* || 2.0.*", "2.0.0"),
    (">=1.2 <2", "poetry"): (">=2.0.0 <3", ">=2.0.0 <3", ">=2.0.0 <3", ">=1.2 <3", "2.0.0"),
    (">=1.2,<2.0", "poetry"): (">=2.0.0,<3.0", ">=2.0.0,<3.0", ">=2.0.0,<3.0", ">=1.2,<3.0", "2.0.0"),
}
STRATEGIES = ("auto", "bump", "replace", "widen", "pin")
CASES = [
    (w, s, strategy, out)
    for (w, s), outs in TABLE.items()
    for strategy, out in zip(STRATEGIES, outs, strict=True)
]


def admits(text: str, style: str, version: str) -> bool:
    return any(version in spec for spec in admitted(text, style))


def caps(text: str, style: str) -> int:
    return sum(
        1 for spec in admitted(text, style) for s in spec if s.operator in ("<", "<=", "~=", "==", "===")
    )


@pytest.mark.parametrize(("written", "style", "strategy", "expected"), CASES)
def test_style_by_strategy(written: str, style: str, strategy: str, expected: str) -> None:
    result = new_range(written, style, TARGET, strategy)
    assert result == expected
    assert admits(result, style, TARGET)
    if strategy in ("auto", "bump", "pin") and admits(written, style, OLD):
        assert not admits(result, style, OLD), "bump and pin move the floor past the old version"
    if strategy != "pin" and not caps(written, style):
        assert not caps(result, style), "no cap is ever added (pin asked for one)"


@pytest.mark.parametrize(
    ("written", "target", "expected"),
    [
        (">=22.1.0", "25.3.0", ">=25.3.0"),  # never >=25.3.0,<26
        (">=2.7", "3.1.0", ">=3.1.0"),  # never gains <3 or <4
        # a cap that excludes the target is lifted to the next major; with no floor, one is added at the
        # target (`<3` alone left 1.4 admitted beside code migrated to 2.0: green, exit 0)
        ("<2", "2.0.0", ">=2.0.0,<3"),
        ("<2.0.0", "2.5.1", ">=2.5.1,<3.0.0"),
    ],
)
def test_open_ranges_stay_open_and_caps_move_to_the_next_major(
    written: str, target: str, expected: str
) -> None:
    assert new_range(written, "pep440", target) == expected
    assert SpecifierSet(expected).contains(target)


def test_replace_and_widen_leave_a_range_that_admits_the_target() -> None:
    assert new_range(" >=1.2,<3 ", "pep440", TARGET, "replace") == " >=1.2,<3 "
    assert new_range("^1.4 || ^2.0", "poetry", TARGET, "widen") == "^1.4 || ^2.0"


@pytest.mark.parametrize("written", ["", "*", "  "])
def test_no_version_is_left_alone(written: str) -> None:
    assert new_range(written, "poetry", TARGET) is None


def test_unknown_strategy_and_unreadable_range_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown range strategy 'lockfile'"):
        new_range(">=1", "pep440", TARGET, "lockfile")
    with pytest.raises(ValueError, match="cannot read the range"):
        new_range("^1.4", "pep440", TARGET)
