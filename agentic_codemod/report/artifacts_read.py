"""Reading a run directory's artifacts for the page: bounded, tolerant of what a run could not write.

    read_text(path, limit) -> Text          the text (cut at `limit` chars) and whether it was cut
    read_trace(path) -> TraceRows           trace.jsonl as rows; unreadable lines become rows that say so
    read_json(path) -> dict | None

Everything read here is hostile (repository content, model output): it is only ever passed to the
template as data, which escapes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_codemod.config import REPORT_CELL_CHARS, REPORT_READ_BYTES, REPORT_TRACE_ROWS


@dataclass
class Text:
    text: str = ""
    cut: bool = False
    missing: bool = False


def cut(value: object, limit: int = REPORT_CELL_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more chars]"


def read_text(path: Path, limit: int) -> Text:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            raw = handle.read(min(limit * 4, REPORT_READ_BYTES))  # at most 4 bytes a character
    except OSError:
        return Text(missing=True)
    text = raw.decode("utf-8", errors="replace")
    return Text(text[:limit], cut=len(text) > limit or size > len(raw))


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > REPORT_READ_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class TraceRow:
    seq: str
    time: str
    actor: str
    tool: str
    decision: str
    arguments: str
    result: str
    reason: str


@dataclass
class TraceRows:
    rows: list[TraceRow] = field(default_factory=list)
    total: int = 0  # lines in the file, shown or not
    missing: bool = False

    def values(self, name: str) -> list[str]:
        """The distinct values of one column, for the filters."""
        return sorted({getattr(r, name) for r in self.rows})


def read_trace(path: Path) -> TraceRows:
    out = TraceRows()
    try:
        handle = path.open("rb")
    except OSError:
        out.missing = True
        return out
    read = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            read += len(raw)
            if read > REPORT_READ_BYTES:
                break
            out.total = number
            if len(out.rows) >= REPORT_TRACE_ROWS:
                continue
            out.rows.append(_row(number, raw))
    return out


def _row(number: int, raw: bytes) -> TraceRow:
    try:
        entry = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        entry = None
    if not isinstance(entry, dict):
        return TraceRow(str(number), "", "?", "?", "unreadable", "", cut(raw.decode(errors="replace")), "")
    return TraceRow(
        seq=cut(entry.get("seq", number), 20),
        time=cut(entry.get("time", ""), 40),
        actor=cut(entry.get("actor", ""), 200),
        tool=cut(entry.get("tool", ""), 200),
        decision=cut(entry.get("decision", ""), 200),
        arguments=cut(entry.get("arguments", "")),
        result=cut(entry.get("result", "")),
        reason=cut(entry.get("reason", "")),
    )
