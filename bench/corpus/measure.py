"""Measure each corpus case by hand, without agentic-codemod: what do the project's tests say on `from`
and on `to`?

    .venv/bin/python bench/corpus/measure.py [--only ID ...]

Per case: the sdist unpacked into a temp dir, a fresh venv, `pip install <sdist dir>[extras] <test_deps>
dep==measure_from`, the case's test_command in the sdist dir; then `pip install dep==to` in the same venv
and the test command again. npm cases (`ecosystem: npm`): the tarball unpacked, `npm install
--no-package-lock --ignore-scripts` in it, `npm install --no-save dep@measure_from`, the test command, then
`npm install --no-save dep@to` and the test command again. With `lockfile: generated`: the package-lock.json
bench/corpus/fetch.py generates (the one the run's repository commits), and `npm ci --ignore-scripts` from
it instead of the first two installs, so `from` is the version that lockfile holds (measure_from, checked).
An npm phase checks that node_modules holds exactly its version before the tests run. Python cases with
`lockfile: generated` (Poetry projects) likewise: the poetry.lock fetch.py generates, and `poetry install
--no-interaction [--extras X]` from it into the fresh venv (the project and the groups `poetry install`
installs by default, at their locked versions: the tree the owner's CI gets) instead of the first pip
install; test_deps, if any, are pip-installed after it. Every Python phase checks that the venv holds
exactly its version of the dependency before the tests run. Prints one line per case and writes
.cache/corpus/measured.json; the `expected`/`measured` fields of manifest.yml are copied from there by
hand after a look at the output.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fetch  # bench/corpus/fetch.py, beside this file

TEST_TIMEOUT_S = 900
INSTALL_TIMEOUT_S = 900


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timeout"
    return done.returncode, (done.stdout + done.stderr)


def _summary(output: str) -> str:
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    words = ("passed", "failed", "Ran ", "OK", "FAILED", "error", "passing", "failing", "# pass", "Tests:")
    keep = [ln for ln in lines if any(w in ln for w in words)]
    return (keep[-1] if keep else (lines[-1] if lines else ""))[:200]


def measure_npm(case: dict[str, Any], work: Path) -> dict[str, Any]:
    src = fetch.unpack(case, work / "src")
    env = {**os.environ, "PATH": f"{src / 'node_modules' / '.bin'}:{os.environ['PATH']}"}
    quiet = ["--no-audit", "--no-fund", "--ignore-scripts"]
    npm = ["npm", "install", *quiet]
    result: dict[str, Any] = {"id": case["id"]}
    install = lambda version: [*npm, "--no-save", f"{case['dep']}@{version}"]  # noqa: E731
    if fetch.has_lockfile(case):  # the tree the run's baseline gets: npm ci from the same lockfile
        result["lockfile"] = {"npm": fetch.npm_version(), "locks": fetch.generate_lockfile(case, src)}
        code, out = _run(["npm", "ci", *quiet], src, env, INSTALL_TIMEOUT_S)
        if code != 0:
            return {**result, "error": f"npm ci: {out[-500:]}"}
        return _both_phases(case, src, env, result, install, first=False)
    code, out = _run([*npm, "--no-package-lock"], src, env, INSTALL_TIMEOUT_S)
    if code != 0:
        return {**result, "error": f"npm install: {out[-500:]}"}
    return _both_phases(case, src, env, result, install, first=True)


def measure(case: dict[str, Any], work: Path) -> dict[str, Any]:
    if fetch.is_npm(case):
        return measure_npm(case, work)
    src = fetch.unpack(case, work / "src")
    venv = work / "venv"
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    extras = f"[{','.join(case['extras'])}]" if case.get("extras") else ""
    result: dict[str, Any] = {"id": case["id"]}
    pin = lambda version: [*pip, f"{case['dep']}=={version}"]  # noqa: E731
    if fetch.has_lockfile(case):  # the owner's tree: poetry install from the generated poetry.lock
        result["lockfile"] = {"poetry": fetch.poetry_version(), "locks": fetch.generate_lockfile(case, src)}
        poetry = [str(fetch.poetry_program()), "install", "--no-interaction"]
        poetry += [arg for extra in case.get("extras") or [] for arg in ("--extras", extra)]
        poetry_env = {**env, "POETRY_VIRTUALENVS_CREATE": "false", "POETRY_NO_INTERACTION": "1"}
        code, out = _run(poetry, src, poetry_env, INSTALL_TIMEOUT_S)
        if code != 0:
            return {**result, "error": f"poetry install: {out[-500:]}"}
        if case["test_deps"]:
            code, out = _run([*pip, *case["test_deps"]], src, env, INSTALL_TIMEOUT_S)
            if code != 0:
                return {**result, "error": f"install test_deps: {out[-500:]}"}
        return _both_phases(case, src, env, result, pin, first=False)
    code, out = _run(
        [*pip, f"{src}{extras}", *case["test_deps"], f"{case['dep']}=={case['measure_from']}"],
        src,
        env,
        INSTALL_TIMEOUT_S,
    )
    if code != 0:
        return {**result, "error": f"install from: {out[-500:]}"}
    return _both_phases(case, src, env, result, pin, first=False)


def _both_phases(
    case: dict[str, Any],
    src: Path,
    env: dict[str, str],
    result: dict[str, Any],
    install: Callable[[str], list[str]],
    *,
    first: bool,
) -> dict[str, Any]:
    """The test command on `measure_from`, then on `to`; `install(version)` puts a version in place
    (`first`: also before the first run, else the first version is already installed)."""
    for phase, version in (("from", case["measure_from"]), ("to", case["to"])):
        if first or phase == "to":
            code, out = _run(install(version), src, env, INSTALL_TIMEOUT_S)
            if code != 0:
                return {**result, "error": f"install {phase}: {out[-500:]}"}
        installed = _installed(src, case["dep"]) if fetch.is_npm(case) else _installed_python(env, case)
        if installed != version:
            found = f"{case['dep']} {installed or '(nothing)'}"
            where = "node_modules" if fetch.is_npm(case) else "the venv"
            return {**result, "error": f"{phase}: {where} holds {found}, not {version}"}
        started = time.monotonic()
        code, out = _run(shlex.split(case["test_command"]), src, env, TEST_TIMEOUT_S)
        result[phase] = {
            "version": version,
            "exit": code,
            "summary": _summary(out),
            "seconds": round(time.monotonic() - started),
        }
    result["expected"] = "green" if result["to"]["exit"] == 0 else "red"
    return result


def _installed(src: Path, name: str) -> str:
    """The version of `name` in src/node_modules (its package.json), '' when it is not there."""
    try:
        return str(json.loads((src / "node_modules" / name / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return ""


def _installed_python(env: dict[str, str], case: dict[str, Any]) -> str:
    """The version of the dependency the venv's interpreter sees, '' when it has none."""
    code = "import importlib.metadata as m, sys\ntry: print(m.version(sys.argv[1]))\nexcept Exception: pass"
    python = str(Path(env["VIRTUAL_ENV"]) / "bin" / "python")
    done = subprocess.run([python, "-c", code, str(case["dep"])], env=env, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case ids")
    args = parser.parse_args()
    out_path = fetch.CACHE / "measured.json"
    fetch.CACHE.mkdir(parents=True, exist_ok=True)
    done = json.loads(out_path.read_text()) if out_path.is_file() else {}
    for case in fetch.load_cases(args.only):
        with tempfile.TemporaryDirectory(prefix=f"measure-{case['id']}-") as tmp:
            result = measure(case, Path(tmp))
        done[case["id"]] = result
        out_path.write_text(json.dumps(done, indent=2))
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
