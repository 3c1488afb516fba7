"""What ast-grep printed for one scan: its matches as a JSON stream on stdout, its `--inspect entity`
report on stderr. Reading is bounded (a byte budget per rule, a match limit per process) and keeps only
what the tool needs of each match (`Hit`). A report that does not account for every file given is a
failed scan (`ScanFailed`, exit 1), never "no matches".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import IO

from agentic_codemod.errors import CodemodError

TOOL = "ast-grep"
# `--inspect entity` prints these (and per-file lines) on stderr; anything else on stderr is an error.
_FILES = re.compile(r"^sg: summary\|file: scannedFileCount=(\d+),skippedFileCount=(\d+)$")
_RULES = re.compile(r"^sg: summary\|rule: effectiveRuleCount=(\d+),skippedRuleCount=(\d+)$")
_INSPECT = "sg: "
_FILE_KEY = b',"file":"'  # structural in a match line: a quote inside a JSON string is escaped
_MAX_NAME = 8_192


class ScanFailed(CodemodError):
    """The scanning tool failed: its matches are unknown, so the run fails (never "no matches")."""

    status = "failed"


@dataclass(frozen=True)
class Hit:
    """What the tool keeps of one ast-grep match."""

    rule_id: str
    file: str
    line: int  # 1-based
    start: int  # byte offsets of the replaced span (replacementOffsets, else the match range)
    end: int
    replacement: str | None


class Budget:
    """Bytes of JSON still allowed for one rule's scan."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.left = cap


@dataclass
class Read:
    count: int = 0  # matches of this process
    complete: bool = False  # read to the end of the stream
    over: str | None = None  # over the byte budget: the file of the match that overflowed ("" unknown)


def read_stream(
    rule_id: str, stream: IO[bytes], found: dict[str, list[Hit]], budget: Budget, limit: int
) -> Read:
    """One JSON object per line, within the byte budget and up to `limit` matches."""
    read = Read()
    while True:
        line = stream.readline(budget.left + 1)
        if not line:
            read.complete = True
            return read
        budget.left -= len(line)
        if budget.left < 0:
            read.over = _file_of_line(line, stream, budget.cap)
            return read
        hit = _hit(rule_id, line)
        if hit is None:
            continue
        found.setdefault(hit.file, []).append(hit)
        read.count += 1
        if read.count >= limit:
            return read


def checked_report(rule_id: str, batch: list[str], code: int, stderr: str) -> tuple[int, dict[str, str]]:
    """ScanFailed unless the exit code, the error lines and the tool's own count of what it scanned and
    skipped account for every file of the batch. Returns how many files were skipped for another reason
    than being empty, and those it could name with the reason (for a RequiresHuman)."""
    reasons = {f: _skip_reason(stderr, f) for f in batch}
    for f in batch:  # a name may hold a newline: take the names out before reading lines
        stderr = stderr.replace(f"{_INSPECT}entity|file|{f}: ", f"{_INSPECT}entity|file|-: ")
    lines = stderr.splitlines()
    problems = [ln for ln in lines if ln.strip() and not ln.startswith(_INSPECT)]
    if code != 0 or problems:
        detail = "; ".join(problems) or stderr.strip() or "no error output"
        raise ScanFailed(f"{TOOL} failed on rule {rule_id} (exit {code}): {detail[:1_000]}")
    files = next((m for m in map(_FILES.match, lines) if m), None)
    if files is None:
        raise ScanFailed(f"{TOOL} did not report what it scanned for rule {rule_id}: {stderr[:500]!r}")
    rules = next((m for m in map(_RULES.match, lines) if m), None)
    if rules is None or rules.group(1) != "1":
        raise ScanFailed(f"{TOOL} did not apply rule {rule_id}: {stderr[:500]!r}")
    scanned, skipped = int(files.group(1)), int(files.group(2))
    named = {f: why for f, why in reasons.items() if why and why != "emptyFile"}
    empty = sum(1 for why in reasons.values() if why == "emptyFile")
    if skipped - empty > 0 or named:
        return max(skipped - empty, len(named)), named
    if scanned != len(batch):
        raise ScanFailed(f"{TOOL} scanned {scanned} of {len(batch)} file(s) for rule {rule_id}")
    return 0, {}


def _hit(rule_id: str, line: bytes) -> Hit | None:
    try:
        m = json.loads(line)
        if m.get("ruleId", rule_id) != rule_id:
            return None
        offsets = m.get("replacementOffsets") or m["range"]["byteOffset"]
        return Hit(
            rule_id=rule_id,
            file=str(m["file"]).removeprefix("./"),
            line=int(m["range"]["start"]["line"]) + 1,
            start=int(offsets["start"]),
            end=int(offsets["end"]),
            replacement=m.get("replacement"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScanFailed(f"{TOOL} printed a match the tool cannot read for rule {rule_id}: {exc}") from exc


def _file_of_line(start: bytes, stream: IO[bytes], limit: int) -> str:
    """The "file" of a match line too long to keep, found in bounded chunks (the match text comes first,
    then its range, then `"file":"..."`); "" when it is not within `limit` more bytes."""
    tail, chunk, seen = b"", start, 0
    while chunk:
        data = tail + chunk
        at = data.find(_FILE_KEY)
        if at >= 0:
            rest = data[at + len(_FILE_KEY) - 1 :]  # from the opening quote of the value
            while len(rest) < _MAX_NAME and not rest.endswith(b"\n") and (more := stream.readline(_MAX_NAME)):
                rest += more
            try:
                value, _ = json.JSONDecoder().raw_decode(rest.decode("utf-8", "replace"))
            except ValueError:
                return ""
            return str(value).removeprefix("./")
        seen += len(chunk)
        if chunk.endswith(b"\n") or seen > limit:
            return ""
        tail, chunk = data[-len(_FILE_KEY) :], stream.readline(1 << 16)
    return ""


def _skip_reason(stderr: str, name: str) -> str | None:
    """Why ast-grep skipped a file ("sg: entity|file|NAME: skipped=REASON"), or None."""
    marker = f"{_INSPECT}entity|file|{name}: skipped="
    at = stderr.find(marker)
    if at < 0:
        return None
    rest = stderr[at + len(marker) :]
    return rest.split("\n", 1)[0].strip() or "unknown"
