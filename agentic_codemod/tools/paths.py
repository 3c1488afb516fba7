"""How a path spelled by an actor becomes a repository-relative POSIX path, and which globs it hits.

Pure string rules, shared by the workspace (before any file is touched) and the scope gate (on what
git lists afterwards), so both sides refuse exactly the same spellings:

    normalise(rel) -> str                   "src/a.py"; raises Refused for a spelling that is not plain
    denied_by(path, globs, named=) -> str | None    case-insensitive; the path and every parent directory
    allowed_by(path, globs) -> bool         case-sensitive; the path or one of its parent directories
    inside_git(path) -> bool                a `.git` component (any case, NTFS short name `git~1`)
    named_paths(allowed) -> frozenset[str]  the allowed_paths entries that name one exact path
    needs_naming_when_new(path) -> bool     a name (conftest.py) that may be edited but not created
    matches_everything(glob) -> bool        `**`, `*`, `**/*`, `./**` ...: a pattern that allows any path

Not plain: absolute, `..`, percent-encoded, control, invisible, private-use, surrogate (non-UTF-8) or
bidi characters, or a spelling that Unicode NFKC normalisation changes (full-width letters, a decomposed
accent).
A deny glob of config.NAMEABLE_DENY_GLOBS (setup.py, *.lock, .github/** ...) is waived for a path the
task names exactly; every other deny glob holds whatever the task says.

Globs are gitignore patterns, matched by the `pathspec` library (GitIgnoreBasicPattern): `*` and `?`
stay inside one path component, `**` as a whole component spans components, `[...]` is a class. This
module only normalises around it: case folding for deny globs, `!`, `#`, `\\` and trailing spaces taken
literally (a glob is never a negation or a comment), and two rules kept stricter than gitignore:
    a deny glob without `/` matches a single component at any depth, and a glob that matches a directory
    matches everything in it (gitignore's own rule), so `*.pem` also refuses `keys/a.pem/x`;
    a glob `dir/**` also matches `dir` itself; an allowed glob is anchored at the root (`*.py` allows
    top-level files only).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

from agentic_codemod.config import (
    MAX_NAME_BYTES,
    MAX_PATH_CHARS,
    NAMEABLE_DENY_GLOBS,
    NEW_FILE_DENY_NAMES,
)

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")
_NTFS_SHORT_GIT = re.compile(r"^git~\d+$")
_GLOB_CHARS = frozenset("*?[")
# Control, format (zero-width, bidi), line/paragraph separator, private-use and surrogate characters.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
# The bidi controls by name (all Cf today; listed so a Unicode update cannot let one through).
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Paths that any pattern allowing everything allows: top level, nested, hidden, upper case, odd names.
# pathspec's regex for a pattern that matches every path (`**`, `*`).
_EVERYTHING = "."
_NOTHING = re.compile(r"(?!)")
_EVERYTHING_PROBES = ("a", "Z9", ".h", "b/c.py", ".d/e/f", "x y/-z~.txt", "_/9/Q")


class Refused(PermissionError):
    """An actor asked for something the enforcement layer does not allow. `reason` says what."""

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(f"refused: {reason}" + (f": {path!r}" if path else ""))
        self.reason = reason
        self.path = path


def normalise(rel: str) -> str:
    """Repository-relative POSIX spelling of `rel`, or Refused. "." and "" mean the root ("")."""
    if not isinstance(rel, str):
        raise Refused("path must be a string", repr(rel))
    if len(rel) > MAX_PATH_CHARS:
        raise Refused(f"path longer than {MAX_PATH_CHARS} characters", rel[:80] + "…")
    if any(unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _BIDI_CONTROLS for ch in rel):
        raise Refused("control, invisible or bidi character in path", rel)
    if unicodedata.normalize("NFKC", rel) != rel:
        raise Refused("path spelling changes under Unicode NFKC normalisation", rel)
    if _PERCENT.search(rel):
        raise Refused("percent-encoded path spelling", rel)
    spelled = rel.replace("\\", "/")
    if spelled.startswith("/") or _DRIVE.match(spelled) or spelled.startswith("~"):
        raise Refused("absolute path", rel)
    parts = [p for p in spelled.split("/") if p not in ("", ".")]
    for part in parts:
        if part == "..":
            raise Refused("path escapes the worktree (..)", rel)
        if part.endswith((".", " ")) or part.startswith(" "):
            raise Refused("path component with a trailing dot or space", rel)
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise Refused(f"path component longer than {MAX_NAME_BYTES} bytes", rel)
    return "/".join(parts)


def inside_git(path: str) -> bool:
    for part in path.split("/"):
        folded = _fold(part)
        if folded == ".git" or _NTFS_SHORT_GIT.match(folded):
            return True
    return False


def denied_by(path: str, globs: Iterable[str], named: Iterable[str] = ()) -> str | None:
    """The first deny glob that matches `path` or one of its parents (case-insensitive), else None.
    A glob of NAMEABLE_DENY_GLOBS does not count for a path in `named` (see named_paths)."""
    folded = _fold(path)
    waived = path in frozenset(named)
    for glob in globs:
        if waived and glob in NAMEABLE_DENY_GLOBS:
            continue
        if _hit(_fold(glob.strip("/")), folded, anchored=False):
            return glob
    return None


def allowed_by(path: str, globs: Iterable[str]) -> bool:
    """True when a glob matches the path itself or one of its parent directories (case-sensitive)."""
    return any(_hit(glob.strip("/") or "**", path, anchored=True) for glob in globs)


def named_paths(allowed: Iterable[str]) -> frozenset[str]:
    """The allowed_paths entries without glob characters, normalised: the paths a task names exactly."""
    named = set()
    for entry in allowed:
        if _GLOB_CHARS.isdisjoint(entry):
            try:
                named.add(normalise(entry))
            except Refused:
                continue
    return frozenset(named - {""})


def needs_naming_when_new(path: str) -> bool:
    """A file of this name may be edited where it exists, but created only where the task names it."""
    return _fold(path.rsplit("/", 1)[-1]) in {_fold(n) for n in NEW_FILE_DENY_NAMES}


def check_glob(glob: str) -> None:
    """Refused (naming the glob) for a glob this module cannot read, so a task or config that carries
    one is refused when it is loaded, not at the first path it should have matched."""
    stripped = glob.strip("/")
    if stripped:
        _patterns(_fold(stripped), anchored=False)


def matches_everything(glob: str) -> bool:
    """True for an allowed_paths pattern that allows every path (`**`, `*`, `**/*`, `./**`, `?*` ...)."""
    try:
        spelled = normalise(glob)
    except Refused:
        return False
    return allowed_by("", [spelled]) or all(allowed_by(p, [spelled]) for p in _EVERYTHING_PROBES)


def matches(path: str, glob: str) -> bool:
    """Plain glob match of a full repo-relative path (a glob without `/` matches the file name)."""
    target = path if "/" in glob else path.rsplit("/", 1)[-1]
    return any(_whole(pattern, target) for pattern in _patterns(glob, anchored=True))


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _hit(glob: str, path: str, *, anchored: bool) -> bool:
    """The glob matches the path or a directory above it (a matched directory holds its contents)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(_whole(pattern, p) for pattern in _patterns(glob, anchored=anchored) for p in prefixes)


def _whole(pattern: re.Pattern[str], target: str) -> bool:
    """The pattern matches all of target (`dir/` and `dir/**` patterns: anything inside dir)."""
    if pattern.pattern == _EVERYTHING:
        return True
    hit = pattern.match(target)
    return hit is not None and (hit.end() == len(target) or pattern.pattern.endswith("/"))


def _patterns(glob: str, *, anchored: bool) -> tuple[re.Pattern[str], ...]:
    """The glob's pattern; for `dir/**` also `dir` itself, anchored as `dir/**` is."""
    if glob.endswith("/**") and glob != "/**":
        return _pattern(glob, anchored=anchored), _pattern(glob[:-3], anchored=True)
    return (_pattern(glob, anchored=anchored),)


@functools.lru_cache(maxsize=512)
def _pattern(glob: str, *, anchored: bool) -> re.Pattern[str]:
    """pathspec's regex for one glob, taken literally: never a negation, a comment or an escape."""
    spelled = glob.replace("\\", "\\\\")
    if spelled.endswith(" "):
        spelled = spelled[:-1] + "\\ "
    if spelled.startswith(("!", "#")):
        spelled = "\\" + spelled
    if anchored and not spelled.startswith("/"):
        spelled = "/" + spelled
    if not spelled:
        return _NOTHING
    if any("**" in part and part != "**" for part in glob.split("/")):
        # gitignore reads `config/**.yml` as `config/*.yml`: a deny glob would quietly cover less
        raise Refused("not a valid glob (`**` must be a whole path component: a/**/b, **/*.yml)", glob)
    try:
        regex = GitIgnoreBasicPattern(spelled).regex
    except (ValueError, re.error) as exc:  # GitIgnorePatternError is a ValueError; `[z-a]` a re.error
        raise Refused(f"not a valid glob ({exc})", glob) from None
    return regex if regex is not None else _NOTHING  # only blank lines have none
