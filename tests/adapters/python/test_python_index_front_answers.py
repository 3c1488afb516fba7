"""What the index front passes on of an index's answers (helper-47's review): the repository's code that
runs while an install reaches a private index knows the front's URL and can send it any GET with the
installer's headers; the index's pages are read in the tool's own process. Neither gets the source's
secrets out of it, holds the tool, nor takes its memory; an answer the front cannot read is a 502 the run
pauses on, never a dropped connection."""

from __future__ import annotations

import gzip
import http.server
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from agentic_codemod.adapters.python import index_front
from agentic_codemod.adapters.python.index_front_http import _decoded
from agentic_codemod.config import PackageSources
from agentic_codemod.errors import InputError

LIMITS = index_front.Limits(10.0, 1 << 20)
WHEEL = "acme_sdk-1.4.0-py3-none-any.whl"
Answer = tuple[int, dict[str, str], bytes]
Route = Callable[[http.server.BaseHTTPRequestHandler], Answer]


class _Index(http.server.BaseHTTPRequestHandler):
    """An index answering `routes` {path: function(request) -> (status, headers, body)}; `asked`: the
    request lines and headers it saw."""

    protocol_version = "HTTP/1.1"
    routes: dict[str, Route] = {}
    asked: list[tuple[str, dict[str, str]]] = []

    def do_GET(self) -> None:
        self.asked.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        route = self.routes.get(self.path.split("?")[0])
        status, headers, body = route(self) if route else (404, {"Content-Type": "text/plain"}, b"no")
        self.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def index(routes: dict[str, Route]) -> Iterator[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """(the index's origin, what it was asked)."""
    asked: list[tuple[str, dict[str, str]]] = []
    handler = type("Index", (_Index,), {"routes": routes, "asked": asked})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def answer(status: int, headers: dict[str, str], body: bytes) -> Route:
    return lambda _request: (status, headers, body)


@contextmanager
def fronted(index_url: str, **config: str) -> Iterator[tuple[str, index_front.Fronted]]:
    """(the front's base URL, what the install gets) for a caller whose pip reads `index_url` and `config`."""
    with index_front.front({"index-url": index_url, **config}, PackageSources(), LIMITS) as box:
        yield box.caller["index-url"].rstrip("/").removesuffix("/s0"), box


def test_a_part_of_a_sources_page_never_passes_unrewritten() -> None:
    """A static index whose secret is its path (Cloudsmith's `/TOKEN/...`), its pages linking files by
    absolute URL under it. `Range: bytes=0-` got 206 from it, which the front passed as it came: every link
    with the token (helper-47)."""
    token = "T0KEN-c0ffee-path-secret"

    def ranged(request: http.server.BaseHTTPRequestHandler) -> Answer:
        page = f'<a href="{origin}/{token}/simple/acme-sdk/{WHEEL}">w</a>\n'.encode()
        if request.headers.get("Range", "").startswith("bytes="):  # as nginx, S3 and GCS answer
            start = int(request.headers["Range"][6:].rstrip("-"))
            rng = f"bytes {start}-{len(page) - 1}/{len(page)}"
            return 206, {"Content-Type": "text/html", "Content-Range": rng}, page[start:]
        return 200, {"Content-Type": "text/html"}, page

    with (
        index({f"/{token}/simple/acme-sdk/": ranged}) as (origin, asked),
        fronted(f"{origin}/{token}/simple/") as (front, box),
    ):
        whole = httpx.get(f"{front}/s0/acme-sdk/")
        assert whole.status_code == 200 and f"{front}/s0/acme-sdk/{WHEEL}" in whole.text
        assert token not in whole.text
        part = httpx.get(f"{front}/s0/acme-sdk/", headers={"Range": "bytes=0-"})
        assert part.status_code == 502 and token not in part.text
        assert box.unreachable == ["an index page answered 206: " + origin.removeprefix("http://")]
        parts = httpx.get(f"{front}/s0/acme-sdk/", headers={"Range": "bytes=0-9,10-"})  # multipart/byteranges
        assert parts.status_code == 200 and token not in parts.text  # asked whole: a page, rewritten
    assert "range" not in asked[-1][1]


def test_a_page_is_rewritten_in_one_pass_whatever_its_unclosed_tags() -> None:
    """`<base\\b[^>]*\\bhref...` backtracked over the rest of the page at every `<base` with no `>` after
    it: 150 KB took 38 s with the interpreter lock held, so every thread of the tool stood still
    (helper-47). Not a timing test: a backtracking rewrite would not finish this test run (3 MB of it)."""
    url = lambda link: f"F[{link}]"  # noqa: E731
    for hostile in ("<base ", "<base target=x ", "<base\ttarget\t=\t"):  # no `>`, no link: nothing to rewrite
        page = hostile * 300_000 + "\n"
        assert index_front._html_page(page, "https://idx.example/simple/a/", url) == page
    page = '<a href="x' + "<a href=x " * 300_000  # a quote never closed, then 300,000 links
    assert index_front._html_page(page, "https://idx.example/simple/a/", url).count("F[") == 300_000
    # what pip reads as links is what the front rewrites: unquoted values too, the first <base> with an href
    page = "<base target=x><base href=https://cdn.example/x/><a href=d-1.whl#sha256=ab>d</a><a src='e'>"
    out = index_front._html_page(page, "https://idx.example/simple/d/", url)
    assert out == (
        '<base target=x><base href="F[https://cdn.example/x/]">'
        '<a href="F[https://cdn.example/x/d-1.whl#sha256=ab]">d</a>'
        "<a src='F[https://cdn.example/x/e]'>"
    )


def test_a_compressed_page_is_counted_as_it_is_decoded() -> None:
    """httpx undid every layer of a network read at once, before the page limit counted a byte: 980 bytes of
    `gzip, gzip` were 512 MiB in the tool's process (helper-47). Now one gzip or deflate layer is undone
    a bounded step at a time; more layers, or codings the front did not ask for, are refused."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(64)) + packer.flush()  # 64 MiB
    chunks = [bomb[i : i + 65_536] for i in range(0, len(bomb), 65_536)]
    assert _decoded(iter(chunks), "gzip", 1 << 20) is None  # past the limit: never decoded whole
    with pytest.raises(ValueError, match="content coding"):
        _decoded(iter([gzip.compress(bomb)]), "gzip, gzip", 1 << 20)
    with pytest.raises(ValueError, match="content coding"):
        _decoded(iter([b"x"]), "br", 1 << 20)
    page = b'<a href="a-1.whl">a</a>' * 100
    assert _decoded(iter([gzip.compress(page)]), "gzip", 1 << 20) == page
    assert _decoded(iter([zlib.compress(page)]), "deflate", 1 << 20) == page  # as the standard says
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    assert _decoded(iter([raw.compress(page) + raw.flush()]), "deflate", 1 << 20) == page  # as some send it
    assert _decoded(iter([page[:10], page[10:]]), "identity", 1 << 20) == page
    assert _decoded(iter([page]), "", len(page) - 1) is None
    with pytest.raises(ValueError, match="ends early"):
        _decoded(iter([gzip.compress(page)[:-12]]), "gzip", 1 << 20)


@pytest.mark.parametrize(
    ("kind", "headers", "body"),
    [
        ("application/vnd.pypi.simple.v1+json", {}, b"[" * 200_000),  # json's RecursionError
        ("application/vnd.pypi.simple.v1+json", {}, b"<html>not json</html>"),
        ("text/html", {"Content-Encoding": "gzip"}, b"\x1f\x8b\x08\x00garbage-not-gzip"),
        ("text/html", {"Content-Encoding": "gzip, gzip"}, gzip.compress(gzip.compress(b"<a>" * 1000))),
        ("text/html", {"Content-Encoding": "gzip"}, gzip.compress(b"\0" * (2 << 20))),  # past the limit
    ],
    ids=["deeply-nested-json", "json-type-not-json", "broken-gzip", "two-layers", "past-the-limit"],
)
def test_an_index_page_the_front_cannot_read_is_a_502_the_run_pauses_on(
    kind: str, headers: dict[str, str], body: bytes
) -> None:
    """Before: json's RecursionError and httpx's DecodingError left the handler, which dropped the line
    with nothing recorded (the installer saw a reset, the run failed on no named cause), and a JSON-typed
    body that was not JSON passed as it came (helper-47)."""
    routes = {"/simple/x/": answer(200, {"Content-Type": kind, **headers}, body)}
    with index(routes) as (origin, asked), fronted(f"{origin}/simple/") as (front, box):
        assert httpx.get(f"{front}/s0/x/", timeout=30).status_code == 502
        assert len(box.unreachable) == 1 and "127.0.0.1" in box.unreachable[0]
    assert asked[0][1]["accept-encoding"] == index_front.PAGE_ENCODINGS  # what the front can undo


def test_a_rewritten_page_says_the_charset_it_is_sent_in() -> None:
    """The front decodes a page by its charset and sends it as UTF-8: it said the upstream's charset
    (utf-16 here), so the installer read no link at all (helper-47)."""
    page = f'<a href="/packages/{WHEEL}">w</a>\n'.encode("utf-16")
    headers = {"Content-Type": "text/html; charset=utf-16"}
    with (
        index({"/simple/x/": answer(200, headers, page)}) as (origin, _),
        fronted(f"{origin}/simple/") as (front, _),
    ):
        got = httpx.get(f"{front}/s0/x/")
    assert got.headers["content-type"] == "text/html; charset=utf-8"
    assert f'href="{front}/o/http/{origin.removeprefix("http://")}/packages/{WHEEL}"' in got.text


def test_a_proxy_written_without_a_scheme_is_used_with_its_password() -> None:
    """pip takes `user:pass@host:port`; httpx refused it, and the front's InputError quoted it, password
    and all (helper-47). The front now goes through it, sending the password to the proxy only."""
    page = f'<a href="{WHEEL}">w</a>'.encode()
    routes = {"http://pypi.corp.example/simple/x/": answer(200, {"Content-Type": "text/html"}, page)}
    with index(routes) as (proxy, asked):
        proxied = fronted(
            "http://pypi.corp.example/simple", proxy=f"user:pa55word@{proxy.removeprefix('http://')}"
        )
        with proxied as (front, box):
            got = httpx.get(f"{front}/s0/x/")
            assert got.status_code == 200 and "pa55word" not in got.text
            assert "pa55word" not in str(box.caller)
    path, headers = asked[0]
    assert path == "http://pypi.corp.example/simple/x/"  # asked of the proxy
    assert headers["proxy-authorization"] == "Basic dXNlcjpwYTU1d29yZA=="  # user:pa55word


def test_a_proxy_the_front_cannot_use_is_named_without_its_password() -> None:
    config = {"index-url": "https://pypi.corp.example/simple", "proxy": "gopher://user:pa55word@proxy:1"}
    with (
        pytest.raises(InputError, match="proxy") as refused,
        index_front.front(config, PackageSources(), LIMITS),
    ):
        pass
    assert "pa55word" not in str(refused.value)
