"""How a version range is rewritten so that it admits the target, the way Renovate names it (rangeStrategy).

    new_range(written, style, target, strategy) -> str | None       (None: no version to edit)
    admitted(written, style) -> [SpecifierSet, ...]                  (Poetry `||` alternatives; PEP 440: one)

Strategies (target 2.0.0; `auto`, the default, is `bump`: the run exists so that `from` is no longer
what the declaration admits, and bump is the one strategy that keeps the written shape while doing that):

    bump      every floor and pin moves to the target, in the same operator and precision:
              ==1.4.0 -> ==2.0.0, ~=1.4 -> ~=2.0, ==1.* -> ==2.*, >=1.2 -> >=2.0.0 (open stays open),
              Poetry ^1.4 -> ^2.0.0, ~1.4 -> ~2.0.0, 1.4.0 -> 2.0.0; > becomes >= (> target excludes it)
    replace   left as written when it admits the target; otherwise as bump
    widen     left as written when it admits the target; otherwise the floor stays and only what excludes the
              target goes: a cap is lifted, ~=1.4 becomes >=1.4,<3, Poetry ^1.4 becomes ^1.4 || ^2.0.0;
              an exact pin cannot be widened and is replaced
    pin       ==<target> (Poetry: <target>)

In every strategy a cap (< or <=) that excludes the target is lifted to the next major of the target,
written with the cap's precision (<2 -> <3, <2.0 -> <3.0, <=1.9 -> <3.0); a cap that admits it stays; no cap
is ever added; an exclusion `!=` of the target itself is dropped. A range with no floor (a cap or an
exclusion alone: `<2`, common as `numpy<2`) gains one under bump (and auto, and replace out of range): `<2`
-> `>=2.0.0,<3`. Lifting the cap alone (`<3`) would leave every old version admitted, so an environment that
already holds 1.4 keeps it beside code migrated to 2.0 (before: green, exit 0). Spacing, separators and
every other clause stay as written. The result is checked with packaging: a range that would not admit the
target is a ValueError, never written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

Strategy = Literal["auto", "bump", "widen", "replace", "pin"]
STRATEGIES: tuple[str, ...] = ("auto", "bump", "widen", "replace", "pin")

CLAUSE_RE = re.compile(
    r"(?P<op>~=|===|==|!=|<=|>=|<|>|\^|~)?(?P<space>\s*)(?P<ver>\*|[0-9][0-9A-Za-z.*+!_-]*)"
)
SEPARATOR_RE = re.compile(r"[\s,]*")


@dataclass
class _Clause:
    op: str
    space: str
    ver: str

    def text(self) -> str:
        return f"{self.op}{self.space}{self.ver}"


def new_range(written: str, style: str, target: str, strategy: str = "auto") -> str | None:
    """The new specifier text for `written` (as returned: maybe unchanged), or None when there is no
    version to edit (empty, `*`). ValueError for an unknown strategy, or a range this module cannot read
    or cannot make admit the target."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown range strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    text = written.strip()
    if not text or text == "*":
        return None
    version = _version(target)
    lead, trail = written[: len(written) - len(written.lstrip())], written[len(written.rstrip()) :]
    alternatives = (
        [_clauses(alt, style) for alt in text.split("||")] if style == "poetry" else [_clauses(text, style)]
    )
    already = any(version in spec for spec in admitted(written, style))
    if strategy in ("replace", "widen") and already:
        return written
    if strategy == "pin":
        pinned = _pinned(alternatives, target)
        new = pinned if pinned is not None else (target if style == "poetry" else f"=={target}")
    elif strategy == "widen":
        new = _widen(text, alternatives, style, version, target)
    else:  # auto, bump, replace (out of range)
        bumped = _bump(alternatives[-1], version, target)
        new = _join(bumped) if _has_floor(bumped) else f">={target},{_join(bumped)}"
    result = lead + new + trail
    if not any(version in spec for spec in admitted(result, style)):
        raise ValueError(f"cannot rewrite {written!r} to admit {target} ({strategy})")
    return result


def admitted(written: str, style: str) -> list[SpecifierSet]:
    """What the range admits, as PEP 440 specifier sets (one per Poetry `||` alternative; prereleases
    included). ValueError when it cannot be read."""
    text = written.strip()
    if not text or text == "*":
        return [SpecifierSet("", prereleases=True)]
    if style != "poetry":
        try:
            return [SpecifierSet(text, prereleases=True)]
        except InvalidSpecifier as exc:
            raise ValueError(f"not a PEP 440 range: {written!r}") from exc
    sets = []
    for alternative in text.split("||"):
        parts = [_pep440(clause) for clause in _pieces(alternative, style)[1::2]]
        try:
            sets.append(SpecifierSet(",".join(p for p in parts if p), prereleases=True))
        except InvalidSpecifier as exc:
            raise ValueError(f"not a Poetry constraint: {written!r}") from exc
    return sets


def _pieces(text: str, style: str) -> list[str]:
    """[separator, clause, separator, clause, ..., separator] of one alternative."""
    pieces, pos = [], 0
    while True:
        sep = SEPARATOR_RE.match(text, pos)
        assert sep is not None  # `[\s,]*` always matches
        pieces.append(sep.group())
        pos = sep.end()
        if pos == len(text):
            return pieces
        clause = CLAUSE_RE.match(text, pos)
        if clause is None or (style != "poetry" and clause.group("op") in (None, "^", "~")):
            raise ValueError(f"cannot read the range {text.strip()!r}")
        pieces.append(clause.group())
        pos = clause.end()


def _clauses(text: str, style: str) -> list[str | _Clause]:
    pieces: list[str | _Clause] = []
    for i, piece in enumerate(_pieces(text, style)):
        if i % 2:
            match = CLAUSE_RE.fullmatch(piece)
            assert match is not None
            pieces.append(_Clause(match.group("op") or "", match.group("space"), match.group("ver")))
        else:
            pieces.append(piece)
    return pieces


def _join(pieces: list[str | _Clause]) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in pieces).strip()


def _bump(pieces: list[str | _Clause], version: Version, target: str) -> list[str | _Clause]:
    return _rebuild(pieces, lambda clause: _bump_clause(clause, version, target))


def _rebuild(pieces: list[str | _Clause], change: Callable[[_Clause], _Clause | None]) -> list[str | _Clause]:
    """Each clause changed (None drops it, with the separator before it), separators kept."""
    separators, clauses = pieces[0::2], [change(c) for c in pieces[1::2] if isinstance(c, _Clause)]
    out: list[str | _Clause] = [separators[0]]
    for index, clause in enumerate(clauses):
        if clause is None:
            continue
        if len(out) > 1:
            out.append(separators[index])
        out.append(clause)
    return [*out, separators[-1]]


def _bump_clause(clause: _Clause, version: Version, target: str) -> _Clause | None:
    op, ver = clause.op, clause.ver
    if ver == "*":
        return clause
    if op in ("", "==", "===") and "*" in ver:
        return _Clause(op, clause.space, _wildcard(version, ver))
    if op in ("", "==", "==="):
        return _Clause(op, clause.space, target)
    if op == "~=":
        return _Clause(op, clause.space, _prefix(version, max(2, _precision(ver))))
    if op in ("^", "~", ">="):
        return _Clause(op, clause.space, target)
    if op == ">":
        return _Clause(">=", clause.space, target)
    return _keep_or_lift(clause, version)


def _has_floor(pieces: list[str | _Clause]) -> bool:
    """Whether a range has a clause that bounds it from below (a floor, a pin, a compatible release): a
    cap or an exclusion alone (`<2`, `!=1.3`) admits every old version below it."""
    return any(
        isinstance(p, _Clause) and p.ver != "*" and p.op in ("", "==", "===", "~=", ">=", ">", "^", "~")
        for p in pieces
    )


def _keep_or_lift(clause: _Clause, version: Version) -> _Clause | None:
    """A cap or an exclusion: kept when it admits the target; a cap is lifted, an exclusion dropped."""
    if version in SpecifierSet(f"{clause.op}{clause.ver}", prereleases=True):
        return clause
    if clause.op == "!=":
        return None
    return _Clause("<", clause.space, _prefix(Version(str(version.major + 1)), _precision(clause.ver)))


def _widen(
    text: str, alternatives: list[list[str | _Clause]], style: str, version: Version, target: str
) -> str:
    last = alternatives[-1]
    clauses = [p for p in last if isinstance(p, _Clause)]
    if style == "poetry" and any(c.op in ("^", "~") or "*" in c.ver for c in clauses):
        return f"{text} || {_join(_bump(last, version, target))}"
    if len(clauses) == 1 and clauses[0].op in ("", "==", "===") and "*" not in clauses[0].ver:
        return _join(_bump(last, version, target))  # an exact pin cannot be widened: replaced
    return _join(_rebuild(last, lambda clause: _widen_clause(clause, version)))


def _widen_clause(clause: _Clause, version: Version) -> _Clause | None:
    if clause.op == "~=" or (clause.op in ("", "==") and "*" in clause.ver):
        floor = clause.ver.removesuffix(".*")
        cap = _prefix(Version(str(version.major + 1)), _precision(floor))
        return _Clause(">=", clause.space, f"{floor},<{cap}")
    if clause.op in ("<", "<=", "!="):
        return _keep_or_lift(clause, version)
    return clause


def _pinned(alternatives: list[list[str | _Clause]], target: str) -> str | None:
    """A single exact pin rewritten in place (keeps `===` and spacing), else None."""
    if len(alternatives) != 1:
        return None
    clauses = [p for p in alternatives[0] if isinstance(p, _Clause)]
    if len(clauses) == 1 and clauses[0].op in ("", "==", "===") and "*" not in clauses[0].ver:
        return _join([_Clause(clauses[0].op, clauses[0].space, target)])
    return None


def _pep440(clause: str) -> str:
    """One Poetry clause as PEP 440 (`^1.4` -> `>=1.4,<2`, `~1.4` -> `>=1.4,<1.5`, `1.4.0` -> `==1.4.0`)."""
    match = CLAUSE_RE.fullmatch(clause)
    assert match is not None
    op, ver = match.group("op") or "", match.group("ver")
    if ver == "*":
        return ""
    if op == "":
        return f"=={ver}"
    if op not in ("^", "~"):
        return f"{op}{ver}"
    release = list(_version(ver).release)
    if op == "^":
        index = next((i for i, part in enumerate(release) if part), len(release) - 1)
    else:
        index = 0 if len(release) == 1 else 1
    upper = [*release[:index], release[index] + 1]
    return f">={ver},<{'.'.join(map(str, upper))}"


def _wildcard(version: Version, written: str) -> str:
    return _prefix(version, written.count(".")) + ".*"


def _prefix(version: Version, precision: int) -> str:
    release = [*version.release, 0, 0, 0][: max(1, precision)]
    return ".".join(map(str, release))


def _precision(ver: str) -> int:
    return len(_version(ver.removesuffix(".*")).release)


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion as exc:
        raise ValueError(f"{text!r} is not a PEP 440 version") from exc
