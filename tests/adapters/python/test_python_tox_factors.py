"""tox factor conditions read as tox reads them, for the env the tests run in."""

from __future__ import annotations

import sys

import pytest

from agentic_codemod.adapters.python.tox_ini import (
    EnvReading,
    FactorReading,
    TooComplex,
    condition_holds,
    condition_takes,
    env_factors,
    generic_env,
    split_condition,
)
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


@pytest.mark.parametrize(
    ("line", "split"),
    [
        ("py310,py311: acme-sdk<2", ("py310,py311", "acme-sdk<2")),
        ("py310, py311 :  acme-sdk<2", ("py310, py311", "acme-sdk<2")),  # tox strips around commas
        ("py{310, 311}: acme-sdk<2", ("py{310, 311}", "acme-sdk<2")),  # and inside braces
        (
            "!marshmallowdev: https://example.org/a.tar.gz",
            ("!marshmallowdev", "https://example.org/a.tar.gz"),
        ),
        ("lint:", ("lint", "")),
        ("https://example.org/a.tar.gz", None),  # the colon is not followed by a space
        ("pytest --cov-report term: x", None),  # a space inside a factor: tox keeps the whole line
        ('python -c "import a: b"', None),
        ("acme-sdk>=1", None),
    ],
)
def test_one_reading_of_where_a_condition_ends(line: str, split: tuple[str, str] | None) -> None:
    """The deps a run installs (ci_config) and the declarations it bumps (tox_ini.find) split a line the
    same way, as tox does: `py{310,311}: acme-sdk<2` was installed but never found as a declaration,
    and `py310, py311: x` was bumped but given to pip whole."""
    found = split_condition(line)
    assert (None if found is None else (found[0], line[found[1] :])) == split


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("{," + HERE + "}", True),  # an empty alternative names no env
        ("py3{10-" + str(sys.version_info.minor + 2) + "}", True),  # tox 4 ranges: py310, py311, ...
        ("py3{1-2}", False),
        ("linux", sys.platform == "linux"),  # tox adds the platform to every env's factors
        ("!", None),
        ("py3{10-}", None),  # an open range: tox reads it by its own table of versions; not taken
    ],
)
def test_more_of_what_tox_reads(condition: str, holds: bool | None) -> None:
    assert condition_holds(condition, frozenset({HERE})) is holds


@pytest.mark.parametrize(
    ("envlist", "generic"),
    [
        (None, EnvReading(frozenset({HERE}))),  # no envlist: `tox -e py311`
        (f"py{{37,{HERE[2:]}}}, py311-marshmallowdev, docs", EnvReading(frozenset({HERE}))),
        ("py3,pep8", EnvReading(frozenset({"py3"}))),  # the env that runs on any CPython 3
        ("lint\n    python", EnvReading(frozenset({"python"}))),
        # no env of this interpreter alone: read as py311, and a line must hold for py311-sdk1 and -sdk2 too
        (
            f"{HERE}-sdk{{1,2}}",
            EnvReading(
                frozenset({HERE}), listed=False, also=(frozenset({HERE, "sdk1"}), frozenset({HERE, "sdk2"}))
            ),
        ),
        ("py27", EnvReading(frozenset({HERE}), listed=False)),
    ],
)
def test_the_generic_testenv_is_read_for_the_env_the_envlist_runs_on_this_interpreter(
    envlist: str | None, generic: EnvReading
) -> None:
    assert generic_env(envlist) == generic


@pytest.mark.parametrize(
    ("condition", "envlist", "taken"),
    [
        ("!sdk2", f"{HERE}-sdk{{1,2}}", False),  # the sdk1 env's pin, not every py311 env's
        ("!cov", f"{HERE}-sdk{{1,2}}", True),  # every py311 env's
        (f"py{{310,{HERE[2:]}}}", "py27", True),  # no env of this interpreter listed: interpreter conditions
        ("!cov", "py27", False),
        ("!cov", HERE, True),  # listed: as tox reads it
    ],
)
def test_an_env_the_envlist_does_not_name_takes_only_what_every_such_env_would(
    condition: str, envlist: str, taken: bool
) -> None:
    assert condition_takes(condition, generic_env(envlist)) is taken


def test_a_reading_has_one_budget_for_every_env_it_answers() -> None:
    """40 distinct conditions of 1,024 groups each read for 200 envs took 27 s per reading, read
    several times a run: a condition is expanded once, each (condition, env) answered once, and the
    groups compared in all are bounded by config.TOX_FACTOR_MAX_CHECKS."""
    condition = "-".join(f"{{a{i},b{i}}}" for i in range(10))
    reading = FactorReading(max_checks=3 * 1_024)
    for _ in range(100):
        assert reading.holds(condition, frozenset({"e0"})) is False  # answered once
    assert reading.holds(condition, frozenset({"e1"})) is False
    assert reading.checks == 2 * 1_024
    reading.holds(condition, frozenset({"e2"}))
    with pytest.raises(TooComplex, match="TOX_FACTOR_MAX_CHECKS"):
        reading.holds(condition, frozenset({"e3"}))
