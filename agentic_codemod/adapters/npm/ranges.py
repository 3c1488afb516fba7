"""How an npm range is rewritten so that it admits the target, by range strategy (as adapters/python/ranges.py
does for PEP 440; Renovate's rangeStrategy names).

    new_range(written, target, strategy) -> str | None      (None: no version to edit: tag, URL, path, *)

Strategies (target 2.0.0; `auto` is `bump`):

    bump      every floor and pin moves to the target, in the same operator and precision where that
              says the same: 1.4.0 -> 2.0.0, =1.4.0 -> =2.0.0, ^1.4.0 -> ^2.0.0, ^1 -> ^2, ~1.4 -> ~2.0,
              1.x -> 2.x, 1.4.x -> 2.0.x, >=1.2.0 -> >=2.0.0 (open stays open), > becomes >=; of
              alternatives (`||`) the last one is bumped and kept alone
    replace   left as written when it admits the target; otherwise as bump
    widen     left as written when it admits the target; otherwise ^1.4.0 -> ^1.4.0 || ^2.0.0 (likewise
              ~ and x-ranges), >=1.2.0 <2.0.0 -> >=1.2.0 <3.0.0; an exact pin cannot be widened: replaced
    pin       2.0.0 (=2.0.0 when the pin was written with =)

In every strategy a cap (< or <=) that excludes the target is lifted to the next major of the target in the
cap's precision (<2 -> <3, <2.0.0 -> <3.0.0, <=1.9.0 -> <3.0.0); a cap that admits it stays; no cap is ever
added. A cap alone gains a floor under bump (auto, and replace out of range): <2.0.0 -> >=2.0.0 <3.0.0,
since <3.0.0 would leave every old version admitted. An `npm:name@range` alias keeps its prefix. Hyphen
ranges (1.2.3 - 1.9.0) are a ValueError: change them by hand. The result is checked with node-semver: a
range that would not admit the target is a ValueError, never written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agentic_codemod.adapters.npm import versioning

STRATEGIES: tuple[str, ...] = ("auto", "bump", "widen", "replace", "pin")

CLAUSE_RE = re.compile(
    r"(?P<op>\^|~>|~|>=|<=|>|<|=)?(?P<space>\s*)(?P<v>[vV]?)"
    r"(?P<ver>(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)"
)
SEPARATOR_RE = re.compile(r"\s*")
WILDCARDS = ("x", "X", "*")


@dataclass
class _Clause:
    op: str
    space: str
    v: str
    ver: str

    def text(self) -> str:
        return f"{self.op}{self.space}{self.v}{self.ver}"

    @property
    def parts(self) -> list[str]:
        return self.ver.split("+")[0].split("-")[0].split(".")

    @property
    def wildcard(self) -> bool:
        return any(p in WILDCARDS for p in self.parts)


def new_range(written: str, target: str, strategy: str = "auto") -> str | None:
    """The new value for `written` (maybe unchanged), or None when it carries no version to edit.
    ValueError for an unknown strategy, a target that is not a version, or a range this module cannot
    read or cannot make admit the target."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown range strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if not versioning.is_version(target):
        raise ValueError(f"target {target!r} is not a semver version")
    if not versioning.has_version(written):
        return None
    versioning.check(written)
    stripped = written.strip()
    prefix = stripped[: len(stripped) - len(versioning.range_text(stripped) or "")]
    text = stripped[len(prefix) :]
    lead, trail = written[: len(written) - len(written.lstrip())], written[len(written.rstrip()) :]
    alternatives = [_clauses(alt) for alt in text.split("||")]
    already = versioning.matches(target, text)
    if strategy in ("replace", "widen") and already:
        return written
    if strategy == "pin":
        new = _pinned(alternatives, target)
    elif strategy == "widen":
        new = _widen(text, alternatives, target)
    else:
        bumped = _rebuild(alternatives[-1], lambda c: _bump_clause(c, target))
        new = _join(bumped) if _has_floor(bumped) else f">={target} {_join(bumped)}"
    result = lead + prefix + new + trail
    if not versioning.matches(target, result):
        raise ValueError(f"cannot rewrite {written!r} to admit {target} ({strategy})")
    return result


def _clauses(text: str) -> list[str | _Clause]:
    """[separator, clause, separator, …, separator] of one alternative."""
    if re.search(r"\s-\s", text):
        raise ValueError(f"hyphen range {text.strip()!r}: change it by hand")
    pieces: list[str | _Clause] = []
    pos = 0
    while True:
        sep = SEPARATOR_RE.match(text, pos)
        assert sep is not None  # `\s*` always matches
        pieces.append(sep.group())
        pos = sep.end()
        if pos == len(text):
            return pieces
        found = CLAUSE_RE.match(text, pos)
        if found is None:
            raise ValueError(f"cannot read the range {text.strip()!r}")
        pieces.append(_Clause(found.group("op") or "", found.group("space"), found.group("v"), found["ver"]))
        pos = found.end()


def _join(pieces: list[str | _Clause]) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in pieces).strip()


def _rebuild(pieces: list[str | _Clause], change: Callable[[_Clause], _Clause | None]) -> list[str | _Clause]:
    separators, clauses = pieces[0::2], [change(c) for c in pieces[1::2] if isinstance(c, _Clause)]
    out: list[str | _Clause] = [separators[0]]
    for index, clause in enumerate(clauses):
        if clause is None:
            continue
        if len(out) > 1:
            out.append(separators[index] or " ")
        out.append(clause)
    return [*out, separators[-1]]


def _has_floor(pieces: list[str | _Clause]) -> bool:
    """Whether a range bounds its versions from below: a cap alone (`<2.0.0`) admits every old version."""
    return any(
        isinstance(p, _Clause) and not all(part in WILDCARDS for part in p.parts) and p.op not in ("<", "<=")
        for p in pieces
    )


def _bump_clause(clause: _Clause, target: str) -> _Clause | None:
    if all(p in WILDCARDS for p in clause.parts):
        return clause
    if clause.op in ("", "=") and clause.wildcard:
        return _Clause(clause.op, clause.space, clause.v, _wildcard(clause, target))
    if clause.op in ("", "=", "^", "~", "~>", ">="):
        return _Clause(clause.op, clause.space, clause.v, _shaped(clause, target))
    if clause.op == ">":
        return _Clause(">=", clause.space, clause.v, target)
    return _keep_or_lift(clause, target)


def _shaped(clause: _Clause, target: str) -> str:
    """The target in the clause's precision when that says the same (^1 -> ^2 for 2.0.0), else in full."""
    release = target.split("-")[0].split("+")[0].split(".")
    precision = len(clause.parts)
    if precision < 3 and target == ".".join(release) and all(p == "0" for p in release[precision:]):
        return ".".join(release[:precision])
    return target


def _wildcard(clause: _Clause, target: str) -> str:
    """1.x -> 2.x, 1.4.x -> 2.0.x (target 2.0.0): the target's leading parts, the written wildcard."""
    release = target.split("-")[0].split("+")[0].split(".")
    parts = clause.parts
    fixed = next(i for i, p in enumerate(parts) if p in WILDCARDS)
    return ".".join([*release[:fixed], *parts[fixed:]])


def _keep_or_lift(clause: _Clause, target: str) -> _Clause:
    """A cap: kept when it admits the target, else lifted to the target's next major."""
    if versioning.matches(target, clause.text().replace(" ", "")):
        return clause
    major = int(versioning.semver().make_semver(target, False).major) + 1
    precision = max(1, len([p for p in clause.parts if p not in WILDCARDS]))
    return _Clause("<", clause.space, clause.v, ".".join([str(major), "0", "0"][:precision]))


def _widen(text: str, alternatives: list[list[str | _Clause]], target: str) -> str:
    last = alternatives[-1]
    clauses = [p for p in last if isinstance(p, _Clause)]
    if any(
        c.op in ("^", "~", "~>") or (c.op in ("", "=") and (c.wildcard or len(c.parts) < 3)) for c in clauses
    ):
        return f"{text.strip()} || {_join(_rebuild(last, lambda c: _bump_clause(c, target)))}"
    if len(clauses) == 1 and clauses[0].op in ("", "="):
        return _join(_rebuild(last, lambda c: _bump_clause(c, target)))  # an exact pin: replaced
    return _join(_rebuild(last, lambda c: _keep_or_lift(c, target) if c.op in ("<", "<=") else c))


def _pinned(alternatives: list[list[str | _Clause]], target: str) -> str:
    clauses = [p for p in alternatives[0] if isinstance(p, _Clause)]
    if len(alternatives) == 1 and len(clauses) == 1 and clauses[0].op == "=":
        return f"={clauses[0].space}{target}"
    return target
