"""Generated fleets: copies of acme-app made into different kinds of repository (imported by name).

    VARIANTS                   kind -> (files to write or delete, fleet-file overrides, expected status)
    make_fleet(dest, kinds, wheels) -> Path        one git repository per kind + fleet.yml; returns its path

The variants are real repositories, committed with fixed identity and dates by fixtures/materialize.py:
  ok, ok-docs            migrate, verify green, are approved                       succeeded (0)
  no-sdk                 neither declares nor uses acme-sdk                                nothing_to_do (0)
  introduced-failure     a test pins the SDK's major version: red after the bump   rejected (1)
  pre-existing-failure   a test that fails before and after the change             requires_human (3)
  endpoint-down          its package index is unreachable                          paused (75)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ACME_APP = ROOT / "fixtures" / "acme-app"
TASK = ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml"
sys.path.insert(0, str(ROOT / "fixtures"))

from materialize import materialize  # noqa: E402

UNREACHABLE_INDEX = "http://127.0.0.1:9/simple"

VARIANTS: dict[str, tuple[dict[str, str | None], dict[str, Any], str]] = {
    "ok": ({}, {}, "succeeded"),
    "ok-docs": ({"README.md": "# acme-app (docs variant)\n\nSame code, other words.\n"}, {}, "succeeded"),
    "no-sdk": (  # neither declares nor uses acme-sdk
        {
            "requirements.txt": "# Runtime dependencies.\n",
            "src/acme_app": None,
            "tests": None,
            "src/hello.py": "print('hello')\n",
        },
        {},
        "nothing_to_do",
    ),
    "introduced-failure": (
        {
            "tests/test_sdk_major.py": "import acme\n\n\ndef test_pinned_major():\n"
            "    assert acme.__version__.startswith('1.')\n"
        },
        {},
        "rejected",
    ),
    "pre-existing-failure": (
        {"tests/test_known_bug.py": "def test_known_bug():\n    assert 1 + 1 == 3, 'tracked in BUG-42'\n"},
        {},
        "requires_human",
    ),
    "endpoint-down": ({}, {"find_links": [], "no_index": False, "index_url": UNREACHABLE_INDEX}, "paused"),
}
EXIT = {"succeeded": 0, "nothing_to_do": 0, "rejected": 1, "requires_human": 3, "paused": 75}


def make_repo(kind: str, dest: Path) -> Path:
    files = VARIANTS[kind][0]
    src = dest.parent / f".{dest.name}-src"
    shutil.copytree(ACME_APP, src, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    for rel, text in files.items():
        target = src / rel
        if text is None:
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    materialize(src, dest)
    shutil.rmtree(src)
    return dest


def make_fleet(dest: Path, kinds: list[str], wheels: Path, group: str = "acme") -> Path:
    """Repositories under dest/repos/<kind>[-n] and dest/fleet.yml listing them; returns the fleet file."""
    repos = []
    for i, kind in enumerate(kinds):
        name = kind if kinds.count(kind) == 1 else f"{kind}-{i}"
        make_repo(kind, dest / "repos" / name)
        repos.append(
            {"name": name, "path": f"repos/{name}", "project": f"{group}/{name}", **VARIANTS[kind][1]}
        )
    fleet = {
        "defaults": {"offline": True, "find_links": [str(wheels)], "no_index": True},
        "repos": repos,
    }
    path = dest / "fleet.yml"
    path.write_text(yaml.safe_dump(fleet, sort_keys=False), encoding="utf-8")
    return path
