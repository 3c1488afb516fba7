"""The caller's pip configuration reaches the pip inside the sandbox; its credentials reach no artifact."""

from __future__ import annotations

import base64
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import pip_config
from agentic_codemod.adapters.python.environment import prepare_environment
from agentic_codemod.config import PythonEnvSettings, Settings
from agentic_codemod.tools.sandbox import Policy, probe
from agentic_codemod.tools.trace import Redactor, Trace
from agentic_codemod.tools.verification import SandboxRunner

PASSWORD = "s3cr3t-index-pass"


def caller_env(tmp_path: Path, conf: str, **variables: str) -> dict[str, str]:
    (tmp_path / "pip.conf").write_text(conf)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PIP_CONFIG_FILE": str(tmp_path / "pip.conf"),
        **variables,
    }


def test_pips_own_reading_of_files_and_variables_in_its_order(tmp_path: Path) -> None:
    conf = (
        "[global]\nindex-url = https://alice:" + PASSWORD + "@pypi.corp.example/simple\n"
        "trusted-host = pypi.corp.example\ntimeout = 30\n"
        "[install]\ntrusted-host = pypi.corp.example mirror.corp.example\n"
    )
    env = caller_env(tmp_path, conf, PIP_EXTRA_INDEX_URL="https://glpat-tokenvalue123@gitlab.example/simple")
    config = pip_config.read_caller_config(env)
    assert config["index-url"] == f"https://alice:{PASSWORD}@pypi.corp.example/simple"
    assert config["trusted-host"] == "pypi.corp.example mirror.corp.example"  # [install] over [global]
    assert pip_config.install_env(config) == {
        "PIP_INDEX_URL": f"https://alice:{PASSWORD}@pypi.corp.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://glpat-tokenvalue123@gitlab.example/simple",
        "PIP_TRUSTED_HOST": "pypi.corp.example mirror.corp.example",
        "PIP_TIMEOUT": "30",
        "PIP_CONFIG_FILE": os.devnull,  # the sandboxed pip reads no configuration file but these
    }
    assert pip_config.credentials(config) == [PASSWORD, "glpat-tokenvalue123"]


def test_a_pip_package_in_the_working_directory_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller may start a run from a repository's checkout (the CI template does, for a project that
    migrates itself): its `pip` package must not stand in for pip in the tool's own, unsandboxed process."""
    checkout = tmp_path / "checkout"
    (checkout / "pip").mkdir(parents=True)
    marker = tmp_path / "ran-on-the-host"
    forged = "global.index-url='https://forged.example/simple'"
    (checkout / "pip" / "__init__.py").write_text("")
    (checkout / "pip" / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\nprint({forged!r})\n")
    env = caller_env(tmp_path, "[global]\nindex-url = https://pypi.corp.example/simple\n")
    monkeypatch.chdir(checkout)
    assert pip_config._read(env)["index-url"] == "https://pypi.corp.example/simple"  # pip read it
    assert not marker.exists()


def test_the_file_pip_reads_last_wins_whatever_the_files_are_named(tmp_path: Path) -> None:
    """`pip config list` prints each file's keys sorted by the file's name: a machine-wide file named after
    the caller's PIP_CONFIG_FILE won there, so the machine's CA went to a caller's private index (its
    client-certificate test failed wherever the temp folder sorted before /etc)."""
    (tmp_path / "zz-machine" / "pip").mkdir(parents=True)
    (tmp_path / "zz-machine" / "pip" / "pip.conf").write_text(
        "[global]\ncert = /machine/ca.pem\ntimeout = 9\n"
    )
    (tmp_path / "aa-caller").mkdir()
    env = caller_env(tmp_path / "aa-caller", "[global]\ncert = /caller/ca.pem\n")
    env["XDG_CONFIG_DIRS"] = str(tmp_path / "zz-machine")  # pip's global files: $XDG_CONFIG_DIRS/pip/pip.conf
    read = pip_config._read(env)
    assert read["cert"] == "/caller/ca.pem"  # PIP_CONFIG_FILE comes after the global files
    assert read["timeout"] == "9"  # the global file is read all the same


def test_variables_win_over_files_and_default_timeout_is_timeout() -> None:
    listed = "global.index-url='https://a.example/simple'\n:env:.index-url='https://b.example/simple'\n"
    listed += ":env:.default-timeout='180'\ninstall.cert='/x/ca.pem'\nnonsense line\n"
    assert pip_config.parse_config_list(listed) == {
        "index-url": "https://b.example/simple",
        "timeout": "180",
        "cert": "/x/ca.pem",
    }


def test_certificates_are_copied_into_the_copy_and_given_as_arguments(tmp_path: Path) -> None:
    ca = tmp_path / "corp-ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
    copy = tmp_path / "copy"
    copy.mkdir()
    args = pip_config.cert_args({"cert": str(ca), "client-cert": str(tmp_path / "missing.pem")}, copy)
    assert args == ["--cert", str(copy / ".codemod-pip" / "cert.pem")]
    assert (copy / ".codemod-pip" / "cert.pem").read_text() == ca.read_text()


class _Index(http.server.SimpleHTTPRequestHandler):
    """A PEP 503 index over a wheel directory (http.server's listings are its link pages), recording the
    Authorization header of every request."""

    seen: list[str] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Authorization", ""))
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path, wheels: Path) -> Iterator[str]:
    simple = tmp_path / "index" / "simple"
    for wheel in wheels.glob("*.whl"):
        name = wheel.name.split("-")[0].replace("_", "-").lower()
        (simple / name).mkdir(parents=True, exist_ok=True)
        shutil.copy(wheel, simple / name / wheel.name)
    handler = lambda *a: _Index(*a, directory=str(tmp_path / "index"))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Index.seen = []
    try:
        yield f"http://alice:{PASSWORD}@127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.skipif(probe() is not None, reason="bubblewrap cannot start here")
@pytest.mark.parametrize("installer", ["auto", "pip"])
def test_a_private_index_from_the_callers_config_serves_the_sandboxed_install(
    tmp_path: Path, index: str, monkeypatch: pytest.MonkeyPatch, installer: str
) -> None:
    """Through uv or pip. The repository copy the install runs in holds a `pip` and a `venv` package that
    would write out the caller's index URL (password included) if they ran in place of the real ones."""
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    (tmp_path / "pip.conf").write_text(f"[global]\nindex-url = {index}\n")
    monkeypatch.setenv("PIP_RETRIES", "0")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "requirements.txt").write_text("acme-sdk==1.4.0\n")
    steal = "import os\nopen('stolen.txt', 'w').write(os.environ.get('PIP_INDEX_URL', 'none'))\n"
    for name in ("pip", "venv"):
        (copy / name).mkdir()
        (copy / name / "__init__.py").write_text("")
        (copy / name / "__main__.py").write_text(steal)
    redactor = Redactor(pip_config.credentials(pip_config.read_caller_config(os.environ)))
    trace = Trace(tmp_path / "trace.jsonl", redactor)
    env = {"PATH": os.environ["PATH"]}
    policy = Policy("sandbox", tmp_path / "env", index_network=True)
    runner = SandboxRunner(env=env, tail_bytes=20_000, trace=trace).boxed(policy.for_install(copy))
    python = PythonEnvSettings(extra_test_requirements=[], installer=installer)  # type: ignore[arg-type]
    settings = Settings(python=python)

    venv = prepare_environment(copy, tmp_path / "env", settings, runner, [])

    assert not (copy / "stolen.txt").exists(), "the copy's own pip or venv package ran in the install box"
    assert all(r.ok for r in venv.install_log), venv.install_log[-1].output_tail
    if installer == "pip":  # the pip path itself, not uv's
        assert venv.install["installer"] == "pip"
    assert f"Basic {base64.b64encode(f'alice:{PASSWORD}'.encode()).decode()}" in _Index.seen
    assert PASSWORD not in (tmp_path / "trace.jsonl").read_text()
    assert not any(PASSWORD in arg for r in venv.install_log for arg in r.argv)  # on no command line
    listing = [str(p) for p in (tmp_path / "env").rglob("*acme_sdk-1.4.0.dist-info")]
    assert listing, "acme-sdk was not installed"
