"""An install that runs the repository's build backend and reaches a private index never holds the caller's
credentials: the index front (index_front.py) holds them. Real uv and pip in bubblewrap, a real private
index on loopback that answers only with the password (and, over TLS, only to the client certificate)."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import urllib.parse
from pathlib import Path

import pytest
from fixtures_support import PrivateIndex, private_index, wheel

from agentic_codemod.adapters.python import index_front, pip_config
from agentic_codemod.adapters.python.environment import prepare_environment
from agentic_codemod.config import PackageSources, PythonEnvSettings, Settings
from agentic_codemod.errors import EnvironmentUnavailable, InputError
from agentic_codemod.tools.sandbox import Policy, probe
from agentic_codemod.tools.trace import Redactor, Trace
from agentic_codemod.tools.verification import SandboxRunner

PASSWORD = "s3cr3t-front-pass"
KEY_MARK = "PRIVATE KEY"
needs_bwrap = pytest.mark.skipif(probe() is not None, reason="bubblewrap cannot start here")

# The PEP 517 hooks of the in-tree backends below: each backend's own `_hook()` runs first in every one.
BUILD_HOOKS = r"""META = "Metadata-Version: 2.1\nName: app\nVersion: 0.1\nRequires-Dist: acme-sdk==1.4.0\n"
def _wheel(wd):
    name = "app-0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wd, name), "w") as whl:
        whl.writestr("app-0.1.dist-info/METADATA", META)
        wheel = "Wheel-Version: 1.0\nGenerator: b\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        whl.writestr("app-0.1.dist-info/WHEEL", wheel)
        whl.writestr("app-0.1.dist-info/RECORD", "")
    return name
def get_requires_for_build_wheel(config_settings=None):
    _hook()
    return []
get_requires_for_build_editable = get_requires_for_build_wheel
def prepare_metadata_for_build_wheel(md, config_settings=None):
    _hook()
    os.makedirs(os.path.join(md, "app-0.1.dist-info"))
    open(os.path.join(md, "app-0.1.dist-info", "METADATA"), "w").write(META)
    return "app-0.1.dist-info"
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
def build_wheel(wd, config_settings=None, metadata_directory=None):
    _hook()
    return _wheel(wd)
build_editable = build_wheel
"""
# An in-tree backend that, whenever the installer calls it, records everything of the caller's secrets it
# can reach: its variables, the copies the tool used to put into the repository copy (.codemod-pip/), and
# every process's command line and environment the box shows it (the installer's among them).
PEEKING_BACKEND = """import os, zipfile
SECRET, KEY = "@SECRET@", "@KEY@"
def _hook():
    seen = [k for k, v in os.environ.items() if SECRET in v]
    if os.path.isdir(".codemod-pip"):
        seen += [".codemod-pip/" + f for f in os.listdir(".codemod-pip")]
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for part in ("cmdline", "environ"):
            try:
                data = open("/proc/%s/%s" % (pid, part), "rb").read()
            except OSError:
                continue
            seen += ["/proc/%s/%s" % (pid, part)] if SECRET.encode() in data else []
    for root, _dirs, files in os.walk(os.getcwd()):
        for name in files:
            try:
                data = open(os.path.join(root, name), "rb").read()
            except OSError:
                continue
            seen += [name] if KEY.encode() in data and not name.startswith("backend") else []
    with open("seen.txt", "a") as out:
        out.write("".join(s + "\\n" for s in seen) + "CALLED\\n")
"""
PEEKING_BACKEND = (PEEKING_BACKEND + BUILD_HOOKS).replace("@SECRET@", PASSWORD).replace("@KEY@", KEY_MARK)
PYPROJECT = '[project]\nname = "app"\nversion = "0.1"\ndependencies = ["acme-sdk==1.4.0"]\n\n'
PYPROJECT += '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'


def caller(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, conf: str) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    (tmp_path / "pip.conf").write_text(conf)
    monkeypatch.setenv("PIP_RETRIES", "0")
    for name in (
        "FIND_LINKS",
        "EXTRA_INDEX_URL",
        "NO_INDEX",
        "INDEX_URL",
        "CERT",
        "CLIENT_CERT",
        "PROXY",
        "TRUSTED_HOST",
    ):
        monkeypatch.delenv(f"PIP_{name}", raising=False)


def install_app(tmp_path: Path, installer: str) -> tuple[Path, object]:
    """prepare_environment on a copy whose build backend peeks, in the sandbox with the index's network."""
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "pyproject.toml").write_text(PYPROJECT)
    (copy / "backend.py").write_text(PEEKING_BACKEND)
    redactor = Redactor(pip_config.credentials(pip_config.read_caller_config(os.environ)))
    trace = Trace(tmp_path / "trace.jsonl", redactor)
    policy = Policy("sandbox", tmp_path / "env", index_network=True)
    runner = SandboxRunner(env={"PATH": os.environ["PATH"]}, tail_bytes=20_000, trace=trace)
    python = PythonEnvSettings(extra_test_requirements=[], installer=installer, env_template_ttl_s=0)  # type: ignore[arg-type]
    venv = prepare_environment(
        copy, tmp_path / "env", Settings(python=python), runner.boxed(policy.for_install(copy)), []
    )
    return copy, venv


def assert_installed_without_a_secret(tmp_path: Path, copy: Path, venv: object, secrets: list[str]) -> None:
    log = venv.install_log  # type: ignore[attr-defined]
    assert all(r.ok for r in log), log[-1].output_tail
    seen = (copy / "seen.txt").read_text()
    assert "CALLED" in seen and seen.replace("CALLED\n", "") == "", seen  # the backend ran and saw nothing
    assert "index_front" in venv.install  # type: ignore[attr-defined]
    assert list((tmp_path / "env").rglob("acme_sdk-1.4.0.dist-info")), "acme-sdk was not installed"
    assert any(p.startswith("/packages/acme_sdk-1.4.0") for p in PrivateIndex.seen), PrivateIndex.seen
    for secret in secrets:
        assert secret not in (tmp_path / "trace.jsonl").read_text()
        assert not any(secret in arg for r in log for arg in r.argv)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_build_backend_an_install_runs_sees_no_index_password_on_the_way_to_a_private_index(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch, installer: str
) -> None:
    """Before the front, the password went in as PIP_INDEX_URL / UV_DEFAULT_INDEX: the backend read it
    from its own environment. The index links half its files by absolute URL, half root-relative: both
    come back through the front (the index answers neither without the password)."""
    with private_index(wheels, PASSWORD) as url:
        caller(monkeypatch, tmp_path, f"[global]\nindex-url = {url}\n")
        copy, venv = install_app(tmp_path, installer)
    assert_installed_without_a_secret(tmp_path, copy, venv, [PASSWORD])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def mutual_tls(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    """A CA (pki/ca.pem), a server certificate for 127.0.0.1 and a client one (pki/client-bundle.pem, key
    included) signed by it; the server's TLS context, which answers only the client certificate."""
    pki = tmp_path / "pki"
    pki.mkdir()
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
             "-days", "2", "-subj", "/CN=test-ca", cwd=pki)  # fmt: skip
    for name, extra in (("server", ["-addext", "subjectAltName=IP:127.0.0.1"]), ("client", [])):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", *extra, cwd=pki)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.pem", "-days", "2", "-copy_extensions", "copy", cwd=pki)  # fmt: skip
    (pki / "client-bundle.pem").write_text(
        (pki / "client.pem").read_text() + (pki / "client.key").read_text()
    )
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(pki / "server.pem", pki / "server.key")
    tls.load_verify_locations(pki / "ca.pem")
    tls.verify_mode = ssl.CERT_REQUIRED
    return pki, tls


@needs_bwrap
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_the_build_backend_sees_no_client_key_of_an_index_that_asks_for_one(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index over TLS that talks only to the caller's client certificate, signed by the caller's own CA.
    Before the front, the key went into the repository copy (.codemod-pip/client-cert.pem) beside the
    backend."""
    pki, tls = mutual_tls(tmp_path)
    with private_index(wheels, PASSWORD, tls) as url:
        conf = f"[global]\nindex-url = {url}\ncert = {pki / 'ca.pem'}\n"
        conf += f"client-cert = {pki / 'client-bundle.pem'}\n"
        caller(monkeypatch, tmp_path, conf)
        copy, venv = install_app(tmp_path, "uv")
    assert_installed_without_a_secret(tmp_path, copy, venv, [PASSWORD])
    assert not (copy / pip_config.CERT_DIR).exists()


@needs_bwrap
@pytest.mark.slow
def test_an_index_the_front_cannot_reach_pauses_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installer sees only the front's 502; the front's own failure to connect is what pauses (exit 75),
    as the installer's "could not fetch url" does without a front."""
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    caller(monkeypatch, tmp_path, f"[global]\nindex-url = http://alice:{PASSWORD}@127.0.0.1:{port}/simple/\n")
    with pytest.raises(EnvironmentUnavailable, match=f"could not fetch url http://127.0.0.1:{port}"):
        install_app(tmp_path, "uv")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_the_client_certificate_opens_no_path_of_the_index_host_that_no_page_named(
    tmp_path: Path, wheels: Path
) -> None:
    """Where the client certificate is the credential, the front's answer to a path of the index's host
    that no page named would be the caller's identity at that host's whole API (helper-47: /api/v4/user
    answered 200 with it; the Basic credentials were kept to named URLs, the certificate was not)."""
    import httpx

    pki, tls = mutual_tls(tmp_path)
    with private_index(wheels, PASSWORD, tls) as url:
        config = {
            "index-url": url,
            "cert": str(pki / "ca.pem"),
            "client-cert": str(pki / "client-bundle.pem"),
        }
        with index_front.front(config, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
            front = box.caller["index-url"].rstrip("/").removesuffix("/s0")
            origin = PrivateIndex.origin.removeprefix("https://")
            assert httpx.get(f"{front}/s0/acme-sdk/").status_code == 200  # the origin is learned now
            seen = len(PrivateIndex.seen)
            assert httpx.get(f"{front}/o/https/{origin}/api/v4/user").status_code == 404
            assert httpx.get(f"{front}/o/https/{origin}/simple/").status_code == 404  # outside s0's links
            assert len(PrivateIndex.seen) == seen  # neither reached the index


def test_a_client_certificate_that_does_not_load_is_a_clear_input_error(tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    config = {"index-url": "https://pypi.corp.example/simple", "client-cert": str(tmp_path / "bad.pem")}
    limits = index_front.Limits(5.0, 1 << 20)
    with pytest.raises(InputError, match="client-cert"), index_front.front(config, PackageSources(), limits):
        pass


def test_the_install_gets_front_urls_and_none_of_the_secrets() -> None:
    config = {
        "index-url": f"https://alice:{PASSWORD}@pypi.corp.example/simple",
        "extra-index-url": "https://glpat-token@gitlab.example/api/simple https://public.example/simple",
        "find-links": "/wheels https://bob:pw@links.example/files/",
        "proxy": "http://proxyuser:proxypass@proxy.example:3128",
        "trusted-host": "public.example",
        "timeout": "30",
    }
    packages = PackageSources(local=["https://carol:pw2@more.example/wheels/", "/more"])
    assert index_front.needed(config, packages)
    with index_front.front(config, packages, index_front.Limits(5.0, 1 << 20)) as box:
        handed = json.dumps([box.caller, box.packages.model_dump()])
        for secret in (PASSWORD, "glpat-token", "bob:pw", "proxypass", "carol", "proxy.example"):
            assert secret not in handed
        assert set(box.caller) == {"index-url", "extra-index-url", "find-links", "timeout"}
        front = (
            box.caller["index-url"].rstrip("/").removesuffix("/s0")
        )  # each source by its number: no path, no host
        assert front.startswith("http://127.0.0.1:") and box.caller["index-url"] == f"{front}/s0"
        assert box.caller["extra-index-url"] == f"{front}/s1 {front}/s2"
        assert box.caller["find-links"] == f"/wheels {front}/s3/"
        assert box.packages.local == [f"{front}/s4/", "/more"]


def test_what_needs_a_front() -> None:
    """Any http(s) source (a token may be in its path: Cloudsmith's), a client certificate, a proxy with
    user info even without a scheme (helper-41: `user:pass@proxy:3128` went into the box); not the
    default index, a CA file, a plain proxy or local folders alone."""
    plain = {"cert": "/etc/ca.pem", "proxy": "http://p:3128", "find-links": "/wheels file:///opt/simple"}
    assert not index_front.needed(plain, PackageSources(local=["/more"]))
    assert index_front.needed(
        {"index-url": "https://dl.cloudsmith.io/T0KEN/o/r/python/simple/"}, PackageSources()
    )
    assert index_front.needed({}, PackageSources(index_url="https://mirror.example/simple"))
    assert index_front.needed({}, PackageSources(local=["https://host.example/wheels/"]))
    assert index_front.needed({"proxy": "user:pa55@proxy.example:3128"}, PackageSources())
    with index_front.front(plain, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
        assert box.caller == plain


def test_a_client_certificate_alone_fronts_the_default_index(tmp_path: Path) -> None:
    assert index_front.needed({"client-cert": "/k.pem"}, PackageSources())
    front = "http://127.0.0.1:1/T"
    box = index_front._box_config({"client-cert": "/k.pem"}, PackageSources(), lambda u: front + "|" + u)
    assert box == {"index-url": f"{front}|{index_front.DEFAULT_INDEX}"}


def test_every_link_of_an_index_page_comes_back_through_the_front() -> None:
    page = (
        '<a href="https://files.example/p/a-1.whl#sha256=ab">a</a>\n'
        "<a href='/packages/b-1.whl?x=1&amp;y=2'>b</a>\n"
        '<a data-core-metadata="true" href="../../c-1.tar.gz">c</a>\n'
    )
    out = index_front._html_page(page, "https://idx.example/simple/a/", lambda u: "F[" + u + "]")
    assert 'href="F[https://files.example/p/a-1.whl#sha256=ab]"' in out
    assert "href='F[https://idx.example/packages/b-1.whl?x=1&amp;y=2]'" in out
    assert 'href="F[https://idx.example/c-1.tar.gz]"' in out
    based = '<base href="https://cdn.example/x/"><a href="d-1.whl">d</a>'
    out = index_front._html_page(based, "https://idx.example/simple/d/", lambda u: "F[" + u + "]")
    assert 'href="F[https://cdn.example/x/d-1.whl]"' in out
    files = {"meta": {}, "files": [{"url": "/p/e-1.whl"}, {"url": "https://o.example/f-1.whl"}]}
    out = json.loads(
        index_front._json_page(json.dumps(files), "https://idx.example/simple/e/", lambda u: "F" + u)
    )
    assert [f["url"] for f in out["files"]] == [
        "Fhttps://idx.example/p/e-1.whl",
        "Fhttps://o.example/f-1.whl",
    ]


def test_the_front_answers_only_under_its_token() -> None:
    import httpx

    config = {"index-url": f"http://alice:{PASSWORD}@127.0.0.1:9/simple"}
    with index_front.front(config, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
        front = box.caller["index-url"].rstrip("/").removesuffix("/s0")
        port_base = front.rsplit("/", 1)[0]
        assert httpx.get(f"{port_base}/wrong-token/s0").status_code == 404
        assert httpx.get(f"{front}/s1").status_code == 404  # no such source
        assert httpx.get(f"{front}/file/etc/passwd").status_code == 404
        assert httpx.get(f"{front}/o/http/127.0.0.1:9/simple").status_code == 404  # no page named it
        assert httpx.post(box.caller["index-url"]).status_code == 501
        assert httpx.get(box.caller["index-url"]).status_code == 502  # port 9: nothing listens
        assert box.unreachable and "could not fetch url http://127.0.0.1:9" in box.unreachable[0]


def _raw_get(url: str) -> bytes:
    """The answer's body to a GET of exactly this path (httpx would fold its dot segments first)."""
    import http.client

    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=10)
    try:
        connection.request("GET", parts.path)
        return connection.getresponse().read()
    finally:
        connection.close()


def test_credentials_go_only_where_the_index_is_and_where_its_pages_point(wheels: Path) -> None:
    """The install sees each source by its number only (a token in its path or query stays in the front).
    Credentials go under the source's path (no dot segment, no path parameter: `..;` is `..` to Tomcat),
    and to what one of its pages linked (helper-41: a GitLab token was usable for the host's whole API);
    any other host, or the same host over another scheme, is fetched only once such a page named it."""
    import httpx

    limits = index_front.Limits(5.0, 1 << 20)
    with private_index(wheels, PASSWORD) as url:
        origin = url.split("@")[1].split("/")[0]
        with index_front.front({"index-url": url}, PackageSources(), limits) as box:
            front = box.caller["index-url"].rstrip("/").removesuffix("/s0")
            wheel_name = next(f for f in PrivateIndex.files if f.startswith("acme_sdk-1.4.0"))
            assert httpx.get(f"{front}/o/http/{origin}/packages/{wheel_name}").status_code == 404  # not named
            for odd in ("..", "..;", "%2e%2e", "%252e%252e", "..%3B"):
                refused = _raw_get(f"{front}/s0/{odd}/packages/{wheel_name}")
                assert refused.startswith(b"not a package source"), (odd, refused)  # the front sent nothing
            assert httpx.get(f"{front}/s0/acme-sdk/").status_code == 200  # the page links the wheel
            assert httpx.get(f"{front}/o/http/{origin}/packages/{wheel_name}").status_code == 200
            # its PEP 658 metadata beside it goes with the credentials too (this index has none: 404, not 401)
            assert httpx.get(f"{front}/o/http/{origin}/packages/{wheel_name}.metadata").status_code == 404
            assert httpx.get(f"{front}/o/http/{origin}/api/v4/user").status_code == 404  # not named
            assert httpx.get(f"{front}/o/https/{origin}/packages/{wheel_name}").status_code == 404
            assert httpx.get(f"{front}/o/http/example.org/").status_code == 404


@needs_bwrap
@pytest.mark.slow
def test_the_wheels_a_template_installs_find_no_client_key_when_its_python_starts(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-41: the environment template's install put the client key's copy into its scratch folder,
    and a .pth file of a wheel the repository names copied it into the venv (and the shared template) when
    the compile step started the venv's Python. The template's install now goes through the front."""
    pth = (
        "import os, sys; exec(\"import shutil\\nd = os.path.join(os.getcwd(), '.codemod-pip')\\n"
        "for f in (os.listdir(d) if os.path.isdir(d) else []):\\n"
        "    shutil.copy(os.path.join(d, f), os.path.join(sys.prefix, 'stolen-' + f))\")\n"
    )
    house = tmp_path / "house"
    shutil.copytree(wheels, house)
    wheel(house, "evilpth", "1.0", files={"evilpth.pth": pth, "evilpth_mod.py": "X = 1\n"})
    pki = tmp_path / "pki"
    pki.mkdir()
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "c.key", "-out", "c.pem",
             "-days", "2", "-subj", "/CN=client", cwd=pki)  # fmt: skip
    (pki / "bundle.pem").write_text((pki / "c.pem").read_text() + (pki / "c.key").read_text())
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "requirements.txt").write_text("evilpth==1.0\nacme-sdk==1.4.0\n")
    with private_index(house, PASSWORD) as url:
        caller(monkeypatch, tmp_path, f"[global]\nindex-url = {url}\nclient-cert = {pki / 'bundle.pem'}\n")
        trace = Trace(tmp_path / "trace.jsonl", Redactor([PASSWORD]))
        policy = Policy("sandbox", tmp_path / "env", index_network=True)
        runner = SandboxRunner(env={"PATH": os.environ["PATH"]}, tail_bytes=20_000, trace=trace)
        python = PythonEnvSettings(
            extra_test_requirements=[], installer="uv", cache_dir=str(tmp_path / "cache")
        )
        settings = Settings(python=python)
        venv = prepare_environment(
            copy, tmp_path / "env", settings, runner.boxed(policy.for_install(copy)), []
        )
    assert venv.install["template"], venv.install  # the template was built, and its compile ran the .pth
    assert all(r.ok for r in venv.install_log), venv.install_log[-1].output_tail
    stolen = [*(tmp_path / "env").rglob("stolen-*"), *(tmp_path / "cache").rglob("stolen-*")]
    assert not any(KEY_MARK in p.read_text() for p in stolen), stolen


TOKEN = "tok3nSECRETvalue99"


@needs_bwrap
@pytest.mark.slow
def test_a_token_in_the_tools_own_index_url_reaches_neither_an_install_nor_the_trace(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-41: `--index-url https://TOKEN@host/simple/` (packages.index_url) went raw onto the template
    build's command line, which the trace records; no Redactor knew the token."""
    with private_index(wheels, PASSWORD) as url:
        caller(monkeypatch, tmp_path, "[global]\n")
        copy = tmp_path / "copy"
        copy.mkdir()
        (copy / "requirements.txt").write_text("acme-sdk==1.4.0\n")
        trace = Trace(tmp_path / "trace.jsonl", Redactor([]))
        policy = Policy("sandbox", tmp_path / "env", index_network=True)
        runner = SandboxRunner(env={"PATH": os.environ["PATH"]}, tail_bytes=20_000, trace=trace)
        python = PythonEnvSettings(
            extra_test_requirements=[], installer="uv", cache_dir=str(tmp_path / "cache")
        )
        settings = Settings(
            python=python, packages=PackageSources(index_url=url.replace(f"alice:{PASSWORD}", TOKEN))
        )
        venv = prepare_environment(
            copy, tmp_path / "env", settings, runner.boxed(policy.for_install(copy)), []
        )
    trace_text = (tmp_path / "trace.jsonl").read_text()
    assert "index_front" in venv.install and "--no-build" in trace_text  # the template's build was traced
    assert TOKEN not in trace_text
    assert not any(TOKEN in arg for r in venv.install_log for arg in r.argv)


# helper-41: a backend that, under uv, prints bwrap's "could not start" line (uv passes a backend's stderr
# on), so the tool took uv for not starting and fell back to pip; under pip it wrote ENV/pip.conf, which
# the bump's `pip --python ENV/bin/python` read: find-links into the repository's own fake acme-sdk 2.0.0.
DOWNGRADE_BACKEND = (
    r"""import os, sys, zipfile
def _under_uv():
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            c = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if len(c) > 2 and c[0].endswith(b"/uv") and c[1] == b"pip":
            return True
    return False
def _hook():
    if _under_uv():
        sys.stderr.write("bwrap: execvp uv: No such file or directory\n")
        raise SystemExit(1)
    env = os.path.dirname(os.path.dirname(sys.executable))
    with open(os.path.join(env, "pip.conf"), "w") as out:
        out.write("[global]\nfind-links = /codemod/repo/fakes\n")
"""
    + BUILD_HOOKS
)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_backend_cannot_send_the_bumps_install_to_its_own_copy_of_the_sdk(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch, installer: str
) -> None:
    """Under uv the backend's line is only part of uv's output: uv failed, it did not fail to start, and
    the install stays uv's (failed). Under pip (the config's choice) the pip.conf it leaves in ENV is read
    by no install: the sandboxed pip reads no configuration file."""
    from agentic_codemod.adapters.python.environment import install_dependencies

    copy = tmp_path / "copy"
    (copy / "fakes").mkdir(parents=True)
    wheel(
        copy / "fakes",
        "acme_sdk",
        "2.0.0",
        files={"acme/__init__.py": "FAKE = True\n__version__ = '2.0.0'\n"},
    )
    fake = copy / "fakes" / "acme_sdk-2.0.0-py3-none-any.whl"
    fake.rename(fake.with_name("acme_sdk-2.0.0-1-py3-none-any.whl"))  # a build tag: preferred to the index's
    (copy / "pyproject.toml").write_text(PYPROJECT)
    (copy / "backend.py").write_text(DOWNGRADE_BACKEND)
    with private_index(wheels, PASSWORD) as url:
        caller(monkeypatch, tmp_path, f"[global]\nindex-url = {url}\n")
        trace = Trace(tmp_path / "trace.jsonl", Redactor([PASSWORD]))
        policy = Policy("sandbox", tmp_path / "env", index_network=True)
        runner = SandboxRunner(env={"PATH": os.environ["PATH"]}, tail_bytes=20_000, trace=trace)
        python = PythonEnvSettings(extra_test_requirements=[], installer=installer, env_template_ttl_s=0)  # type: ignore[arg-type]
        settings = Settings(python=python)
        boxed = runner.boxed(policy.for_install(copy))
        venv = prepare_environment(copy, tmp_path / "env", settings, boxed, [])
        assert venv.install["installer"] == installer
        if installer == "uv":
            assert not venv.install_log[-1].ok  # uv ran the backend, which failed: no pip after it
            return
        assert all(r.ok for r in venv.install_log), venv.install_log[-1].output_tail
        assert (tmp_path / "env" / "pip.conf").is_file()  # the backend wrote it
        result = install_dependencies(copy, venv, settings, boxed, ["acme-sdk==2.0.0"])
    init = next((tmp_path / "env").rglob("site-packages/acme/__init__.py")).read_text()
    assert "FAKE" not in init and result.ok, result.output_tail


def test_the_lock_refresh_gets_the_callers_ca_but_no_client_key_and_no_proxy_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock tool runs the repository's backend against the indexes the repository names, where no
    front stands: the CA file goes in, the client key and a proxy's password do not (helper-41)."""
    from agentic_codemod.adapters.python.update import lock_env

    (tmp_path / "ca.pem").write_text("CA\n")
    (tmp_path / "client.pem").write_text(f"-----BEGIN {KEY_MARK}-----\n")
    caller(monkeypatch, tmp_path, "[global]\n")
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "ca.pem"))
    monkeypatch.setenv("PIP_CLIENT_CERT", str(tmp_path / "client.pem"))
    monkeypatch.setenv("PIP_PROXY", f"proxyuser:{PASSWORD}@proxy.example:3128")
    root = tmp_path / "copy"
    root.mkdir()
    env = lock_env(root, root)
    copies = sorted(p.name for p in (root / pip_config.CERT_DIR).iterdir())
    assert copies == ["cert.pem"] and env["SSL_CERT_FILE"] == f"{pip_config.CERT_DIR}/cert.pem"
    assert PASSWORD not in json.dumps(env) and "SSL_CLIENT_CERT" not in env
    monkeypatch.setenv("PIP_PROXY", "http://proxy.example:3128")  # no password: it goes in
    assert lock_env(root, root)["HTTPS_PROXY"] == "http://proxy.example:3128"


def test_the_tools_own_sources_teach_the_redactor_their_user_info() -> None:
    sources = PackageSources(
        index_url="https://tok%40en99@host.example/simple", local=["https://u:p%2Fw0rd@h/", "/w"]
    )
    assert set(sources.secrets()) == {"tok@en99", "tok%40en99", "p/w0rd", "p%2Fw0rd"}
    assert PackageSources(index_url="https://host.example/simple").secrets() == []


def test_the_default_index_is_a_source_where_the_install_would_ask_it() -> None:
    """helper-44: with only a private extra index configured, the install got the default index as
    BASE/o/https/pypi.org/simple, which the front refused (no page had named it): every PyPI package was
    404, and pip skips a 404 silently. It is a source of its own now."""
    config = {"extra-index-url": f"https://alice:{PASSWORD}@private.example/simple"}
    with index_front.front(config, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
        front = box.caller["extra-index-url"].removesuffix("/s0")
        assert box.caller["index-url"] == f"{front}/s1"
    with index_front.front(config, PackageSources(local_only=True), index_front.Limits(5.0, 1 << 20)) as box:
        assert "index-url" not in box.caller  # --no-index: no default index to ask


def test_two_sources_on_one_host_keep_their_own_credentials() -> None:
    """helper-44: credentials were kept per host, the first source's winning: project 1's token went to
    project 2's index and to a path configured without any."""
    config = {
        "index-url": "https://one:t0ken-one@gitlab.example/api/v4/projects/1/packages/pypi/simple",
        "extra-index-url": "https://two:t0ken-two@gitlab.example/api/v4/projects/2/packages/pypi/simple "
        "https://gitlab.example/public/simple",
    }
    from agentic_codemod.adapters.python.index_front_http import FrontServer

    server = FrontServer(config, PackageSources(), index_front.Limits(5.0, 1 << 20))
    try:
        for i, expected in enumerate([("one", "t0ken-one"), ("two", "t0ken-two"), None]):
            target, source = server.upstream(f"/{server.token}/s{i}/pkg/")  # type: ignore[misc]
            assert server.credentials(target, source) == (True, expected)
        assert server.upstream(f"/{server.token}/s\u00b2/pkg/") is None  # no crash on a non-ASCII digit
    finally:
        server.server_close()
        server.close_clients()


def test_every_pip_configuration_file_pip_would_read_is_a_secret_file(tmp_path: Path) -> None:
    """helper-44: files found through XDG_CONFIG_HOME / XDG_CONFIG_DIRS held a password the installs got
    through the front, and a box still showed them."""
    from agentic_codemod.adapters.python.credentials import secret_files

    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_CONFIG_DIRS": "/opt/xdg"}
    files = secret_files(environ)
    assert str(tmp_path / "xdg" / "pip" / "pip.conf") in files and "/opt/xdg/pip/pip.conf" in files
