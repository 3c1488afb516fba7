"""Code that names the SDK where no loaded rule looks (adapters/unscanned_code.py, each adapter's
unscanned.py): helper-29's review ran the fixtures with the old API in a `.pyw`, a `.pyx`, a notebook, a
`#!` script without a suffix, a link named as a module, a `.ts`/`.vue`/`.svelte` file under JavaScript
rules; the rules never read them, the tests never loaded them: green, exit 0. Each is now a human's item
of the plan, naming the file."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentic_codemod.adapters.npm.unscanned import unscanned_code as npm_unscanned
from agentic_codemod.adapters.python.unscanned import unscanned_code as python_unscanned
from agentic_codemod.config import Settings

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}
OLD_PY = 'from acme import Client\n\nclient = Client("u")\nclient.fetch("/x", timeout=5)\n'
OLD_JS = 'import { connect } from "acme-sdk";\nconnect("u").fetch("/orders");\n'


def committed(root: Path, files: dict[str, str], links: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, target in (links or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(target)
    for argv in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *argv], cwd=root, check=True, env={**os.environ, **GIT_ENV})
    return root


def notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def python(root: Path) -> list[str]:
    return [u.path for u in python_unscanned(root, ["python"], "acme-sdk", ["acme"], Settings())]


def test_python_code_the_rules_do_not_read_that_names_the_sdk_is_an_item(tmp_path: Path) -> None:
    root = committed(
        tmp_path / "repo",
        {
            "src/app/sync.py": OLD_PY,  # read by the rules: not an item
            "src/app/tray.pyw": OLD_PY,
            "src/app/speed.pyx": OLD_PY,
            "src/app/types.pyi": "from acme.client import Client\n",
            "notebooks/explore.ipynb": notebook(OLD_PY),
            "bin/acme-sync": "#!/usr/bin/env python3\n" + OLD_PY,
            "bin/run": "#!/usr/local/bin/pypy3.10 -u\nimport acme\n",
            "tools/impl": OLD_PY,  # no suffix, no #!: read only through the link named as a module
            "bin/deploy": "#!/bin/sh\necho acme\n",  # another interpreter
            "src/app/other.pyw": "import my_acme, x.acme\nacmex = 1\n",  # not the SDK's name as a module
            "README.md": OLD_PY,
        },
        links={"src/app/legacy.py": "../../tools/impl", "src/app/sync_link.py": "sync.py"},
    )
    assert python(root) == [
        "bin/acme-sync",
        "bin/run",
        "notebooks/explore.ipynb",
        "src/app/legacy.py",
        "src/app/speed.pyx",
        "src/app/tray.pyw",
        "src/app/types.pyi",
    ]


def test_a_link_named_as_code_that_leads_out_of_the_tree_is_an_item(tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("import os\n")
    root = committed(
        tmp_path / "repo", {"src/a.py": "x = 1\n"}, links={"src/b.py": str(tmp_path / "outside.py")}
    )
    [found] = python_unscanned(root, ["python"], "acme-sdk", ["acme"], Settings())
    assert found.path == "src/b.py" and "leads out of the tree" in found.why and found.source is None


def test_a_link_loop_named_as_code_is_an_item_and_a_dangling_link_is_nothing(tmp_path: Path) -> None:
    """helper-32: a committed loop named `*.pyw` crashed the plan (RuntimeError, exit 1)."""
    root = committed(
        tmp_path / "repo", {"src/a.py": "x = 1\n"}, links={"src/gen.py": "../build/generated.py"}
    )
    (root / "src" / "loop.pyw").symlink_to("loop.pyw")
    [found] = python_unscanned(root, ["python"], "acme-sdk", ["acme"], Settings())
    assert found.path == "src/loop.pyw" and "a loop" in found.why


def test_a_code_file_too_large_to_read_is_an_item_only_where_it_names_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-32: a notebook over the bound (plots embedded) was an item even when it never named the SDK."""
    from agentic_codemod.adapters import unscanned_code

    root = committed(
        tmp_path / "repo", {"a.ipynb": notebook("x = 1\n" * 100), "b.ipynb": notebook(OLD_PY * 20)}
    )
    monkeypatch.setattr(unscanned_code, "MAX_FILE_BYTES", 100)
    [found] = python_unscanned(root, ["python"], "acme-sdk", ["acme"], Settings())
    assert found.path == "b.ipynb" and "not read whole" in found.why and found.source is None


def test_what_python_can_read_is_given_as_python_and_a_notebook_as_its_code_cells(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "source": ["# acme notes\n"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import acme\n"]},
        {"cell_type": "code", "source": "%%bash\necho acme\n"},
    ]
    root = committed(
        tmp_path / "repo",
        {
            "a.pyw": OLD_PY,
            "b.pyx": OLD_PY,
            "n.ipynb": json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        },
    )
    found = {u.path: u.source for u in python_unscanned(root, ["python"], "acme-sdk", ["acme"], Settings())}
    assert found == {"a.pyw": ("python", OLD_PY), "b.pyx": None, "n.ipynb": ("python", "pass\nimport acme\n")}


@pytest.mark.parametrize(
    ("cells", "rendered"),
    [
        # helper-34: a %%time cell holds the notebook's own Python (before: left out, the 1.x call unseen)
        (
            ["import acme\n", "%%time\nclient.fetch('/x', timeout=5)\n"],
            "import acme\n\n\nclient.fetch('/x', timeout=5)\n",
        ),
        # a cell that does not parse would swallow the cells after it: the notebook stays an item
        (['import acme\ns = """\n', 'client.fetch("/x", timeout=5)\n', '"""\n'], None),
        # a lone surrogate cannot be written for the scan: an item, not a crash
        (["import acme\nx = '\ud800'\n"], None),
    ],
)
def test_a_notebook_is_given_whole_or_not_at_all(
    tmp_path: Path, cells: list[str], rendered: str | None
) -> None:
    from agentic_codemod.adapters.python.unscanned import render

    doc = {"cells": [{"cell_type": "code", "source": c} for c in cells], "metadata": {}, "nbformat": 4}
    data = json.dumps(doc).encode()
    assert render("n.ipynb", data) == (None if rendered is None else ("python", rendered))
    assert render("a.pyw", b"import acme\nprint 'x'\n") is None  # Python 2: stays an item


@pytest.mark.parametrize(
    ("languages", "expected"),
    [
        (
            ["javascript"],
            ["bin/acme-sync", "src/Legacy.tsx", "src/Orders.svelte", "src/Orders.vue", "src/legacy.ts"],
        ),
        (["javascript", "typescript", "tsx"], ["bin/acme-sync", "src/Orders.svelte", "src/Orders.vue"]),
    ],
)
def test_npm_code_the_rules_do_not_read_that_names_the_sdk_is_an_item(
    tmp_path: Path, languages: list[str], expected: list[str]
) -> None:
    root = committed(
        tmp_path / "repo",
        {
            "src/orders.js": OLD_JS,  # read by the javascript rules
            "src/legacy.ts": OLD_JS,
            "src/Legacy.tsx": OLD_JS,
            "src/Orders.vue": f"<template><div/></template>\n<script>\n{OLD_JS}</script>\n",
            "src/Orders.svelte": f"<script>\n{OLD_JS}</script>\n",
            "src/other.ts": 'import x from "acme-sdk-extra";\nconst s = "acme-sdk is great";\n',
            "bin/acme-sync": "#!/usr/bin/env node\n" + 'require("acme-sdk/lib/old");\n',
        },
    )
    found = npm_unscanned(root, languages, "acme-sdk", [], Settings())
    assert [u.path for u in found] == expected and all(u.source is None for u in found)


@pytest.mark.slow
def test_untested_code_in_a_file_no_rule_reads_requires_a_human_end_to_end(
    make_repo: Callable[..., Path], run_codemod: Callable[..., Any]
) -> None:
    """A `.pyw` module calling the 1.x API (`timeout=`, a module 2.0 still ships, so no removed import):
    before, the rules never read it, no test loaded it: green, "candidate verified and approved", exit 0."""
    repo = make_repo("pyw", {"src/acme_app/tray.pyw": OLD_PY})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert "src/acme_app/tray.pyw: a .pyw file, which no migration rule of this task reads" in m["reason"]
    assert "the rules match it (ACME" in m["reason"]
    plan = result.json("plan.json")
    assert any(h["file"] == "src/acme_app/tray.pyw" for h in plan["requires_human"])


@pytest.mark.slow
def test_a_file_no_rule_reads_that_was_migrated_by_hand_is_no_item(
    make_repo: Callable[..., Path], run_codemod: Callable[..., Any]
) -> None:
    """helper-32: an item on every mention could never be cleared; a `.pyw` already on the 2.0 API, read
    as Python by the rules, matches none of them: the run is green."""
    repo = make_repo(
        "pyw-done", {"src/acme_app/tray.pyw": 'from acme import Client\n\nClient("u").get("/x")\n'}
    )
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    assert result.code == 0, result.manifest["reason"]
