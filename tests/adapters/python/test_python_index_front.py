"""An install that runs the repository's build backend and reaches a private index never holds the caller's
credentials: the index front (index_front.py) holds them. Real uv and pip in bubblewrap, a real private
index on loopback that answers only with the password (and, over TLS, only to the client certificate)."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from fixtures_support import PrivateIndex, private_index

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

# An in-tree backend that, whenever the installer calls it, records everything of the caller's secrets it
# can reach: its variables, the copies the tool used to put into the repository copy (.codemod-pip/), and
# every process's command line and environment the box shows it (the installer's among them).
PEEKING_BACKEND = """import os, zipfile
SECRET, KEY = "@SECRET@", "@KEY@"
def _peek():
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
META = "Metadata-Version: 2.1\\nName: app\\nVersion: 0.1\\nRequires-Dist: acme-sdk==1.4.0\\n"
def _wheel(wd):
    name = "app-0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wd, name), "w") as whl:
        whl.writestr("app-0.1.dist-info/METADATA", META)
        wheel = "Wheel-Version: 1.0\\nGenerator: b\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
        whl.writestr("app-0.1.dist-info/WHEEL", wheel)
        whl.writestr("app-0.1.dist-info/RECORD", "")
    return name
def get_requires_for_build_wheel(config_settings=None):
    _peek()
    return []
get_requires_for_build_editable = get_requires_for_build_wheel
def prepare_metadata_for_build_wheel(md, config_settings=None):
    _peek()
    os.makedirs(os.path.join(md, "app-0.1.dist-info"))
    open(os.path.join(md, "app-0.1.dist-info", "METADATA"), "w").write(META)
    return "app-0.1.dist-info"
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
def build_wheel(wd, config_settings=None, metadata_directory=None):
    _peek()
    return _wheel(wd)
build_editable = build_wheel
""".replace("@SECRET@", PASSWORD).replace("@KEY@", KEY_MARK)
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


@needs_bwrap
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_the_build_backend_sees_no_client_key_of_an_index_that_asks_for_one(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index over TLS that talks only to the caller's client certificate, signed by the caller's own CA.
    Before the front, the key went into the repository copy (.codemod-pip/client-cert.pem) beside the
    backend."""
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
        front = box.caller["index-url"].split("/https/")[0]
        assert front.startswith("http://127.0.0.1:")
        assert box.caller["index-url"] == f"{front}/https/pypi.corp.example/simple"
        assert box.caller["find-links"] == f"/wheels {front}/https/links.example/files/"
        assert box.packages.local == [f"{front}/https/more.example/wheels/", "/more"]


def test_nothing_secret_needs_no_front() -> None:
    config = {
        "index-url": "https://pypi.corp.example/simple",
        "cert": "/etc/ca.pem",
        "proxy": "http://p:3128",
    }
    assert not index_front.needed(config, PackageSources(index_url="https://mirror.example/simple"))
    with index_front.front(config, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
        assert box.caller == config


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
        front = box.caller["index-url"].split("/http/")[0]
        port_base = front.rsplit("/", 1)[0]
        assert httpx.get(f"{port_base}/wrong-token/http/127.0.0.1:9/simple").status_code == 404
        assert httpx.get(f"{front}/file/etc/passwd").status_code == 404
        assert httpx.post(box.caller["index-url"]).status_code == 501
        assert httpx.get(box.caller["index-url"]).status_code == 502  # port 9: nothing listens
        assert box.unreachable and "could not fetch url http://127.0.0.1:9" in box.unreachable[0]


def test_credentials_go_only_to_the_host_and_scheme_they_were_configured_for(wheels: Path) -> None:
    """The box names the upstream in the front's path: a password configured for an https index must not
    go to the same host over plain http (nor to another port of it)."""
    import httpx

    with private_index(wheels, PASSWORD) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        for configured, answer in ((url, 200), (url.replace("http://", "https://"), 401)):
            config = {"index-url": configured}
            with index_front.front(config, PackageSources(), index_front.Limits(5.0, 1 << 20)) as box:
                front = box.caller["index-url"].split("/http")[0]
                asked = httpx.get(f"{front}/http/127.0.0.1:{port}/simple/acme-sdk/")
                assert asked.status_code == answer, configured
