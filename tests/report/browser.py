"""Headless Chromium from the tests (imported by name), driven over the DevTools protocol on a pipe.

    find_chromium() -> str | None
    with Browser(chromium) as browser:
        page = browser.open(path, scripts=True, fragment="")   # loaded; scripts=False turns JavaScript off
        page.dom() -> Dom            the live DOM, serialized by the browser and parsed here
        page.screenshot(name)        a full-page PNG under SCREENSHOTS (kept as a CI artifact)
        page.console                 console messages and log entries (CSP violations land here)

`--remote-debugging-pipe` makes Chromium read protocol messages on fd 3 and write them on fd 4, each a JSON
object ended by a NUL byte: no driver, no websocket client, no extra package. Debian's `chromium` is the
browser (.ci/run installs it).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("CODEMOD_SCREENSHOTS", ROOT / "test-artifacts" / "screenshots"))
TIMEOUT_S = 60.0
WIDTH = 1280
MAX_HEIGHT = 16_000  # px of a full-page screenshot


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, chromium: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-")
        argv = [
            chromium,
            "--headless",
            "--no-sandbox",  # root in CI containers; the pages are local files and make no request
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            "about:blank",
        ]
        # fd 3 <- our stdin pipe, fd 4 -> our stdout pipe; the browser's own stdio goes nowhere.
        self._proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>/dev/null 2>/dev/null', "sh", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "HOME": self._profile.name},
        )
        self._ids = itertools.count(1)
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError, TimeoutError):
            self.send("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._selector.close()
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                pipe.close()
        self._profile.cleanup()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(message).encode() + b"\0")
        self._proc.stdin.flush()
        while True:
            reply = self._read()
            if reply.get("id") == ident:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self._events.append(reply)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._read())

    def events(self, session: str, *methods: str) -> list[dict[str, Any]]:
        return [e for e in self._events if e.get("sessionId") == session and e.get("method") in methods]

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(timeout=left):
                raise TimeoutError(f"chromium said nothing for {TIMEOUT_S}s")
            assert self._proc.stdout is not None
            chunk = os.read(self._proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise OSError(f"chromium closed the protocol pipe (exit {self._proc.poll()})")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def open(self, page: Path, scripts: bool = True, fragment: str = "") -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setScriptExecutionDisabled", {"value": not scripts}, session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        return Page(self, target, session)


class Page:
    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self.browser, self.target, self.session = browser, target, session

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.browser.send(method, params, session=self.session)

    def dom(self) -> Dom:
        root = self.send("DOM.getDocument", {"depth": -1})["root"]
        return Dom(self.send("DOM.getOuterHTML", {"nodeId": root["nodeId"]})["outerHTML"])

    @property
    def console(self) -> list[str]:
        """Console calls and log entries so far (a CSP violation is logged as an error entry)."""
        out = []
        for event in self.browser.events(self.session, "Log.entryAdded", "Runtime.consoleAPICalled"):
            params = event["params"]
            if "entry" in params:
                out.append(f"{params['entry'].get('level')}: {params['entry'].get('text')}")
            else:
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        return out

    def screenshot(self, name: str, height: int | None = None, directory: Path = SCREENSHOTS) -> Path:
        """A PNG of the whole page (or of its first `height` px) as directory/name."""
        whole = height is None
        content = int(self.send("Page.getLayoutMetrics")["cssContentSize"]["height"])
        height = content if height is None else min(height, content)
        size = {"width": WIDTH, "height": min(max(height, 400), MAX_HEIGHT)}
        self.send("Emulation.setDeviceMetricsOverride", {**size, "deviceScaleFactor": 1, "mobile": False})
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": whole})["data"]
        directory.mkdir(parents=True, exist_ok=True)
        dest = directory / name
        dest.write_bytes(base64.b64decode(data))
        assert dest.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{dest} is not a PNG"
        return dest

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str], inside: tuple[tuple[str, str], ...]) -> None:
        self.tag, self.attrs, self.inside = tag, attrs, inside  # inside: (tag, id) of open ancestors


class Dom(HTMLParser):
    """A serialized DOM, parsed: every element with its attributes and ancestors, the text under each id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.html = html
        self.elements: list[Element] = []
        self.texts: dict[str, list[str]] = {}
        self._open: list[tuple[str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.elements.append(Element(tag, values, tuple(self._open)))
        self.handle_data(" ")  # an element boundary separates words, as a reader sees cells
        if tag not in VOID:
            self._open.append((tag, values.get("id", "")))
            self.texts.setdefault(values.get("id", ""), [])

    def handle_endtag(self, tag: str) -> None:
        self.handle_data(" ")
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                return

    def handle_data(self, data: str) -> None:
        for _, ident in self._open:
            if ident:
                self.texts[ident].append(data)

    def text(self, ident: str) -> str:
        """The text under the element with this id, whitespace collapsed."""
        return " ".join("".join(self.texts[ident]).split())

    def all(self, tag: str, **attrs: str) -> list[Element]:
        return [
            e for e in self.elements if e.tag == tag and all(e.attrs.get(k) == v for k, v in attrs.items())
        ]

    def rows(self, table_id: str, visible: bool = False) -> list[Element]:
        """The body rows of a table (with visible=True, only those not hidden)."""
        return [
            e
            for e in self.all("tr")
            if ("table", table_id) in e.inside
            and any(tag == "tbody" for tag, _ in e.inside)
            and not (visible and "hidden" in e.attrs)
        ]

    def root(self) -> Element:
        return self.all("html")[0]
