"""A cap in an extra the repository's own install asks for, however the install spells the asking
(install_plan.asked_extras; tests/test_transitive_sdk.py has the plain `acme-widgets[sdk]` line).

Each repository's install asks pip or uv for acme-widgets' `sdk` extra, directly or through a local
project's extra; acme-widgets 1.0.0 requires `acme-sdk<2; extra == "sdk"`, so the tests pass on 2.1.0 put
beside it while no installer would resolve the set. helper-52: each of these ended `succeeded`, exit 0
(the cap went unread); now exit 3, the cap named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures_support import ACME_APP, materialize, wheel

pytestmark = pytest.mark.slow

FINE_ON_BOTH = "import acme\n\n\ndef ready():\n    return bool(acme.__version__)\n"
TEST = "import acme_widgets\n\n\ndef test_widgets_are_ready():\n    assert acme_widgets.ready()\n"
CAP = 'acme-sdk<2; extra == "sdk"\nProvides-Extra: sdk'
PLUGIN_SETUP = (
    "from setuptools import setup\n"
    "setup(name='acme-plugin', version='1.0', py_modules=[],\n"
    "      extras_require={'sdk': ['acme-widgets[sdk]==1.0.0']})\n"
)
APP_SETUP = (
    "from setuptools import setup\n"
    "setup(name='acme-app', version='0.1', package_dir={'': 'src'}, packages=['acme_app'],\n"
    "      extras_require={'sdk': ['acme-widgets[sdk]==1.0.0']})\n"
)


def repo_of(tmp_path: Path, files: dict[str, str | bytes | None]) -> tuple[Path, Path]:
    house = tmp_path / "widgets-house"
    house.mkdir()
    wheel(house, "acme_widgets", "1.0.0", requires=(CAP,), files={"acme_widgets/__init__.py": FINE_ON_BOTH})
    src = tmp_path / "repo-src"
    shutil.copytree(ACME_APP, src)
    base: dict[str, str | bytes | None] = {"src/acme_app": None, "tests": None, "tests/test_widgets.py": TEST}
    for rel, text in {**base, **files}.items():
        target = src / rel
        if text is None:
            shutil.rmtree(target) if target.is_dir() else target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text) if isinstance(text, bytes) else target.write_text(text)
    repo = tmp_path / "repo"
    materialize.materialize(src, repo)
    return repo, house


def check(result) -> None:
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), (result.code, m["status"], m.get("reason"))
    assert "acme-widgets 1.0.0 requires acme-sdk<2" in m["reason"], m["reason"]


def test_a_wheel_path_with_extras(run_codemod, tmp_path: Path) -> None:
    """`./wheels/acme_widgets-1.0.0-py3-none-any.whl[sdk]`: pip strips the extras off a local path."""
    built = tmp_path / "built"
    built.mkdir()
    wheel(built, "acme_widgets", "1.0.0", requires=(CAP,), files={"acme_widgets/__init__.py": FINE_ON_BOTH})
    data = (built / "acme_widgets-1.0.0-py3-none-any.whl").read_bytes()
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n./wheels/acme_widgets-1.0.0-py3-none-any.whl[sdk]\n",
        "wheels/acme_widgets-1.0.0-py3-none-any.whl": data,
    }
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house)))


def test_a_local_folder_with_extras_not_editable(run_codemod, tmp_path: Path, build_backend: str) -> None:
    """`./plugin[sdk]` (no -e) in requirements.txt: the plugin's sdk extra asks for acme-widgets[sdk]."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n./plugin[sdk]\n", "plugin/setup.py": PLUGIN_SETUP}
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--find-links", build_backend))


def test_the_project_itself_with_extras_in_its_test_requirements(
    run_codemod, tmp_path: Path, build_backend: str
) -> None:
    """requirements-test.txt `.[sdk]` (a common spelling), the project installable (setup.py)."""
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n",
        "requirements-dev.txt": None,
        "requirements-test.txt": ".[sdk]\npytest\n",
        "setup.py": APP_SETUP,
        "src/acme_app/__init__.py": "",
    }
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--find-links", build_backend))


def test_an_editable_as_a_file_url(run_codemod, tmp_path: Path, build_backend: str) -> None:
    """`-e file:./plugin[sdk]` (uv reads the extras of a `file:` URL)."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n-e file:./plugin[sdk]\n", "plugin/setup.py": PLUGIN_SETUP}
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--find-links", build_backend))


def test_a_byte_order_mark_hides_the_first_line(run_codemod, tmp_path: Path) -> None:
    """A UTF-8 byte order mark (Windows editors): pip and uv strip it before line 1's name."""
    files = {"requirements.txt": "\ufeffacme-widgets[sdk]==1.0.0\nacme-sdk==1.4.0\n"}
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house)))


def pip_config(tmp_path: Path) -> str:
    config = tmp_path / "pip.yml"
    config.write_text("python:\n  installer: pip\n")
    return str(config)


@pytest.mark.parametrize(
    "requirements",
    [
        {"requirements.txt": "acme-sdk==1.4.0\nacme-widgets\\\n[sdk]==1.0.0\n"},
        {
            "requirements.txt": "acme-sdk==1.4.0\n-r more.txt --pre\n",
            "more.txt": "acme-widgets[sdk]==1.0.0\n",
        },
    ],
    ids=["extras-on-a-continued-line", "an-include-beside-another-option"],
)
def test_what_only_pip_reads_is_read_with_pip(run_codemod, tmp_path: Path, requirements: dict) -> None:
    """python.installer: pip (or uv that does not start): pip joins a continued line and reads an include
    beside other options (uv refuses both files: exit 3 on its own)."""
    repo, house = repo_of(tmp_path, requirements)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--config", pip_config(tmp_path)))


def test_an_editable_folder_written_without_a_slash(run_codemod, tmp_path: Path, build_backend: str) -> None:
    """helper-53: `-e plugin[sdk]` is the folder ./plugin to pip and uv (an editable is never a name); it
    was read as a package named plugin."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n-e plugin[sdk]\n", "plugin/setup.py": PLUGIN_SETUP}
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--find-links", build_backend))


def test_an_include_inside_a_constraints_file_with_pip(run_codemod, tmp_path: Path) -> None:
    """helper-53: pip reads `-r` inside a `-c` file as requirements (its nested_constraint)."""
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n-c constraints.txt\n",
        "constraints.txt": "-r more.txt\n",
        "more.txt": "acme-widgets[sdk]==1.0.0\n",
    }
    repo, house = repo_of(tmp_path, files)
    check(run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house), "--config", pip_config(tmp_path)))
