"""Contract: every file the install plan reads, and every file pip then reads from the plan's requirements
files, is a file the manifest gate guards (the adapter's one definition of "dependency file").

The reads are observed, not declared: an audit hook records every `open` under the repository while the
install plan is made and while pip's own requirements-file parser walks the plan's files.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ACME_APP
from pip._internal.network.session import PipSession
from pip._internal.req.req_file import parse_requirements

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.python.install_plan import plan_install
from agentic_codemod.config import Settings

ADAPTER = get_adapter("python")
_watching: list[tuple[Path, set[str]]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _watching or not isinstance(args[0], str | bytes | Path):
        return
    root, seen = _watching[-1]
    path = Path(args[0] if not isinstance(args[0], bytes) else args[0].decode(errors="replace"))
    if path.is_absolute() and path.is_relative_to(root) and path.is_file():
        seen.add(path.relative_to(root).as_posix())


sys.addaudithook(_hook)


@contextmanager
def reads_under(root: Path) -> Iterator[set[str]]:
    seen: set[str] = set()
    _watching.append((root.resolve(), seen))
    try:
        yield seen
    finally:
        _watching.pop()


SETUPTOOLS_DYNAMIC = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "dyn"\nversion = "1.0"\ndynamic = ["dependencies", "optional-dependencies"]\n'
    '[tool.setuptools.dynamic]\ndependencies = {file = ["deps/runtime.txt"]}\n'
    'optional-dependencies.test = {file = ["deps/test.txt"]}\n'
)
REPOS: dict[str, dict[str, str | None]] = {
    "acme-app": {},
    "includes-and-constraints": {
        "requirements.txt": "acme-sdk==1.4.0\n-r deps/base.in\n-c constraints/pins.txt\n",
        "deps/base.in": "requests\n-r more/extra\n",
        "deps/more/extra": "idna\n",
        "constraints/pins.txt": "urllib3<3\n",
        "requirements/test.txt": "-r ../requirements.txt\npytest\n",
        "requirements/docs.txt": "sphinx\n",
        "test-requirements.txt": "pytest-cov\n",
        "dev.pip": "ruff\n",
    },
    "setuptools-project": {
        "pyproject.toml": SETUPTOOLS_DYNAMIC,
        "deps/runtime.txt": "acme-sdk==1.4.0\n",
        "deps/test.txt": "pytest\n",
        "setup.cfg": "[options.extras_require]\ndev = ruff\n",
        "setup.py": "from setuptools import setup\nsetup()\n",
        "requirements.txt": None,
        "requirements-dev.txt": None,
    },
    "poetry-app": {
        "pyproject.toml": (
            '[tool.poetry]\nname = "p"\npackage-mode = false\n'
            '[tool.poetry.dependencies]\npython = "^3.11"\nacme-sdk = "^1.4"\n'
        ),
        "poetry.lock": "# lock\n",
        "requirements.txt": None,
        "requirements-dev.txt": "pytest\n",
    },
}


def make(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(ACME_APP, root)
    for rel, text in REPOS[name].items():
        if text is None:
            (root / rel).unlink()
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("name", sorted(REPOS))
def test_every_file_the_install_reads_is_guarded_by_the_manifest_gate(tmp_path: Path, name: str) -> None:
    root = make(tmp_path, name)
    with reads_under(root) as read:
        plan = plan_install(root, Settings())
        for file in plan.requirement_files:  # what pip reads from them, by pip's own parser
            list(parse_requirements(str(root / file), session=PipSession()))
    if plan.project is not None:  # pip builds the project: it reads these where they exist
        read |= {f for f in ("pyproject.toml", "setup.py", "setup.cfg") if (root / f).is_file()}
    assert read, "the audit hook saw no read: the test would prove nothing"
    listed = set(ADAPTER.read_dependency_files(root).files)
    unguarded = sorted(f for f in read if f not in listed and not ADAPTER.is_dependency_file(f))
    assert not unguarded, f"read by the install but not guarded by the manifest gate: {unguarded}"
    assert read <= listed | {f for f in read if ADAPTER.is_dependency_file(f)}
    assert set(ADAPTER.find_dependency_files(root)) == listed  # what recon records is that same list


def test_the_dynamic_and_include_files_are_seen_by_the_walk(tmp_path: Path) -> None:
    """The repos above do exercise the include and setuptools paths (else the contract is vacuous)."""
    assert {"deps/base.in", "deps/more/extra", "constraints/pins.txt"} <= set(
        ADAPTER.read_dependency_files(make(tmp_path, "includes-and-constraints")).files
    )
    assert {"deps/runtime.txt", "deps/test.txt"} <= set(
        ADAPTER.read_dependency_files(make(tmp_path, "setuptools-project")).files
    )
