"""mr_text: repository data in the merge request's Markdown renders as itself (CommonMark, markdown-it)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from agentic_codemod.mr_text import code, model_markdown, prose

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
    assert not re.search(r"<(a|img|s|del|b)\b", rendered)
    spans = re.findall(r"<code>(.*?)</code>", rendered)
    assert all(span.startswith("http") for span in spans)  # only a URL becomes a code span
    assert html.unescape(re.sub(r"</?code>", "", rendered)) == text.replace("\n", "\\n")
    source = prose(text)
    assert not re.search(r"(?<!\\)[@#!~$%]", source)  # every reference character escaped for GitLab


def test_a_url_in_words_is_a_code_span_so_gitlab_links_nothing() -> None:
    rendered = MD.renderInline(prose("see https://gitlab.example/g/p/-/issues/1 and www.evil.example/x now"))
    assert re.findall(r"<code>(.*?)</code>", rendered) == [
        "https://gitlab.example/g/p/-/issues/1",
        "www.evil.example/x",
    ]
    assert rendered.startswith("see ") and rendered.endswith(" now")


@pytest.mark.parametrize("render", [code, prose])
def test_direction_and_invisible_characters_are_shown_as_escapes(render) -> None:
    shown = render("src/\u202eyp.kcah\u2066x\u200b\u00ad\ufeff.py")
    assert shown.count("\\u") + shown.count("\\x") == 5
    assert not any(c in shown for c in "\u202e\u2066\u200b\u00ad\ufeff")


def test_a_models_markdown_keeps_its_blocks_and_renders_nothing_else() -> None:
    text = "## Why\n- first ![](http://evil.example/p.png) @all\n1. <b>x</b>\n> `quoted`\n<!--\n"
    rendered = MD.render(model_markdown(text) + "\n\nEVIDENCE after it\n")
    assert "<h2>Why</h2>" in rendered and "<li>" in rendered and "<blockquote>" in rendered
    assert not re.search(r"<(img|a|b)\b", rendered) and "<!--" not in rendered.replace("&lt;!--", "")
    assert re.findall(r"<code>(.*?)</code>", rendered) == ["http://evil.example/p.png)"]  # the URL only
    assert "<p>EVIDENCE after it</p>" in rendered
