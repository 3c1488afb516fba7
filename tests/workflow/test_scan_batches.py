"""How many file names one ast-grep process gets (workflow/scan.py): as many as the system's argument-length
limit allows once the environment and the fixed arguments are counted, never more, and never more than
scan.max_argv_bytes."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures_support import RULES_DIR

from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.workflow.scan import _arg_bytes, _batches, argv_room
from agentic_codemod.workflow.scan_output import breaks_lines

NAMES = [
    "a.py",
    "src/caf\u00e9.py",
    "src/\u65e5\u672c\u8a9e/\u30e2\u30b8\u30e5\u30fc\u30eb.py",
    "src/new\nline.py",
    "--x.py",
    *(f"pkg{i:03d}/{'d' * (i % 97)}/mod_{i:05d}.py" for i in range(400)),
]
FIXED = ["/usr/bin/ast-grep", "scan", "-c", "/tmp/codemod-scan-x/sgconfig.yml", "--json=stream", "--"]


def environment_bytes() -> int:
    return sum(len(k) + len(v) + 2 + 8 for k, v in os.environb.items())


@pytest.mark.parametrize("room", [40, 120, 1_000, 4_321, 10**9])
def test_batches_keep_every_name_in_order_and_stay_within_the_room(room: int) -> None:
    batches = _batches(NAMES, room)
    assert [n for b in batches for n in b] == NAMES
    for batch in batches:
        cost = sum(_arg_bytes(n) for n in batch)
        assert cost <= room or len(batch) == 1, (room, batch[:3])
    alone = [b for b in batches if any(breaks_lines(n) for n in b)]
    assert alone == [["src/new\nline.py"]]  # a name with a line break is scanned alone
    if room == 10**9:
        assert len(batches) == 3  # the names before it, it, the names after it
    if room >= 1_000:  # otherwise a batch ends only where the next name would not fit
        for batch, after in itertools.pairwise(b for b in batches if b not in alone):
            if NAMES.index(after[0]) == NAMES.index(batch[-1]) + 1:
                assert sum(_arg_bytes(n) for n in batch) + _arg_bytes(after[0]) > room


def test_a_name_costs_its_utf8_bytes_the_dot_slash_its_nul_and_its_pointer() -> None:
    assert _arg_bytes("a.py") == 4 + 2 + 1 + 8
    assert _arg_bytes("caf\u00e9.py") == 8 + 2 + 1 + 8


def test_the_room_is_the_limit_less_environment_and_fixed_arguments_with_a_margin() -> None:
    arg_max = environment_bytes() + 200_000
    room = argv_room(10**9, FIXED, arg_max=arg_max)
    fixed = sum(len(a) + 1 + 8 for a in FIXED) + 16
    assert room == (arg_max - environment_bytes() - fixed) * 3 // 4
    # what one process would get: environment, fixed arguments and a full batch, within the limit
    batches = _batches(NAMES * 40, room)
    assert len(batches) > 1
    assert all(environment_bytes() + fixed + sum(map(_arg_bytes, b)) <= arg_max for b in batches)


def test_the_setting_caps_the_room_and_the_system_limit_caps_the_setting() -> None:
    assert argv_room(5_000, FIXED, arg_max=environment_bytes() + 10**7) == 5_000
    assert argv_room(10**9, FIXED, arg_max=environment_bytes() + 100_000) < 100_000


def test_an_environment_that_leaves_no_room_for_names_pauses_the_run() -> None:
    with pytest.raises(EnvironmentUnavailable, match="SC_ARG_MAX"):
        argv_room(10**9, FIXED, arg_max=environment_bytes() + 1_000)


def test_the_real_limit_is_respected_with_a_small_stack_and_a_large_environment(tmp_path: Path) -> None:
    """A child with RLIMIT_STACK at 512 KiB has an argument limit of 128 KiB (Linux: a quarter of the stack,
    at least 128 KiB); a 70 KB environment variable leaves less than 64 KB for names. 1,200 long names
    (about 150 KB) must go in several processes; one process with them all cannot even start there."""
    repo = tmp_path / "repo"
    names = [f"src/{'n' * 90}/mod_{i:04d}.py" for i in range(1_200)]
    for name in names:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def f(client):\n    return getattr(client, 'fetch')\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid", "BIG": "x" * 70_000}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    child = textwrap.dedent(
        f"""
        import json, os, resource, subprocess, sys
        resource.setrlimit(resource.RLIMIT_STACK, (512 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))
        from pathlib import Path
        from agentic_codemod.workflow.codemod import load_rules
        from agentic_codemod.workflow.scan import Scanner, ast_grep_binary
        [rule] = [r for r in load_rules(Path({str(RULES_DIR)!r})) if r.id == "ACME900"]
        scanner = Scanner(Path({str(repo)!r}))
        hits = scanner.matches(rule)
        names = sorted(f"./{{h.file}}" for h in hits)
        try:
            subprocess.run([ast_grep_binary(), "scan", "--", *names], capture_output=True, cwd={str(repo)!r})
            whole = "started"
        except OSError as exc:
            whole = exc.__class__.__name__ + ":" + str(exc.errno)
        print(json.dumps({{"arg_max": os.sysconf("SC_ARG_MAX"), "runs": scanner.runs,
                           "files": sorted(h.file for h in hits), "whole": whole}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2_000:]
    result = json.loads(out.stdout)
    assert result["arg_max"] == 131_072
    assert result["whole"] == "OSError:7", "the limit in the child is not real: the test proves nothing"
    assert result["files"] == sorted(names)
    assert result["runs"] >= 3
