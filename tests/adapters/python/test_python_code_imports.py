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
from agentic_codemod.adapters.python.code_imports import Finding, _gone, found, imports, word_of

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
            [(1, "importlib"), (2, "acme.errors"), (2, "importlib.import_module")],
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
        "try:\n    import acme.errors as e\nexcept (ModuleNotFoundError, AttributeError):\n"
        "    import acme.exceptions as e\n",
        "import importlib\ntry:\n    import acme.errors as e\nexcept:\n"
        "    if True:\n        e = importlib.import_module('acme.exceptions')\n",
        "try:\n    import acme.errors as e\nexcept ImportError:\n    e = __import__('acme_compat')\n",
        "import contextlib\nwith contextlib.suppress(ImportError):\n    from acme.utils import paginate\n",
        # the name the guarded import binds is the handler's too: its attributes are not read either
        "try:\n    import acme.errors as e\nexcept ImportError:\n    import acme.exceptions as e\n"
        "raise e.NotFound()\n",
    ],
)
def test_compatibility_code_that_catches_a_failed_import_is_not_read(source: str) -> None:
    """Code that runs on either version: its try body's import of a module 2.0 dropped fails nothing, as
    its handler imports something in its place."""
    assert not [m for _, m in named(source) if m.startswith(("acme.utils", "acme.errors"))]


@pytest.mark.parametrize(
    "handler",
    [
        "acme = None",  # a placeholder: `acme.errors.X` fails later
        "errors = None",
        "print('acme-sdk is needed')\n    raise",
        "sys.exit('acme-sdk is needed')",
        "log.error('no acme')\n    raise RuntimeError('need acme') from None",
        "HAS_ACME = False",
    ],
)
def test_a_handler_that_imports_nothing_in_the_import_s_place_leaves_it_read(handler: str) -> None:
    """A handler that exits, reports, raises on or binds a placeholder does not make the code run on the
    version without the module: the import is the human's (it was exempt when the handler did anything)."""
    source = f"import sys\ntry:\n    from acme import errors\nexcept ImportError:\n    {handler}\n"
    assert _gone(named(source), GONE) == [(3, "acme.errors")]
    bare = f"try:\n    import acme.errors\nexcept:\n    {handler}\n"
    assert _gone(named(bare), GONE) == [(2, "acme.errors")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import acme as sdk\n\ndef f():\n    raise sdk.errors.NotFound()\n", [(4, "acme.errors")]),
        ("import acme\nx = acme.utils.paginate\n", [(2, "acme.utils")]),
        (
            "import acme.client\ntry:\n    go()\nexcept acme.errors.NotFound:\n    pass\n",
            [(4, "acme.errors")],
        ),
        ("import acme.client as c\nx = c.errors\n", []),  # acme.client.errors: not a gone module
        ("import acme.errors as e\nx = e.NotFound\n", [(1, "acme.errors"), (2, "acme.errors")]),
        ("from acme import client\nx = client.errors.NotFound\n", []),  # `from` binds: not read
        ("x = self.acme.errors.NotFound\nacme.errors.NotFound\n", []),  # no `import acme`
        ("import acme\nx = acme.Client(a).errors\n", []),  # an attribute of a call's result
    ],
)
def test_an_attribute_of_a_module_an_import_bound_is_read(
    source: str, expected: list[tuple[int, str]]
) -> None:
    """`sdk.errors.NotFound` on 2.0 is an AttributeError where acme.errors is gone, though no import
    names acme.errors."""
    assert _gone(named(source), GONE) == expected


def test_attributes_of_other_modules_name_their_own_dotted_path() -> None:
    assert named("import os\nos.path.join('a', 'b')\n") == [(1, "os"), (2, "os.path.join")]
    assert named("import xml.etree as et\net.ElementTree.parse\n") == [
        (1, "xml.etree"),
        (2, "xml.etree.ElementTree.parse"),
    ]


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


def test_a_link_that_leads_nowhere_is_no_code_and_no_finding(tmp_path: Path) -> None:
    """A dangling `gen.py` (build/generated.py not built yet) or a loop: Python cannot import either, so
    neither is a file that names acme and cannot be read (and a loop does not crash the reading)."""
    os.symlink("build/generated.py", tmp_path / "gen.py")
    os.symlink("loop.pyw", tmp_path / "loop.pyw")
    os.symlink("a.py", tmp_path / "b.py")
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("app.py/x.py", tmp_path / "through_a_file.py")
    root = committed(tmp_path, {"app.py": "from acme.errors import NotFound\n"})

    assert found(root, GONE) == [Finding("app.py", "app.py:1", "acme.errors")]


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


def test_all_installed_is_every_readable_record_s_modules(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    records = {
        "acme_sdk-2.0.0.dist-info": "acme/__init__.py,,\n",
        "acme_contrib-1.0.0.dist-info": "acme/contrib/__init__.py,,\nacme/contrib/storage.py,,\n",
        "broken-1.0.dist-info": b"acme/errors.py,,\n\xff\n",  # not UTF-8: adds nothing
    }
    for folder, record in records.items():
        (site / folder).mkdir(parents=True)
        data = record if isinstance(record, bytes) else record.encode()
        (site / folder / "RECORD").write_bytes(data)
    (site / "linked-1.0.dist-info").mkdir()
    os.symlink(site / "acme_contrib-1.0.0.dist-info" / "RECORD", site / "linked-1.0.dist-info" / "RECORD")
    (site / "folder-1.0.dist-info" / "RECORD").mkdir(parents=True)  # a RECORD that is a folder

    assert module_sets.all_installed(tmp_path) == {
        "acme",
        "acme.contrib",
        "acme.contrib.storage",
    }
    assert module_sets.all_installed(tmp_path / "nowhere") == frozenset()


def test_a_file_the_candidate_deleted_is_no_finding(tmp_path: Path) -> None:
    """git's index still lists a file the candidate deleted: it was "cannot be read: No such file" (a
    human's item, exit 3, on a correct change that removes a module)."""
    root = committed(tmp_path, {"src/old.py": "from acme.errors import NotFound\n", "src/a.py": "x = 1\n"})
    (root / "src" / "old.py").unlink()
    assert found(root, GONE) == []


def test_an_attribute_read_with_a_fallback_is_compatibility_code() -> None:
    """helper-34: `try: E = acme.errors.NotFound` / `except AttributeError: E = acme.exceptions.NotFound`
    runs on either version; it was an item. A handler that only passes or raises leaves the read read."""
    compat = (
        "import acme\ntry:\n    E = acme.errors.NotFound\n"
        "except AttributeError:\n    E = acme.exceptions.NotFound\n"
    )
    assert not [m for _, m in named(compat) if m.startswith("acme.errors")]
    idle = "import acme\ntry:\n    E = acme.errors.NotFound\nexcept AttributeError:\n    raise\n"
    assert (3, "acme.errors.NotFound") in named(idle)
    imported = "try:\n    import acme.errors\nexcept AttributeError:\n    E = 1\n"  # an import is still read
    assert (2, "acme.errors") in named(imported)
