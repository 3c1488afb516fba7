"""The Python canary's check of where the test process imports the SDK from (test_facts.WHERE_SDK): run
by real pytest and unittest in a venv with acme-sdk installed, read through the adapter's reader, and end
to end through the CLI on acme-app whose conftest.py puts a copy of acme-sdk 1.4.0 on sys.path, a folder no
reading of the repository's files looks in (before: the breaking 2.1 bump was green, exit 0, on tests that
never imported the installed 2.1.0)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import PLAIN_TASK, ROOT, STABLE_PING, make_venv, stable_repo_files

from agentic_codemod.adapters.python import ADAPTER
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.models import Tally
from agentic_codemod.tools import sandbox
from agentic_codemod.workflow import oracle, verify

FACTS = ADAPTER.test_facts
PYTEST = TestCommand(["{interpreter}", "-m", "pytest", "-q", "--junitxml={junit}"], "s", "pytest")
UNITTEST = TestCommand(["{interpreter}", "-m", "unittest", "discover", "-v", "-s", "tests"], "s", "unittest")
USES_THE_SDK = "import acme\n\n\ndef test_uses_the_sdk():\n    assert acme.Client\n"
VENDORED = (
    "import os\nimport sys\n\nVENDOR = os.path.join(os.path.dirname(__file__), '..', 'vendor')\n"
    "sys.path.insert(0, os.path.join(VENDOR, 'acme_sdk-1.4.0-py3-none-any.whl'))\n"
)
STUBS = "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'stubs'))\n"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def python(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with acme-sdk 1.4.0 and pytest (no repository installed in it)."""
    return make_venv(tmp_path_factory.mktemp("sdk-venv") / "venv", wheels, "acme-sdk==1.4.0", "pytest")


def project(root: Path, conftest: str = "", stub: bool = False) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text(USES_THE_SDK)
    if conftest:
        (root / "tests" / "conftest.py").write_text(conftest)
    if stub:  # the old SDK's code, committed beside the tests
        shutil.copytree(ROOT / "fixtures/sdks/acme-sdk-1.4.0/src/acme", root / "tests" / "stubs" / "acme")
    return root


def run(
    root: Path, python: Path, command: TestCommand = PYTEST, sdk: str = "acme-sdk"
) -> tuple[Tally | None, str, oracle.SdkResolution | None]:
    canary = oracle.plant(root, command, FACTS, sdk)
    assert canary is not None and canary.checks_sdk
    junit = root / "junit.xml"
    argv = verify.render(command, python, str(junit))
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300)
    tally, ids = FACTS.read_results(
        command, root, junit if junit.exists() else None, done.stdout + done.stderr
    )
    state, resolution = canary.read(tally, ids)
    return tally, state, resolution


def test_the_installed_sdk_reads_installed_and_leaves_the_repository_s_counts(
    tmp_path: Path, python: Path
) -> None:
    tally, state, resolution = run(project(tmp_path), python)
    assert (state, resolution) == ("failed", "installed")
    assert tally is not None and (tally.passed, tally.failed, tally.errors, tally.skipped) == (1, 0, 0, 0)
    assert tally.failing == []


@pytest.mark.parametrize(
    ("conftest", "stub"),
    [
        ("import sys\nfrom unittest import mock\n\nsys.modules['acme'] = mock.MagicMock()\n", False),
        (
            "import sys\nimport types\n\nsys.modules['acme'] = types.ModuleType('acme')\n"
            "sys.modules['acme'].Client = 1\n",
            False,
        ),
        (
            "import sys\nfrom unittest import mock\n\nimport acme\n\n"
            "sys.modules['acme.errors'] = mock.Mock()\n",
            False,
        ),
        (STUBS, True),  # found where an import would find it: the module was not loaded yet
        (STUBS + "\nimport acme  # noqa\n", True),  # loaded from the copy
    ],
    ids=["magicmock", "empty-module", "mocked-submodule", "copy-on-sys-path", "copy-loaded"],
)
def test_a_module_the_tests_import_from_elsewhere_reads_elsewhere(
    tmp_path: Path, python: Path, conftest: str, stub: bool
) -> None:
    tally, state, resolution = run(project(tmp_path, conftest, stub), python)
    assert (state, resolution) == ("failed", "elsewhere")
    assert tally is not None and (tally.failed, tally.skipped) == (0, 0)


def test_unittest_s_verbose_report_carries_the_answer(tmp_path: Path, python: Path) -> None:
    root = project(tmp_path)
    (root / "tests" / "test_a.py").write_text(
        "import unittest\n\nimport acme\n\n\nclass TestA(unittest.TestCase):\n"
        "    def test_uses_the_sdk(self):\n        self.assertTrue(acme.Client)\n"
    )
    assert run(root, python, UNITTEST)[1:] == ("failed", "installed")
    for planted in (root / "tests").glob("test_c*.py"):
        planted.unlink()
    test = root / "tests" / "test_a.py"
    test.write_text(STUBS + test.read_text())  # a test module collected before the canary's
    shutil.copytree(ROOT / "fixtures/sdks/acme-sdk-1.4.0/src/acme", root / "tests" / "stubs" / "acme")
    assert run(root, python, UNITTEST)[1:] == ("failed", "elsewhere")


def test_an_sdk_the_environment_does_not_have_reads_unknown_never_installed(
    tmp_path: Path, python: Path
) -> None:
    assert run(project(tmp_path), python, sdk="not-installed-sdk")[2] == "unknown"


def test_an_alias_of_installed_code_under_the_sdk_s_name_is_installed(tmp_path: Path, python: Path) -> None:
    """requests.packages.urllib3 is urllib3 (site-packages), six.moves a module of no file; a standard
    library module under the SDK's name too."""
    conftest = "import json\nimport sys\nimport types\n\nimport acme\n\n"
    conftest += (
        "sys.modules['acme.packages.json'] = json\nsys.modules['acme.moves'] = types.ModuleType('m')\n"
    )
    assert run(project(tmp_path, conftest), python)[1:] == ("failed", "installed")


@pytest.mark.skipif(sandbox.probe() is not None, reason="bwrap cannot start here")
@pytest.mark.parametrize("vendored", [False, True], ids=["installed", "vendored-wheel"])
def test_a_vendored_wheel_of_the_old_sdk_the_tests_import_requires_a_human_end_to_end(
    wheels: Path,
    make_repo: Callable[..., Path],
    run_codemod: Callable[..., object],
    tmp_path: Path,
    vendored: bool,
) -> None:
    """A plain bump that breaks the code (`timeout=` is gone in 2.x): with the installed SDK its tests fail
    after the bump (exit 3). With conftest.py putting a committed wheel of acme-sdk 1.4.0 first on
    sys.path (zipimport, where no reading of the repository's files looks), both test runs passed on
    1.4.0's code and the run was green, exit 0, with run.json naming 2.1.0."""
    files = stable_repo_files()
    files["src/acme_app/ping.py"] = STABLE_PING.replace(
        "acme.Client(base_url)", "acme.Client(base_url, timeout=5)"
    )
    files["tests/conftest.py"] = VENDORED if vendored else None
    repo = make_repo("vendored", files)
    if vendored:
        (repo / "vendor").mkdir()
        shutil.copy(wheels / "acme_sdk-1.4.0-py3-none-any.whl", repo / "vendor")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "vendor the sdk"], cwd=repo, check=True)
    task = tmp_path / "plain.yml"
    task.write_text(PLAIN_TASK)
    result = run_codemod(repo, task)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    if not vendored:
        assert m["reason"].startswith("tests fail after the bump")
        assert [v["sdk_resolution"] for v in m["verifications"]] == ["installed", "installed"]
        return
    assert "baseline: the tests' own module loader resolves 'acme-sdk' outside the installed" in m["reason"]
    assert [v["sdk_resolution"] for v in m["verifications"]] == ["elsewhere"]
    assert m["status"] == "requires_human" and m["classification"] != "green"
