"""A small stand-in for the GitLab REST API (stdlib only, loopback): the merge request endpoints publish uses.

    GET  /api/v4/projects/:id/merge_requests?state=&source_branch=&target_branch=
    POST /api/v4/projects/:id/merge_requests            409 when an open MR holds the same branches
    PUT  /api/v4/projects/:id/merge_requests/:iid

Every request is recorded (method, path, query, headers, JSON body). Scripted faults:
`fail_next` (statuses answered before the real handler, one per request), `create_then_fail`
(the POST creates the MR and then answers that status, like a proxy timing out after GitLab committed).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

API = "/api/v4"
TOKEN = "glpat-test-0123456789abcdefghij"  # accepted as PRIVATE-TOKEN
JOB_TOKEN = "job-token-0123456789abcdef"  # accepted as JOB-TOKEN


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeGitLab:
    tokens: set[tuple[str, str]] = field(default_factory=set)  # accepted (header, value) pairs
    project: str = "group/app"
    merge_requests: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)
    create_then_fail: int | None = None
    _server: ThreadingHTTPServer | None = None

    @property
    def api_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{API}"

    def start(self) -> FakeGitLab:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def do_PUT(self) -> None:
                fake._handle(self, "PUT")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def calls(self, method: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if method is None or r.method == method]

    # -- request handling --------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.requests.append(Recorded(method, url.path, query, dict(h.headers.items()), body))
        auth = {(name, h.headers[name]) for name in ("PRIVATE-TOKEN", "JOB-TOKEN") if h.headers.get(name)}
        if not auth & self.tokens:
            return _reply(h, 401, {"message": "401 Unauthorized"})
        if self.fail_next:
            return _reply(h, self.fail_next.pop(0), {"message": "scripted failure"})
        prefix = f"{API}/projects/"
        rest = url.path[len(prefix) :] if url.path.startswith(prefix) else ""
        project, _, tail = rest.partition("/merge_requests")
        if unquote(project) != self.project:
            return _reply(h, 404, {"message": "404 Project Not Found"})
        if method == "GET" and tail == "":
            return _reply(h, 200, self._list(query))
        if method == "POST" and tail == "":
            return self._create(h, body or {})
        if method == "PUT" and tail.startswith("/"):
            return self._update(h, int(tail[1:]), body or {})
        return _reply(h, 404, {"message": "404 Not Found"})

    def _list(self, query: dict[str, str]) -> list[dict[str, Any]]:
        keys = ("state", "source_branch", "target_branch")
        return [mr for mr in self.merge_requests if all(mr[k] == query[k] for k in keys if k in query)]

    def _create(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        open_same = self._list(
            {
                "state": "opened",
                "source_branch": body["source_branch"],
                "target_branch": body["target_branch"],
            }
        )
        if open_same:
            message = (
                f"Another open merge request already exists for this source branch: !{open_same[0]['iid']}"
            )
            return _reply(h, 409, {"message": [message]})
        iid = len(self.merge_requests) + 1
        mr = {
            "iid": iid,
            "state": "opened",
            "source_branch": body["source_branch"],
            "target_branch": body["target_branch"],
            "title": body["title"],
            "description": body.get("description", ""),
            "labels": [x for x in str(body.get("labels", "")).split(",") if x],
            "web_url": f"http://gitlab.test/{self.project}/-/merge_requests/{iid}",
        }
        self.merge_requests.append(mr)
        if self.create_then_fail is not None:
            status, self.create_then_fail = self.create_then_fail, None
            return _reply(h, status, {"message": "created, then the proxy failed"})
        return _reply(h, 201, mr)

    def _update(self, h: BaseHTTPRequestHandler, iid: int, body: dict[str, Any]) -> None:
        for mr in self.merge_requests:
            if mr["iid"] == iid:
                for key in ("title", "description"):
                    if key in body:
                        mr[key] = body[key]
                if "labels" in body:
                    mr["labels"] = [x for x in str(body["labels"]).split(",") if x]
                return _reply(h, 200, mr)
        return _reply(h, 404, {"message": "404 Not found"})


def _reply(h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)
