"""A copy of the SDK inside the repository, where the tests import it before the installed one: the
red-team's reproduction (a vendored `src/acme/` on the fixture's `pythonpath = ["src"]`, or a `tests/acme/`
package pytest's rootdir insertion puts first) was green on the copy's code, exit 0, while run.json named
acme-sdk 2.0.0. End to end through the CLI (offline, the rules-only task)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TASK = "acme-sdk-2-rules.yml"
COPY = "from acme.client import Client  # a vendored copy, patched to take the old names too\n"


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"src/acme/__init__.py": COPY, "src/acme/client.py": "class Client: ...\n"}, "src/acme/"),
        ({"tests/acme/__init__.py": COPY}, "tests/acme/"),
        ({"acme.py": COPY}, "acme.py"),
    ],
    ids=["src-package", "tests-package", "root-module"],
)
def test_attack_a_copy_of_the_sdk_in_the_repository_is_never_what_a_green_run_tested(
    make_repo, run_codemod, files: dict[str, str], named: str
) -> None:
    result = run_codemod(make_repo("vendored-sdk", files), TASK)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "holds its own copy of what acme-sdk installs" in m["reason"] and named in m["reason"]
    assert [v["phase"] for v in m["verifications"]] == []  # no test ran on the copy
    assert result.artifact("changes.patch").read_bytes() == b""


def test_a_module_of_the_sdks_name_inside_a_package_is_no_copy(make_repo, run_codemod) -> None:
    """`acme_app/acme.py` is `acme_app.acme`, never the top-level `acme`: the run goes on as without it."""
    result = run_codemod(make_repo("submodule", {"src/acme_app/acme.py": "X = 1\n"}), TASK)
    assert (result.code, result.manifest["status"]) == (0, "succeeded"), result.manifest["reason"]


# helper-48: a unittest suite whose tests put a copy of 1.x first on sys.path (tests/__init__.py), which only
# the canary's question to the test process sees; then one more test module that prints nine `-v` result
# lines and `Ran 9 tests` as it is imported. The reading stopped at that first 'Ran' line, so the canary's
# answer was never read, and its SDK test's failure was taken for a third failure of the canary: green,
# exit 0, with both runs' sdk_resolution "unknown".
VENDORED_UNDER_UNITTEST: dict[str, str | None] = {
    "pyproject.toml": None,
    "requirements-dev.txt": "-r requirements.txt\n",
    "tests/conftest.py": None,
    **{
        f"tests/test_{n}.py": None
        for n in ("billing", "clients", "inventory", "orders", "reports", "settings")
    },
    "vendor/acme/__init__.py": (
        "class Client:  # a copy of 1.x, patched\n"
        "    def __init__(self, base_url, timeout=5.0):\n"
        "        self.base_url, self.timeout = base_url, timeout\n"
    ),
    "tests/__init__.py": (
        "import os\nimport sys\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n"
        "sys.path.insert(0, os.path.join(HERE, '..', 'src'))\n"
        "sys.path.insert(0, os.path.join(HERE, '..', 'vendor'))\n"
    ),
    "tests/test_app.py": (
        "import unittest\n\nimport acme\n\nfrom acme_app.settings import Settings\n\n\n"
        "class TestApp(unittest.TestCase):\n    def test_client_keeps_its_url(self):\n"
        "        self.assertEqual(acme.Client('http://x').base_url, 'http://x')\n\n"
        "    def test_settings(self):\n        self.assertTrue(Settings(base_url='http://x'))\n"
    ),
}
PRINTS_A_RUN = (
    "import sys\n"
    "sys.stderr.write(''.join(f'test_{i} (tests.test_0.T.test_{i}) ... ok\\n' for i in range(9)))\n"
    "sys.stderr.write('\\nRan 9 tests in 0.001s\\n\\nOK\\n')\n"
)


@pytest.mark.parametrize("printed", [False, True], ids=["control", "a-printed-ran-line"])
def test_attack_a_printed_ran_line_never_hides_a_copy_the_tests_import_under_unittest(
    make_repo, run_codemod, tmp_path, printed: bool
) -> None:
    task = tmp_path / "acme-sdk-2-rules-unittest.yml"
    text = (Path(__file__).resolve().parents[2] / "fixtures/tasks" / TASK).read_text()
    task.write_text(text + 'verification: {command: "python -m unittest discover -v"}\n')
    files = {**VENDORED_UNDER_UNITTEST, **({"tests/test_0.py": PRINTS_A_RUN} if printed else {})}
    result = run_codemod(make_repo("vendored-unittest", files), task)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "outside the installed package" in m["reason"] or "no test" in m["reason"], m["reason"]
