"""Which modules the repository's Python code imports, read with `ast` (its code is never imported or run).

    imports(tree) -> [(line, module)]        every absolute module a syntax tree names for import
    found(root, gone) -> [Finding]           every import in the tree's code files of a module in `gone`
                                             (or below one), and each code file naming the package of
                                             one that cannot be read or parsed
    code_kind(root, name) -> kind | None     "source", "notebook" or None (not Python code)
    word_of(names) -> pattern                one of `names` as a word in bytes, also UTF-16/32 text

What `imports` reads:
    import a.b  /  import a.b as c                      a.b
    from a.b import x  /  from a.b import *             a.b, and a.b.x (x may be a submodule:
                                                        `from acme import errors` imports acme.errors)
    importlib.import_module("a.b") / import_module(…)   a.b (a leading dot resolved against a literal
                                                        package argument)
    __import__("a.b", fromlist=["x"])                   a.b, a.b.x
    import a  ...  a.b.C  /  import a.b as c  ...  c.D  a.b.C / a.b.D at the attribute's line (an
                                                        attribute of a module `import` bound: `a.b` is
                                                        an AttributeError where the target dropped it)
Relative imports (`from . import x`, `from .utils import y`) are the repository's own modules. A name
built at run time (`import_module("acme." + name)`, getattr on a module) is not read, nor is an attribute
of a name `from ... import` bound. The names `import` binds are the file's as a whole: a later
assignment to one (`sdk = None`) or a function's own name of the same spelling is not told apart (its
attributes are read as the module's). An import in a `try` body whose handler catches ImportError and
imports something in its place (an `import`, `import_module` or `__import__` in the handler), or in a
`with suppress(ImportError)`, is compatibility code and not read, nor is an attribute read there; one
whose handler does anything else (passes, raises, prints, exits, binds None) is, as is one in `if
TYPE_CHECKING:` (a type checker fails on it).

The code files: what git lists in the tree (tracked, and new files not ignored), at most MAX_FILES names:
`.py`, `.pyw`, `.pyi`, `.pyx` (Cython: its own syntax fails to parse, below), a file of any other name
whose first line is a python `#!` line, and the code cells of a Jupyter notebook (`.ipynb` of a Python
kernel; an IPython `%` or `!` line reads as `pass`, a cell of another language's `%%` magic is skipped).
A link listed under a Python file's name is read where it leads inside the tree (Python imports the
target by the link's name); other links are not followed (a target in the tree is listed itself). A link
that leads nowhere (its target missing, `build/generated.py` not built yet, or a loop) is no code: Python
cannot import it either.

Fail closed: a code file that cannot be read (not a regular file, larger than MAX_FILE_BYTES) or parsed
(another Python version's syntax, an encoding Python cannot read, a broken notebook) and that names the
package of a gone module as a word is a Finding with the reason; so is a tree listing more than MAX_FILES
names, or one git cannot list.
"""

from __future__ import annotations

import ast
import errno
import importlib.util
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentic_codemod.adapters.unscanned_code import names
from agentic_codemod.errors import UNPARSEABLE
from agentic_codemod.tools.snapshot import GitError, git
from agentic_codemod.tools.untrusted_file import read_regular

# Bounds of one reading of a tree (the limits the backstop of workflow/removed_imports.py works in):
MAX_FILES = 500_000  # names git lists; past them the rest is not read and that is a Finding of its own
MAX_FILE_BYTES = 10_000_000  # one code file parsed; a larger one is only searched for the package's name
SHEBANG_BYTES = 256  # of a file without a Python suffix: Linux reads no more of a `#!` line either
WHY_CHARS = 200  # of a parse error's message in a Finding
# What an `except` names that catches a failed import (a guarded import fails nothing: _guarded).
IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
# What an `except` names that catches a missing attribute (a read with a fallback fails nothing).
ATTRIBUTE_FAILURES = frozenset({"AttributeError", "Exception", "BaseException"})

SOURCE_SUFFIXES = (".py", ".pyw", ".pyi", ".pyx")
NOTEBOOK_SUFFIX = ".ipynb"
# Cell magics whose cell is still Python (its first line is dropped); a cell of any other is not.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "python", "python3", "debug"})
_SHEBANG = re.compile(rb"#![^\r\n]*\b(python|pypy)")
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# Why a link leads nowhere: no target, a file on the way that is no folder, a loop.
_NOWHERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})

Kind = Literal["source", "notebook"]


@dataclass(frozen=True)
class Finding:
    file: str  # repository-relative
    where: str  # "file:line", "file cell 2:3", the file alone, or "" (the tree: file "" too)
    module: str | None = None  # the gone module imported there
    problem: str | None = None  # why the file could not be read (module None)


def found(root: Path, gone: frozenset[str]) -> list[Finding]:
    """Every import of a module in `gone` (or of a module below one) in the code files of `root`."""
    if not gone:
        return []
    word = word_of(sorted({m.split(".")[0] for m in gone}))
    try:
        names = _listed(root)
    except GitError as exc:
        return [Finding("", "", problem=f"the tree's files cannot be listed: {exc}"[:WHY_CHARS])]
    results: list[Finding] = []
    if len(names) > MAX_FILES:
        problem = (
            f"the tree lists more than {MAX_FILES} files; the rest were not read (code_imports.MAX_FILES)"
        )
        results.append(Finding("", "", problem=problem))
    for name in names[:MAX_FILES]:
        results.extend(_in_file(root, name, gone, word))
    return results


def imports(tree: ast.AST) -> list[tuple[int, str]]:
    named: list[tuple[int, str]] = []
    guarded = _guarded(tree)
    bound = _bound(tree, guarded)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    inner |= _read_with_a_fallback(tree)
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            named.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.append((node.lineno, node.module))
            named.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call):
            named.extend((node.lineno, module) for module in _called(node))
        elif isinstance(node, ast.Attribute) and id(node) not in inner:  # a whole chain, once
            named.extend((node.lineno, module) for module in _through(node, bound))
    return sorted(named)


def _bound(tree: ast.AST, guarded: set[int]) -> dict[str, set[str]]:
    """The module each name an `import` statement binds stands for, over the whole file (scopes and later
    assignments are not told apart): `import a.b` binds `a` to a, `import a.b as c` binds `c` to a.b. An
    import of compatibility code (`guarded`) binds nothing here: its handler binds the name otherwise."""
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and id(node) not in guarded:
            for alias in node.names:
                module = alias.name if alias.asname else alias.name.split(".")[0]
                bound.setdefault(alias.asname or module, set()).add(module)
    return bound


def _through(chain: ast.Attribute, bound: dict[str, set[str]]) -> list[str]:
    """The dotted names an attribute chain on a name `import` bound reads (`sdk.errors.NotFound` with `import
    acme as sdk`: acme.errors.NotFound; `_gone` takes the modules above it too)."""
    parts: list[str] = []
    node: ast.expr = chain
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return []
    return [".".join([module, *reversed(parts)]) for module in sorted(bound[node.id])]


def _guarded(tree: ast.AST) -> set[int]:
    """The nodes inside a `try` body whose handler catches a failed import and imports something in its
    place, or a `with suppress(ImportError)`: compatibility code that runs on either version (`try: from
    acme.utils import x` / `except ImportError: from acme import x`) fails no import. Handlers, `else`
    and `finally` are not guarded; nor is a body whose handler imports nothing (_falls_back)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        body: list[ast.stmt] = []
        if isinstance(node, ast.Try | ast.TryStar):
            body = node.body if any(_catches(h.type) and _falls_back(h.body) for h in node.handlers) else []
        elif isinstance(node, ast.With | ast.AsyncWith):
            body = node.body if any(_suppresses(i.context_expr) for i in node.items) else []
        for statement in body:
            inside.update(id(n) for n in ast.walk(statement))
    return inside


def _read_with_a_fallback(tree: ast.AST) -> set[int]:
    """The nodes inside a `try` body whose handler catches a missing attribute and does something in its
    place (`try: E = acme.errors.NotFound` / `except AttributeError: E = acme.exceptions.NotFound`):
    attribute reads there are compatibility code; imports there are read as ever."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try | ast.TryStar) and any(
            _catches(h.type, ATTRIBUTE_FAILURES) and _acts(h.body) for h in node.handlers
        ):
            for statement in node.body:
                inside.update(id(n) for n in ast.walk(statement))
    return inside


def _acts(handler: list[ast.stmt]) -> bool:
    """Whether a handler does something: not only `pass`, `...`, a docstring or a `raise`."""
    return any(
        not isinstance(s, ast.Pass | ast.Raise)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in handler
    )


def _falls_back(handler: list[ast.stmt]) -> bool:
    """Whether a handler imports something in the failed import's place: an `import`, `from ... import`,
    `import_module(...)` or `__import__(...)` anywhere in it. A handler that only passes, raises, prints,
    logs, exits or binds a placeholder (`acme = None`) leaves code that fails, or does nothing, on the
    version without the module: the import is still read."""
    return any(
        isinstance(n, ast.Import | ast.ImportFrom) or (isinstance(n, ast.Call) and _imports_by_call(n))
        for s in handler
        for n in ast.walk(s)
    )


def _imports_by_call(call: ast.Call) -> bool:
    return _callee(call) in ("import_module", "__import__")


def _callee(call: ast.Call) -> str:
    """The called name: `f` of `f(...)` and of `m.f(...)`."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _catches(kind: ast.expr | None, failures: frozenset[str] | None = None) -> bool:
    """Whether an `except` clause catches one of `failures` (ImportError's by default: bare, the class, a
    base of it, in a tuple too)."""
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(_catches(k, failures) for k in kind.elts)
    name = kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else ""
    return name in (IMPORT_FAILURES if failures is None else failures)


def _suppresses(expr: ast.expr) -> bool:
    """`suppress(ImportError)` / `contextlib.suppress(...)` of an import failure."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name == "suppress" and any(_catches(a) for a in expr.args)


def code_kind(root: Path, name: str) -> Kind | None:
    if name.endswith(SOURCE_SUFFIXES):
        return "source"
    if name.endswith(NOTEBOOK_SUFFIX):
        return "notebook"
    head = _head(root / name)
    return "source" if head is not None and _SHEBANG.match(head) else None


def word_of(names: list[str]) -> re.Pattern[bytes]:
    """One of `names` not inside a longer identifier (`acme`, never `acmex` or `my_acme`); up to three NUL
    bytes may stand between and around its letters, so UTF-16 and UTF-32 text is searched as well."""
    gap, w = rb"\x00{0,3}", rb"[A-Za-z0-9_]"
    spelled = b"|".join(gap.join(re.escape(bytes([c])) for c in n.encode()) for n in names)
    before = b"".join(rb"(?<!%s%s)" % (w, b"\x00" * k) for k in range(4))
    return re.compile(rb"%s(?:%s)(?!%s%s)" % (before, spelled, gap, w))


def _listed(root: Path) -> list[str]:
    out = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    return sorted({raw.decode("utf-8", "surrogateescape") for raw in out.split(b"\0") if raw})


def _in_file(root: Path, name: str, gone: frozenset[str], word: re.Pattern[bytes]) -> list[Finding]:
    path = root / name
    shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if path.is_symlink():
        if not name.endswith((*SOURCE_SUFFIXES, NOTEBOOK_SUFFIX)):
            return []
        try:
            path = path.resolve(strict=True)
        except RuntimeError:  # a loop (Python 3.11; later ones raise OSError ELOOP)
            return []  # Python cannot import it either: no code, nothing left unread
        except OSError as exc:
            if exc.errno in _NOWHERE:  # its target is missing (`build/generated.py` not built yet)
                return []  # nor this one: Python cannot import it
            return [Finding(shown, shown, problem=f"a link that cannot be followed: {exc.strerror or exc}")]
        if not path.is_relative_to(root.resolve()):
            return []  # a link out of the tree: the gates refuse it (never read on the host)
    kind = code_kind(root, name)  # a link's by its name, which has a Python suffix
    if kind is None:
        return []
    data = _read(path, word)
    if isinstance(data, str):
        return [Finding(shown, shown, problem=data)] if data else []
    if word.search(data) is None:  # any import of the package's modules names it (a literal one too)
        return []
    if kind == "notebook":
        return _in_notebook(shown, data, gone, word)
    try:
        tree = ast.parse(data, filename=shown)
    except UNPARSEABLE as exc:
        return [Finding(shown, shown, problem=_why(exc))]
    return [Finding(shown, f"{shown}:{line}", module) for line, module in _gone(imports(tree), gone)]


def _in_notebook(name: str, data: bytes, gone: frozenset[str], word: re.Pattern[bytes]) -> list[Finding]:
    cells = code_cells(data)
    if isinstance(cells, str):
        return [Finding(name, name, problem=cells)]
    results: list[Finding] = []
    for number, source in cells:
        code = without_magics(source)
        if code is None:
            continue
        where = f"{name} cell {number}"
        try:
            tree = ast.parse(code)
        except UNPARSEABLE as exc:
            if word.search(code.encode("utf-8", "surrogatepass")):
                results.append(Finding(name, where, problem=_why(exc)))
            continue
        results.extend(Finding(name, f"{where}:{line}", m) for line, m in _gone(imports(tree), gone))
    return results


def code_cells(data: bytes) -> list[tuple[int, str]] | str:
    """The (number, source) of a notebook's code cells, [] for a notebook of another language's kernel,
    or why it cannot be read."""
    try:
        doc = json.loads(data)
    except UNPARSEABLE as exc:
        return _why(exc)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        return "not a notebook of nbformat 4 (no list of cells)"
    meta = doc.get("metadata")
    language = _language(meta if isinstance(meta, dict) else {})
    if language is not None and not language.startswith("python"):
        return []
    found: list[tuple[int, str]] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            return f"cell {number}'s source is neither text nor a list of lines"
        found.append((number, source))
    return found


def _language(meta: dict[str, object]) -> str | None:
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        value = meta.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return str(value[field]).lower()
    return None


def without_magics(source: str) -> str | None:
    """A cell's code with IPython's line magics and shell lines as `pass` (line numbers kept); None for a
    cell of a `%%` magic that is not Python."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_CELL_MAGICS:
            return None
        lines[0] = ""
    kept = [
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in lines
    ]
    return "\n".join(kept)


def _called(call: ast.Call) -> list[str]:
    """The modules `importlib.import_module(...)` or `__import__(...)` imports, where they are literal."""
    called = _callee(call)
    if called not in ("import_module", "__import__"):
        return []
    name = _literal(call, 0, "name")
    if not isinstance(name, str) or not name:
        return []
    if called == "import_module":
        package = _literal(call, 1, "package")
        try:
            return [importlib.util.resolve_name(name, package if isinstance(package, str) else None)]
        except (ImportError, ValueError):
            return []  # relative without a literal package: the repository's own
    level = _literal(call, 4, "level")
    if name.startswith(".") or (isinstance(level, int) and level > 0):
        return []
    fromlist = _literal(call, 3, "fromlist")
    extra = (
        [f"{name}.{x}" for x in fromlist if isinstance(x, str) and x != "*"]
        if isinstance(fromlist, list)
        else []
    )
    return [name, *extra]


def _literal(call: ast.Call, position: int, keyword: str) -> object:
    """The argument's value where it is a literal (a string, a number, a list or tuple of them), else None."""
    node = call.args[position] if len(call.args) > position else None
    node = next((k.value for k in call.keywords if k.arg == keyword), node)
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except UNPARSEABLE:
        return None
    return list(value) if isinstance(value, (list, tuple)) else value


def _gone(found: list[tuple[int, str]], gone: frozenset[str]) -> list[tuple[int, str]]:
    """(line, the gone module) for each import of one or of a module below one, once per line and module."""
    hits: dict[tuple[int, str], None] = {}
    for line, module in found:
        parts = module.split(".")
        prefixes = (".".join(parts[:i]) for i in range(1, len(parts) + 1))
        first = next((p for p in prefixes if p in gone), None)
        if first is not None:
            hits[(line, first)] = None
    return list(hits)


def _read(path: Path, word: re.Pattern[bytes]) -> bytes | str:
    """The file's bytes, or why they cannot be read ("" when it is too large but never names the package,
    or gone: a file the candidate deleted is still in git's index, and no code)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        if not names(path, word):
            return ""
        return f"larger than {MAX_FILE_BYTES} bytes (code_imports.MAX_FILE_BYTES), not parsed"
    data = read_regular(path, MAX_FILE_BYTES)
    return "cannot be opened as a regular file of its size" if data is None else data


def _head(path: Path) -> bytes | None:
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        return os.read(fd, SHEBANG_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _why(exc: BaseException) -> str:
    """The parser's reason, as a person reads it (a crash's name is no reason: RecursionError is Python's
    parser giving up on nesting, which the file's readers all report as unparseable)."""
    if isinstance(exc, RecursionError):
        return "nested past the parser's limit"
    return f"{type(exc).__name__}: {exc}"[:WHY_CHARS]
