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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentic_codemod.config import RULE_EDIT_RISKY_NAMES
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
    except (SyntaxError, ValueError) as exc:
        return [f"an edit of a file the tool cannot parse ({_why(exc)})"], True
    try:
        new = _facts_of(after)
    except (SyntaxError, ValueError) as exc:
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
    old_risky = Counter(n for n in old.names if _risky(n, risky))
    for name in sorted(Counter(n for n in new.names if _risky(n, risky)) - old_risky):
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


@functools.lru_cache(maxsize=1024)
def _facts_of(text: str) -> _Facts:
    """Facts of one file's text; rules applied in turn compare each rule's result with the next one's,
    so the same text is asked for twice (the cache holds the facts of the last few texts)."""
    return _facts(ast.parse(text))


def _facts(tree: ast.Module) -> _Facts:
    facts = _Facts()
    aliases: dict[str, str] = {}
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                facts.imports.add(a.name)
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for a in node.names:
                full = f"{base}.{a.name}" if base and not base.endswith(".") else f"{base}{a.name}"
                facts.imports.add(full if a.name != "*" else base)
                if a.name != "*":
                    aliases[a.asname or a.name] = full
    facts.names = [*facts.imports, *_references(tree, aliases)]
    facts.import_time_calls = Counter(_import_time_calls(tree, aliases))
    return facts


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """Every statement at any depth (imports are statements: expressions need not be walked)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            yield child
            yield from _statements(child)


def _references(tree: ast.AST, aliases: dict[str, str]) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        name = _dotted(node, aliases) if isinstance(node, ast.Attribute | ast.Name) else None
        if name is not None:
            found.append(name)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _import_time_calls(tree: ast.Module, aliases: dict[str, str]) -> list[str]:
    """Calls evaluated when the module is imported: everything outside function and lambda bodies."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            found.append(_dotted(node.func, aliases) or "an expression")
        if isinstance(node, _SCOPES):
            for part in _evaluated_at_definition(node):
                visit(part)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


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


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    module = _imported_by_call(node)
    if module is not None:  # __import__("os").system -> os.system
        return ".".join([module, *reversed(parts)])
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


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
    return f"{getattr(exc, 'msg', exc)}" + (f", line {line}" if line else "")
