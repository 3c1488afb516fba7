"""What a codemod rule's edit brings into a file, so that the reviewer and the human gate see it.

    assess(before, after, language) -> (adds, requires_human)
    provenance_gate(edits) -> GateResult         one finding per rule edit that adds something

A rule comes from a migration package: context, not code, but it writes code. Its edit is compared with
the file before it, on the Python syntax tree:

    imports a module of a package the file already imported (acme.errors -> acme.exceptions)   noted
    imports a package the file did not import                                                  human
    a call that runs at import time (module level, class bodies, decorators, defaults)         human
    a reference to a network, process, file or dynamic-code API (config.RULE_EDIT_RISKY_NAMES)  human
    a file that is not valid Python before or after the edit (it cannot be checked)            human

"human" ends the run with requires_human (exit 3) naming the rule and the file; the edit stays in the
candidate for the human to judge.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import cast

from agentic_codemod.config import RULE_EDIT_RISKY_NAMES
from agentic_codemod.errors import UNPARSEABLE
from agentic_codemod.models import Finding, RuleEdit
from agentic_codemod.workflow.gates import GateResult

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _adapter_checker(language: str) -> Callable[[str, str], tuple[list[str], bool]] | None:
    """The assessor of the adapter whose rules are written in `language` (npm: javascript, typescript)."""
    from agentic_codemod.adapters import registry

    for adapter in registry().values():
        if language in adapter.test_facts.ast_grep_languages:
            return adapter.test_facts.rule_risk
    return None


def assess(
    before: str, after: str, language: str, risky: tuple[str, ...] = RULE_EDIT_RISKY_NAMES
) -> tuple[list[str], bool]:
    """What the edit adds (human-readable), and whether a human must look at it before anything ships."""
    if language != "python":
        checker = _adapter_checker(language)
        if checker is None:
            return [f"an edit in {language}, which the tool cannot check"], True
        return checker(before, after)
    try:
        old = _facts_of(before)
    except UNPARSEABLE as exc:
        return [f"an edit of a file the tool cannot parse ({_why(exc)})"], True
    try:
        new = _facts_of(after)
    except UNPARSEABLE as exc:
        return [f"an edit that leaves the file unparseable ({_why(exc)})"], True
    adds: list[str] = []
    human = False
    old_roots = {m.lstrip(".").split(".")[0] for m in old.imports}
    for module in sorted(new.imports - old.imports):
        if module.lstrip(".").split(".")[0] in old_roots:
            adds.append(f"import of {module}")
        else:
            adds.append(f"import of {module}, a package the file did not import")
            human = True
    for name in sorted(new.import_time_calls - old.import_time_calls):
        adds.append(f"a call of {name} at import time")
        human = True
    for name in sorted(_risky_uses(new, risky) - _risky_uses(old, risky)):
        adds.append(f"use of {name}")
        human = True
    return adds, human


def provenance_gate(edits: list[RuleEdit]) -> GateResult:
    """The rule edits that add something, as review findings (never failing: the human gate decides)."""
    findings = [
        Finding(
            severity="warning" if e.requires_human else "info",
            message=f"rule {e.rule} edit adds {'; '.join(e.adds)}"
            + (": a human must check it" if e.requires_human else ""),
            path=e.file,
            code="rule_edits.adds",
        )
        for e in edits
        if e.adds
    ]
    return GateResult(name="rule_edits", passed=True, findings=findings)


@dataclass
class _Facts:
    imports: set[str] = field(default_factory=set)
    names: list[str] = field(default_factory=list)  # dotted references, import aliases resolved
    import_time_calls: Counter[str] = field(default_factory=Counter)
    # risky names (a list of patterns) -> the uses of them: a text's facts serve as the "after" of one
    # rule's edit and the "before" of the next one's
    risky_uses: dict[tuple[str, ...], Counter[str]] = field(default_factory=dict)


def _risky_uses(facts: _Facts, risky: tuple[str, ...]) -> Counter[str]:
    found = facts.risky_uses.get(risky)
    if found is None:
        found = facts.risky_uses[risky] = Counter(n for n in facts.names if _risky(n, risky))
    return found


# A reference before the file's import aliases are known: (a name to look up in them, the dotted rest)
# or (None, the whole dotted name), for `__import__("m").x`, which no alias can rename.
_Raw = tuple[str | None, str]


@dataclass(frozen=True)
class _Statement:
    """What one statement holds (the statements inside it included), before the file's aliases are known."""

    imports: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...]  # local name -> module or object, in the order they are bound
    refs: tuple[_Raw, ...]
    calls: tuple[_Raw | None, ...]  # None: a call of something that is not a dotted name


# Statements already walked, by where they run (at import time or in a function body), their column and
# their exact source bytes: a rule's edit changes a few statements of a file, and the next assessment
# walks only those (a changed method is walked, its class around it and the other methods are not).
_STATEMENTS: dict[tuple[bool, int, bytes], _Statement] = {}
_STATEMENT_BYTES = 32 * 1024 * 1024  # the cache is emptied when its keys reach this size
_cached_bytes = 0


@functools.lru_cache(maxsize=1024)
def _facts_of(text: str) -> _Facts:
    """Facts of one file's text; rules applied in turn compare each rule's result with the next one's,
    so the same text is asked for twice (the cache holds the facts of the last few texts). The file is
    parsed whole (a syntax error anywhere is an error); a statement is walked unless the same statement,
    byte for byte at the same column and in the same kind of block, was walked before. Imports bind
    aliases in statement order; every reference and call is resolved through the file's aliases
    afterwards (an alias bound anywhere in the file applies to every reference). A UTF-8 byte order mark
    starts the text of a file written so; Python reads past it in a file, `ast.parse` of a str does not."""
    text = text.removeprefix("\ufeff")
    tree = ast.parse(text)
    data = text.encode("utf-8")
    # A lone CR also ends a line for the parser: such a file is walked without the statement cache.
    lengths = map((1).__add__, map(len, data.split(b"\n")))  # each line's bytes with its newline
    starts = None if b"\r" in data else list(accumulate(lengths, initial=0))
    facts = _Facts()
    aliases: dict[str, str] = {}
    refs: list[_Raw] = []
    calls: list[_Raw | None] = []
    for node in tree.body:
        found = _statement(node, True, data, starts)
        facts.imports.update(found.imports)
        aliases.update(found.aliases)
        refs.extend(found.refs)
        calls.extend(found.calls)
    facts.names = [*facts.imports, *(_resolved(r, aliases) for r in refs)]
    facts.import_time_calls = Counter(
        (_resolved(c, aliases) if c is not None else "") or "an expression" for c in calls
    )
    return facts


def _statement(node: ast.stmt, at_import: bool, data: bytes, starts: list[int] | None) -> _Statement:
    """The facts of one statement (`at_import`: it runs when the module is imported, so its calls
    count), from the cache when the same statement was walked before."""
    global _cached_bytes
    if starts is None:
        return _walk(node, at_import, data, starts)
    first: ast.AST = node.decorator_list[0] if isinstance(node, _DECORATED) and node.decorator_list else node
    column = first.col_offset  # type: ignore[attr-defined]
    begin = starts[first.lineno - 1] + column  # type: ignore[attr-defined]
    end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[operator]
    key = (at_import, column, data[begin:end])
    found = _STATEMENTS.get(key)
    if found is None:
        found = _walk(node, at_import, data, starts)
        if _cached_bytes + len(key[2]) > _STATEMENT_BYTES:
            _STATEMENTS.clear()
            _cached_bytes = 0
        _STATEMENTS[key] = found
        _cached_bytes += len(key[2])
    return found


def _walk(statement: ast.stmt, at_import: bool, data: bytes, starts: list[int] | None) -> _Statement:
    """One walk of a statement gathers its imports (with the aliases they bind), every dotted reference
    and every call evaluated at import time; the statements it holds come from _statement."""
    imports: list[str] = []
    aliases: list[tuple[str, str]] = []
    refs: list[_Raw] = []
    calls: list[_Raw | None] = []

    def visit(node: ast.AST, in_refs: bool, in_calls: bool) -> None:
        kind = type(node)
        if kind is ast.Import or kind is ast.ImportFrom:
            _bind(cast("ast.Import | ast.ImportFrom", node), imports, aliases)
        if in_refs and (kind is ast.Name or kind is ast.Attribute):
            raw = (node.id, "") if kind is ast.Name else _raw_dotted(node)  # type: ignore[attr-defined]
            if raw is not None:  # a whole dotted name: its parts are not references of their own
                refs.append(raw)
                if not in_calls or kind is ast.Name:
                    return
                in_refs = False
        if in_calls:
            if kind is ast.Call:
                calls.append(_raw_dotted(node.func))  # type: ignore[attr-defined]
            if kind in _SCOPE_KINDS:  # only the definition runs at import time, not the body
                for part in _evaluated_at_definition(node):
                    visit(part, False, True)
                in_calls = False
        if not (in_refs or in_calls):
            return
        for name in _children(kind):
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                visit(value, in_refs, in_calls)
            elif isinstance(value, list):
                for item in value:
                    if in_refs and isinstance(item, ast.stmt):
                        inner = _statement(item, in_calls, data, starts)
                        imports.extend(inner.imports)
                        aliases.extend(inner.aliases)
                        refs.extend(inner.refs)
                        calls.extend(inner.calls)
                    elif isinstance(item, ast.AST):
                        visit(item, in_refs, in_calls)

    visit(statement, True, at_import)
    return _Statement(tuple(imports), tuple(aliases), tuple(refs), tuple(calls))


_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPE_KINDS = frozenset(_SCOPES)
_LEAF_FIELDS = frozenset({"ctx", "op"})  # Load/Store/Del and operators: nodes that hold nothing


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _children(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that can hold names, calls or statements, in the order of `_fields`."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
    return found


def _bind(node: ast.Import | ast.ImportFrom, imports: list[str], aliases: list[tuple[str, str]]) -> None:
    """The modules an import statement names, and the local names it binds to them (in order)."""
    if isinstance(node, ast.Import):
        for a in node.names:
            imports.append(a.name)
            aliases.append((a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0]))
        return
    base = "." * node.level + (node.module or "")
    for a in node.names:
        full = f"{base}.{a.name}" if base and not base.endswith(".") else f"{base}{a.name}"
        imports.append(full if a.name != "*" else base)
        if a.name != "*":
            aliases.append((a.asname or a.name, full))


def _raw_dotted(node: ast.AST) -> _Raw | None:
    """`a.b.c` as ("a", ".b.c"); `__import__("os").system` as (None, "os.system"); None for anything
    else (a call's result, a subscript, ...)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    rest = "".join(f".{p}" for p in reversed(parts))
    module = _imported_by_call(node)
    if module is not None:
        return None, module + rest
    if not isinstance(node, ast.Name):
        return None
    return node.id, rest


def _resolved(raw: _Raw, aliases: dict[str, str]) -> str:
    name, rest = raw
    return rest if name is None else aliases.get(name, name) + rest


def _evaluated_at_definition(node: ast.AST) -> list[ast.AST]:
    """Decorators, default values and annotations of a function or lambda; not its body."""
    args = getattr(node, "args", None)
    parts: list[ast.AST] = list(getattr(node, "decorator_list", []))
    if args is not None:
        parts += [d for d in [*args.defaults, *args.kw_defaults] if d is not None]
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        parts += [a.annotation for a in every if a is not None and a.annotation is not None]
    returns = getattr(node, "returns", None)
    return parts + ([returns] if returns is not None else [])


def _imported_by_call(node: ast.AST) -> str | None:
    """The module of `__import__("m")` / `importlib.import_module("m")` with a literal name, else None."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    func = node.func
    named = isinstance(func, ast.Name) and func.id == "__import__"
    named = named or (isinstance(func, ast.Attribute) and func.attr == "import_module")
    return str(node.args[0].value) if named and isinstance(node.args[0].value, str) else None


@functools.lru_cache(maxsize=4096)
def _risky(name: str, risky: tuple[str, ...]) -> bool:
    return any(name == r or name.startswith(r + ".") or fnmatch.fnmatchcase(name, r) for r in risky)


def _why(exc: Exception) -> str:
    line = getattr(exc, "lineno", None)
    said = f"{getattr(exc, 'msg', exc)}" or type(exc).__name__
    return said + (f", line {line}" if line else "")
