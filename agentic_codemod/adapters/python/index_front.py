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

from agentic_codemod.config import PackageSources
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
    urls = [*_source_urls(caller, packages), *caller.get("proxy", "").split()]
    return bool(caller.get("client-cert", "").strip()) or any(_userinfo(url) for url in urls)


@contextmanager
def front(caller: Mapping[str, str], packages: PackageSources, limits: Limits) -> Iterator[Fronted]:
    if not needed(caller, packages):
        yield Fronted(dict(caller), packages)
        return
    try:
        server = _Server(caller, packages, limits)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise InputError(
            f"the caller's pip configuration: its `cert` or `client-cert` file cannot be loaded: {exc}",
            hint="fix the file pip's cert / client-cert option names (`pip config list` shows where)",
        ) from exc
    thread = threading.Thread(target=server.serve_forever, name="index-front", daemon=True)
    thread.start()
    try:
        yield server.fronted
    finally:
        server.shutdown()
        server.server_close()
        server.close_clients()


def _source_urls(caller: Mapping[str, str], packages: PackageSources) -> list[str]:
    urls = [url for key in URL_KEYS for url in caller.get(key, "").split() if "://" in url]
    return urls + [packages.index_url or ""] + [link for link in packages.local if "://" in link]


def _userinfo(url: str) -> bool:
    return "://" in url and "@" in urllib.parse.urlsplit(url).netloc


def _plain(url: str) -> tuple[str, str, str]:
    """(scheme, host[:port] without user info, rest: path, query, fragment)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2].lower()
    rest = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, parts.fragment))
    return parts.scheme.lower(), netloc, rest


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
        # (scheme, host[:port]) -> (user, password): never sent to the host over another scheme (plain http)
        self.auth: dict[tuple[str, str], tuple[str, str]] = {}
        for url in _source_urls(caller, packages):
            parts = urllib.parse.urlsplit(url)
            if "@" in parts.netloc and parts.scheme in ("http", "https"):
                user = urllib.parse.unquote(parts.username or "")
                self.auth.setdefault(_plain(url)[:2], (user, urllib.parse.unquote(parts.password or "")))
        self.trusted = {host.lower() for host in caller.get("trusted-host", "").split()}
        proxy = caller.get("proxy", "").strip() or None
        options: dict[str, Any] = {"proxy": proxy, "timeout": limits.timeout_s, "trust_env": False}
        self.verified = httpx.Client(verify=tls[True], **options)
        self.unverified = httpx.Client(verify=tls[False], **options)
        self.fronted = Fronted(_box_config(caller, packages, self.url), _box_packages(packages, self.url))
        self.errors: tuple[type[BaseException], ...] = (httpx.TransportError,)

    def url(self, upstream: str) -> str:
        """`upstream` (absolute http or https) as the front's URL; anything else as it is."""
        scheme, netloc, rest = _plain(upstream)
        return f"{self.base}/{scheme}/{netloc}{rest}" if scheme in ("http", "https") and netloc else upstream

    def upstream(self, path: str) -> str | None:
        """The upstream URL a request path of the front names, None when it is not one of the front's."""
        prefix = f"/{self.token}/"
        if not path.startswith(prefix):
            return None
        scheme, _, rest = path[len(prefix) :].partition("/")
        quoted, slash, tail = rest.partition("/")
        netloc = urllib.parse.unquote(quoted).lower()  # pip quotes the port's colon
        if scheme not in ("http", "https") or not re.fullmatch(
            r"[a-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9a-f:.]+\](:[0-9]{1,5})?", netloc
        ):
            return None
        return f"{scheme}://{netloc}{slash}{tail}"

    def client_for(self, netloc: str) -> Any:
        host = netloc.rpartition(":")[0] if netloc.rpartition(":")[2].isdigit() else netloc
        return self.unverified if netloc in self.trusted or host in self.trusted else self.verified

    def close_clients(self) -> None:
        self.verified.close()
        self.unverified.close()


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
        target = server.upstream(self.path)
        if target is None:
            return self._answer(404, b"not a path of this front\n")
        scheme, netloc = urllib.parse.urlsplit(target)[:2]
        headers = {k: v for k in FORWARDED_REQUEST_HEADERS if (v := self.headers.get(k)) is not None}
        auth = server.auth.get((scheme, netloc))
        try:
            with server.client_for(netloc).stream(self.command, target, headers=headers, auth=auth) as up:
                kind = up.headers.get("content-type", "").lower()
                if up.status_code == 200 and kind.startswith(PAGE_TYPES):
                    return self._page(up, target, kind, body=body)
                self.send_response(up.status_code)
                self._headers(up, PASSED_RAW + PASSED_ALWAYS)
                if "content-length" not in up.headers:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if body:
                    for chunk in up.iter_raw(CHUNK_BYTES):
                        self.wfile.write(chunk)
        except server.errors as exc:
            origin = f"{scheme}://{netloc}"
            server.fronted.unreachable.append(f"could not fetch url {origin}: {type(exc).__name__}: {exc}")
            self._answer(502, b"upstream unreachable\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _page(self, up: Any, target: str, kind: str, *, body: bool) -> None:
        data = bytearray()
        for chunk in up.iter_bytes(CHUNK_BYTES):
            data += chunk
            if len(data) > self.server.limits.page_max_bytes:
                return self._answer(
                    502, b"index page past the front's limit (python.index_front_page_max_bytes)\n"
                )
        text = bytes(data).decode(up.encoding or "utf-8", "replace")
        page = (_json_page if "json" in kind else _html_page)(text, target, self.server.url).encode()
        self.send_response(200)
        self.send_header("Content-Type", up.headers["content-type"])
        self.send_header("Content-Length", str(len(page)))
        self._headers(up, PASSED_ALWAYS)
        self.end_headers()
        if body:
            self.wfile.write(page)

    def _headers(self, up: Any, names: tuple[str, ...]) -> None:
        for name in names:
            if name in up.headers:
                self.send_header(name, up.headers[name])
        location = up.headers.get("location")
        if location is not None:
            self.send_header("Location", self.server.url(urllib.parse.urljoin(str(up.url), location)))

    def _answer(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)


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
