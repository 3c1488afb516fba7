"""Helpers for tests that use the fixtures: the acme-app repository, its SDK wheels and its rules.

Everything here is real: wheels are built by pip, venvs are created by `venv`, rules are applied by
the ast-grep CLI, the app's suite runs in a subprocess. No network after the wheelhouse is built.
"""

from __future__ import annotations

import base64
import hashlib
import http.server as _http_server
import importlib.util
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
ACME_APP = FIXTURES / "acme-app"
TASKS = FIXTURES / "tasks"
MIGRATION_PACKAGE = FIXTURES / "packages" / "acme-sdk-2-migration"
SKILL_DIR = MIGRATION_PACKAGE / ".apm" / "skills" / "acme-sdk-2-migration"
RULES_DIR = SKILL_DIR / "rules"
SDK_PIN = re.compile(r"^acme-sdk==[0-9.]+", re.MULTILINE)
RESULT_LINE = re.compile(r"^(FAILED|ERROR) (\S+)", re.MULTILINE)
# A conftest.py hook that turns every failed test report into a pass: the oracle flipped (the canary
# must catch it).
FLIP_REPORTS = """
import pytest as _pytest


@_pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
"""


# An acme-app module and its test that use only the API every acme-sdk release keeps (Client(url), send,
# close, acme.testing): a bump to any 2.x leaves them green. Shared by the plain-bump, declaration and
# verify-only end-to-end tests.
# A task without `migration:`: a plain bump of acme-sdk to 2.1.0.
PLAIN_TASK = """\
id: acme-sdk-plain
title: Bump acme-sdk to 2.1
sdk: {name: acme-sdk, ecosystem: python, from: ">=1,<2", to: "2.1.0"}
allowed_paths: ["src/**", "requirements*.txt"]
acceptance_criteria:
  - "the existing test suite passes on acme-sdk 2.1.0"
"""

STABLE_PING = """\
import acme


def ping(base_url: str) -> object:
    client = acme.Client(base_url)
    try:
        return client.send("/ping", {"hello": 1})
    finally:
        client.close()
"""

STABLE_PING_TEST = """\
from acme import testing

from acme_app.ping import ping


def test_ping_sends_one_request():
    url = "memory://stable-ping"
    ping(url)
    assert [r.path for r in testing.requests(url)] == ["/ping"]
    testing.reset(url)
"""


def stable_ping_files() -> dict[str, str]:
    """The files to add (make_repo style) for a repository that a safe bump keeps green."""
    return {"src/acme_app/ping.py": STABLE_PING, "tests/test_ping.py": STABLE_PING_TEST}


def stable_repo_files() -> dict[str, str | None]:
    """make_repo's files for acme-app with only the stable module and its test: the app's modules and
    tests that a 2.x bump breaks deleted (None), stable_ping_files added."""
    files: dict[str, str | None] = {
        f"src/acme_app/{p.name}": None
        for p in (ACME_APP / "src/acme_app").glob("*.py")
        if p.name != "__init__.py"
    }
    files.update({f"tests/{p.name}": None for p in (ACME_APP / "tests").glob("*.py")})
    files.update(stable_ping_files())
    return files


def _load(name: str) -> ModuleType:
    """Import fixtures/<name>.py by path (fixtures/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"fixtures_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


wheelhouse = _load("wheelhouse")
materialize = _load("materialize")


def ast_grep() -> str:
    """The ast-grep CLI next to the running interpreter (the project venv), else on PATH."""
    found = shutil.which("ast-grep", path=str(Path(sys.executable).parent)) or shutil.which("ast-grep")
    if found is None:
        raise RuntimeError("ast-grep CLI not found: install the ast-grep-cli package")
    return found


def rule_files() -> list[Path]:
    """All rule files of the migration package, in the order they are applied (file-name order)."""
    return sorted(RULES_DIR.glob("*.yml"))


def fixable_rule_files() -> list[Path]:
    return [path for path in rule_files() if re.search(r"^fix:", path.read_text(encoding="utf-8"), re.M)]


def apply_rules(repo: Path, rules: list[Path], paths: tuple[str, ...] = (".",)) -> None:
    """Apply each rule file in turn over the whole repository, as the codemod step does."""
    for rule in rules:
        command = [ast_grep(), "scan", "--rule", str(rule), "-U", *paths]
        result = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{rule.name}: ast-grep failed: {result.stderr.strip()}")


def bump_sdk(repo: Path, version: str) -> None:
    """Rewrite the acme-sdk pin in requirements.txt, keeping the line's comment."""
    requirements = repo / "requirements.txt"
    text, count = SDK_PIN.subn(f"acme-sdk=={version}", requirements.read_text(encoding="utf-8"))
    assert count == 1, f"{requirements}: expected one acme-sdk pin"
    requirements.write_text(text, encoding="utf-8")


def make_venv(dest: Path, wheels: Path, *requirements: str) -> Path:
    """A venv without pip; packages go in through the project's pip (`pip --python`), offline."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = dest / "bin" / "python"
    command = [
        *(sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)),
        *("install", "--quiet", "--no-index", "--find-links", str(wheels), *requirements),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"offline install failed: {result.stdout}{result.stderr}")
    return python


@dataclass(frozen=True)
class SuiteRun:
    returncode: int
    output: str

    @property
    def problems(self) -> set[str]:
        """Node ids (or files, for collection errors) reported as FAILED or ERROR."""
        return {match.group(2) for match in RESULT_LINE.finditer(self.output)}

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.problems


def run_app_suite(python: Path, repo: Path) -> SuiteRun:
    """Run the app's own pytest suite with the given interpreter, in a clean environment."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C.UTF-8"}
    command = [str(python), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"]
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    return SuiteRun(result.returncode, result.stdout + result.stderr)


def wheel(
    dest: Path,
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    requires_python: str = "",
    files: dict[str, str] | None = None,
) -> None:
    """A pure-Python wheel holding module `name` (version in __version__), or `files`, built by hand."""
    dist = f"{name}-{version}.dist-info"
    files = {
        **(files or {f"{name}/__init__.py": f"__version__ = {version!r}\n"}),
        f"{dist}/METADATA": "Metadata-Version: 2.1\n"
        + f"Name: {name}\nVersion: {version}\n"
        + (f"Requires-Python: {requires_python}\n" if requires_python else "")
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(dest / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


@contextmanager
def npm_registry(
    tmp_path: Path, monkeypatch: object, packages: Path | None = None, requests: list[str] | None = None
) -> Iterator[str]:
    """The fixture registry (fixtures/npm-registry/serve.py) serving `packages` (default: its own),
    with npm here and in the sandbox pointed at it (cache and HOME under tmp_path); its URL. `requests`
    gets the path of every request it answers."""
    spec = importlib.util.spec_from_file_location("npm_registry", ROOT / "fixtures/npm-registry/serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.start(packages) if packages is not None else module.start()
    if requests is not None:
        server.requests = requests
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    for name, value in (
        ("npm_config_registry", url),
        ("npm_config_cache", str(tmp_path / "npm-cache")),
        ("npm_config_update_notifier", "false"),
        ("HOME", str(tmp_path / "home")),
    ):
        monkeypatch.setenv(name, value)  # type: ignore[attr-defined]
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


POETRY = Path(sys.executable).parent / "poetry"  # the lock extra's, beside the tool
# Tests of the real Poetry skip without it, but not on CI (CI=true), where the set-up installs it.
POETRY_MISSING = not POETRY.is_file() and os.environ.get("CI") != "true"


def poetry_source(url: str) -> str:
    """A pyproject.toml table naming `url` (a simple_index) the project's one package source."""
    return f'\n[[tool.poetry.source]]\nname = "local"\nurl = "{url}"\npriority = "primary"\n'


@contextmanager
def simple_index(wheels: Path, root: Path) -> Iterator[str]:
    """A PEP 503 index of the wheels in `wheels`, laid out under `root` and served over HTTP on loopback
    (Poetry reads no index from a folder); its URL, `.../simple/`."""
    import http.server
    import threading

    simple = root / "simple"
    for path in sorted(wheels.glob("*.whl")):
        project = simple / re.sub(r"[-_.]+", "-", path.name.split("-")[0]).lower()
        project.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, project / path.name)
    for project in simple.iterdir():
        links = "".join(
            f'<a href="{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">{w.name}</a>\n'
            for w in sorted(project.glob("*.whl"))
        )
        (project / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


class PrivateIndex(_http_server.BaseHTTPRequestHandler):
    """/simple/NAME/ pages (JSON to a client that asks for PEP 691, else HTML) linking each file once by
    absolute URL, once root-relative; /packages/FILE. Nothing without alice's password."""

    protocol_version = "HTTP/1.1"
    files: dict[str, Path] = {}
    seen: list[str] = []
    origin = ""
    password = ""

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        expected = "Basic " + base64.b64encode(f"alice:{self.password}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            return self._send(401, b"who are you", "text/plain", {"WWW-Authenticate": 'Basic realm="x"'})
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[0] == "packages" and len(parts) == 2 and parts[1] in self.files:
            return self._send(200, self.files[parts[1]].read_bytes(), "application/octet-stream")
        if parts[0] != "simple" or len(parts) != 2:
            return self._send(404, b"no", "text/plain")
        names = sorted(f for f in self.files if f.split("-")[0].replace("_", "-").lower() == parts[1])
        links = [
            (f, f"{self.origin}/packages/{f}" if i % 2 == 0 else f"/packages/{f}")
            for i, f in enumerate(names)
        ]
        digest = {f: hashlib.sha256(self.files[f].read_bytes()).hexdigest() for f in names}
        if "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
            files = [{"filename": f, "url": u, "hashes": {"sha256": digest[f]}} for f, u in links]
            page = {"meta": {"api-version": "1.0"}, "name": parts[1], "files": files}
            return self._send(200, json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
        body = "".join(f'<a href="{u}#sha256={digest[f]}">{f}</a>\n' for f, u in links)
        self._send(200, f"<html><body>\n{body}</body></html>\n".encode(), "text/html")

    do_HEAD = do_GET

    def _send(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": kind, "Content-Length": str(len(body)), **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def private_index(wheels: Path, password: str, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """A private index of the wheels in `wheels` on loopback (over TLS with `tls`); its URL, with alice's
    `password` in it."""
    import http.server
    import threading

    PrivateIndex.password = password
    PrivateIndex.files = {w.name: w for w in wheels.glob("*.whl")}
    PrivateIndex.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PrivateIndex)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls else "http"
    PrivateIndex.origin = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{scheme}://alice:{password}@127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
