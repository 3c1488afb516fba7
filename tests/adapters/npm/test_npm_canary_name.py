"""The canary is named like the test file beside it, so the command's own glob collects it.

hmac-drbg, hash.js and minimalistic-crypto-utils run `mocha test/*-test.js`; a canary named
`<token>.test.js` was never collected there, so every baseline ended "the canary went missing".
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_facts import TEST_FACTS
from agentic_codemod.workflow import oracle


@pytest.mark.parametrize(
    ("script", "test_file", "glob"),
    [
        ("mocha --reporter=spec test/*-test.js", "test/utils-test.js", "test/*-test.js"),
        ("mocha 'test/**/*_test.js'", "test/stringify_test.js", "test/*_test.js"),
        ("mocha spec/*.spec.js", "spec/index.spec.js", "spec/*.spec.js"),
        ("node --test test/", "test/test-parse.js", "test/test-*.js"),
        ("jest", "src/__tests__/sum.test.ts", "src/__tests__/*.test.ts"),
        ("node --test", "test/index.js", "test/*.test.js"),  # no marker to copy: <token>.test.js as before
        # process-warning: jest runs the paths its argument matches; the canary carries that name
        ("jest jest.test.js", "test/emit-once-only.test.js", "test/*.jest.test.js"),
    ],
)
def test_the_canary_matches_the_pattern_of_its_sibling(
    tmp_path: Path, script: str, test_file: str, glob: str
) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}}))
    (tmp_path / test_file).parent.mkdir(parents=True)
    (tmp_path / test_file).write_text("// a test\n")
    command = ADAPTER.detect_test_command(tmp_path, None)
    assert command is not None
    planted = oracle.plant(tmp_path, command, TEST_FACTS)
    assert planted is not None and planted.token in planted.file
    assert fnmatch.fnmatch(planted.file, glob), planted.file
    assert TEST_FACTS.is_test_file(planted.file)
    assert (tmp_path / planted.file).read_text().count(planted.token) == 1
