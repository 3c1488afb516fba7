"""Text a person reads, with nothing in it hidden: visible(text) -> text.

Control characters (other than tab), the characters a browser or str.splitlines() takes for a line break
(CR, VT, FF, \\x1c-\\x1e, U+0085, U+2028/9) and the invisible format characters (bidi overrides and
isolates that reorder what is shown, zero-width characters, soft hyphen, byte-order mark, tag
characters) are written as escapes: `\\x1c`, `\\u202e`. Used where repository or model text is shown: the
report's diff (report/diff.py) and the merge request text (mr_text.py).
"""

from __future__ import annotations

import re

# C0 but tab, DEL, C1 (U+0085 among them), and Unicode's Cf characters that change what is shown
# (the ranges of the Cf category that occur in text: soft hyphen, Arabic letter mark, Mongolian vowel
# separator, zero-width and direction marks, bidi embeddings/overrides/isolates, invisible operators,
# byte-order mark, interlinear annotation, tag characters) plus the line and paragraph separators, the
# Hangul fillers (blank letters: an identifier nobody sees) and the variation selectors but the emoji one
# (they carry data and show nothing).
_HIDDEN = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0e\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def visible(text: str) -> str:
    return _HIDDEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
