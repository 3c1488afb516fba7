"""The value of an option that loads a file before the tests names no test file: the canary is planted
beside a test of the repository and the command is left to collect as it does (review: `node --require
./test/setup.js --test` had the canary beside the setup file as the only file named, so node ran the canary
alone and the run stopped with "ran no test", exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.workflow import oracle


@pytest.mark.parametrize("option", ["--require", "-r", "--import", "--loader", "--experimental-loader"])
def test_a_preload_option_value_is_not_a_named_test_file(tmp_path: Path, option: str) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "setup.js").write_text('process.env.TZ = "UTC";\n')
    (tmp_path / "test" / "orders.test.js").write_text('require("node:test")("x", () => {});\n')
    (tmp_path / "package.json").write_text(
        f'{{"name": "x", "scripts": {{"test": "node {option} ./test/setup.js --test"}}}}'
    )
    command = ADAPTER.detect_test_command(tmp_path)
    assert command is not None and "./test/setup.js" in command.argv
    canary = oracle.plant(tmp_path, command, ADAPTER.test_facts)
    assert canary is not None and not canary.named  # node --test collects it with the repository's tests


def test_a_test_file_named_after_a_flag_is_still_named(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    for name in ("setup.js", "a.test.js", "b.test.js"):
        (tmp_path / "test" / name).write_text("\n")
    (tmp_path / "package.json").write_text(
        '{"name": "x", "scripts": {"test": "node --require ./test/setup.js --test test/b.test.js"}}'
    )
    command = ADAPTER.detect_test_command(tmp_path)
    assert command is not None
    canary = oracle.plant(tmp_path, command, ADAPTER.test_facts)
    assert canary is not None and canary.named and canary.file.startswith("test/")
