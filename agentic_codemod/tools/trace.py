"""trace.jsonl: one line per tool call or deterministic edit, secrets redacted before writing.

API (contract used by the pipeline and the agents' tools):

    redactor = Redactor.from_environment(os.environ, markers)   # values of secret-named env vars
    redactor.redact(text) -> str        # also common token shapes: private keys, bearer tokens,
                                        # cloud keys (AKIA...), GitLab/GitHub tokens, JWTs
    trace = Trace(path, redactor, field_chars=2000)
    trace.record(actor, tool, arguments: dict, result: str, decision="allowed"|"refused", reason="")
        -> dict (the line written: {"time", "seq", "actor", "tool", "arguments", "result",
                                    "decision", "reason"})
    trace.lines() -> list[dict]

Additions: `Redactor(secrets, markers)`, `redactor.add(value)`, `redactor.redact_value(obj)` (walks
dicts and lists), `Trace(None, ...)` keeps the lines in memory only, `trace.refusals()`.
Every string is redacted first and truncated second, so a cut never exposes half a secret.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentic_codemod.config import MIN_SECRET_CHARS, SECRET_NAME_MARKERS

FORMAT = "agentic-codemod/trace@1"
REDACTED = "[REDACTED]"

Decision = Literal["allowed", "refused"]

# Token shapes redacted wherever they appear, whatever variable or file they came from.
TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    re.compile(r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}"),
    re.compile(r"gl(?:pat|ptt|dt|rt|cbt|oas|soat|ffct|imt|agent|ft|wt)-[0-9A-Za-z_\-]{20,}"),
    re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]*+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{30,}"),
)
_BEARER = re.compile(r"(?i)\b(bearer|authorization:\s*(?:token|basic))(\s+)[A-Za-z0-9\-._~+/]{6,}=*")
_URL_PASSWORD = re.compile(r"(?<=://)([^/\s:@]+):[^/\s@]+@")
# A name starts where no name character precedes it and is matched possessively, so each run of name
# characters is scanned once (unbounded backtracking here was quadratic on inputs like "a.a.a.a…").
_ASSIGNED_NAME = re.compile(r"(?<![\w.-])([\w.-]{1,128}+)[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?")
_ASSIGNED_VALUE = re.compile(rf"[^\s\"',;]{{{MIN_SECRET_CHARS},}}+")


class Redactor:
    """Replaces known secret values and token shapes with [REDACTED]."""

    def __init__(self, secrets: Iterable[str] = (), markers: Sequence[str] = SECRET_NAME_MARKERS) -> None:
        self._secrets: set[str] = set()
        self._literal: re.Pattern[str] | None = None
        names = "|".join(re.escape(m).replace("_", "[-_]?") for m in markers) or "(?!)"
        self._secret_name = re.compile(names, re.IGNORECASE)
        for value in secrets:
            self.add(value)

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str], markers: Sequence[str] = SECRET_NAME_MARKERS
    ) -> Redactor:
        upper = [m.upper() for m in markers]
        values = [v for k, v in environ.items() if any(m in k.upper() for m in upper)]
        return cls(values, markers)

    def add(self, value: str) -> None:
        """Learn one more secret value (ignored when shorter than MIN_SECRET_CHARS)."""
        value = value.strip()
        if len(value) < MIN_SECRET_CHARS or value in self._secrets:
            return
        self._secrets.add(value)
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._literal = re.compile("|".join(re.escape(s) for s in ordered))

    def redact(self, text: str) -> str:
        if self._literal is not None:
            text = self._literal.sub(REDACTED, text)
        for pattern in TOKEN_PATTERNS:
            text = pattern.sub(REDACTED, text)
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
        return self._redact_assignments(text)

    def _redact_assignments(self, text: str) -> str:
        """NAME=value, NAME: "value" (.env, YAML, shell, JSON) where NAME carries a secret marker."""
        out: list[str] = []
        done = 0
        for name in _ASSIGNED_NAME.finditer(text):
            if name.start() < done or not self._secret_name.search(name.group(1)):
                continue
            value = _ASSIGNED_VALUE.match(text, name.end())
            if value is not None:
                out += [text[done : name.end()], REDACTED]
                done = value.end()
        return "".join(out) + text[done:]

    def redact_value(self, value: Any) -> Any:
        """Redact every string inside dicts, lists and tuples; other scalars pass unchanged."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {str(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.redact_value(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return self.redact(str(value))


class Trace:
    """Append-only JSON lines. `path=None` keeps lines in memory (tests, dry runs)."""

    def __init__(self, path: Path | None, redactor: Redactor | None = None, field_chars: int = 2000) -> None:
        self.path = Path(path) if path is not None else None
        self.redactor = redactor or Redactor()
        self.field_chars = field_chars
        self._seq = 0
        self._memory: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(
        self,
        actor: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        result: str,
        decision: Decision = "allowed",
        reason: str = "",
    ) -> dict[str, Any]:
        if decision not in ("allowed", "refused"):
            raise ValueError(f"decision must be 'allowed' or 'refused', not {decision!r}")
        with self._lock:
            self._seq += 1
            line = {
                "format": FORMAT,
                "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "seq": self._seq,
                "actor": self._clean(actor),
                "tool": self._clean(tool),
                "arguments": self._truncate(self.redactor.redact_value(dict(arguments or {}))),
                "result": self._clean(result),
                "decision": decision,
                "reason": self._clean(reason),
            }
            self._memory.append(line)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        return line

    def lines(self) -> list[dict[str, Any]]:
        """Lines as written (read back from the file when there is one)."""
        if self.path is None:
            return [dict(line) for line in self._memory]
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        # "\n" only: json.dumps escapes it in strings, but not U+2028, U+0085 or \x1c, at which
        # str.splitlines() would also split a record that quotes them (ensure_ascii=False keeps them raw)
        return [json.loads(raw) for raw in text.split("\n") if raw.strip()]

    def refusals(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line["decision"] == "refused"]

    def _clean(self, text: Any) -> str:
        return self._cut(self.redactor.redact(str(text)))

    def _truncate(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._cut(value)
        if isinstance(value, dict):
            return {k: self._truncate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._truncate(v) for v in value]
        return value

    def _cut(self, text: str) -> str:
        if len(text) <= self.field_chars:
            return text
        keep = max(0, self.field_chars - 32)  # room for the marker
        return text[:keep] + f"…[{len(text) - keep} chars cut]"
