"""Repository data in the merge request's Markdown: inert wherever it lands.

    code(text)   one inline code span holding exactly `text` on one line, whatever backticks it holds
    prose(text)  `text` as plain words: nothing in it becomes a link, an image, HTML, a code span, a
                 strike-through or a GitLab reference (@user, @all, #1, !1, ~label, $1, %milestone)
    model_markdown(text)  a model's Markdown: its headings, lists and quotes stay, the rest is prose

File names, test commands, finding paths and reasons come from the repository (or a model) and go to
GitLab, whose renderer turns Markdown into links, images loaded from any host, HTML and mentions that
notify people. A value inside backticks is safe only while it cannot close the span: a name holding a
backtick would end it and put the rest into Markdown. `code` fences with one backtick more than the
longest run inside (CommonMark), padded with a space so a leading or trailing backtick stays content.
`prose` backslash-escapes every ASCII character that starts one of those (a backslash-escaped
punctuation character renders as itself, and GitLab reads no reference after it). Line breaks become a
visible `\\n` or `\\r`: an item stays on its line. A line starting with `/` (a quick action) is
publish's business (publish.gitlab.inert_text), applied to the whole text.
"""

from __future__ import annotations

import re

from agentic_codemod.visible import visible

_LONGEST_TICKS = re.compile(r"`+")
_URL = re.compile(r"((?:[a-z][a-z0-9+.-]*://|www\.)\S+)", re.IGNORECASE)
# A line GitLab may take for the start or end of front matter (---, +++, ;;;) or a setext underline.
_DELIMITER = re.compile(r"[ \t]*(?:-{3,}|\+{3,}|;{3,}|={3,})[ \t]*")
# What stays Markdown in a model's line: up to 3 blanks, then heading, list and quote markers.
_BLOCK_MARK = re.compile(r"(?:[ \t]{0,3}(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,9}[.)][ \t]|>[ \t]?))+")
# What turns words into something else: a code span, a link or image, HTML or an entity, a strike-through
# and GitLab's references (which notify people or add notes to other issues). Emphasis (* and _) only
# styles the words, and an item's line never starts a block: both stay as written.
_ACTIVE = re.compile(r"([\\`\[\]!<>&@#$%~])")


def code(text: str) -> str:
    one_line = _one_line(text)
    ticks = max((len(run) for run in _LONGEST_TICKS.findall(one_line)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if ticks or one_line[:1] in ("`", " ") or one_line[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def prose(text: str) -> str:
    return _inert(_one_line(text))


def model_markdown(text: str) -> str:
    """A model's Markdown (the scribe's description) kept to its block structure: each line's heading,
    list or quote marker stays, everything after it is `prose` (so a code span, link, image, HTML, an
    HTML comment that would swallow the tool's evidence below it, or a reference is shown as written)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out = []
    for line in lines:
        # `>>>` opens GitLab's multi-line quote: no marker kept, its `>` are escaped with the rest
        mark = None if line.lstrip().startswith(">>>") else _BLOCK_MARK.match(line)
        start = mark.end() if mark else 0
        rest = _inert(visible(line[start:]))
        if start == 0 and _DELIMITER.fullmatch(rest):  # front matter (at the top) or a setext underline
            rest = "\\" + rest.lstrip()
        out.append(line[:start] + rest)
    return "\n".join(out)


def _inert(text: str) -> str:
    """Escaped words, a URL as a code span (GitLab links a bare URL, and one naming an issue or a merge
    request becomes a reference that notes this one there)."""
    parts = _URL.split(text)
    return "".join(
        code(part) if index % 2 else _ACTIVE.sub(r"\\\1", part) for index, part in enumerate(parts)
    )


def _one_line(text: str) -> str:
    return visible(text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\r"))
