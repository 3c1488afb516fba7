"""installed_files.unlisted: a distribution's package folders hold only what its RECORD lists (the bump
reinstalls its pins, and an installer leaves what a RECORD does not list)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python.installed_files import dist_infos, fresh_bytecode, unlisted, written


def installed(env: Path, dist: str, files: list[str]) -> Path:
    """A venv's site-packages holding `files` (relative to it) under the dist-info `dist`, RECORD listing
    them all."""
    site = env / "lib" / "python3.11" / "site-packages"
    record = [*files, f"{dist}/METADATA", f"{dist}/RECORD"]
    for rel in files:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    (site / dist).mkdir(parents=True)
    (site / dist / "METADATA").write_text("Metadata-Version: 2.1\nName: x\nVersion: 1\n")
    (site / dist / "RECORD").write_text("".join(f"{r},,\n" for r in record))
    return site


def test_a_package_as_its_record_lists_it_with_its_bytecode_passes(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/__init__.py", "widget/sub/__init__.py"])
    (site / "widget" / "__pycache__").mkdir()
    (site / "widget" / "__pycache__" / "__init__.cpython-311.pyc").write_text("")
    (site / "gear").mkdir()
    (site / "gear" / "__init__.py").write_text("")  # another distribution's package
    assert unlisted(tmp_path, "widget") is None
    assert unlisted(tmp_path, "not-installed") is None  # the listing says what is missing


EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]  # ".cpython-311-x86_64-linux-gnu.so"


@pytest.mark.parametrize(
    ("planted", "before"),
    [
        ("widget/__init__.so", "widget/__init__.py"),  # an extension before the package's source
        (f"widget/sub/__init__{EXTENSION}", "widget/sub/__init__.py"),
        (f"widget/client{EXTENSION}", "widget/client.py"),
        ("widget/client/__init__.py", "widget/client.py"),  # a package before the module
    ],
)
def test_what_python_imports_before_a_listed_module_is_named(
    tmp_path: Path, planted: str, before: str
) -> None:
    files = ["widget/__init__.py", "widget/sub/__init__.py", "widget/client.py"]
    site = installed(tmp_path, "widget-1.1.0.dist-info", files)
    (site / planted).parent.mkdir(parents=True, exist_ok=True)
    (site / planted).write_text("")
    shadow = planted.removesuffix("/__init__.py")
    assert (
        unlisted(tmp_path, "widget")
        == f"{shadow} is not in widget's RECORD, and Python imports it before {before}"
    )


def test_other_unlisted_files_are_left_to_the_folders_other_distributions(tmp_path: Path) -> None:
    """backports/ is a regular package shared by backports.tarfile and backports.zstd (each ships its
    __init__.py): the one's files are not the other's RECORD's (this tool's own venv holds the pair)."""
    site = installed(
        tmp_path,
        "backports_tarfile-1.2.0.dist-info",
        ["backports/__init__.py", "backports/tarfile/__init__.py"],
    )
    installed(tmp_path, "backports_zstd-1.0.dist-info", ["backports/zstd/__init__.py"])
    installed(tmp_path, "backports.functools_lru_cache-2.0.dist-info", ["backports/functools_lru_cache.py"])
    (site / "backports" / "tarfile" / "notes.txt").write_text("")  # data: no module
    assert unlisted(tmp_path, "backports-tarfile") is None


@pytest.mark.parametrize("left", ["acme/errors.py", "acme/legacy/__init__.py", f"acme/_speedups{EXTENSION}"])
def test_a_module_in_a_package_of_its_own_that_no_record_lists_is_named(tmp_path: Path, left: str) -> None:
    """helper-49: code in the environment took acme-sdk 1.4.0's dist-info away before the bump's install,
    which then removed nothing of 1.x: its acme/errors.py stood beside 2.1.0's files, and the tests passed
    on it (`succeeded`, exit 0)."""
    site = installed(tmp_path, "acme_sdk-2.1.0.dist-info", ["acme/__init__.py", "acme/exceptions.py"])
    (site / left).parent.mkdir(parents=True, exist_ok=True)
    (site / left).write_text("")
    (site / ".acme_sdk-1.4.0.hidden").mkdir()  # the old dist-info, renamed: no RECORD any installer reads
    (site / ".acme_sdk-1.4.0.hidden" / "RECORD").write_text(f"{left},,\n")
    named = left.removesuffix("/__init__.py")
    expected = f"{named} is in a package of acme-sdk's, and no installed distribution's RECORD lists it"
    assert unlisted(tmp_path, "acme-sdk") == expected


def test_a_folder_on_the_way_to_the_files_that_is_a_link_is_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/sub/__init__.py"])
    (site / "widget" / "sub").rename(tmp_path / "elsewhere")
    (site / "widget" / "sub").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert unlisted(tmp_path, "widget") == "widget/sub is a link on the way to widget's files"


def test_a_package_or_extension_beside_a_top_level_module_is_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "six-1.17.0.dist-info", ["six.py"])
    assert unlisted(tmp_path, "six") is None
    (site / "six").mkdir()
    (site / "six" / "__init__.py").write_text("old code")
    assert unlisted(tmp_path, "six") == "six is not in six's RECORD, and Python imports it before six.py"


def test_a_record_that_is_a_fifo_or_a_link_is_unreadable_and_never_blocks(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/__init__.py"])
    record = site / "widget-1.1.0.dist-info" / "RECORD"
    record.unlink()
    os.mkfifo(record)  # a plain open would wait for a writer that never comes
    assert unlisted(tmp_path, "widget") == "widget-1.1.0.dist-info/RECORD cannot be read"
    record.unlink()
    (tmp_path / "host-record").write_text("widget/__init__.py,,\n")
    record.symlink_to(tmp_path / "host-record")
    assert unlisted(tmp_path, "widget") == "widget-1.1.0.dist-info/RECORD cannot be read"


def test_a_dist_info_that_is_a_link_is_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/__init__.py"])
    (site / "widget-1.1.0.dist-info").rename(tmp_path / "elsewhere.dist-info")
    (site / "widget-1.1.0.dist-info").symlink_to(tmp_path / "elsewhere.dist-info", target_is_directory=True)
    assert unlisted(tmp_path, "widget") == "widget-1.1.0.dist-info is not a folder of the environment's own"


def test_two_dist_infos_of_one_name_are_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "Widget-1.1.0.dist-info", ["widget/__init__.py"])
    (site / "widget-1.0.0.dist-info").mkdir()
    assert unlisted(tmp_path, "widget") == (
        "2 distributions are named widget in the environment (Widget-1.1.0.dist-info, widget-1.0.0.dist-info)"
    )


def test_a_namespace_folder_holding_other_distributions_is_left_alone(tmp_path: Path) -> None:
    site = installed(tmp_path, "acme_auth-1.0.dist-info", ["acme/auth/__init__.py"])
    (site / "acme" / "storage").mkdir()
    (site / "acme" / "storage" / "__init__.py").write_text("")  # acme-storage's, not acme-auth's
    assert unlisted(tmp_path, "acme-auth") is None


@pytest.mark.parametrize(
    ("planted", "before"),
    [
        ("w/_core/__init__.py", "w/_core.abi3.so"),  # a package before a listed extension
        (f"w/_core{EXTENSION}", "w/_core.abi3.so"),  # an extension suffix tried before .abi3.so
    ],
)
def test_what_python_imports_before_a_listed_extension_is_named(
    tmp_path: Path, planted: str, before: str
) -> None:
    """The third review's case (cryptography ships `_rust.abi3.so`): only .py files were looked at."""
    site = installed(tmp_path, "w-1.0.dist-info", ["w/__init__.py", "w/_core.abi3.so"])
    (site / planted).parent.mkdir(parents=True, exist_ok=True)
    (site / planted).write_text("")
    shadow = planted.removesuffix("/__init__.py")
    assert unlisted(tmp_path, "w") == f"{shadow} is not in w's RECORD, and Python imports it before {before}"


def test_the_bytecode_of_listed_sources_is_written_afresh_in_a_cache_made_read_only(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget.py"])
    (site / "widget.py").write_text("__version__ = '1.1.0'\n")
    old = tmp_path / "old.py"
    old.write_text("__version__ = '1.0.0'\n")
    cache = site / "__pycache__"
    cache.mkdir()
    pyc = Path(importlib.util.cache_from_source(str(site / "widget.py")))
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    py_compile.compile(str(old), cfile=str(pyc), invalidation_mode=unchecked)
    cache.chmod(0o555)

    fresh_bytecode(tmp_path, "widget")

    assert pyc.is_file() and pyc.read_bytes() != b""
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0  # a timestamp pyc of the listed source, checked against it at import
    done = subprocess.run(
        [sys.executable, "-c", "import widget; print(widget.__version__)"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "1.1.0", done


def test_a_pyvenv_cfg_the_baseline_left_as_a_fifo_never_blocks_the_copy(tmp_path: Path) -> None:
    from agentic_codemod.adapters.python.environment import _relocatable

    os.mkfifo(tmp_path / "pyvenv.cfg")  # a plain read waits for a writer forever
    assert not _relocatable(tmp_path)
    (tmp_path / "pyvenv.cfg").unlink()
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nrelocatable = true\n")
    assert _relocatable(tmp_path)


def test_a_lockfile_nested_past_the_parsers_depth_locks_nothing() -> None:
    from agentic_codemod.adapters.python.lockfile import locked_versions

    assert not locked_versions("a = " + "[" * 100_000 + "]" * 100_000)
    assert not locked_versions("[" * 100_000 + "]" * 100_000)


def test_an_install_wrote_its_pins_and_every_distribution_added_or_replaced(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.0.0.dist-info", ["widget.py"])
    installed(tmp_path, "Old_Dep-1.0.dist-info", ["old_dep.py"])
    installed(tmp_path, "kept-2.0.dist-info", ["kept.py"])
    decoy = tmp_path / "lib" / "python3.99" / "site-packages" / "new_dep-0.3.dist-info"
    decoy.mkdir(parents=True)  # the same name elsewhere beforehand hides nothing
    before = dist_infos(tmp_path)
    assert {folder for _, folder, _, _ in before} == {
        "widget-1.0.0.dist-info", "Old_Dep-1.0.dist-info", "kept-2.0.dist-info", "new_dep-0.3.dist-info"
    }  # fmt: skip
    for folder in ("widget-1.0.0.dist-info", "Old_Dep-1.0.dist-info"):
        (site / folder).rename(site / folder.replace("1.0", "1.1"))  # widget 1.1.0, Old_Dep 1.1
    installed(tmp_path, "new_dep-0.3.dist-info", ["new_dep.py"])

    assert written(tmp_path, before, ["widget"]) == ["widget", "new-dep", "old-dep"]
    assert written(tmp_path, dist_infos(tmp_path), ["widget"]) == ["widget"]  # nothing new since
    shutil.rmtree(site / "kept-2.0.dist-info")
    installed(tmp_path, "kept-2.0.dist-info", ["kept.py"])  # made anew under the same name: a reinstall
    assert written(tmp_path, before, []) == ["kept", "new-dep", "old-dep", "widget"]


@pytest.mark.parametrize("link", ["lib", "lib/python3.98", "lib/python3.11/site-packages"])
def test_a_link_on_the_way_to_site_packages_is_refused_never_followed(tmp_path: Path, link: str) -> None:
    """Code that ran in the environment can make a folder on the way a link to a host folder: the host
    would read its dist-infos, count them as written and rewrite their bytecode."""
    env, host = tmp_path / "env", tmp_path / "host"
    installed(host, "foo-1.0.dist-info", ["foo.py"])
    installed(env, "widget-1.1.0.dist-info", ["widget.py"])
    before = dist_infos(env)
    leads_to = {"lib/python3.98": "lib/python3.11"}.get(link, link)
    if (env / link).exists():
        shutil.rmtree(env / link)
    (env / link).symlink_to(host / leads_to)

    with pytest.raises(OSError, match="is a link"):
        written(env, before, ["widget"])
    assert (unlisted(env, "widget") or "").endswith("is a link")
    assert not (host / "lib/python3.11/site-packages/__pycache__").exists()  # nothing written there
