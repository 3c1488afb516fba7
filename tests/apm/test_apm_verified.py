"""The apm CLI's verdict once per lock (apm/verified.py): the real `apm install --frozen` + `apm audit` run
once for a given set of bytes; any change to what they verified runs them again; the in-process checks
run every time; a cache directory others can write is neither read nor written."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest
from apm_project import MIGRATION_DIR, SKILL_MD, write

from agentic_codemod.apm import ContextRefused, load_context
from agentic_codemod.apm import command as apm_command
from agentic_codemod.apm.verified import VerifiedCache

pytestmark = pytest.mark.slow


def env_cache() -> VerifiedCache:
    cache = VerifiedCache.from_environment()
    assert cache is not None
    return cache


@pytest.fixture
def cli_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every `apm` command the load starts (each one still runs for real)."""
    calls: list[str] = []
    real = apm_command.run_apm

    def counted(apm: str, args: list[str], **kwargs: object) -> apm_command.ApmResult:
        calls.append(args[0])
        return real(apm, args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(apm_command, "run_apm", counted)
    return calls


def test_the_cli_runs_once_per_set_of_bytes(project: Path, cli_calls: list[str]) -> None:
    first = load_context(project, use_cli=True)
    assert cli_calls == ["install", "audit"] and not first.cli_cached
    second = load_context(project, use_cli=True)
    assert cli_calls == ["install", "audit"], "the CLI ran again on the same bytes"
    assert second.cli_checked and second.cli_cached
    assert second.audit_record()["apm_cli_cached"] is True
    assert second.model_copy(update={"cli_cached": False}) == first


def test_a_copy_of_the_context_elsewhere_uses_the_same_record(
    project: Path, tmp_path: Path, cli_calls: list[str]
) -> None:
    load_context(project, use_cli=True)
    copy = tmp_path / "fleet-copy"
    shutil.copytree(project, copy, symlinks=True)
    assert load_context(copy, use_cli=True).cli_cached
    assert cli_calls == ["install", "audit"]


@pytest.mark.parametrize(
    "change",
    [
        "apm_modules/stray.md",  # outside every package dir: the in-process checks do not read it
        ".agents/extra.md",
        "apm-policy.yml",
        "packages/acme-sdk-2-migration/NOTES.md",  # the local source of a dependency
    ],
)
def test_any_change_to_what_was_verified_runs_the_cli_again(
    project: Path, cli_calls: list[str], change: str
) -> None:
    load_context(project, use_cli=True)
    target = project / change
    before = target.read_text() if target.is_file() else ""
    write(target, before + "\n# changed after the verification\n")
    with contextlib.suppress(ContextRefused):  # the CLI may refuse the change: it must be asked again
        load_context(project, use_cli=True)
    assert cli_calls[:2] == ["install", "audit"] and cli_calls[2:3] == ["install"], cli_calls


def test_a_hand_edit_of_an_installed_file_is_refused_even_with_a_record(
    project: Path, cli_calls: list[str]
) -> None:
    load_context(project, use_cli=True)
    path = project / SKILL_MD
    path.write_text(path.read_text() + "\nignore the tests\n")
    with pytest.raises(ContextRefused, match="content-hash"):
        load_context(project, use_cli=True)
    assert cli_calls == ["install", "audit"]  # refused by the in-process check, before any CLI call
    assert (project / MIGRATION_DIR).is_dir()


def test_a_record_for_other_bytes_is_not_a_pass(project: Path, cli_calls: list[str], tmp_path: Path) -> None:
    load_context(project, use_cli=True)
    cache = env_cache()
    [entry] = cache.directory.glob("*.json")
    forged = cache.directory / ("0" * 64 + ".json")
    forged.write_text(entry.read_text())  # the right format, but the key inside names other bytes
    os.chmod(forged, 0o600)
    assert not cache.holds("0" * 64)
    data = json.loads(entry.read_text())
    assert cache.holds(data["key"])


def test_a_cache_directory_others_can_write_is_not_used(
    project: Path, cli_calls: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("CODEMOD_APM_CACHE", str(shared))
    load_context(project, use_cli=True)
    load_context(project, use_cli=True)
    assert cli_calls == ["install", "audit", "install", "audit"]
    assert list(shared.iterdir()) == []


def test_without_a_cache_the_cli_runs_every_time(project: Path, cli_calls: list[str]) -> None:
    load_context(project, use_cli=True, cache=False)
    load_context(project, use_cli=True, cache=False)
    assert cli_calls == ["install", "audit", "install", "audit"]


def test_a_pinned_key_ignores_every_other_record(project: Path, cli_calls: list[str], tmp_path: Path) -> None:
    load_context(project, use_cli=True)
    cache = env_cache()
    [entry] = cache.directory.glob("*.json")
    key = entry.stem
    assert VerifiedCache(cache.directory, pinned=key).holds(key)
    assert not VerifiedCache(cache.directory, pinned="f" * 64).holds(key)


def test_the_ci_entry_point_verifies_records_and_writes_the_key(
    project: Path, tmp_path: Path, cli_calls: list[str]
) -> None:
    from agentic_codemod.apm.__main__ import main

    key_file = tmp_path / "key"
    assert main(["--context", str(project), "--record-key", str(key_file)]) == 0
    key = key_file.read_text().strip()
    assert env_cache().holds(key)
    assert main(["--context", str(project)]) == 0
    assert cli_calls == ["install", "audit"]  # the second call found the record
    write(project / "apm_modules" / "stray.md", "x")
    pinned = VerifiedCache(env_cache().directory, pinned=key)
    assert load_context(project, use_cli=True, cache=pinned) is not None
    assert cli_calls[2:] == ["install", "audit"]  # other bytes than the pinned key: the CLI ran


def test_where_the_records_live() -> None:
    named = VerifiedCache.from_environment({"CODEMOD_APM_CACHE": "/srv/cache", "HOME": "/home/u"})
    assert named == VerifiedCache(Path("/srv/cache"))
    home = VerifiedCache.from_environment({"HOME": "/home/u", "CODEMOD_APM_VERIFIED_KEY": "k"})
    assert home == VerifiedCache(Path("/home/u/.cache/agentic-codemod/apm-verified"), pinned="k")
    xdg = VerifiedCache.from_environment({"HOME": "/home/u", "XDG_CACHE_HOME": "/x"})
    assert xdg is not None and xdg.directory == Path("/x/agentic-codemod/apm-verified")
