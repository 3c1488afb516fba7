"""setup.py, read with `ast` (never executed): find and rewrite one dependency in the literal values of
`setup(install_requires=..., extras_require=..., tests_require=..., setup_requires=...)`.

Literal means: a list, tuple or set of string literals, a dict of them for extras_require (or
`dict(k=[...])`), `+` of such, and module-level names bound once to such a value
(`REQUIRES = [...]; setup(install_requires=REQUIRES)`, also `setup(**kwargs)` with a literal dict).
Anything else (a call such as `open(...)` or `find_requirements()`, a comprehension, a name assigned twice
or mutated) is computed: it comes back as a Declaration with `uneditable` naming the line, because the
tool cannot know what it declares at run time; so does each string of the file that is a requirement on
the SDK with a version (`["acme-sdk>=1.4,<2"]` before an `.append()`), uneditable, so that one excluding
the target is not passed over while a requirements file is bumped.

A declaration is edited in place: only the characters of its specifier inside the string literal's source
change; quoting, prefixes, comments and every other byte stay. A string whose source is not its value
(escape sequences, implicit concatenation, more than one line) is reported uneditable.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration
from agentic_codemod.errors import UNPARSEABLE

KIND = "setup.py"
KEYWORDS = ("install_requires", "extras_require", "tests_require", "setup_requires")
MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "remove", "clear"})
LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")
PREFIX_RE = re.compile(r"^([rRuU]*)('''|\"\"\"|'|\")")


class _Computed(Exception):
    def __init__(self, node: ast.AST, what: str) -> None:
        super().__init__(what)
        self.line = getattr(node, "lineno", 0)
        self.what = what


@dataclass(frozen=True)
class _Found:
    declaration: Declaration
    index: int  # line index
    start: int  # character offsets of the specifier in the line (when editable)
    end: int


def find(content: str, canonical: str) -> list[Declaration]:
    return [found.declaration for found in _find(content, canonical)]


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    lines = LINE_RE.findall(content)
    for found in _find(content, canonical):
        if found.declaration.uneditable:
            continue
        new = bump(found.declaration)
        if new is not None:
            line = lines[found.index]
            lines[found.index] = line[: found.start] + new + line[found.end :]
    return "".join(lines)


def _find(content: str, canonical: str) -> list[_Found]:
    try:
        tree = ast.parse(content)
    except UNPARSEABLE as exc:
        raise ValueError(f"not valid Python: {exc}") from exc
    reader = _Reader(tree)
    lines = LINE_RE.findall(content)
    found: list[_Found] = []
    computed: list[str] = []
    for call in _setup_calls(tree):
        for section, value in reader.keywords(call):
            try:
                strings = reader.values(section, value)
            except _Computed as exc:
                reason = f"setup.py line {exc.line}: {section.split('.')[0]} is computed ({exc.what})"
                declaration = Declaration(canonical, "", exc.line, KIND, "pep440", section, reason)
                found.append(_Found(declaration, exc.line - 1, 0, 0))
                computed.append(section)
                continue
            for where, node in strings:
                item = _declaration(lines, node, canonical, where)
                if item is not None:
                    found.append(item)
    if computed:
        found += _literals_of_computed(tree, lines, canonical, computed[0], found)
    return sorted(found, key=lambda f: f.declaration.line)


def _literals_of_computed(
    tree: ast.AST, lines: list[str], canonical: str, section: str, known: list[_Found]
) -> list[_Found]:
    """The SDK's requirement strings of a setup.py whose values are computed, other than the literal
    declarations found: `install_requires = ["acme-sdk>=1.4,<2"]` followed by an `.append()` is computed,
    yet its string is what setup() declares. Each is uneditable (where it goes is known only at run
    time), with the first computed section's role: one that excludes the target stops the run."""
    seen = {(f.declaration.line, f.declaration.name) for f in known}
    extra = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or len(node.value) > 300:
            continue
        item = _declaration(lines, node, canonical, section)
        if item is None or not item.declaration.specifier or (node.lineno, item.declaration.name) in seen:
            continue
        written = f"{item.declaration.name}{item.declaration.specifier}"
        reason = (
            f"setup.py line {node.lineno}: {written} is a string of a computed "
            f"{section.split('.')[0]}, which the tool cannot rewrite"
        )
        declaration = Declaration(
            item.declaration.name, item.declaration.specifier, node.lineno, KIND, "pep440", section, reason
        )
        extra.append(_Found(declaration, node.lineno - 1, 0, 0))
    return extra


def _declaration(lines: list[str], node: ast.Constant, canonical: str, section: str) -> _Found | None:
    value = str(node.value)
    requirement = pep508.parse(value)
    if requirement is None or not pep508.matches(requirement, canonical):
        return None
    start, end = pep508.name_span(value)
    name, line = value[start:end], node.lineno
    span = pep508.specifier_span(value, requirement)
    specifier = value[span[0] : span[1]] if span else ""
    body = _body_offset(lines, node)
    if body is None:
        reason = f"setup.py line {line}: the string is not written as its value (escapes or several parts)"
        return _Found(Declaration(name, specifier, line, KIND, "pep440", section, reason), line - 1, 0, 0)
    if span is None:
        return _Found(Declaration(name, "", line, KIND, "pep440", section), line - 1, 0, 0)
    declaration = Declaration(name, specifier, line, KIND, "pep440", section)
    return _Found(declaration, line - 1, body + span[0], body + span[1])


def _body_offset(lines: list[str], node: ast.Constant) -> int | None:
    """Character offset in its line where the literal's text begins, when the source is the value."""
    if node.end_lineno != node.lineno or node.end_col_offset is None or node.lineno > len(lines):
        return None
    raw_line = lines[node.lineno - 1].encode("utf-8")
    start = len(raw_line[: node.col_offset].decode("utf-8"))
    source = raw_line[node.col_offset : node.end_col_offset].decode("utf-8")
    match = PREFIX_RE.match(source)
    if match is None:
        return None
    quote = match.group(2)
    body = source[match.end() : len(source) - len(quote)]
    if not source.endswith(quote) or body != node.value or "\\" in body:
        return None
    return start + match.end()


def _setup_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name == "setup":
                calls.append(node)
    return calls


class _Reader:
    """Module-level names bound once to a value, and the literal values reached through them."""

    def __init__(self, tree: ast.Module) -> None:
        self.bound: dict[str, ast.expr] = {}
        counts: dict[str, int] = {}
        for node in ast.walk(tree):
            for name in _bound_names(node):
                counts[name] = counts.get(name, 0) + 1
        for statement in tree.body:
            target = _single_target(statement)
            if target is not None and counts.get(target[0]) == 1:
                self.bound[target[0]] = target[1]

    def keywords(self, call: ast.Call) -> list[tuple[str, ast.expr]]:
        found = [(k.arg, k.value) for k in call.keywords if k.arg in KEYWORDS]
        for keyword in (k for k in call.keywords if k.arg is None):  # **kwargs
            try:
                items = _dict_items(self.resolve(keyword.value))
            except _Computed:
                items = None
            if items is None:  # it may hold install_requires: reading it again reports where it comes from
                found.append(("install_requires", keyword.value))
            else:
                found += [(key, value) for key, value in items if key in KEYWORDS]
        return [(key, value) for key, value in found if key is not None]

    def resolve(self, node: ast.expr) -> ast.expr:
        seen: set[str] = set()
        while isinstance(node, ast.Name):
            if node.id not in self.bound or node.id in seen:
                raise _Computed(node, f"{node.id} is not a name bound once at module level to a literal")
            seen.add(node.id)
            node = self.bound[node.id]
        return node

    def values(self, section: str, node: ast.expr) -> list[tuple[str, ast.Constant]]:
        """(section, string literal) of every requirement the keyword's value declares, or _Computed."""
        if section != "extras_require":
            return [(section, s) for s in self.strings(node)]
        mapping = self.resolve(node)
        items = _dict_items(mapping)
        if items is None:
            raise _Computed(mapping, _describe(mapping))
        return [(f"extras_require.{key}", s) for key, value in items for s in self.strings(value)]

    def strings(self, node: ast.expr) -> list[ast.Constant]:
        node = self.resolve(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value.strip():
            return [node]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left) + self.strings(node.right)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for element in node.elts:
                out += self.strings(element.value if isinstance(element, ast.Starred) else element)
            return out
        raise _Computed(node, _describe(node))


def _dict_items(node: ast.expr) -> list[tuple[str, ast.expr]] | None:
    if isinstance(node, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            raise _Computed(node, "a key that is not a string literal")
        return [
            (str(k.value), v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant)
        ]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
    ):
        if any(k.arg is None for k in node.keywords):
            raise _Computed(node, "dict(**...)")
        return [(str(k.arg), k.value) for k in node.keywords]
    return None


def _bound_names(node: ast.AST) -> list[str]:
    """Names this node binds or mutates (counted: a name bound twice, or mutated, is not a literal)."""
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id, node.target.id] if isinstance(node, ast.AugAssign) else [node.target.id]
    if isinstance(node, (ast.For, ast.comprehension)):
        return [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.NamedExpr):
        return [node.target.id]
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name):
        stored = isinstance(node.ctx, (ast.Store, ast.Del))
        mutated = isinstance(node, ast.Attribute) and node.attr in MUTATORS
        return [node.value.id, node.value.id] if stored or mutated else []
    if isinstance(node, ast.Global):
        return [name for name in node.names for _ in range(2)]
    return []


def _single_target(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name):
            return target.id, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
        return statement.target.id, statement.value
    return None


def _describe(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
