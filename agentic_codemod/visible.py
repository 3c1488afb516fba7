"""Text a person reads, with nothing in it hidden.

hidden(char) -> bool    the project's one definition of an invisible or direction-changing character:
                        control characters (Cc), format characters (Cf: bidi overrides and isolates,
                        zero-width characters, soft hyphen, byte-order mark, tag characters, ...) and
                        variation selectors other than the emoji one (they carry data, show nothing).
                        The APM context check refuses them (apm/integrity.py, which allows tab and
                        line breaks in a file's text).
visible(text) -> text   every hidden character but tab written as an escape (`\\x1c`, `\\u202e`), and
                        with them the line and paragraph separators (U+2028/9, which a browser and
                        str.splitlines() break at) and the Hangul fillers (blank letters: a name
                        nobody sees). Used where repository or model text is shown on one line: the
                        report's diff (report/diff.py), the merge request text (mr_text.py) and the
                        run summary.
"""

from __future__ import annotations

import re
import unicodedata

_EMOJI_PRESENTATION = "\ufe0f"
_SHOWN_AS_ESCAPES_TOO = frozenset("\u2028\u2029\u115f\u1160\u3164\uffa0")
_NOT_PRINTABLE_ASCII = re.compile(r"[^\t\x20-\x7e]")  # printable ASCII and tab are never hidden


def hidden(char: str) -> bool:
    if char == _EMOJI_PRESENTATION:
        return False
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True
    return unicodedata.category(char) in ("Cc", "Cf")


def visible(text: str) -> str:
    return _NOT_PRINTABLE_ASCII.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if not (hidden(char) or char in _SHOWN_AS_ESCAPES_TOO):
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
