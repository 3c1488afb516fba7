"""untrusted_file.read_regular: the bytes of a regular file, bounded; nothing else is read, and a FIFO
never blocks the host."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from agentic_codemod import json_input
from agentic_codemod.tools.untrusted_file import read_regular


def test_a_regular_file_is_read_up_to_its_bound(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    assert read_regular(tmp_path / "f", 5) == b"12345"
    assert read_regular(tmp_path / "f", 4) is None  # larger than the bound: nothing, not a prefix
    assert read_regular(tmp_path / "missing", 5) is None


def test_links_fifos_sockets_and_folders_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "host").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "host")
    os.mkfifo(tmp_path / "fifo")  # a blocking open would wait for a writer forever
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for name in ("link", "fifo", "sock"):
            assert read_regular(tmp_path / name, 100) is None, name
    finally:
        server.close()
    assert read_regular(tmp_path, 100) is None


def test_json_nested_past_the_recursion_limit_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nested deeper"):  # json.loads alone: RecursionError
        json_input.loads("[" * 100_000 + "]" * 100_000)
    assert json_input.loads('{"a": [1]}') == {"a": [1]}
