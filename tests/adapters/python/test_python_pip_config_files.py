"""pip is not started to read a configuration that cannot exist, and only then: the places checked cover
every file pip's own list names, and a file or a PIP_* variable anywhere sends the question to pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import pip_config

PIPS_FILES = (
    "import json; from pip._internal.configuration import get_configuration_files as files; "
    "print(json.dumps([f for kind in files().values() for f in kind]))"
)


def pips_own_files(environ: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PIPS_FILES], env=environ, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(home)}


@pytest.mark.skipif(sys.platform != "linux", reason="the short cut is taken on Linux only")
def test_every_file_pip_reads_is_a_place_checked(tmp_path: Path) -> None:
    environ = _home(tmp_path)
    checked = {os.path.normpath(path) for path in pip_config.candidate_files(environ)}
    pips = {os.path.normpath(path) for path in pips_own_files(environ)}
    assert pips and pips <= checked, pips - checked


@pytest.mark.parametrize(
    "xdg",
    [
        {"XDG_CONFIG_HOME": "/srv/xdg-home"},
        {"XDG_CONFIG_DIRS": "~/xdg"},  # pip 23 expands the ~, pip 26 does not
        {"XDG_CONFIG_HOME": "  /srv/padded  ", "XDG_CONFIG_DIRS": "/srv/a: /srv/b :relative"},
        {"XDG_CONFIG_DIRS": ""},
    ],
)
def test_an_xdg_config_variable_asks_pip(tmp_path: Path, xdg: dict[str, str]) -> None:
    """How pip reads these has changed between its versions, and the run starts whichever pip is there."""
    assert not pip_config.nothing_to_read({**_home(tmp_path), **xdg})


def _pip_must_not_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip was started")

    monkeypatch.setattr(pip_config.subprocess, "run", refuse)


@pytest.mark.skipif(sys.platform != "linux", reason="the short cut is taken on Linux only")
def test_no_file_and_no_variable_is_read_without_starting_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    environ = _home(tmp_path)
    on_this_machine = [path for path in pip_config.candidate_files(environ) if os.path.lexists(path)]
    if on_this_machine:
        pytest.skip(f"this machine has pip configuration of its own: {on_this_machine}")
    assert pips_own_files(environ)  # pip has places to look, and none of them exists
    _pip_must_not_start(monkeypatch)
    assert pip_config.nothing_to_read(environ)
    assert pip_config.read_caller_config(environ) == {}


def test_a_users_file_is_read_by_pip(tmp_path: Path) -> None:
    environ = _home(tmp_path)
    conf = Path(environ["HOME"]) / ".config" / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("[global]\nindex-url = https://bob:hunter2-index@pypi.corp.example/simple\n")
    assert not pip_config.nothing_to_read(environ)
    config = pip_config.read_caller_config(environ)
    assert config["index-url"] == "https://bob:hunter2-index@pypi.corp.example/simple"
    assert pip_config.credentials(config) == ["hunter2-index"]


@pytest.mark.parametrize(
    "extra",
    [
        {"PIP_INDEX_URL": "https://carol:tok-123@pypi.corp.example/simple"},
        {"PIP_CONFIG_FILE": "/dev/null"},
        {"HOME": ""},
    ],
)
def test_a_pip_variable_or_no_home_asks_pip(tmp_path: Path, extra: dict[str, str]) -> None:
    environ = {**_home(tmp_path), **extra}
    assert not pip_config.nothing_to_read(environ)
    if "PIP_INDEX_URL" in extra:
        config = pip_config.read_caller_config(environ)
        assert config["index-url"] == extra["PIP_INDEX_URL"]
        assert pip_config.credentials(config) == ["tok-123"]


def test_the_short_cut_is_taken_only_where_no_place_checked_holds_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same decision on any machine: the places are the home's only (this machine's /etc may hold a
    pip.conf, which the test above skips for)."""
    environ = _home(tmp_path)
    places = [f"{environ['HOME']}/.pip/pip.conf", f"{environ['HOME']}/.config/pip/pip.conf"]
    monkeypatch.setattr(pip_config, "candidate_files", lambda _environ: places)
    monkeypatch.setattr(pip_config.sys, "platform", "linux")
    _pip_must_not_start(monkeypatch)
    assert pip_config.read_caller_config(environ) == {}
    Path(places[0]).parent.mkdir()
    Path(places[0]).write_text("")  # even an empty file: pip decides
    with pytest.raises(AssertionError, match="pip was started"):
        pip_config.read_caller_config(environ)
