"""install_plan.asked_extras: the extras a repository's own install asks of each distribution, outside any
installed METADATA (what installed_files.capping reads a cap in an extra by; tests/test_transitive_sdk.py
has the end-to-end case)."""

from __future__ import annotations

from pathlib import Path

from agentic_codemod.adapters.python.install_plan import InstallPlan, asked_extras, local_key


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
    assert asked_extras(root, plan) == {".": ["dev", "test"], "./plugin": ["cloud"], "./libs/helper": ["sdk"]}


def test_local_key_names_a_folder_as_capping_reads_it_from_a_copy_url() -> None:
    assert [local_key(p) for p in ("", ".", "./", "plugin", "./plugin/", "a/../b")] == [
        ".",
        ".",
        ".",
        "./plugin",
        "./plugin",
        "./b",
    ]
