"""Reading a subunit stream (what stestr records for every run) into test ids and a tally.

    read_stream(data) -> (Tally, ids) | None        None: not a readable stream (fail closed)
    latest_stream(repo_dir) -> Path | None          the newest run in a stestr repository (.stestr/)

Both versions of the protocol (python-subunit, testing-cabal/subunit):

    v1  text lines `test: ID`, then `success|successful|failure|error|skip|xfail|uxsuccess: ID`, the
        outcome optionally followed by details in `[` ... `]` (plain, or ` [ multipart`: parts of a
        Content-Type line, a name line and chunks `HEXLEN\r\n` + bytes ending with `0\r\n`).
        stestr's file repository (.stestr/N) holds v1.
    v2  binary packets: signature 0xB3, 16 bits of flags, a variable-length total length, optional
        fields in a fixed order (timestamp, test id, ...) and a CRC32; the status is the low three
        bits of the flags. `stestr last --subunit` writes v2.

The last outcome of a test id is its result. A packet whose CRC does not match, or details that do
not end, ends the read with None: a report that cannot be read proves nothing.
"""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

from agentic_codemod.config import NEXT_STREAM_MAX_BYTES
from agentic_codemod.models import Tally
from agentic_codemod.tools.untrusted_file import read_regular

SIGNATURE = 0xB3
VERSION_2 = 0x2000
FLAG_TEST_ID = 0x0800
FLAG_ROUTE_CODE = 0x0400
FLAG_TIMESTAMP = 0x0200
FLAG_TAGS = 0x0080
FLAG_FILE_CONTENT = 0x0040
FLAG_MIME_TYPE = 0x0020
STATUS_MASK = 0x0007
# status -> tally bucket; 0 undefined, 1 exists and 2 inprogress are not results.
RESULTS = {3: "passed", 4: "failed", 5: "skipped", 6: "failed", 7: "passed"}  # 4 uxsuccess, 7 xfail
V1_RESULTS = {
    b"success": "passed",
    b"successful": "passed",
    b"failure": "failed",
    b"error": "errors",
    b"skip": "skipped",
    b"xfail": "passed",
    b"uxsuccess": "failed",
}
V1_OUTCOME = re.compile(
    rb"^(success|successful|failure|error|skip|xfail|uxsuccess):? (.+?)( \[( multipart)?)?\r?\n?$"
)


class _Bad(ValueError):
    pass


def outcomes(data: bytes) -> dict[str, str] | None:
    """Each test id's outcome: passed, failed (errors too) or skipped; None when it cannot be read."""
    results = _read_v2(data) if data[:1] == bytes([SIGNATURE]) else _read_v1(data)
    if results is None:
        return None
    return {test_id: "failed" if bucket == "errors" else bucket for test_id, bucket in results.items()}


def read_stream(data: bytes) -> tuple[Tally, list[str]] | None:
    """The tally and every test id with a result, in first-seen order; None when it cannot be read."""
    results = _read_v2(data) if data[:1] == bytes([SIGNATURE]) else _read_v1(data)
    if results is None:
        return None
    tally = Tally()
    for test_id, bucket in results.items():
        setattr(tally, bucket, getattr(tally, bucket) + 1)
        if bucket in ("failed", "errors"):
            tally.failing.append(test_id)
    return tally, list(results)


def _read_v1(data: bytes) -> dict[str, str] | None:
    results: dict[str, str] = {}
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end + 1
        match = V1_OUTCOME.match(data[pos:end])
        pos = end
        if match is None:
            continue  # test:, time:, tags:, progress: and any other output
        try:
            test_id = match.group(2).decode("utf-8")
        except UnicodeDecodeError:
            return None
        results.pop(test_id, None)
        results[test_id] = V1_RESULTS[match.group(1)]
        if match.group(3):
            pos = _skip_details(data, pos, multipart=bool(match.group(4)))
            if pos < 0:
                return None
    return results


def _skip_details(data: bytes, pos: int, *, multipart: bool) -> int:
    """The position after the details of an outcome (after the closing `]` line), or -1."""
    if not multipart:
        close = re.compile(rb"^\]\r?$", re.MULTILINE).search(data, pos)
        return -1 if close is None else close.end() + 1
    while True:
        line, pos = _line(data, pos)
        if line is None:
            return -1
        if line.rstrip(b"\r") == b"]":
            return pos
        _name, pos = _line(data, pos)  # the Content-Type line was `line`; then the part's name
        while True:
            size, pos = _line(data, pos)
            if size is None or pos < 0:
                return -1
            try:
                length = int(size.strip(), 16)
            except ValueError:
                return -1
            if length == 0:
                break
            pos += length
            if pos > len(data):
                return -1


def _line(data: bytes, pos: int) -> tuple[bytes | None, int]:
    if pos < 0 or pos >= len(data):
        return None, -1
    end = data.find(b"\n", pos)
    if end < 0:
        return None, -1
    return data[pos:end], end + 1


def _read_v2(data: bytes) -> dict[str, str] | None:
    status: dict[str, int] = {}
    pos = 0
    try:
        while pos < len(data):
            if data[pos] != SIGNATURE:
                raise _Bad(f"byte {pos} is not a packet signature")
            flags = struct.unpack_from(">H", data, pos + 1)[0]
            if flags & 0xF000 != VERSION_2:
                raise _Bad(f"packet at byte {pos} is not version 2")
            length, at = _number(data, pos + 3)
            end = pos + length
            if length < 8 or end > len(data):
                raise _Bad(f"packet at byte {pos} has a bad length")
            if zlib.crc32(data[pos : end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
                raise _Bad(f"packet at byte {pos} fails its CRC")
            test_id = _test_id(data, at, flags)
            if test_id is not None and flags & STATUS_MASK in RESULTS:
                status.pop(test_id, None)
                status[test_id] = flags & STATUS_MASK
            pos = end
    except (_Bad, struct.error, IndexError, UnicodeDecodeError):
        return None
    return {test_id: RESULTS[code] for test_id, code in status.items()}


def latest_stream(repo_dir: Path) -> Path | None:
    """The newest recorded run of a stestr file repository (`next-stream` holds the next number)."""
    text = read_regular(repo_dir / "next-stream", NEXT_STREAM_MAX_BYTES)  # the tests wrote it: no FIFO
    try:
        number = int((text or b"").decode("ascii").strip()) - 1
    except ValueError:
        return None
    path = repo_dir / str(number)
    return path if number >= 0 and path.is_file() else None


def _test_id(data: bytes, at: int, flags: int) -> str | None:
    if flags & FLAG_TIMESTAMP:
        _seconds, at = struct.unpack_from(">I", data, at)[0], at + 4
        _nanos, at = _number(data, at)
    if not flags & FLAG_TEST_ID:
        return None
    length, at = _number(data, at)
    return data[at : at + length].decode("utf-8")


def _number(data: bytes, at: int) -> tuple[int, int]:
    """A subunit number: the top two bits of the first byte say how many more bytes follow."""
    first = data[at]
    extra = first >> 6
    value = first & 0x3F
    for offset in range(1, extra + 1):
        value = (value << 8) | data[at + offset]
    return value, at + 1 + extra
