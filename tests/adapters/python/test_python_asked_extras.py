"""install_plan.asked_extras: the extras a repository's own install asks of each distribution, outside any
installed METADATA (what installed_files.capping reads a cap in an extra by; tests/test_transitive_sdk.py
has the end-to-end case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.python.install_plan import InstallPlan, asked_extras, local_key, plan_install
from agentic_codemod.config import Settings


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_requirement_strings_and_files_followed_through_includes_ask_for_their_extras(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "requirements.txt": "Acme_Widgets[SDK,Cloud]==1.0  # note\n-r requirements/base.txt\nplain\n",
            "requirements/base.txt": 'kit[extra] ; python_version >= "3"\nold[x]; python_version < "3"\n',
            "requirements/unread.txt": "never[named]\n",  # not in the plan, not included
        },
    )
    plan = InstallPlan(requirement_files=["requirements.txt"], requirements=["tox-dep[fast]>=2", "bare"])
    assert asked_extras(root, plan) == {
        "acme-widgets": ["cloud", "sdk"],
        "kit": ["extra"],
        "tox-dep": ["fast"],
    }


def test_a_marker_no_one_can_evaluate_asks_for_its_extras(tmp_path: Path) -> None:
    plan = InstallPlan(requirements=['widgets[sdk]; os_name ~= "posix"'])  # ~= on a name: undefined
    assert asked_extras(tmp_path, plan) == {"widgets": ["sdk"]}  # counted: a cap missed is a false success


def test_the_repositorys_own_projects_are_keyed_by_their_folder(tmp_path: Path) -> None:
    root = write(tmp_path, {"requirements.txt": "-e ./libs/helper[sdk]\n", "libs/helper/setup.py": ""})
    plan = InstallPlan(
        requirement_files=["requirements.txt"],
        project=".[test,dev]",
        editables=["./plugin[Cloud]", "git+https://example.invalid/x.git#egg=x[y]", "plain"],
    )
    assert asked_extras(root, plan) == {
        "./plugin": ["cloud"],
        "x": ["y"],  # #egg=NAME[extras], as pip reads it
        ".": ["dev", "test"],
        "./libs/helper": ["sdk"],
    }


def test_local_key_names_a_folder_as_capping_reads_it_from_a_copy_url() -> None:
    assert [local_key(p) for p in ("", ".", "./", "plugin", "./plugin/", "a/../b")] == [
        ".",
        ".",
        ".",
        "./plugin",
        "./plugin",
        "./b",
    ]


SETUP = "from setuptools import setup\nsetup(name='app')\n"
WHEEL = "w/acme_widgets-1.0.0-py3-none-any.whl"
# helper-52: each of these asks pip or uv for acme-widgets' (or a local project's) `sdk` extra, and each
# was read as asking for nothing: the cap in that extra went unseen, `succeeded`, exit 0.
SPELLINGS = {
    "a local folder, not editable": (
        {"requirements.txt": "./plugin[sdk]\n", "plugin/setup.py": ""},
        "./plugin",
    ),
    "a local folder in tox deps": (
        {
            "tox.ini": "[testenv]\ndeps =\n  ./plugin[sdk]\ncommands = pytest\n",
            "plugin/setup.py": "",
            "setup.py": SETUP,
        },
        "./plugin",
    ),
    "the project itself in a test requirements file": (
        {"requirements-test.txt": ".[sdk]\n", "setup.py": SETUP},
        ".",
    ),
    "a local wheel": ({"requirements.txt": f"./{WHEEL}[sdk]\n", WHEEL: "x"}, "acme-widgets"),
    "an editable file: URL": (
        {"requirements.txt": "-e file:./plugin[sdk]\n", "plugin/setup.py": ""},
        "./plugin",
    ),
    "a quoted include": (
        {"requirements.txt": '-r "more.txt"\n', "more.txt": "acme-widgets[sdk]\n"},
        "acme-widgets",
    ),
    "an include beside another option": (
        {"requirements.txt": "-r more.txt --pre\n", "more.txt": "acme-widgets[sdk]\n"},
        "acme-widgets",
    ),
    # helper-53: four more
    "an editable folder written without ./": (
        {"requirements.txt": "-e plugin[sdk]\n", "plugin/setup.py": ""},
        "./plugin",
    ),
    "an archive beside the file, no slash": (
        {"requirements.txt": f"{WHEEL.split('/')[1]}[sdk]\n"},
        "acme-widgets",
    ),
    "an include inside a constraints file": (
        {
            "requirements.txt": "-c constraints.txt\n",
            "constraints.txt": "-r more.txt\n",
            "more.txt": "w[sdk]\n",
        },
        "w",
    ),
    "an include inside a tox constraints file": (
        {
            "tox.ini": "[testenv]\ndeps =\n  -c constraints.txt\n  pytest\ncommands = pytest\n",
            "constraints.txt": "-r more.txt\n",
            "more.txt": "w[sdk]\n",
            "setup.py": SETUP,
        },
        "w",
    ),
    "a wheel's URL elsewhere": (
        {"requirements.txt": "https://example.invalid/a/w-1.0-py3-none-any.whl[sdk]\n"},
        "w",
    ),
    "a git URL elsewhere, unnamed": (
        {"requirements.txt": "git+https://example.invalid/acme/w[sdk]\n"},
        "url:",
    ),
    "an include as a file: URL": (
        {"requirements.txt": "-r file:more.txt\n", "more.txt": "acme-widgets[sdk]\n"},
        "acme-widgets",
    ),
    "an include on a continued line": (
        {"requirements.txt": "-r \\\nmore.txt\n", "more.txt": "acme-widgets[sdk]\n"},
        "acme-widgets",
    ),
    "extras on a continued line": ({"requirements.txt": "acme-widgets\\\n[sdk]\n"}, "acme-widgets"),
    "a UTF-8 byte order mark": ({"requirements.txt": "\ufeffacme-widgets[sdk]\n"}, "acme-widgets"),
    "a folder named from a nested file, as uv reads it": (
        {
            "requirements.txt": "-r requirements/base.txt\n",
            "requirements/base.txt": "./sub[sdk]\n",
            "requirements/sub/setup.py": "",
        },
        "./requirements/sub",
    ),
}


@pytest.mark.parametrize(("files", "key"), SPELLINGS.values(), ids=SPELLINGS.keys())
def test_every_spelling_pip_or_uv_reads_as_asking_for_an_extra_asks_for_it(
    tmp_path: Path, files: dict[str, str], key: str
) -> None:
    plan = plan_install(write(tmp_path, files), Settings())
    assert asked_extras(tmp_path, plan).get(key) == ["sdk"], plan


def test_a_local_requirement_whose_marker_does_not_hold_asks_for_nothing(tmp_path: Path) -> None:
    plan = InstallPlan(requirements=['./plugin[sdk]; python_version < "3"', "./other[sdk] ; os_name ~= 'x'"])
    assert asked_extras(tmp_path, plan) == {"./other": ["sdk"]}


def test_an_archive_is_named_by_its_file_name_as_its_kind_writes_it(tmp_path: Path) -> None:
    """helper-53: an sdist's name runs to its last `-` (`acme-widgets-1.0.tar.gz` asked nothing of `acme`)."""
    plan = InstallPlan(
        requirements=["./v/acme-widgets-1.0.tar.gz[sdk]", "./v/acme_kit-2.0-py3-none-any.whl[x]"]
    )
    assert asked_extras(tmp_path, plan) == {
        "./v/acme-widgets-1.0.tar.gz": ["sdk"],
        "acme-widgets": ["sdk"],
        "./v/acme_kit-2.0-py3-none-any.whl": ["x"],
        "acme-kit": ["x"],
    }


def test_a_name_that_ends_as_an_archive_does_is_asked_as_a_name_and_as_a_file(tmp_path: Path) -> None:
    """pip reads `acme_w-1.0-py3-none-any.whl[x]` as a file where one is there, else as a name: both count."""
    plan = InstallPlan(requirements=["jaraco.zip[sdk]", 'x.tar[old]; python_version < "3"'])
    assert asked_extras(tmp_path, plan) == {"jaraco-zip": ["sdk"], "jaraco": ["sdk"], "./jaraco.zip": ["sdk"]}
