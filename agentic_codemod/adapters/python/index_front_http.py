"""The index front's HTTP side (index_front.py says what it does): the server, its sources and what it
learned, and the request handler. Imported only where a front runs (http.server loads http.client)."""

from __future__ import annotations

import functools
import http.server
import secrets
import ssl
import threading
import urllib.parse
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_codemod.adapters.python.index_front import (
    ALIAS,
    CHUNK_BYTES,
    FORWARDED_REQUEST_HEADERS,
    HOST,
    MAX_LEARNED,
    PAGE_ENCODINGS,
    PAGE_TYPES,
    PAGES_AT_ONCE,
    PASSED_ALWAYS,
    PASSED_RAW,
    RETRIES,
    Fronted,
    Limits,
    _box_config,
    _box_packages,
    _front_sources,
    _html_page,
    _json_page,
    _plain,
)
from agentic_codemod.config import PackageSources


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


class FrontServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, caller: Mapping[str, str], packages: PackageSources, limits: Limits) -> None:
        ca, client = caller.get("cert", "").strip(), caller.get("client-cert", "").strip()
        tls = {check: _tls(ca, client, check=check) for check in (True, False)}  # before the socket opens
        super().__init__(("127.0.0.1", 0), _Handler)
        try:
            self._setup(caller, packages, limits, tls)
        except BaseException:  # a proxy httpx cannot use: the socket is closed with the error
            self.server_close()
            raise

    def _setup(
        self,
        caller: Mapping[str, str],
        packages: PackageSources,
        limits: Limits,
        tls: dict[bool, ssl.SSLContext],
    ) -> None:
        import httpx  # only where a front runs

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
        if proxy and "://" not in proxy:  # pip takes `user:pass@host:port`, httpx wants a scheme
            proxy = f"http://{proxy}"
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


class _Handler(http.server.BaseHTTPRequestHandler):
    server: FrontServer
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
        if (
            not known
        ):  # an origin's other paths: its client certificate or proxy is no key to them (helper-47)
            return self._answer(404, b"not a package source of this install, nor linked from one\n")
        if source is not None:  # what the front can undo itself (a page is read here, bounded)
            headers["accept-encoding"] = PAGE_ENCODINGS
            if "," in headers.get("range", ""):  # one range or none: a multipart answer hides its type
                del headers["range"]
        try:
            up = self._send_upstream(target, netloc, headers, auth)
            try:
                kind = up.headers.get("content-type", "").lower()
                if source is not None and kind.startswith("multipart/"):  # helper-47: its parts are pages
                    return self._refuse(f"an index answered {kind.partition(';')[0]}: {netloc}")
                if source is not None and kind.startswith(PAGE_TYPES) and 200 <= up.status_code < 300:
                    if up.status_code != 200:  # a part of a page (Range) would pass its links as they are
                        return self._refuse(f"an index page answered {up.status_code}: {netloc}")
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
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except server.errors as exc:
            origin = f"{scheme}://{netloc}"
            server.fronted.unreachable.append(f"could not fetch url {origin}: {type(exc).__name__}: {exc}")
            self._answer(502, b"upstream unreachable\n")
        except (
            Exception
        ) as exc:  # an answer the front cannot read (httpx's, json's, ...): never a dropped line
            self._refuse(f"an answer of {scheme}://{netloc} the front cannot read: {type(exc).__name__}")

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
            limit = self.server.limits.page_max_bytes
            data = _decoded(up.iter_raw(CHUNK_BYTES), up.headers.get("content-encoding", ""), limit)
            if data is None:
                return self._refuse(
                    f"an index page past python.index_front_page_max_bytes: {_plain(target)[1]}"
                )
            text = data.decode(up.encoding or "utf-8", "replace")
            del data
            learn = functools.partial(_learn_from, self.server, target, auth)
            page = (_json_page if "json" in kind else _html_page)(text, target, learn).encode()
        self.send_response(200)  # sent as UTF-8, and labelled so (the upstream's charset label is its own)
        self.send_header("Content-Type", kind.partition(";")[0].strip() + "; charset=utf-8")
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

    def _refuse(self, why: str) -> None:
        """502, and `why` where the run pauses on what the front could not fetch."""
        self.server.fronted.unreachable.append(why)
        self._answer(502, b"the index's answer cannot be passed on\n")

    def _answer(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)


def _decoded(raw: Iterator[bytes], encoding: str, limit: int) -> bytes | None:
    """A page's bytes with its content coding undone, None past `limit` bytes: counted as they are
    decoded, never more than the limit in memory (httpx undoes every layer of a read at once: 1 KB of
    `gzip, gzip` was 512 MiB before the count, helper-47). One gzip or deflate layer, or none; any other
    coding raises ValueError (the front asks for gzip or deflate only)."""
    codings = [c for c in (c.strip().lower() for c in encoding.split(",")) if c and c != "identity"]
    if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
        raise ValueError(f"an index page in content coding {encoding!r}")
    data = bytearray()
    inflate: Any = None
    for chunk in raw:
        if not codings:
            data += chunk
        elif chunk:
            inflate = inflate or zlib.decompressobj(_wbits(codings[0], chunk))
            while chunk and len(data) <= limit and not inflate.eof:
                data += inflate.decompress(chunk, limit + 1 - len(data))
                chunk = inflate.unconsumed_tail
        if len(data) > limit:
            return None
    if codings and (inflate is None or not inflate.eof):
        raise ValueError("an index page whose compressed body ends early")
    return bytes(data)


def _wbits(coding: str, first: bytes) -> int:
    """gzip; `deflate` zlib-wrapped as the standard says (a zlib header: method 8, checksum), else raw (as
    some servers send it)."""
    if coding != "deflate":
        return 31
    wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
    return 15 if wrapped else -15


def _learn_from(server: FrontServer, teacher: str, auth: Any, upstream: str) -> str:
    return server.learn(upstream, teacher, auth)
