"""changes.patch as lines a template can colour: one class per line (file header, hunk, added, removed)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentic_codemod.visible import visible


@dataclass
class DiffLine:
    kind: str  # file | meta | hunk | add | del | ctx
    text: str


@dataclass
class DiffFile:
    path: str
    added: int
    removed: int
    cut: bool = False  # the page's cut of the diff falls in or before this file: its counts are not all here


def lines(patch: str) -> list[DiffLine]:
    """The patch's lines, split at "\n" only: git ends every line with it and escapes nothing inside."""
    out: list[DiffLine] = []
    in_hunk = False
    split = patch.split("\n")
    raw = split[:-1] if split and split[-1] == "" else split
    crlf = _crlf_files(raw)
    for number, line in enumerate(raw):
        # Inside a line git leaves every character as it is: a line break other than "\n" shown raw would
        # draw a line that is not one (a forged header or hunk), a bidi override would reorder the code
        # on screen. visible() writes them as escapes. A CRLF file's lines all end in "\r\n": shown
        # without the "\r"; in a file whose hunks mix endings each "\r" is shown, so that a change of line
        # ending alone is not two identical lines.
        line = visible(line.removesuffix("\r") if number in crlf else line)
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


def _crlf_files(raw: list[str]) -> set[int]:
    """The indexes of the hunk lines of each file whose hunk lines all end in "\r" (a CRLF file)."""
    crlf: set[int] = set()
    body: list[int] = []
    in_hunk = False

    def close() -> None:
        if body and all(raw[i].endswith("\r") for i in body):
            crlf.update(body)
        body.clear()

    for number, line in enumerate(raw):
        if line.startswith("diff --git "):
            close()
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-", " "):
            body.append(number)
    close()
    return crlf


def files(diff: list[DiffLine]) -> list[DiffFile]:
    """The files of the patch with their added/removed line counts, in patch order. The name comes from the
    `+++`/`---` line (git quotes a name with special characters there, C style), else from a `rename to`
    or `copy to` line, else from the header; shown with nothing hidden (visible.py)."""
    out: list[DiffFile] = []
    named = False
    for line in diff:
        if line.kind == "file":
            out.append(DiffFile(visible(_header_path(line.text)), 0, 0))
            named = False
        elif out and line.kind == "meta" and line.text.startswith(("rename to ", "copy to ")) and not named:
            out[-1].path = visible(unquote(line.text.split(" to ", 1)[1]))
        elif out and line.kind == "meta" and line.text.startswith(("+++ ", "--- ")) and not named:
            name = unquote(line.text[4:].rstrip("\t"))
            if name != "/dev/null":
                out[-1].path, named = visible(name.split("/", 1)[-1]), line.text.startswith("+++ ")
        elif out and line.kind == "add":
            out[-1].added += 1
        elif out and line.kind == "del":
            out[-1].removed += 1
    return out


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _header_path(header: str) -> str:
    """The path of a `diff --git a/X b/X` header (a file with no ---/+++ lines: new and empty, or a mode
    change): X when both sides name it, the header's text otherwise."""
    rest = header.removeprefix("diff --git ")
    quoted = _QUOTED.match(rest)
    if quoted:
        return unquote(quoted.group()).removeprefix("a/")
    half = (len(rest) - 1) // 2
    left, right = rest[:half], rest[half + 1 :]
    if left.startswith("a/") and right.startswith("b/") and left[2:] == right[2:]:
        return left[2:]
    return rest


ESCAPES = {
    "n": b"\n",
    "t": b"\t",
    '"': b'"',
    "\\": b"\\",
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "r": b"\r",
    "v": b"\v",
}


def unquote(name: str) -> str:
    """A path as git wrote it: "a/x\\"y\\303\\251" (C-style quotes, octal bytes) or plain."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            octal = body[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            out += ESCAPES.get(body[i + 1], body[i + 1].encode())
            i += 2
            continue
        out += body[i].encode()
        i += 1
    return out.decode("utf-8", errors="replace")
