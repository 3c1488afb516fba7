"""code_imports and module_sets: which SDK modules the repository's code imports (read with ast, never run),
and which modules a distribution ships (its RECORD)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from agentic_codemod.adapters.python import code_imports, module_sets
from agentic_codemod.adapters.python.code_imports import Finding, found, imports, word_of

GONE = frozenset({"acme.errors", "acme.utils"})
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def named(source: str) -> list[tuple[int, str]]:
    return imports(ast.parse(source))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import acme.utils\n", [(1, "acme.utils")]),
        ("import acme.utils as u\n", [(1, "acme.utils")]),
        ("from acme.utils import (\n    paginate,\n)\n", [(1, "acme.utils"), (1, "acme.utils.paginate")]),
        ("from acme.utils import *\n", [(1, "acme.utils")]),
        ("from acme import errors as e\n", [(1, "acme"), (1, "acme.errors")]),
        (
            'import importlib\nm = importlib.import_module("acme.errors")\n',
            [(1, "importlib"), (2, "acme.errors")],
        ),
        (
            'from importlib import import_module\nimport_module(".errors", "acme")\n',
            [(1, "importlib"), (1, "importlib.import_module"), (2, "acme.errors")],
        ),
        ('u = __import__("acme.utils")\n', [(1, "acme.utils")]),
        ('u = __import__("acme", fromlist=["utils"])\n', [(1, "acme"), (1, "acme.utils")]),
        (
            "try:\n    from acme.errors import NotFound\nexcept ImportError:\n    pass\n",
            [(2, "acme.errors"), (2, "acme.errors.NotFound")],
        ),
    ],
)
def test_each_import_form_names_its_module(source: str, expected: list[tuple[int, str]]) -> None:
    assert named(source) == sorted(expected)


@pytest.mark.parametrize(
    "source",
    [
        "# from acme.utils import paginate\n",
        'TEXT = "import acme.utils"\n',
        '"""\nfrom acme.errors import NotFound\n"""\n',
        "from .utils import paginate\nfrom . import errors\n",
        'import importlib\nimportlib.import_module(".errors")\n',  # relative, no literal package
        'import importlib\nimportlib.import_module("acme." + name)\n',  # built at run time: not read
        '__import__("utils", globals(), locals(), [], 1)\n',  # level 1: relative
    ],
)
def test_comments_strings_relative_and_built_names_name_no_sdk_module(source: str) -> None:
    assert not [m for _, m in named(source) if m.startswith("acme")]


@pytest.mark.parametrize(
    "source",
    [
        "try:\n    from acme.utils import paginate\nexcept ImportError:\n    from acme import paginate\n",
        "try:\n    import acme.errors as e\nexcept (ModuleNotFoundError, AttributeError):\n    e = None\n",
        "try:\n    import acme.errors\nexcept:\n    acme = None\n",
        "import contextlib\nwith contextlib.suppress(ImportError):\n    from acme.utils import paginate\n",
    ],
)
def test_compatibility_code_that_catches_a_failed_import_is_not_read(source: str) -> None:
    """Code that runs on either version: its try body's import of a module 2.0 dropped fails nothing."""
    assert not [m for _, m in named(source) if m.startswith(("acme.utils", "acme.errors"))]


def test_an_import_guarded_against_something_else_or_in_a_handler_is_still_read() -> None:
    """Only a `try` body whose handler catches a failed import is compatibility code."""
    assert named("try:\n    import acme.utils\nexcept KeyError:\n    pass\n") == [(2, "acme.utils")]
    assert named("try:\n    import x\nexcept ImportError:\n    import acme.utils\n") == [(4, "acme.utils")]
    assert named("try:\n    pass\nfinally:\n    import acme.utils\n") == [(4, "acme.utils")]
    # a handler that leaves the names undefined, or raises on: the import still fails the code
    assert named("try:\n    import acme.utils\nexcept ImportError:\n    pass\n") == [(2, "acme.utils")]
    assert named("try:\n    import acme.utils\nexcept ImportError as e:\n    raise X from e\n") == [
        (2, "acme.utils")
    ]
    assert named("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import acme.utils\n") == [
        (1, "typing"),
        (1, "typing.TYPE_CHECKING"),
        (3, "acme.utils"),
    ]


def test_the_package_name_is_a_word_not_a_prefix_and_is_found_in_utf16() -> None:
    word = word_of(["acme"])
    assert word.search(b"import acme.utils")
    assert word.search("import acme.utils".encode("utf-16"))
    assert word.search("import acme.utils".encode("utf-16-be"))
    assert not word.search(b"import acmex.utils\nimport my_acme\nimport acme2")
    assert not word.search("import acmex, my_acme".encode("utf-16"))


def committed(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (root / rel).write_bytes(content)
        else:
            (root / rel).write_text(content)
    for argv in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *argv], cwd=root, check=True, env={**os.environ, **GIT_ENV})
    return root


def notebook(cells: list[tuple[str, str]], language: str = "python") -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": src.splitlines(True)} for kind, src in cells
            ],
            "metadata": {"language_info": {"name": language}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_every_kind_of_python_code_file_is_read(tmp_path: Path) -> None:
    root = committed(
        tmp_path,
        {
            "src/app/sync.py": "from acme.utils import (\n    paginate,\n)\n",
            "src/app/tray.pyw": "import acme.utils as u\n",
            "src/app/sync.pyi": "from acme.utils import *\n",
            "bin/acme-sync": "#!/usr/bin/env python3\nfrom acme import errors as e\n",
            "notes/explore.ipynb": notebook(
                [
                    ("markdown", "from acme.errors import NotFound"),
                    ("code", "%matplotlib inline\nimport acme.errors\n"),
                ]
            ),
            "src/app/dyn.py": 'import importlib\nerrors = importlib.import_module("acme.errors")\n',
            "src/app/fine.py": "from acme import Client\nimport acmex.utils\nimport acme.never_shipped\n",
            "docs/usage.md": "from acme.errors import NotFound\n",  # not code
            "tools/run.sh": "#!/bin/sh\npython -c 'import acme.errors'\n",  # not Python code
            "r/analysis.ipynb": notebook([("code", "library(acme.errors)\n")], language="R"),
        },
    )

    assert found(root, GONE) == [
        Finding("bin/acme-sync", "bin/acme-sync:2", "acme.errors"),
        Finding("notes/explore.ipynb", "notes/explore.ipynb cell 2:2", "acme.errors"),
        Finding("src/app/dyn.py", "src/app/dyn.py:2", "acme.errors"),
        Finding("src/app/sync.py", "src/app/sync.py:1", "acme.utils"),
        Finding("src/app/sync.pyi", "src/app/sync.pyi:1", "acme.utils"),
        Finding("src/app/tray.pyw", "src/app/tray.pyw:1", "acme.utils"),
    ]


def test_a_file_that_cannot_be_parsed_is_a_finding_only_where_it_names_the_package(tmp_path: Path) -> None:
    root = committed(
        tmp_path,
        {
            "legacy.py": 'print "legacy"\nfrom acme.errors import NotFound\n',
            "u16.py": "from acme.errors import NotFound\n".encode("utf-16"),
            "other.py": 'print "nothing of the sdk"\n',
            "broken.ipynb": '{"cells": [ {"cell_type": "code", "source": "import acme.utils"',
        },
    )

    problems = {f.file: f.problem for f in found(root, GONE)}

    assert set(problems) == {"legacy.py", "u16.py", "broken.ipynb"}
    assert all(p and not p.startswith("cannot be read") for p in problems.values())
    assert (problems["legacy.py"] or "").startswith("SyntaxError")


def test_a_link_named_as_a_module_is_read_where_it_leads_in_the_tree(tmp_path: Path) -> None:
    root = committed(tmp_path, {"tools/legacy_impl": "from acme.errors import NotFound\n"})
    (root / "src").mkdir()
    os.symlink("../tools/legacy_impl", root / "src" / "legacy.py")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("import acme.utils\n")
    os.symlink(outside, root / "src" / "outside.py")

    assert found(root, GONE) == [Finding("src/legacy.py", "src/legacy.py:1", "acme.errors")]


def test_a_file_too_large_to_parse_is_a_finding_where_it_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_imports, "MAX_FILE_BYTES", 64)
    root = committed(
        tmp_path,
        {"big.py": "x = 1\n" * 20 + "import acme.utils\n", "big_other.py": "x = 1\n" * 40},
    )

    [finding] = found(root, GONE)

    assert finding.file == "big.py" and "larger than 64 bytes" in (finding.problem or "")


def test_modules_of_a_record_are_its_module_files_and_their_packages() -> None:
    paths = [
        "acme/__init__.py",
        "acme/utils/__init__.py",
        "acme/_speed.cpython-311-x86_64-linux-gnu.so",
        "acme/ns/deep.py",
        "acme/__pycache__/errors.cpython-311.pyc",
        "acme/py.typed",
        "acme/stubs.pyi",
        "acme_sdk-1.4.0.dist-info/RECORD",
        "../../bin/acme-cli",
    ]
    modules = module_sets.modules_of(PurePosixPath(p) for p in paths)
    assert modules == {"acme", "acme.utils", "acme._speed", "acme.ns", "acme.ns.deep"}


def test_an_installed_distribution_gives_its_version_and_modules(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "acme_sdk-1.4.0.dist-info").mkdir(parents=True)
    (site / "acme_sdk-1.4.0.dist-info" / "RECORD").write_text("acme/__init__.py,,\nacme/errors.py,,\n")

    assert module_sets.installed(tmp_path, "Acme_SDK") == module_sets.Shipped(
        "1.4.0", frozenset({"acme", "acme.errors"})
    )
    assert module_sets.installed(tmp_path, "other") is None
