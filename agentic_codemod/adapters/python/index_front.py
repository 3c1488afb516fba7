"""A local front for the package indexes an install reaches, so that the repository's code that install
runs (its build backend, setup.py, an sdist's build) never holds the caller's credentials.

    needed(caller, packages) -> bool           whether the install would otherwise be handed a secret:
                                               user info in an index, find-links or proxy URL (the
                                               caller's pip configuration or the tool's own sources), or
                                               a client certificate
    front(caller, packages, limits) -> context  yields Fronted: the caller's configuration and the tool's
                                               sources as the install gets them, every URL pointing at
                                               the front (http://127.0.0.1:PORT/TOKEN/SCHEME/HOST/PATH),
                                               no password, proxy, client certificate or CA file left;
                                               and `unreachable`, the upstream connections that failed
                                               (the run pauses on them, as on the installer's own)

The front runs in the tool's process, outside the sandbox, on loopback (the install's box shares the
host's network where it reaches an index). It forwards GET and HEAD under its random token only, adds
the credentials to a request for the host and scheme they were configured for (a password for an https
index never goes out over plain http), goes through the caller's proxy, presents the client
certificate, checks TLS against the caller's CA file (not for a trusted host), and rewrites every link
of an index page (PEP 503 HTML, PEP 691 JSON) and every redirect to the front, so the file downloads
come back through it too. Package files pass through as they come.

What the repository's code can still do: fetch from those indexes through the front while the install
runs (as it could with the credentials), not read the credentials or the key, nor use them after the run.
Where nothing is secret the install talks to the indexes itself, as before (no front is started).
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import re
import secrets
import ssl
import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    proxies = [url if "://" in url else f"http://{url}" for url in caller.get("proxy", "").split()]
    return (
        bool(caller.get("client-cert", "").strip())
        or any(_http(url) for url in _source_urls(caller, packages))
        or any("@" in urllib.parse.urlsplit(url).netloc for url in proxies)
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
    try:
        server = _Server(caller, packages, limits)
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
    default = not caller.get("index-url", "").strip() and not packages.index_url and not packages.local_only
    return [*_source_urls(caller, packages), *([DEFAULT_INDEX] if default else [])]


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


@dataclass(frozen=True)
class _Source:
    """A configured package source: the front shows it as `BASE/s<i>` (its path and query, where a token
    may sit, never leave the front)."""

    scheme: str
    netloc: str
    path: str  # without a trailing slash; "" for the host's root
    query: str
    auth: tuple[str, str] | None  # its own user info: two sources on one host keep theirs (helper-44)

    def holds(self, scheme: str, netloc: str, path: str) -> bool:
        return (scheme, netloc) == (self.scheme, self.netloc) and (
            not self.path or path == self.path or path.startswith(self.path + "/")
        )


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, caller: Mapping[str, str], packages: PackageSources, limits: Limits) -> None:
        import httpx  # only where a front runs

        ca, client = caller.get("cert", "").strip(), caller.get("client-cert", "").strip()
        tls = {check: _tls(ca, client, check=check) for check in (True, False)}  # before the socket opens
        super().__init__(("127.0.0.1", 0), _Handler)

        self.token = secrets.token_urlsafe(18)
        self.base = f"http://127.0.0.1:{self.server_address[1]}/{self.token}"
        self.limits = limits
        self.sources: list[_Source] = []
        # What the front fetches: a configured source (under its path), and what a page of one, or a
        # redirect on the way to it or to a file it named, links to (learned as they pass), each with the
        # credentials of the source that named it where it is on that source's host (and scheme: never
        # over plain http for an https source), else none. A page of another host (a README on pypi.org)
        # teaches nothing (helper-41: a token was usable for the host's whole API; helper-43: a README's
        # link got it).
        self.learned: dict[str, tuple[str, str] | None] = {}
        self.origins: set[tuple[str, str]] = set()
        self.lock = threading.Lock()
        self.pages = threading.BoundedSemaphore(PAGES_AT_ONCE)
        for url in _front_sources(caller, packages):
            parts = urllib.parse.urlsplit(url)
            if parts.scheme.lower() not in ("http", "https"):
                continue
            scheme, netloc, _ = _plain(url)
            user, password = (
                urllib.parse.unquote(parts.username or ""),
                urllib.parse.unquote(parts.password or ""),
            )
            auth = (user, password) if "@" in parts.netloc else None
            self.sources.append(_Source(scheme, netloc, parts.path.rstrip("/"), parts.query, auth))
        self.trusted = {host.lower() for host in caller.get("trusted-host", "").split()}
        proxy = caller.get("proxy", "").strip() or None
        options: dict[str, Any] = {"proxy": proxy, "timeout": limits.timeout_s, "trust_env": False}
        self.verified = httpx.Client(verify=tls[True], **options)
        self.unverified = httpx.Client(verify=tls[False], **options)
        self.fronted = Fronted(_box_config(caller, packages, self.url), _box_packages(packages, self.url))
        self.errors: tuple[type[BaseException], ...] = (httpx.TransportError,)
        self.retried: tuple[type[BaseException], ...] = (httpx.RemoteProtocolError,)

    def url(self, upstream: str) -> str:
        """`upstream` (absolute http or https) as the front's URL: a configured source's alias, else
        BASE/o/SCHEME/HOST/PATH; anything else as it is."""
        parts = urllib.parse.urlsplit(upstream)
        scheme, netloc = parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower()
        if scheme not in ("http", "https") or not netloc:
            return upstream
        path, fragment = parts.path or "/", f"#{parts.fragment}" if parts.fragment else ""
        for i, source in enumerate(self.sources):
            if source.holds(scheme, netloc, path):
                query = f"?{parts.query}" if parts.query and parts.query != source.query else ""
                return f"{self.base}/s{i}{path[len(source.path) :]}{query}{fragment}"
        rest = urllib.parse.urlunsplit(("", "", path, parts.query, parts.fragment))
        return f"{self.base}/o/{scheme}/{netloc}{rest}"

    def learn(self, upstream: str, teacher: str, auth: tuple[str, str] | None) -> str:
        """url(upstream), for a link of a source's page or a redirect the front passed on; `teacher`: the
        URL that named it, fetched with `auth`, which the link gets only on the same scheme and host."""
        scheme, netloc, rest = _plain(upstream)
        if scheme in ("http", "https") and netloc:
            same = _plain(teacher)[:2] == (scheme, netloc)
            with self.lock:
                if len(self.learned) < MAX_LEARNED:
                    self.origins.add((scheme, netloc))
                    self.learned.setdefault(_same(scheme, netloc, rest), auth if same else None)
        return self.url(upstream)

    def upstream(self, path: str) -> tuple[str, _Source | None] | None:
        """(the upstream URL a request path of the front names, its configured source or None), or None
        when the path is not one the front serves: a source's alias, or a learned origin."""
        prefix = f"/{self.token}/"
        if not path.startswith(prefix):
            return None
        kind, _, rest = path[len(prefix) :].partition("/")
        if ALIAS.fullmatch(kind) and int(kind[1:]) < len(self.sources):
            source = self.sources[int(kind[1:])]
            tail, _, query = ("/" + rest if rest or path.endswith("/") else "").partition("?")
            if _odd(tail):  # httpx would fold `..` away: the request would leave the source (helper-44)
                return None
            query = "&".join(q for q in (source.query, query) if q)
            return f"{source.scheme}://{source.netloc}{source.path}{tail}" + (
                f"?{query}" if query else ""
            ), source
        scheme, _, rest = rest.partition("/")
        quoted, slash, tail = rest.partition("/")
        netloc = urllib.parse.unquote(quoted).lower()  # pip quotes the port's colon
        if kind != "o" or scheme not in ("http", "https") or not HOST.fullmatch(netloc):
            return None
        with self.lock:
            if (scheme, netloc) not in self.origins:
                return None
        return f"{scheme}://{netloc}{slash}{tail}", None

    def credentials(self, target: str, source: _Source | None) -> tuple[bool, tuple[str, str] | None]:
        """(whether the target is a source's or one a source named, so what its answer links to may be
        learned; the credentials it goes with): a source's own under its path (upstream refused odd
        paths), or those a learned URL (or its PEP 658 metadata) was given."""
        if source is not None:
            return True, source.auth
        scheme, netloc, rest = _plain(target)
        asked = _same(scheme, netloc, rest)
        with self.lock:
            for key in (asked, asked.removesuffix(".metadata")):
                if key in self.learned:
                    return True, self.learned[key]
        return False, None

    def client_for(self, netloc: str) -> Any:
        host = netloc.rpartition(":")[0] if netloc.rpartition(":")[2].isdigit() else netloc
        return self.unverified if netloc in self.trusted or host in self.trusted else self.verified

    def close_clients(self) -> None:
        self.verified.close()
        self.unverified.close()


def _odd(tail: str) -> bool:
    """A path a server could read as another one: a dot segment, a path parameter (`..;` is `..` to
    Tomcat), an escaped escape or a backslash, once unquoted."""
    path = urllib.parse.unquote(tail)
    return ";" in path or "%" in path or "\\" in path or any(seg in (".", "..") for seg in path.split("/"))


def _same(scheme: str, netloc: str, rest: str) -> str:
    """A URL as one string however its path is quoted (an installer may quote a name's `+` or not), no
    fragment: what a page named and what the box asks for compare equal."""
    path, _, query = rest.partition("#")[0].partition("?")
    return f"{scheme}://{netloc}{urllib.parse.unquote(path)}" + (f"?{query}" if query else "")


def _tls(ca: str, client: str, *, check: bool) -> ssl.SSLContext:
    """pip's TLS: the caller's CA file, else certifi's (httpx's default); the client certificate (one
    PEM file, key included); no check at all for a trusted host."""
    import httpx

    context = (
        ssl.create_default_context(cafile=str(Path(ca).expanduser())) if ca else httpx.create_ssl_context()
    )
    if not check:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if client:
        context.load_cert_chain(str(Path(client).expanduser()))
    return context


def _box_config(caller: Mapping[str, str], packages: PackageSources, url: Any) -> dict[str, str]:
    box = {key: value for key, value in caller.items() if key not in HANDLED_KEYS}
    for key in URL_KEYS:
        if key in box:
            box[key] = " ".join(url(item) if "://" in item else item for item in box[key].split())
    if not packages.index_url and not packages.local_only and not box.get("index-url", "").strip():
        box["index-url"] = url(DEFAULT_INDEX)  # the default index, reached with the client certificate
    return box


def _box_packages(packages: PackageSources, url: Any) -> PackageSources:
    index = url(packages.index_url) if packages.index_url else None
    local = [url(link) if "://" in link else link for link in packages.local]
    return packages.model_copy(update={"index_url": index, "local": local})


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._forward(body=True)

    def do_HEAD(self) -> None:
        self._forward(body=False)

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _forward(self, *, body: bool) -> None:
        server = self.server
        found = server.upstream(self.path)
        if found is None:
            return self._answer(404, b"not a package source of this install, nor linked from one\n")
        target, source = found
        scheme, netloc, _ = _plain(target)
        headers = {k: v for k in FORWARDED_REQUEST_HEADERS if (v := self.headers.get(k)) is not None}
        known, auth = server.credentials(target, source)  # known: its answer's links may be learned
        try:
            up = self._send_upstream(target, netloc, headers, auth)
            try:
                kind = up.headers.get("content-type", "").lower()
                if source is not None and up.status_code == 200 and kind.startswith(PAGE_TYPES):
                    return self._page(up, target, kind, auth, body=body)
                self.send_response(up.status_code)
                self._headers(up, PASSED_RAW + PASSED_ALWAYS, (target, auth) if known else None)
                if "content-length" not in up.headers:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if body:
                    for chunk in up.iter_raw(CHUNK_BYTES):
                        self.wfile.write(chunk)
            finally:
                up.close()
        except server.errors as exc:
            origin = f"{scheme}://{netloc}"
            server.fronted.unreachable.append(f"could not fetch url {origin}: {type(exc).__name__}: {exc}")
            self._answer(502, b"upstream unreachable\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_upstream(self, target: str, netloc: str, headers: dict[str, str], auth: Any) -> Any:
        """The upstream's answer, streamed; a connection the server dropped before answering (a stale
        keep-alive: RemoteProtocolError) is tried once more, as an installer would."""
        client = self.server.client_for(netloc)
        for attempt in range(RETRIES + 1):
            try:
                return client.send(
                    client.build_request(self.command, target, headers=headers), auth=auth, stream=True
                )
            except self.server.retried:
                if attempt == RETRIES:
                    raise
        raise AssertionError("unreachable")

    def _page(self, up: Any, target: str, kind: str, auth: Any, *, body: bool) -> None:
        with self.server.pages:  # at most PAGES_AT_ONCE pages held in memory
            data = bytearray()
            for chunk in up.iter_bytes(CHUNK_BYTES):
                data += chunk
                if len(data) > self.server.limits.page_max_bytes:
                    why = f"an index page past python.index_front_page_max_bytes: {_plain(target)[1]}"
                    self.server.fronted.unreachable.append(why)
                    return self._answer(502, b"index page past python.index_front_page_max_bytes\n")
            text = bytes(data).decode(up.encoding or "utf-8", "replace")
            del data
            learn = functools.partial(_learn_from, self.server, target, auth)
            page = (_json_page if "json" in kind else _html_page)(text, target, learn).encode()
        self.send_response(200)
        self.send_header("Content-Type", up.headers["content-type"])
        self.send_header("Content-Length", str(len(page)))
        self._headers(up, PASSED_ALWAYS, (target, auth))
        self.end_headers()
        if body:
            self.wfile.write(page)

    def _headers(self, up: Any, names: tuple[str, ...], teacher: tuple[str, Any] | None) -> None:
        """`teacher`: (the URL asked, its credentials) where a redirect it answers is learned."""
        for name in names:
            if name in up.headers:
                self.send_header(name, up.headers[name])
        location = up.headers.get("location")
        if location is not None:
            absolute = urllib.parse.urljoin(str(up.url), location)
            fronted = self.server.learn(absolute, *teacher) if teacher else self.server.url(absolute)
            self.send_header("Location", fronted)

    def _answer(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)


def _learn_from(server: _Server, teacher: str, auth: Any, upstream: str) -> str:
    return server.learn(upstream, teacher, auth)


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
