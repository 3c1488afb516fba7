"""installed_files.unlisted: a distribution's package folders hold only what its RECORD lists (the bump
reinstalls its pins, and an installer leaves what a RECORD does not list)."""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

import pytest

from agentic_codemod.adapters.python.installed_files import unlisted


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
    ("planted", "package"),
    [
        ("widget/__init__.so", "widget"),  # imported before __init__.py
        (f"widget/sub/client{EXTENSION}", "widget"),  # found walking the outer package
        ("widget/new/x.py", "widget"),
    ],
)
def test_a_file_in_the_package_its_record_does_not_list_is_named(
    tmp_path: Path, planted: str, package: str
) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/__init__.py", "widget/sub/__init__.py"])
    (site / planted).parent.mkdir(parents=True, exist_ok=True)
    (site / planted).write_text("")
    assert (
        unlisted(tmp_path, "widget")
        == f"{planted} is inside widget's package {package} but not in its RECORD"
    )


def test_a_link_in_the_package_is_named_and_not_followed(tmp_path: Path) -> None:
    site = installed(tmp_path, "widget-1.1.0.dist-info", ["widget/__init__.py"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (site / "widget" / "client").symlink_to(outside, target_is_directory=True)
    assert (
        unlisted(tmp_path, "widget")
        == "widget/client is inside widget's package widget but not in its RECORD"
    )


def test_a_package_or_extension_beside_a_top_level_module_is_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "six-1.17.0.dist-info", ["six.py"])
    assert unlisted(tmp_path, "six") is None
    (site / "six").mkdir()
    (site / "six" / "__init__.py").write_text("old code")
    assert unlisted(tmp_path, "six") == "six is beside six's module six.py but not in its RECORD"


def test_two_dist_infos_of_one_name_are_named(tmp_path: Path) -> None:
    site = installed(tmp_path, "Widget-1.1.0.dist-info", ["widget/__init__.py"])
    (site / "widget-1.0.0.dist-info").mkdir()
    assert unlisted(tmp_path, "widget") == (
        "2 distributions are named widget in the environment (Widget-1.1.0.dist-info, widget-1.0.0.dist-info)"
    )


def test_a_namespace_folder_holding_other_distributions_is_not_walked(tmp_path: Path) -> None:
    site = installed(tmp_path, "acme_auth-1.0.dist-info", ["acme/auth/__init__.py"])
    (site / "acme" / "storage").mkdir()
    (site / "acme" / "storage" / "__init__.py").write_text("")  # acme-storage's, not acme-auth's
    assert unlisted(tmp_path, "acme-auth") is None
