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
HREF = re.compile(r"""(\b(?:href|src)\s*=\s*)(["'])(.*?)\2""", re.IGNORECASE | re.DOTALL)
BASE_HREF = re.compile(r"""<base\b[^>]*\bhref\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)
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
        raise InputError(
            f"the caller's pip configuration: its `cert`, `client-cert` or `proxy` cannot be used: {exc}",
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
    """Every href and src of a PEP 503 page resolved against the page (its <base>, if any) and fronted."""
    base_tag = BASE_HREF.search(text)
    base = urllib.parse.urljoin(page_url, html.unescape(base_tag.group(2))) if base_tag else page_url

    def fronted(match: re.Match[str]) -> str:
        link = url(urllib.parse.urljoin(base, html.unescape(match.group(3))))
        return f"{match.group(1)}{match.group(2)}{html.escape(link, quote=True)}{match.group(2)}"

    return HREF.sub(fronted, text)


def _json_page(text: str, page_url: str, url: Any) -> str:
    """A PEP 691 page with each file's url resolved against the page and fronted (a body that is not
    such a page passes as it came)."""
    try:
        page = json.loads(text)
    except ValueError:
        return text
    files = page.get("files") if isinstance(page, dict) else None
    for entry in files if isinstance(files, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            entry["url"] = url(urllib.parse.urljoin(page_url, entry["url"]))
    return json.dumps(page)
