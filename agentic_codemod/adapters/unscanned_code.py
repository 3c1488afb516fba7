"""Code of the ecosystem that names the SDK where no loaded migration rule looks: the adapters' shared part
(each adapter's `unscanned.py` says what its code files, interpreters and mentions of the SDK are).

    unscanned(root, scanned, code_suffixes, interpreters, mention, render) -> [UnscannedCode]

The rules scan the files whose suffixes their ast-grep languages read (workflow/scan.py). Code can sit
elsewhere: a TypeScript file where the rules are JavaScript only, a `.vue` component, a `.pyw` or `.pyx`
module, a notebook, a script named without a suffix whose `#!` line runs the ecosystem's interpreter, a
link named as a code file whose target has another name. When such a file names the SDK, the run cannot
say its migration is complete: each is a human's item of the plan (steps.plan), so the run ends exit 3
naming it, however green the tests (they may never load the file). Where the adapter can give the file
as a rule language's source (`render`: a `.pyw` or a `#!` script as Python, a notebook's code cells), the
plan scans that with the loaded rules and keeps the file only where a rule matches, as it would for a
file the rules read (so a file migrated by hand stops being an item).

The files: what git lists in the tree (tracked, and new files not ignored), at most MAX_FILES names. Fail
closed: a code file too large to read whole (over MAX_FILE_BYTES) that names the SDK is an item, as is a
listing past MAX_FILES or one git cannot give. A link is read where it leads only inside the tree (a
target outside it, or a loop, is an item: it cannot be checked; a dangling one is nothing); submodules
(folders git lists) are not read.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.types import UnscannedCode
from agentic_codemod.tools.snapshot import GitError, git
from agentic_codemod.tools.untrusted_file import read_regular

# Bounds of one reading of a tree:
MAX_FILES = 500_000  # names git lists; past them the rest is not read, and that is an item of its own
MAX_FILE_BYTES = 10_000_000  # one code file searched for the SDK's name; a larger one is an item
SHEBANG_BYTES = 256  # of a file without a code suffix: Linux reads no more of a `#!` line either
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# (repository-relative name, the file's bytes) -> (ast-grep language, text) the rules can read it as, or None
Render = Callable[[str, bytes], tuple[str, str] | None]


def unscanned(
    root: Path,
    scanned: frozenset[str],
    code_suffixes: tuple[str, ...],
    interpreters: tuple[str, ...],
    mention: re.Pattern[bytes],
    render: Render,
) -> list[UnscannedCode]:
    """Each code file git lists whose suffix is not in `scanned` (links: whatever their name) and which
    names the SDK (`mention`) or cannot be checked."""
    try:
        listed = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    except GitError as exc:
        why = f"the repository's files cannot be listed ({exc}): code no rule reads may name the SDK"
        return [UnscannedCode("", why)]
    names = sorted({n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n})
    found: list[UnscannedCode] = []
    if len(names) > MAX_FILES:
        found.append(
            UnscannedCode(
                "", f"more than {MAX_FILES} files (unscanned_code.MAX_FILES): only the first were read"
            )
        )
    for name in names[:MAX_FILES]:
        item = _item(root, name, scanned, code_suffixes, interpreters, mention, render)
        if item is not None:
            found.append(item)
    return found


def _item(
    root: Path,
    name: str,
    scanned: frozenset[str],
    code_suffixes: tuple[str, ...],
    interpreters: tuple[str, ...],
    mention: re.Pattern[bytes],
    render: Render,
) -> UnscannedCode | None:
    path = root / name
    suffix = PurePosixPath(name).suffix
    try:
        info = os.lstat(path)
    except OSError:
        return None  # listed in the index, gone from the tree: nothing there to migrate
    if stat.S_ISLNK(info.st_mode):
        if suffix not in scanned and suffix not in code_suffixes:
            return None
        try:
            target = path.resolve(strict=True)
        except FileNotFoundError:
            return None  # dangling: no code there
        except (OSError, RuntimeError):  # a loop
            return UnscannedCode(
                name, "a link named as code that cannot be followed (a loop): it cannot be checked"
            )
        if not target.is_relative_to(root.resolve()):
            return UnscannedCode(
                name, "a link named as code that leads out of the tree: it cannot be checked for the SDK"
            )
        if PurePosixPath(target.name).suffix in scanned or not target.is_file():
            return None  # read by the rules under its own name (listed itself), or no file
        kind = f"a link to {target.relative_to(root.resolve()).as_posix()}, which no rule reads"
        path = target
    elif not stat.S_ISREG(info.st_mode) or suffix in scanned:
        return None
    elif suffix in code_suffixes:
        kind = f"a {suffix} file, which no migration rule of this task reads"
    elif _script_of(path, interpreters):
        kind = "a script (its #! line runs the interpreter), which no rule reads: it has no code suffix"
    else:
        return None
    data = read_regular(path, MAX_FILE_BYTES)
    if data is None:
        if not names(path, mention):
            return None
        return UnscannedCode(
            name, f"{kind}, names the SDK, and is over {MAX_FILE_BYTES} bytes: not read whole"
        )
    if not mention.search(data):
        return None
    return UnscannedCode(name, f"{kind}, names the SDK", render(name, data))


def names(path: Path, pattern: re.Pattern[bytes]) -> bool:
    """Whether a file too large to read whole holds `pattern` (searched mapped, opened without following
    a link or blocking on a FIFO); True where that cannot be told (fail closed)."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return True
    try:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as view:
            return pattern.search(view) is not None
    except (OSError, ValueError):
        return True
    finally:
        os.close(fd)


def _script_of(path: Path, interpreters: tuple[str, ...]) -> bool:
    """Whether the file's first line is a `#!` line naming one of `interpreters` (env's argument too)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SHEBANG_BYTES)
    except OSError:
        return False
    if not head.startswith(b"#!"):
        return False
    line = head.splitlines()[0] if head else b""
    words = re.findall(rb"[\w.+-]+", line)
    return any(w.decode("ascii", "replace").rstrip("0123456789.") in interpreters for w in words)
