"""tox factor conditions read as tox reads them, for the env the tests run in."""

from __future__ import annotations

import sys

import pytest

from agentic_codemod.adapters.python.tox_ini import condition_holds, env_factors
from agentic_codemod.config import TOX_FACTOR_MAX_VARIANTS

HERE = f"py{sys.version_info.major}{sys.version_info.minor}"


def test_the_generic_testenv_is_read_for_the_interpreters_env_and_a_named_one_for_its_own_name() -> None:
    assert env_factors("testenv") == frozenset({HERE})
    assert env_factors("testenv:py311-django42") == frozenset({"py311", "django42"})


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        (HERE, True),
        ("py27", False),
        (f"py27,{HERE}", True),  # comma: or
        (f"{HERE}-cov", False),  # hyphen: and
        ("!cov", True),
        (f"!{HERE}", False),
        ("py{27,36}", False),
        ("py{27," + HERE[2:] + ",pypy3}", True),  # a brace group is expanded in place
        ("{py27,py36}-!cov", False),
        ("{" + f"py27,{HERE}" + "}-!cov", True),
        (f"lint,{HERE}-!docs", True),
    ],
)
def test_conditions(condition: str, holds: bool) -> None:
    assert condition_holds(condition, env_factors("testenv")) is holds


@pytest.mark.parametrize("condition", ["", "a b", "py311:", "{", "py3{10,11}{"])
def test_a_condition_tox_would_not_read_is_unreadable(condition: str) -> None:
    assert condition_holds(condition, frozenset({"py311"})) is None


def test_a_condition_that_expands_past_the_limit_is_unreadable_without_expanding_it() -> None:
    """`{a,b}-{a,b}-...` names 2**n envs: read up to config.TOX_FACTOR_MAX_VARIANTS of them, refused past
    it (a hostile tox.ini repeating it 100,000 times is refused, never expanded nor multiplied out)."""
    at_limit = TOX_FACTOR_MAX_VARIANTS.bit_length() - 1  # 2**at_limit <= the limit
    assert condition_holds("-".join(["{a,b}"] * at_limit), frozenset({"a"})) is True
    assert condition_holds("-".join(["{a,b}"] * (at_limit + 1)), frozenset({"a"})) is None
    assert condition_holds("-".join(["{a,b}"] * 100_000), frozenset({"a"})) is None
    assert condition_holds(",".join(["x"] * (TOX_FACTOR_MAX_VARIANTS + 1)), frozenset({"x"})) is None
