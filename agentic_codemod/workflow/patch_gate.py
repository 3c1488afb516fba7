"""The patch is what it looks like: no binary hunk for a file that is text.

    patch_text_gate(patch, root, base) -> GateResult       "patch_text"

Patches are made with text forced and attributes never read (candidate.PATCH_ARGS, tools/snapshot.py), so
a hunk that reads `GIT binary patch` or `Binary files ... differ` for a file that is valid UTF-8 means
the lines were hidden from the reviewer and the merge request: it fails, naming the file. A hunk whose
file cannot be named or read fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentic_codemod.models import Finding
from agentic_codemod.tools.snapshot import GitError, read_blob
from agentic_codemod.workflow.gates import GateResult

_SECTION = re.compile(rb"^diff --git (.*)$", re.M)
_BINARY = re.compile(rb"^(GIT binary patch|Binary files .* differ)$", re.M)
_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b"}


def patch_text_gate(patch: bytes, root: Path, base: str) -> GateResult:
    """`root` holds the candidate's files (with a .git that reaches the base commit's objects)."""
    findings: list[Finding] = []
    for header, body in _sections(patch):
        if not _BINARY.search(body):
            continue
        path = _path(header)
        if path is None:
            unnamed = f"binary hunk for a file the patch does not name plainly: {header!r}"
            findings.append(_error(unnamed, None))
        elif _is_text(root, base, path):
            findings.append(_error(f"binary hunk for a text file (its lines are hidden): {path}", path))
    return GateResult(name="patch_text", passed=not findings, findings=findings)


def _sections(patch: bytes) -> list[tuple[bytes, bytes]]:
    starts = [m for m in _SECTION.finditer(patch)]
    return [
        (m.group(1), patch[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(patch)])
        for i, m in enumerate(starts)
    ]


def _path(header: bytes) -> str | None:
    """The b/ side of `diff --git a/X b/X` (quoted or not); None when it cannot be told."""
    if header.startswith(b'"'):
        parts = _quoted(header)
        return _strip(parts[1], b"b/") if parts and len(parts) == 2 else None
    n = len(header)
    if n % 2 == 1:  # "a/X b/X": the same X twice around the middle blank
        left, right = header[: n // 2], header[n // 2 + 1 :]
        if left.startswith(b"a/") and right.startswith(b"b/") and left[2:] == right[2:]:
            return right[2:].decode("utf-8", "surrogateescape")
    return None


def _quoted(header: bytes) -> list[bytes] | None:
    parts, i = [], 0
    while i < len(header):
        if header[i : i + 1] == b" ":
            i += 1
            continue
        if header[i : i + 1] != b'"':
            end = header.find(b" ", i)
            end = len(header) if end < 0 else end
            parts.append(header[i:end])
            i = end
            continue
        out, i = b"", i + 1
        while i < len(header) and header[i : i + 1] != b'"':
            if header[i : i + 1] == b"\\" and i + 1 < len(header):
                nxt = header[i + 1 : i + 2]
                if nxt.isdigit():
                    out += bytes([int(header[i + 1 : i + 4], 8)])
                    i += 4
                    continue
                out += _ESCAPES.get(nxt, nxt)
                i += 2
                continue
            out += header[i : i + 1]
            i += 1
        parts.append(out)
        i += 1
    return parts


def _strip(raw: bytes, prefix: bytes) -> str | None:
    return raw[len(prefix) :].decode("utf-8", "surrogateescape") if raw.startswith(prefix) else None


def _is_text(root: Path, base: str, path: str) -> bool:
    """The file's bytes now (else at base) decode as UTF-8 without a NUL byte."""
    if path.startswith("/") or ".." in path.split("/"):
        return True  # not a path inside the repository: fail closed
    target = root / path
    try:
        data = target.read_bytes() if target.is_file() and not target.is_symlink() else None
        if data is None:
            data = read_blob(root, base, path)
    except (OSError, GitError):
        return True  # unreadable: a binary hunk is not taken on trust
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _error(message: str, path: str | None) -> Finding:
    return Finding(severity="error", message=message, path=path, code="patch_text.binary_hunk")
