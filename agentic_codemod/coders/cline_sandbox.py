"""Cline inside the sandbox, with the model endpoint as its only network.

    Relay(host, port, directory)          host side: a unix socket whose every connection goes to host:port
    sandboxed(argv, config, relay, ...)   the Cline command wrapped in bubblewrap (tools/sandbox.Box)

Cline has a shell (its run_commands tool), so it runs as the repository's code does: in bubblewrap with
new pid/net/ipc/user namespaces, a cleared environment, a tmpfs HOME and /tmp, the system read-only, its
scratch copy at /codemod/repo, its own data dir and its install read-only — nothing of the run dir, the
tool's clone or the caller visible. Its network namespace is empty but for loopback; the one way out is a
unix socket bound in from the host, which the host side (Relay) connects only to the model endpoint. A
small forwarder inside (FORWARDER, run by the tool's own Python) listens on 127.0.0.1:<port> and passes
each connection to that socket, and Cline is pointed at http://127.0.0.1:<port>/... . Whatever else Cline
(or a command it runs) tries to reach, there is no route.

Limits: only an http:// endpoint can be relayed this way (an https one would see 127.0.0.1 as the host
name and fail its certificate check): with an https endpoint the run pauses (75) naming this, unless the
user chose --isolation process.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from agentic_codemod.adapters import secret_files
from agentic_codemod.tools.sandbox import Box, Mount

RELAY_MOUNT = Path("/codemod/relay")
SOCKET_NAME = "endpoint.sock"
READY = "/tmp/.codemod-relay-ready"
# Ports below 1024 cannot be bound by the sandbox's ordinary uid: the forwarder then uses this one.
FALLBACK_PORT = 18080
CHUNK = 65536

# Runs inside the sandbox (the tool's own Python, read-only there): 127.0.0.1:PORT -> the unix socket.
FORWARDER = """
import os, socket, sys, threading
port, path, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port)); srv.listen(64); open(ready, "w").close()
def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data: break
            b.sendall(data)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
def serve(c):
    u = socket.socket(socket.AF_UNIX)
    try: u.connect(path)
    except OSError: c.close(); return
    threading.Thread(target=pump, args=(c, u), daemon=True).start(); pump(u, c)
while True:
    c, _ = srv.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


class RelayError(ValueError):
    """The endpoint cannot be relayed into the sandbox (the message says why)."""


class Relay:
    """Host side: accept on a unix socket, connect each client to the endpoint, pump both ways."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise RelayError(
                f"the sandboxed Cline reaches its endpoint through a relay for http:// only: {base_url}"
            )
        self.host, self.port = parts.hostname, parts.port or 80
        inner_port = self.port if self.port >= 1024 else FALLBACK_PORT
        self.inner_url = urlunsplit(("http", f"127.0.0.1:{inner_port}", parts.path, parts.query, ""))
        self.inner_port = inner_port
        # A short path: unix socket paths are limited to 107 bytes.
        self.directory = Path(tempfile.mkdtemp(prefix="codemod-relay-"))
        self.path = self.directory / SOCKET_NAME
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(str(self.path))
        self._server.listen(64)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection((self.host, self.port), timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        other = threading.Thread(target=_pump, args=(client, upstream), daemon=True)
        other.start()
        _pump(upstream, client)
        other.join()
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.directory.rmdir()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sandboxed(
    argv: list[str], workdir: Path, data_dir: Path, relay: Relay, bwrap: str, env: dict[str, str]
) -> tuple[list[str], Path, dict[str, str]]:
    """The Cline command as bubblewrap runs it: the forwarder first, Cline once it listens."""
    install = _install_root(argv[0])
    box = Box(
        isolation="sandbox",
        repo=workdir,
        mounts=(
            Mount(install),
            Mount(data_dir, writable=True),
            Mount(relay.directory, writable=True, target=RELAY_MOUNT),
        ),
        network=False,
        bwrap=bwrap,
        hidden=secret_files(
            dict(os.environ)
        ),  # the caller's client key and secret-holding config files: shown empty
    )
    python = str(Path(sys.executable))
    socket_inside = str(RELAY_MOUNT / SOCKET_NAME)
    script = (
        f'"$CODEMOD_PY" -c "$CODEMOD_FORWARDER" {relay.inner_port} {socket_inside} {READY} & '
        f"n=0; while [ ! -e {READY} ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; "
        'exec "$@"'
    )
    inner = ["/bin/sh", "-c", script, "cline", *argv]
    inner_env = {**env, "CODEMOD_PY": python, "CODEMOD_FORWARDER": FORWARDER}
    inner_env["PATH"] = os.pathsep.join([str(Path(argv[0]).parent), "/usr/bin", "/bin"])
    outer, cwd, outer_env = box.wrap(inner, workdir, inner_env)
    return outer, cwd, outer_env


def inside_path(workdir: Path) -> str:
    """Where the scratch copy is inside the sandbox (Cline's -c)."""
    return str(Box(isolation="sandbox", repo=workdir).inside(workdir))


def _install_root(binary: str) -> Path:
    """The Cline install to bind read-only: its node_modules' parent (the npm prefix) or its directory."""
    real = Path(binary).resolve()
    for parent in real.parents:
        if parent.name == "node_modules":
            return parent.parent
    return real.parent


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
