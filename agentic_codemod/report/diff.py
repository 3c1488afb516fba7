"""changes.patch as lines a template can colour: one class per line (file header, hunk, added, removed)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DiffLine:
    kind: str  # file | meta | hunk | add | del | ctx
    text: str


@dataclass
class DiffFile:
    path: str
    added: int
    removed: int


def lines(patch: str) -> list[DiffLine]:
    out: list[DiffLine] = []
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk, kind = False, "file"
        elif line.startswith("@@"):
            in_hunk, kind = True, "hunk"
        elif in_hunk:
            kind = {"+": "add", "-": "del"}.get(line[:1], "ctx")
        else:
            kind = "meta"  # index, mode, ---/+++ lines before the first hunk
        out.append(DiffLine(kind, line))
    return out


def files(diff: list[DiffLine]) -> list[DiffFile]:
    """The files of the patch with their added/removed line counts, in patch order."""
    out: list[DiffFile] = []
    for line in diff:
        if line.kind == "file":
            _, _, path = line.text.partition(" b/")
            out.append(DiffFile(path or line.text, 0, 0))
        elif out and line.kind == "add":
            out[-1].added += 1
        elif out and line.kind == "del":
            out[-1].removed += 1
    return out
