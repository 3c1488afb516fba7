"""mr_text: repository data in the merge request's Markdown renders as itself (CommonMark, markdown-it)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from agentic_codemod.mr_text import code, prose

MD = MarkdownIt("commonmark")
NAMES = [
    "src/app.py",
    "a`b.py",
    "a``b```c.py",
    "`lead.py",
    "trail.py`",
    " spaced ",
    "n` @all ![t](http:evil.example/p.png) <b>x</b> `m.py",
    "two\nlines\r.py",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_code_span_holds_exactly_the_text(name: str) -> None:
    rendered = MD.renderInline(f"- {code(name)} changed")
    spans = re.findall(r"<code>(.*?)</code>", rendered)
    assert len(spans) == 1
    assert html.unescape(spans[0]) == name.replace("\n", "\\n").replace("\r", "\\r")
    assert rendered.endswith(" changed")


@pytest.mark.parametrize(
    "text",
    [
        "ping @all and @root about #12, !3, ~label, $4, %milestone",
        "![t](http://evil.example/p.png) and [click](http://evil.example) and <img src=x onerror=alert(1)>",
        "a `code` span, an &amp; entity, ~~struck~~, a \\ backslash and \\`escaped\\`",
        "two\nlines",
    ],
)
def test_prose_renders_as_the_words(text: str) -> None:
    rendered = MD.renderInline(prose(text))
    assert not re.search(r"<(a|img|code|s|del|b)\b", rendered)
    assert html.unescape(rendered) == text.replace("\n", "\\n")
    source = prose(text)
    assert not re.search(r"(?<!\\)[@#!~$%]", source)  # every reference character escaped for GitLab
