"""What ast-grep printed for one scan: its matches as a JSON stream on stdout, its `--inspect entity`
report on stderr. One scan applies several rules; each match names its rule (`ruleId`). Reading is
bounded per rule (a byte budget and a match limit) and keeps only what the tool needs of each match
(`Hit`). A report that does not account for every file given is a
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
# ast-grep prints its summary after every per-file line: the LAST match counts (a file name with line
# breaks can print something that looks like a summary inside its own per-file line, earlier).
_FILES = re.compile(r"^sg: summary\|file: scannedFileCount=(\d+),skippedFileCount=(\d+)\r?$", re.MULTILINE)
_RULES = re.compile(r"^sg: summary\|rule: effectiveRuleCount=(\d+),skippedRuleCount=(\d+)\r?$", re.MULTILINE)
_INSPECT = "sg: "
_ENTITY_FILE = _INSPECT + "entity|file|"
_FILE_KEY = b',"file":"'  # structural in a match line: a quote inside a JSON string is escaped
_MAX_NAME = 8_192


class ScanFailed(CodemodError):
    """The scanning tool failed: its matches are unknown, so the run fails (never "no matches")."""


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
    """Bytes of JSON still allowed per rule in one scan (the same cap for each rule)."""

    def __init__(self, cap: int, rule_ids: list[str]) -> None:
        self.cap = cap
        self.left = dict.fromkeys(rule_ids, cap)


@dataclass
class Read:
    complete: bool = False  # read to the end of the stream
    over: str | None = None  # over the byte budget: the file of the match that overflowed ("" unknown)
    over_rule: str | None = None  # the rule whose budget it was (None: one line longer than the cap)
    capped: str | None = None  # a rule with more matches than it may have: reading stopped


def read_stream(
    stream: IO[bytes], found: dict[tuple[str, str], list[Hit]], budget: Budget, left: dict[str, int]
) -> Read:
    """One JSON object per line, each a match of one of the rules (`left`: matches each rule may still
    have). Stops at the first rule over its byte budget or its match count."""
    read = Read()
    while True:
        line = stream.readline(budget.cap + 1)
        if not line:
            read.complete = True
            return read
        if len(line) > budget.cap:
            read.over = _file_of_line(line, stream, budget.cap)
            return read
        hit = _hit(line, budget.left)
        budget.left[hit.rule_id] -= len(line)
        if budget.left[hit.rule_id] < 0:
            read.over, read.over_rule = hit.file, hit.rule_id
            return read
        found.setdefault((hit.rule_id, hit.file), []).append(hit)
        left[hit.rule_id] -= 1
        if left[hit.rule_id] < 0:
            read.capped = hit.rule_id
            return read


def checked_report(
    rule_ids: list[str], batch: list[str], code: int, stderr: str
) -> tuple[int, dict[str, str]]:
    """ScanFailed unless the exit code, the error lines and the tool's own count of what it scanned and
    skipped account for every file of the batch and every rule. Returns how many files were skipped for
    another reason than being empty, and those it could name with the reason (for a RequiresHuman).
    Linear in the report's size: each per-file line is read once."""
    shown = shown_rules(rule_ids)
    reasons: dict[str, str] = {}
    for f in batch:  # a name may hold a line break: take such names out before reading lines
        if breaks_lines(f):
            marker = f"{_INSPECT}entity|file|{f}: "
            if (at := stderr.find(marker)) >= 0:
                reasons[f] = stderr[at + len(marker) :].split("\n", 1)[0]
            stderr = stderr.replace(marker, f"{_INSPECT}entity|file|-: ")
    lines = stderr.splitlines()
    problems = [ln for ln in lines if ln.strip() and not ln.startswith(_INSPECT)]
    if code != 0 or problems:
        detail = "; ".join(problems) or stderr.strip() or "no error output"
        raise ScanFailed(f"{TOOL} failed on rule {shown} (exit {code}): {detail[:1_000]}")
    for ln in lines:
        if ln.startswith(_ENTITY_FILE):
            name, _, rest = ln[len(_ENTITY_FILE) :].rpartition(": ")
            reasons.setdefault(name, rest)
    files = _last(_FILES, stderr)
    if files is None:
        raise ScanFailed(f"{TOOL} did not report what it scanned for rule {shown}: {stderr[:500]!r}")
    rules = _last(_RULES, stderr)
    if rules is None or rules.group(1) != str(len(rule_ids)):
        raise ScanFailed(f"{TOOL} did not apply rule {shown}: {stderr[:500]!r}")
    why = {f: r.removeprefix("skipped=") for f in batch if (r := reasons.get(f, "")).startswith("skipped=")}
    scanned, skipped = int(files.group(1)), int(files.group(2))
    named = {f: w or "unknown" for f, w in why.items() if w != "emptyFile"}
    empty = sum(1 for w in why.values() if w == "emptyFile")
    if skipped - empty > 0 or named:
        return max(skipped - empty, len(named)), named
    if scanned != len(batch):
        raise ScanFailed(f"{TOOL} scanned {scanned} of {len(batch)} file(s) for rule {shown}")
    return 0, {}


def _last(pattern: re.Pattern[str], report: str) -> re.Match[str] | None:
    return max(pattern.finditer(report), key=re.Match.start, default=None)


def breaks_lines(name: str) -> bool:
    """Whether a file name holds a line break (every line break is unprintable; printable names are the
    fast case). Such a name is scanned alone, so that its report line cannot meet another name's."""
    return not name.isprintable() and name.splitlines() != [name]


def shown_rules(rule_ids: list[str]) -> str:
    return ", ".join(rule_ids[:5]) + (f" and {len(rule_ids) - 5} more" if len(rule_ids) > 5 else "")


def _hit(line: bytes, rules: dict[str, int]) -> Hit:
    try:
        m = json.loads(line)
        rule_id = m["ruleId"]
        if rule_id not in rules:
            raise ScanFailed(f"{TOOL} printed a match of rule {str(rule_id)[:80]!r}, which it was not given")
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
        raise ScanFailed(f"{TOOL} printed a match the tool cannot read: {exc}") from exc


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
