"""A local fake of TypeSafe's `/v1/systemone`: stdlib http.server on a loopback port.

It records every request (path, headers, JSON body) and answers from a script: each queued reply is
used once, the last one is repeated. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_KEY = "test-key-123"
REQUEST_ID = "req-0042"
CRITERIA = ["acme-sdk is pinned to 2.1.0", "calls to acme.connect() use the 2.x signature"]
PATCH = """diff --git a/requirements.txt b/requirements.txt
--- a/requirements.txt
+++ b/requirements.txt
@@ -1 +1 @@
-acme-sdk==1.4.0
+acme-sdk==2.1.0
diff --git a/src/app.py b/src/app.py
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,3 @@
-client = acme.connect("host", 1)
+client = acme.connect(host="host", retries=1)
"""


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=lambda: {"x-typesafe-request-id": REQUEST_ID})


def answers(
    in_scope: float | None = 0.95,
    failure_kind: str | None = None,
    confidence: float = 0.9,
    model: str = "jev-2026-10-01",
) -> Reply:
    """A 200 reply in the service's shape: typed answers, model, usage."""
    found: dict[str, Any] = {}
    if in_scope is not None:
        found["in_scope"] = {"type": "noul", "noul": in_scope}
    if failure_kind is not None:
        rest = (1 - confidence) / 2
        probs = {k: rest for k in ("implementation", "environment", "unknown")} | {failure_kind: confidence}
        found["failure_kind"] = {
            "type": "choice",
            "choice": failure_kind,
            "confidence": confidence,
            "probabilities": probs,
        }
    body = {"model": model, "answers": found, "usage": {"input_tokens": 812, "output_tokens": 4}}
    return Reply(body=body)


def error(status: int, message: str = "no") -> Reply:
    return Reply(status=status, body={"error": {"message": message}})


class FakeJev:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Reply] = [answers()]
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with fake._lock:
                    fake.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw or b"null")}
                    )
                    reply = fake.replies.pop(0) if len(fake.replies) > 1 else fake.replies[0]
                if reply.delay_s:
                    fake.release.wait(reply.delay_s)
                payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    for name, value in {**reply.headers, "Content-Type": "application/json"}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)

    @property
    def body(self) -> dict[str, Any]:
        assert self.requests, "no request reached the fake"
        body: dict[str, Any] = self.requests[-1]["body"]
        return body
