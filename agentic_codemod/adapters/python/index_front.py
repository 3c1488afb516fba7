"""A local front for the package indexes an install reaches, so that the repository's code that install
runs (its build backend, setup.py, an sdist's build) never holds the caller's credentials.

    needed(caller, packages) -> bool           whether to front: any http(s) source configured (the
                                               caller's pip configuration or the tool's own sources: a
                                               token may be in its user info, path or query), a client
                                               certificate, or a proxy with user info
    limits(settings, caller) -> Limits          the front's timeout (pip's own wins) and page limit
    front(caller, packages, limits) -> context  yields Fronted: the caller's configuration and the tool's
                                               sources as the install gets them, each source as
                                               http://127.0.0.1:PORT/TOKEN/s<i>, no password, proxy,
                                               client certificate or CA file left; and `unreachable`,
                                               what the front could not fetch (the run pauses on it, as
                                               on the installer's own)

The front (index_front_http.py, loaded only where one runs) is in the tool's process, outside the
sandbox, on loopback (the install's box shares the host's network where it reaches an index). It
forwards GET and HEAD under its random token only: to its sources (the default index one of them where
the install would ask it), under their paths (a dot segment, path parameter or escaped escape is
refused), and to what a source's page or a redirect on the way links to (BASE/o/SCHEME/HOST/PATH, learned
as it passes). Each source's credentials go under its path and to what its pages named on its own host
and scheme. It goes through the caller's proxy, presents the client certificate, checks TLS against the
caller's CA file (not for a trusted host), and rewrites every link of a source's page (PEP 503 HTML,
PEP 691 JSON) and every redirect to itself, so the file downloads come back through it too. Package
files pass through as they come.

What the repository's code can still do: fetch through the front, while the install runs, what the
installer could; not read the credentials or the key, nor use them after the run. Where no http(s)
source is configured and nothing is secret, the install talks to the default index itself (no front).
"""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agentic_codemod.adapters.python import pip_config
from agentic_codemod.config import PackageSources, Settings
from agentic_codemod.errors import InputError

URL_KEYS = ("index-url", "extra-index-url", "find-links")  # the caller's pip options holding sources
HANDLED_KEYS = ("proxy", "cert", "client-cert", "trusted-host")  # the front's, never the install's
DEFAULT_INDEX = "https://pypi.org/simple"
PAGE_TYPES = ("text/html", "application/vnd.pypi.simple", "application/json")
FORWARDED_REQUEST_HEADERS = (
    "accept",
    "accept-encoding",
    "user-agent",
    "if-none-match",
    "if-modified-since",
    "range",
)
PASSED_RAW = ("content-type", "content-length", "content-encoding", "content-range", "accept-ranges")
PASSED_ALWAYS = ("etag", "last-modified", "cache-control", "expires", "age", "vary")
PAGE_ENCODINGS = "gzip, deflate"  # what the front asks a source for: the codings it undoes itself, bounded
# An attribute holding a link: its name and `=`; its value is found by _attributes, in linear time (a regex
# for the whole attribute backtracked over the rest of the page at each unclosed one: helper-47).
LINK_ATTRIBUTE = re.compile(r"""\b(?:href|src)[ \t\n\r\f]*=[ \t\n\r\f]*""", re.IGNORECASE)
HREF_ATTRIBUTE = re.compile(r"""\bhref[ \t\n\r\f]*=[ \t\n\r\f]*""", re.IGNORECASE)
BASE_TAG = re.compile(r"<base\b", re.IGNORECASE)
UNQUOTED_VALUE = re.compile(r"[^ \t\n\r\f>]+")  # an unquoted attribute value as pip's HTMLParser reads it
CHUNK_BYTES = 1 << 16
PAGES_AT_ONCE = 4  # index pages read and rewritten at the same time (each up to the page limit)
MAX_LEARNED = 1_000_000  # links the front keeps from its sources' pages (an index's own, trusted)
ALIAS = re.compile(r"s[0-9]{1,4}", re.ASCII)  # a source's number in the front's paths
RETRIES = 1  # a dropped keep-alive connection tried once more
HOST = re.compile(r"[a-z0-9._\-]+(:[0-9]{1,5})?|\[[0-9a-f:.]+\](:[0-9]{1,5})?")


@dataclass(frozen=True)
class Limits:
    """How long the front waits for an upstream answer, and the largest index page it rewrites (a page
    past it is answered 502: not passed on with links to the upstream)."""

    timeout_s: float
    page_max_bytes: int


@dataclass
class Fronted:
    """What an install gets: `caller` (pip options) and `packages` (the tool's own sources)."""

    caller: dict[str, str]
    packages: PackageSources
    unreachable: list[str] = field(default_factory=list)


def needed(caller: Mapping[str, str], packages: PackageSources) -> bool:
    """A front where any http(s) package source is configured (a token may sit in its user info, its
    path or its query: Cloudsmith's `/TOKEN/...`), a client certificate is, or a proxy with user info;
    not for the default index alone."""
    return (
        bool(caller.get("client-cert", "").strip())
        or any(_http(url) for url in _source_urls(caller, packages))
        or pip_config.proxy_with_user_info(caller.get("proxy", ""))
    )


def limits(settings: Settings, caller: Mapping[str, str]) -> Limits:
    """The front's limits from the config; pip's own `timeout` wins where the caller set one."""
    try:
        timeout = float(caller.get("timeout", "")) or settings.python.index_front_timeout_s
    except ValueError:
        timeout = settings.python.index_front_timeout_s
    return Limits(timeout, settings.python.index_front_page_max_bytes)


@contextmanager
def front(caller: Mapping[str, str], packages: PackageSources, limits: Limits) -> Iterator[Fronted]:
    if not needed(caller, packages):
        yield Fronted(dict(caller), packages)
        return
    from agentic_codemod.adapters.python.index_front_http import FrontServer  # http.server: only here

    try:
        server = FrontServer(caller, packages, limits)
    except Exception as exc:  # ssl.SSLError (an OSError), a proxy URL httpx cannot read, ...
        said = str(exc)
        for secret in pip_config.credentials(caller):  # httpx quotes a proxy URL whole (helper-47)
            said = said.replace(secret, "***").replace(urllib.parse.unquote(secret), "***")
        raise InputError(
            f"the caller's pip configuration: its `cert`, `client-cert` or `proxy` cannot be used: {said}",
            hint="fix the option in pip's configuration (`pip config list` shows where it is set)",
        ) from exc
    thread = threading.Thread(target=server.serve_forever, name="index-front", daemon=True)
    thread.start()
    try:
        yield server.fronted
    finally:
        server.shutdown()
        server.server_close()
        server.close_clients()


def _front_sources(caller: Mapping[str, str], packages: PackageSources) -> list[str]:
    """The sources the front serves: the configured ones, and the default index where the install would
    ask it (no index-url anywhere, not --no-index: helper-44, PyPI was then refused)."""
    return [*_source_urls(caller, packages), *([DEFAULT_INDEX] if _asks_default(caller, packages) else [])]


def _asks_default(caller: Mapping[str, str], packages: PackageSources) -> bool:
    """No index URL anywhere and not --no-index: the installer would ask the default index."""
    return not caller.get("index-url", "").strip() and not packages.index_url and not packages.local_only


def _source_urls(caller: Mapping[str, str], packages: PackageSources) -> list[str]:
    urls = [url for key in URL_KEYS for url in caller.get(key, "").split() if "://" in url]
    return urls + [packages.index_url or ""] + [link for link in packages.local if "://" in link]


def _http(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme.lower() in ("http", "https")


def _plain(url: str) -> tuple[str, str, str]:
    """(scheme, host[:port] without user info, rest: path, query, fragment)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2].lower()
    rest = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, parts.fragment))
    return parts.scheme.lower(), netloc, rest


def _box_config(caller: Mapping[str, str], packages: PackageSources, url: Any) -> dict[str, str]:
    box = {key: value for key, value in caller.items() if key not in HANDLED_KEYS}
    for key in URL_KEYS:
        if key in box:
            box[key] = " ".join(url(item) if "://" in item else item for item in box[key].split())
    if _asks_default(caller, packages):
        box["index-url"] = url(DEFAULT_INDEX)  # the default index, reached with the client certificate
    return box


def _box_packages(packages: PackageSources, url: Any) -> PackageSources:
    index = url(packages.index_url) if packages.index_url else None
    local = [url(link) if "://" in link else link for link in packages.local]
    return packages.model_copy(update={"index_url": index, "local": local})


def _html_page(text: str, page_url: str, url: Any) -> str:
    """Every href and src of a PEP 503 page (quoted or not) resolved against the page (its first <base>
    with an href, as pip reads it) and fronted, in one pass over the page."""
    first = next(_base_hrefs(text), None)
    base = urllib.parse.urljoin(page_url, html.unescape(first[2])) if first else page_url
    out: list[str] = []
    done = 0
    for start, end, value in _attributes(text, LINK_ATTRIBUTE, 0, len(text)):
        link = url(urllib.parse.urljoin(base, html.unescape(value)))
        quote = text[start] if text[start] in "\"'" else '"'
        out += (text[done:start], quote, html.escape(link, quote=True), quote)
        done = end
    out.append(text[done:])
    return "".join(out)


def _base_hrefs(text: str) -> Iterator[tuple[int, int, str]]:
    """The href of each <base> tag (from `<base` to the next `>`), in order."""
    at = 0
    while (tag := BASE_TAG.search(text, at)) is not None:
        end = text.find(">", tag.end())
        if end < 0:  # no later tag closes either
            return
        yield from _attributes(text, HREF_ATTRIBUTE, tag.end(), end)
        at = end + 1


def _attributes(text: str, name: re.Pattern[str], start: int, stop: int) -> Iterator[tuple[int, int, str]]:
    """(where its value starts, where it ends, the value) of each attribute `name` matches in
    text[start:stop]: quoted with " or ', or unquoted. Linear: a quote never closed is looked for once."""
    unclosed: set[str] = set()
    at = start
    while (found := name.search(text, at, stop)) is not None:
        at = found.end()
        quote = text[at : at + 1]
        if quote in ('"', "'"):
            close = -1 if quote in unclosed else text.find(quote, at + 1, stop)
            if close < 0:
                unclosed.add(quote)
                continue
            yield at, close + 1, text[at + 1 : close]
            at = close + 1
        elif (bare := UNQUOTED_VALUE.match(text, at, stop)) is not None:
            yield at, bare.end(), bare.group()
            at = bare.end()


def _json_page(text: str, page_url: str, url: Any) -> str:
    """A PEP 691 page with each file's url resolved against the page and fronted (an answer of another
    shape passes with its urls as they are: only `files` entries name what an installer fetches)."""
    page = json.loads(text)  # ValueError, RecursionError: the front answers 502 (never the page as it came)
    files = page.get("files") if isinstance(page, dict) else None
    for entry in files if isinstance(files, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            entry["url"] = url(urllib.parse.urljoin(page_url, entry["url"]))
    return json.dumps(page)
