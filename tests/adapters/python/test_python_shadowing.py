"""The repository's own modules of the SDK's top-level names (adapters/python/shadowing.py): what counts as
a copy the tests may import first, and what the SDK installs, read from its RECORD."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import shadowing


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_top_level_modules_come_from_the_record(tmp_path: Path) -> None:
    site = tmp_path / "env/lib/python3.12/site-packages"
    record = "\n".join(
        [
            "acme/__init__.py,sha256=x,1",
            "acme/client.py,sha256=x,1",
            "acme_compat.py,sha256=x,1",
            "_acme_speedups.cpython-312-x86_64-linux-gnu.so,sha256=x,1",
            "acme_sdk-2.0.0.dist-info/METADATA,sha256=x,1",
            "../../../bin/acme,sha256=x,1",
            "__pycache__/acme_compat.cpython-312.pyc,,",
        ]
    )
    write(site, {"acme_sdk-2.0.0.dist-info/RECORD": record, "other-1.0.dist-info/RECORD": "other/x.py,,\n"})
    names = shadowing.top_level_modules(tmp_path / "env", "Acme_SDK")
    assert sorted(names or []) == ["_acme_speedups", "acme", "acme_compat"]
    assert shadowing.top_level_modules(tmp_path / "env", "missing") is None
    os.remove(site / "acme_sdk-2.0.0.dist-info/RECORD")
    os.symlink("/etc/hostname", site / "acme_sdk-2.0.0.dist-info/RECORD")  # read on the host: never followed
    assert shadowing.top_level_modules(tmp_path / "env", "acme-sdk") is None


def test_copies_where_a_test_run_may_import_them_first_are_found_and_others_are_not(tmp_path: Path) -> None:
    """The third review: `examples/acme.py` and `app/vendors/acme.py` stopped ordinary runs (no test run
    puts those folders on sys.path), while `tests/support/acme/` under a package folder that pythonpath
    names passed. Now the folders are those a run may put first: the root, src/, pytest's pythonpath, and
    each test file's first folder upwards without an `__init__`."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src", "tests/support"]\n',
            "src/acme/__init__.py": "",
            "tests/support/__init__.py": "",
            "tests/support/acme/__init__.py": "",
            "tests/unit/test_x.py": "",
            "tests/unit/acme.py": "",  # pytest inserts tests/unit (no __init__ there) for test_x.py
            "tests/pkg/__init__.py": "",
            "tests/pkg/test_y.py": "",
            "tests/pkg/acme.py": "",  # tests/pkg is a package: pytest inserts tests/, where acme is no child
            "tools/acme.cpython-312-x86_64-linux-gnu.so": "",  # tools/ is on no path
            "src/app/__init__.py": "",
            "src/app/acme.py": "",  # app.acme
            "examples/acme.py": "",
            "docs/acme/readme.md": "",
            "acme.pyc": "",
        },
    )
    assert shadowing.found(tmp_path, ["acme"]) == [
        "acme.pyc",
        "src/acme/",
        "tests/support/acme/",
        "tests/unit/acme.py",
    ]
    assert shadowing.found(tmp_path, []) == []
    write(tmp_path, {"tests/__init__.py": "", "tests/unit/__init__.py": ""})
    assert shadowing.found(tmp_path, ["tests", "conftest"]) == []  # names an SDK ships by mistake


@pytest.mark.parametrize(
    "config",
    [
        {"pytest.ini": "[pytest]\npythonpath =\n    src\n    tests/support\n"},  # an ini value over lines
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = "src tests/support"\n'
        },  # one TOML string
        {"setup.cfg": "[tool:pytest]\npythonpath = tests/support\n"},
    ],
    ids=["ini-lines", "toml-string", "setup-cfg"],
)
def test_every_spelling_of_pythonpath_pytest_reads_is_read(tmp_path: Path, config: dict[str, str]) -> None:
    """The fourth review: a multi-line ini `pythonpath` and a TOML string were not read (green on a copy
    of the SDK under tests/support, exit 0)."""
    write(tmp_path, {**config, "tests/support/__init__.py": "", "tests/support/acme/__init__.py": ""})
    assert shadowing.found(tmp_path, ["acme"]) == ["tests/support/acme/"]


def test_test_files_named_by_python_files_are_where_pytest_inserts_folders(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\npython_files = check_*.py\n", "tests/check_a.py": "",
                     "tests/acme/__init__.py": ""})  # fmt: skip
    assert shadowing.found(tmp_path, ["acme"]) == ["tests/acme/"]


def test_a_pythonpath_folder_that_links_out_of_the_repository_is_never_listed(tmp_path: Path) -> None:
    """A hostile `pythonpath = ["support"]` with `support -> <a host folder>`: the host folder's names
    would reach the run's reason; it is no folder of the repository's."""
    outside = tmp_path / "host"
    (outside / "acme").mkdir(parents=True)
    (outside / "acme" / "__init__.py").write_text("")
    repo = tmp_path / "repo"
    write(repo, {"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["support"]\n'})
    (repo / "support").symlink_to(outside)
    assert shadowing.on_sys_path(repo) == ["."]
    assert shadowing.found(repo, ["acme"]) == []


def test_a_namespace_the_sdk_shares_is_looked_into_not_taken_for_a_copy(tmp_path: Path) -> None:
    """zope.schema keeps its portion of the `zope` namespace in src/zope/ (a pkg_resources declaration);
    zope.interface installs zope/interface/ with no zope/__init__.py of its own. The repository's src/zope/
    was taken for a copy of zope.interface and every such project stopped (helper-45). Its own
    src/zope/interface/ is one, and so is a plain zope package, which hides the whole namespace."""
    site = tmp_path / "env/lib/python3.12/site-packages"
    record = "zope/interface/__init__.py,,\nzope/interface/declarations.py,,\nzope/_flat.py,,\n"
    record += "zope.interface-7.2-py3.12-nspkg.pth,,\nzope.interface-7.2.dist-info/RECORD,,\n"
    write(site, {"zope.interface-7.2.dist-info/RECORD": record})
    names = shadowing.top_level_modules(tmp_path / "env", "zope.interface")
    assert names == ["zope/_flat", "zope/interface"]

    repo = write(
        tmp_path / "repo",
        {
            "src/zope/__init__.py": "__import__('pkg_resources').declare_namespace(__name__)\n",
            "src/zope/schema/__init__.py": "",
            "src/zope/schema/tests/test_x.py": "",
        },
    )
    assert shadowing.found(repo, names) == []
    write(repo, {"src/zope/interface/__init__.py": "", "src/zope/_flat.py": ""})
    assert shadowing.found(repo, names) == ["src/zope/_flat.py", "src/zope/interface/"]
    plain = write(tmp_path / "plain", {"src/zope/__init__.py": "", "src/zope/schema/__init__.py": ""})
    assert shadowing.found(plain, names) == ["src/zope/"]


SHARED = "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n"


@pytest.mark.parametrize(
    ("files", "named"),
    [
        (  # the word in a comment, and `__path__` set to a folder of its own
            {
                "src/zope/__init__.py": (
                    "# a namespace package (pkgutil.extend_path)\n"
                    "import os\n__path__ = [os.path.join(os.path.dirname(__file__), '_v')]\n"
                ),
                "src/zope/_v/interface/__init__.py": "",
            },
            "src/zope/",
        ),
        (  # extended, then a folder of its own put first
            {
                "src/zope/__init__.py": SHARED + "__path__.insert(0, __path__[0] + '/_v')\n",
                "src/zope/_v/interface/__init__.py": "",
            },
            "src/zope/",
        ),
        (  # a shared portion, and pkgutil's .pkg file naming a folder with a copy
            {
                "src/zope/__init__.py": SHARED,
                "src/zope.pkg": "vendored/zope\n",
                "vendored/zope/interface/__init__.py": "",
            },
            "src/zope.pkg",
        ),
    ],
    ids=["comment-and-own-path", "path-inserted", "pkg-file"],
)
def test_a_namespace_portion_that_only_seems_shared_is_named(
    tmp_path: Path, files: dict[str, str], named: str
) -> None:
    """helper-48: `_shares` was a text search for `extend_path` / `declare_namespace`, and pkgutil's
    `.pkg` files were not looked at: either put zope.interface's copy first while nothing was named
    (the canary's run-time question still caught both)."""
    repo = write(tmp_path, {**files, "src/zope/schema/tests/test_x.py": ""})
    assert named in shadowing.found(repo, ["zope/interface"])
