"""The repository's own modules of the SDK's top-level names (adapters/python/shadowing.py): what counts as
a copy the tests may import first, and what the SDK installs, read from its RECORD."""

from __future__ import annotations

import os
from pathlib import Path

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


def test_copies_in_a_top_level_position_are_found_and_submodules_are_not(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/acme/__init__.py": "",
            "tests/acme.py": "",
            "tools/acme.cpython-312-x86_64-linux-gnu.so": "",
            "src/app/__init__.py": "",
            "src/app/acme.py": "",  # app.acme
            "src/app/acme/__init__.py": "",
            "docs/acme/readme.md": "",  # a folder without __init__: a namespace portion, no shadow
            "node_modules/acme.py": "",
            "acme.txt": "",
        },
    )
    assert sorted(shadowing.found(tmp_path, ["acme"])) == [
        "src/acme/",
        "tests/acme.py",
        "tools/acme.cpython-312-x86_64-linux-gnu.so",
    ]
    assert shadowing.found(tmp_path, []) == []
