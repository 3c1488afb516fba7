"""The Python canary's check of where the test process imports the SDK from (test_facts.WHERE_SDK): run
by real pytest and unittest in a venv with acme-sdk and distributions of real SDKs' shapes installed, read
through the adapter's reader, and end to end through the CLI on a repository whose conftest.py puts a
committed wheel of acme-sdk 1.4.0 first on sys.path, where no reading of the repository's files looks
(before: a plain bump that breaks the code on 2.1.0 was green, exit 0, on tests that never imported the
installed 2.1.0)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import PLAIN_TASK, ROOT, STABLE_PING, make_venv, stable_repo_files, wheel

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


# Distributions of the shapes real SDKs install (each a wheel built by hand): a PEP 420 namespace
# (google-cloud-*, azure-*, zope.*), auditwheel's `<name>.libs` folder beside the package (numpy, pillow),
# a stray top-level `tests` package (casbin 1.18), a submodule made at import by the SDK's own class
# (six.moves), an editable install (its RECORD: a .pth and a finder).
SHAPES = {
    "ns-demo": {"nsroot/sub/__init__.py": "from nsroot.sub import core\n", "nsroot/sub/core.py": "X = 1\n"},
    "libs-demo": {"libsdemo/__init__.py": "X = 1\n", "libsdemo.libs/libfoo-1a2b.so.1": "not code\n"},
    "stray-demo": {"straydemo/__init__.py": "X = 1\n", "tests/__init__.py": "", "tests/test_x.py": ""},
    "lazy-demo": {
        "lazydemo/__init__.py": "import sys\nimport types\n\n\nclass Moves(types.ModuleType):\n    pass\n\n\n"
        "moves = sys.modules[__name__ + '.moves'] = Moves(__name__ + '.moves')\n"
    },
    "editable-demo": {
        "__editable__.editable_demo-1.0.pth": "",
        "__editable___editable_demo_1_0_finder.py": "",
    },
}


@pytest.fixture(scope="module")
def python(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with acme-sdk 1.4.0, pytest and SHAPES' distributions (no repository installed in it)."""
    shapes = tmp_path_factory.mktemp("shapes")
    for name, files in SHAPES.items():
        wheel(shapes, name.replace("-", "_"), "1.0", files=files)
    return make_venv(
        tmp_path_factory.mktemp("sdk-venv") / "venv",
        wheels,
        *("--find-links", str(shapes), "acme-sdk==1.4.0", "pytest", *SHAPES),
    )


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


# helper-37: a stand-in whose `__file__` raises (not AttributeError) turned the check's answer into
# "unknown", and the run was green on tests that never imported the installed SDK (exit 0).
RAISING = (
    "import sys\nimport types\nfrom unittest import mock\n\n\nclass Posing(types.ModuleType):\n"
    "    def __getattribute__(self, name):\n"
    "        if name == '__file__':\n            raise RuntimeError('no file')\n"
    "        return super().__getattribute__(name)\n\n"
    "    def __getattr__(self, name):\n        return mock.MagicMock()\n\n\n"
    "sys.modules['acme'] = Posing('acme')\n"
)


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
        (
            "import sys\nimport types\n\nimport acme\n\n"
            "sys.modules['acme.errors'] = types.ModuleType('acme.errors')\n",
            False,
        ),
        ("import os\n\nimport acme\n\nacme.__path__.insert(0, os.path.dirname(__file__))\n", False),
        (STUBS, True),  # found where an import would find it: the module was not loaded yet
        (STUBS + "\nimport acme  # noqa\n", True),  # loaded from the copy
        (RAISING, False),
    ],
    ids=[
        "magicmock",
        "empty-module",
        "mocked-submodule",
        "stub-submodule",
        "folder-added-to-the-package",
        "copy-on-sys-path",
        "copy-loaded",
        "module-raising-as-it-is-read",
    ],
)
def test_a_module_the_tests_import_from_elsewhere_reads_elsewhere(
    tmp_path: Path, python: Path, conftest: str, stub: bool
) -> None:
    tally, state, resolution = run(project(tmp_path, conftest, stub), python)
    assert (state, resolution) == ("failed", "elsewhere")
    assert tally is not None and (tally.failed, tally.skipped) == (0, 0)


MOCK = "import sys\nfrom unittest import mock\n\nsys.modules['acme'] = mock.MagicMock()\n"


@pytest.mark.parametrize(
    "where",
    ["tests/test_zz.py", "tests/unit/conftest.py", "tests/unit/test_u.py"],
    ids=["module-collected-later", "subfolder-conftest", "subfolder-module"],
)
def test_a_mock_installed_after_the_canary_was_collected_reads_elsewhere_as_the_tests_run(
    tmp_path: Path, python: Path, where: str
) -> None:
    """The usual unit/integration layout: what is imported after the canary's module (a subfolder's
    conftest.py, a module that sorts after test_c<hex>.py) is seen when the canary's SDK test runs, since
    pytest collects every module first: that test fails, and the answer is "elsewhere"."""
    root = project(tmp_path)
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).write_text(MOCK + ("\n\ndef test_mocked():\n    assert sys.modules['acme']\n"))
    tally, state, resolution = run(root, python)
    assert (state, resolution) == ("failed", "elsewhere")
    assert tally is not None and (tally.failed, tally.errors) == (0, 0)


@pytest.mark.parametrize(
    ("sdk", "test", "extra"),
    [
        ("ns-demo", "from nsroot.sub import core\n\n\ndef test_it():\n    assert core.X\n", {}),
        (  # the repository's own portion of the namespace, on sys.path through pythonpath
            "ns-demo",
            "from nsroot.mine import Y\n\n\ndef test_it():\n    assert Y\n",
            {
                "pytest.ini": "[pytest]\npythonpath = src\n",
                "src/nsroot/mine/__init__.py": "from nsroot.sub import core\nY = core.X\n",
            },
        ),
        ("libs-demo", "import libsdemo\n\n\ndef test_it():\n    assert libsdemo.X\n", {}),
        (
            "stray-demo",
            "import straydemo\n\n\ndef test_it():\n    assert straydemo.X\n",
            {"tests/__init__.py": ""},
        ),
        ("lazy-demo", "import lazydemo.moves\n\n\ndef test_it():\n    assert lazydemo.moves\n", {}),
    ],
    ids=[
        "namespace",
        "repository-portion-of-the-namespace",
        "libs-folder",
        "stray-tests-package",
        "lazy-submodule",
    ],
)
def test_real_sdk_shapes_read_installed(
    tmp_path: Path, python: Path, sdk: str, test: str, extra: dict[str, str]
) -> None:
    """Before helper-35's fixes each of these read "elsewhere" (a run stopped for a human on healthy
    tests: protobuf, google-cloud-*, zope.interface, numpy, casbin) or "unknown" (pillow, pyzmq)."""
    root = project(tmp_path)
    (root / "tests" / "test_a.py").write_text(test)
    for rel, text in extra.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    tally, state, resolution = run(root, python, sdk=sdk)
    assert (state, resolution) == ("failed", "installed")
    assert tally is not None and (tally.passed, tally.failed, tally.skipped) == (1, 0, 0)


def test_an_editable_install_reads_unknown(tmp_path: Path, python: Path) -> None:
    """Its RECORD names a .pth and a finder, not the SDK's modules: nothing to compare with."""
    assert run(project(tmp_path, MOCK), python, sdk="editable-demo")[2] == "unknown"


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
    """requests.packages.urllib3 is urllib3 (site-packages); a standard library module too."""
    conftest = "import json\nimport sys\n\nimport acme\n\nsys.modules['acme.packages.json'] = json\n"
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
