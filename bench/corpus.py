"""Run agentic-codemod over the real-project corpus (bench/corpus/manifest.yml) and print how honest it was.

    .venv/bin/python bench/corpus.py [--only ID ...] [--limit N] [--timeout S] [--keep DIR]
    .venv/bin/python bench/corpus.py --quick      # validate the manifest only: no network, no run

Per case, sequentially: the sdist (fetched and sha256-checked by bench/corpus/fetch.py) becomes a git
repository in a temp dir (git init + one commit); a task without `migration:` (a plain bump: the corpus
has no migration packages) is written for the case; `agentic-codemod run --offline` runs on it with the
project's own context and the machine's pip configuration for the index, bounded by --timeout. npm cases
(`ecosystem: npm`) are the same with the package's published tarball (`npm pack`) and npm's registry
configuration; their versions are read with node-semver. An npm case with `lockfile: generated` commits the
package-lock.json its owner would have (bench/corpus/fetch.py `generate_lockfile`: `npm install
--package-lock-only --ignore-scripts` in the unpacked package before the commit, npm's major checked
against the case's `lockfile_npm`, the dependency locked at `measure_from`, any failure fatal), the same
file bench/corpus/measure.py measures with `npm ci`. A Python case with `lockfile: generated` (a Poetry
project) commits the poetry.lock its owner would have, the same way: `poetry lock` in the unpacked sdist
(the Poetry the tool refreshes it with, its major checked against `lockfile_poetry`), measured with
`poetry install` from it.

A false success is exit 0 on a breaking case, or exit 0 where run.json does not prove that the tests ran
on both versions: a baseline environment whose version of the dependency lies in `from`, an after
environment holding exactly `to`, and both verifications with at least one test run; with a lockfile, also
a baseline on exactly the locked `measure_from`, and a candidate whose lockfile (package-lock.json, or
poetry.lock: every entry of that name) locks exactly `to` (the run's worktree, run/worktree). Breaking
honest is
exit 1 or 3 with a reason that names a failing test or the missing migration, or, where no test id fails
because the tests cannot start on the target (an import error in a conftest), the error the case names in
`crash`. A safe case may name,
in `human`, what its bump leaves for a human (a pip-compile output still pinning the old version, which
the project's own install of that file could no longer resolve): its right outcome is exit 3 with a
reason holding that text, the same proof of both test runs as a green case, and a green candidate
("human, as expected"); exit 0 there is a false success. A case may name, in `stops`, why the run cannot
verify it at all (a test script one command cannot reproduce): its right outcome is exit 3 before any
test run with a reason holding that text, counted with the breaking honest or the human as expected
cases by its `expected`. The last line:

    corpus: N cases, false successes F, safe green S/s, breaking honest B/b, human as expected H/h

preceded, when the run holds cases of both ecosystems, by the same line for the npm cases alone
(`corpus npm: …`), and followed by what the runs cost against their own tests (issue 13 on real
projects: each case's line ends with its run time, its test runs' seconds and the ratio of the two):

    corpus cost: N runs that tested both versions, run time against its test runs median R (from a to b); …

Installs come from the package index through the machine's caches as they are, so a first corpus run on a
machine pays for downloads that later ones do not.

It is a benchmark, not a test: it needs the package index and takes minutes per case. Lockfiles are
refreshed by their own tool, as a CI image would have it: the `lock` extra puts pdm beside the tool
(`.venv/bin/pip install -e '.[lock]'`); without it the pdm.lock case ends 3, "pdm is not on PATH".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
import fetch  # bench/corpus/fetch.py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_times  # bench/run_times.py

ROOT = fetch.ROOT
DEFAULT_TIMEOUT_S = 1800
WORK = ROOT / ".cache" / "corpus-work"
# Files a plain bump may edit; a name without glob characters also waives the nameable deny globs.
DECLARATION_FILES = (
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "requirements.txt",
    "test-requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "tox.ini",
    "pdm.lock",
    "poetry.lock",
    "uv.lock",
)
NPM_DECLARATION_FILES = ("package.json", "package-lock.json", "npm-shrinkwrap.json")
GIT = ["git", "-c", "user.name=corpus", "-c", "user.email=corpus@example.invalid"]


def make_repo(case: dict[str, Any], work: Path) -> Path:
    repo = fetch.unpack(case, work / "unpacked")
    if fetch.has_lockfile(case):
        fetch.generate_lockfile(case, repo)
    for argv in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-q", "-m", f"{case['project']} sdist"]):
        subprocess.run([*GIT, *argv], cwd=repo, check=True, capture_output=True)
    return repo


def write_task(case: dict[str, Any], repo: Path, path: Path) -> Path:
    files = NPM_DECLARATION_FILES if fetch.is_npm(case) else DECLARATION_FILES
    allowed = [name for name in files if (repo / name).is_file()]
    if (repo / "requirements").is_dir():
        allowed.append("requirements/**")
    ecosystem = "npm" if fetch.is_npm(case) else "python"
    task = {
        "id": f"corpus-{case['id']}",
        "title": f"Bump {case['dep']} to {case['to']}",
        "sdk": {"name": case["dep"], "ecosystem": ecosystem, "from": case["from"], "to": case["to"]},
        "allowed_paths": allowed or ["package.json" if fetch.is_npm(case) else "requirements.txt"],
        "acceptance_criteria": [f"the project's own tests pass on {case['dep']} {case['to']}"],
    }
    if case.get("verification"):  # what a user would set for this repository (the manifest says why)
        task["verification"] = case["verification"]
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def run_case(case: dict[str, Any], work: Path, timeout: int) -> dict[str, Any]:
    repo = make_repo(case, work)
    task = write_task(case, repo, work / "task.yml")
    run_dir = work / "run"
    if run_dir.exists():  # --keep: a run dir from an earlier bench
        shutil.rmtree(run_dir)
    argv = [sys.executable, "-m", "agentic_codemod", "run", "--repo", str(repo), "--task", str(task)]
    argv += ["--run-dir", str(run_dir), "--context", str(ROOT), "--offline", "--quiet"]
    env = {**os.environ, "AGNO_TELEMETRY": "false"}
    started = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        code: int | None = done.returncode
        stderr = done.stderr
    except subprocess.TimeoutExpired:
        code, stderr = None, f"timed out after {timeout}s"
    wall = time.monotonic() - started
    manifest_path = run_dir / "run.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    tests = run_times.test_runs(run_dir) if manifest else run_times.TestRuns(0, 0.0, 0.0)
    reason = manifest.get("reason") or stderr.strip().splitlines()[-1:] or ["no run.json"]
    return {
        "exit": code,
        "seconds": round(wall),
        "wall_s": round(wall, 2),
        "tests_s": round(tests.summed, 2),  # its test runs' seconds, one after the other
        "tests_wall_s": round(tests.wall, 2),  # the same, overlaps counted once
        "test_runs": tests.count,
        "status": manifest.get("status", "no run.json"),
        "reason": reason if isinstance(reason, str) else reason[0],
        "proof": proof(case, manifest) or locked_proof(case, manifest, run_dir / "worktree"),
        "manifest": manifest,
    }


def proof(case: dict[str, Any], manifest: dict[str, Any]) -> str:
    """'' when run.json proves that both versions were tested, else what is missing."""
    name = case["dep"] if fetch.is_npm(case) else canonicalize_name(case["dep"])
    envs = manifest.get("environments") or {}
    base = (envs.get("baseline") or {}).get(name)
    after = (envs.get("after") or {}).get(name)
    if base is None or not in_range(case, base, case["from"]):
        return f"baseline {case['dep']} {base or 'unrecorded'} not in {case['from']}"
    if after != case["to"]:
        return f"after-bump {case['dep']} {after or 'unrecorded'} is not {case['to']}"
    ran = {v["phase"] == "baseline" for v in manifest.get("verifications", []) if _ran_tests(v)}
    if ran != {True, False}:
        return "no verification with a test run on both versions"
    return ""


def locked_proof(case: dict[str, Any], manifest: dict[str, Any], worktree: Path) -> str:
    """`lockfile: generated`: '' when the baseline tested the locked measure_from and the candidate's
    lockfile (package-lock.json; poetry.lock: every entry of the name) locks exactly `to`, else what is
    wrong."""
    if not fetch.has_lockfile(case):
        return ""
    name = case["dep"] if fetch.is_npm(case) else canonicalize_name(case["dep"])
    base = ((manifest.get("environments") or {}).get("baseline") or {}).get(name)
    if base != str(case["measure_from"]):
        return f"baseline {case['dep']} {base or 'unrecorded'} is not the locked {case['measure_from']}"
    lockfile = fetch.lockfile_name(case)
    try:
        if fetch.is_npm(case):
            packages = json.loads((worktree / lockfile).read_text(encoding="utf-8"))["packages"]
            locked = [packages[f"node_modules/{case['dep']}"]["version"]]
        else:
            locked = fetch.poetry_locked(worktree / lockfile, str(case["dep"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"the candidate's {lockfile} cannot be read: {exc!r}"
    if locked == [str(case["to"])]:
        return ""
    return f"the candidate's {lockfile} locks {case['dep']} {' and '.join(map(str, locked)) or '(nothing)'}"


def in_range(case: dict[str, Any], version: str, written: str) -> bool:
    """Whether `version` lies in the range `written`, read the way the case's ecosystem reads it."""
    if fetch.is_npm(case):
        from agentic_codemod.adapters.npm import versioning

        return versioning.matches(version, written)
    return version in SpecifierSet(written, prereleases=True)


def _ran_tests(verification: dict[str, Any]) -> bool:
    tests = verification.get("tests") or {}
    return sum(n for key, n in tests.items() if isinstance(n, int)) > 0


def judge(case: dict[str, Any], result: dict[str, Any]) -> tuple[str, bool]:
    """(verdict, counted): FALSE SUCCESS, green, honest, or what else happened."""
    code, breaking = result["exit"], case["expected"] == "red"
    if case.get("stops"):  # the tool cannot verify the repository: it must say so before any test run
        ran = any(v.get("tests") for v in result["manifest"].get("verifications", []))
        if code == 0:
            return "FALSE SUCCESS", False
        stopped = code == 3 and str(case["stops"]) in result["reason"] and not ran
        return ("stops, as expected", True) if stopped else (f"exit {code}", False)
    if case.get("human"):  # green tests, but the bump leaves the repository a human's job
        if code == 0:
            return "FALSE SUCCESS", False
        tested = [v for v in result["manifest"].get("verifications", []) if v.get("tests")]
        # the candidate adds no failure, so the item is all that is left: green, or failing only where the
        # baseline failed (a case whose tests fail on both versions names the tool's pre-existing reason)
        adds_none = bool(tested) and (
            bool(tested[-1].get("passed")) or result["manifest"].get("classification") == "pre-existing"
        )
        expected = (
            code == 3
            and str(case["human"]) in result["reason"]
            and not result["proof"]  # the tests ran on both versions, as for a green case
            and adds_none
        )
        return ("human, as expected", True) if expected else (f"exit {code}", False)
    if code == 0:
        # nothing_to_do counts only with the proof: a verify-only run (a declaration that admits both
        # versions) that tested `from` and exactly `to` green; without a test run it is a false success
        if breaking or result["proof"]:
            return "FALSE SUCCESS", False
        return "green", True
    if breaking and code in (1, 3):
        reason = result["reason"]
        tested = [v for v in result["manifest"].get("verifications", []) if v.get("tests")]
        failing = tested[-1]["tests"].get("failing", []) if tested else []
        named = "no migration notes" in reason or any(t.split("::")[-1] in reason for t in failing)
        # no test id to name where the tests cannot start on the target (an import error in a conftest):
        # the case's `crash` is the error the measurement saw, which the reason must carry instead
        crashed = not failing and bool(case.get("crash")) and str(case["crash"]) in reason
        return ("honest", True) if named or crashed else ("unnamed reason", False)
    return ("not green" if not breaking else f"exit {code}"), False


REQUIRED = ("id", "project", "version", "sdist", "sha256", "styles", "dep", "from", "measure_from", "to")
REQUIRED_NPM = ("tarball", "integrity", *(k for k in REQUIRED if k != "sdist"))


def validate(cases: list[dict[str, Any]]) -> int:
    """--quick: every case of the manifest checked without the network: the fields a run needs, the pins,
    the ranges, and the task the run would write, loaded by the tool's own task loader."""
    from packaging.version import InvalidVersion, Version

    from agentic_codemod.errors import CodemodError
    from agentic_codemod.task import load_task

    problems: list[str] = []
    ids = [str(c.get("id")) for c in cases]
    problems += [f"{i}: duplicate id" for i in sorted({i for i in ids if ids.count(i) > 1})]
    with tempfile.TemporaryDirectory(prefix="corpus-quick-") as tmp:
        for case in cases:
            where = f"{fetch.MANIFEST.name}: case {case.get('id')!r}"
            missing = [k for k in (REQUIRED_NPM if fetch.is_npm(case) else REQUIRED) if not case.get(k)]
            if missing:
                problems.append(f"{where}: field(s) {', '.join(missing)} missing")
                continue
            if case.get("expected") not in ("green", "red"):
                problems.append(f"{where}: field 'expected' must be green or red (measured)")
            if len(str(case["sha256"])) != 64 or any(
                ch not in "0123456789abcdef" for ch in str(case["sha256"])
            ):
                problems.append(f"{where}: field 'sha256' is not a sha256 hex digest")
            if case.get("ecosystem", "python") not in ("python", "npm"):
                problems.append(f"{where}: field 'ecosystem' must be python or npm")
                continue
            problems += _lockfile_fields(case, where)
            if "human" in case and (not isinstance(case["human"], str) or not case["human"].strip()):
                problems.append(f"{where}: field 'human' must be the text the tool's reason holds")
            elif "human" in case and case["expected"] != "green":
                problems.append(f"{where}: field 'human' is for a case whose tests stay green")
            if "stops" in case and (not isinstance(case["stops"], str) or not case["stops"].strip()):
                problems.append(f"{where}: field 'stops' must be the text the tool's reason holds")
            if "crash" in case and (not isinstance(case["crash"], str) or not case["crash"].strip()):
                problems.append(f"{where}: field 'crash' must be the text the tool's reason holds")
            elif "crash" in case and case["expected"] != "red":
                problems.append(f"{where}: field 'crash' is for a case whose tests break on the target")
            try:
                if fetch.is_npm(case):
                    problems += _npm_versions(case, where)
                else:
                    if Version(str(case["measure_from"])) not in SpecifierSet(str(case["from"])):
                        problems.append(
                            f"{where}: measure_from {case['measure_from']} is outside from {case['from']}"
                        )
                    Version(str(case["to"]))
            except (InvalidVersion, ValueError) as exc:
                problems.append(f"{where}: {exc}")
                continue
            repo = Path(tmp) / str(case["id"])
            repo.mkdir()
            try:
                load_task(write_task(case, repo, Path(tmp) / f"{case['id']}.yml"))
            except CodemodError as exc:
                problems.append(f"{where}: the task it writes is refused: {exc}")
    for line in problems:
        print(line)
    print(f"corpus manifest: {len(cases)} cases checked, {len(problems)} problem(s)")
    return 1 if problems else 0


def _npm_versions(case: dict[str, Any], where: str) -> list[str]:
    """The version fields of an npm case, read with node-semver: versions exact, measure_from in from,
    to outside it (a bump), and the tarball the name npm pack gives it."""
    from agentic_codemod.adapters.npm import versioning

    problems = [
        f"{where}: field {key!r} ({case[key]}) is not an exact version"
        for key in ("version", "measure_from", "to")
        if not versioning.is_version(str(case[key]))
    ]
    if not versioning.is_range(str(case["from"])):
        problems.append(f"{where}: field 'from' ({case['from']}) is not an npm range")
    elif not problems and not versioning.matches(str(case["measure_from"]), str(case["from"])):
        problems.append(f"{where}: measure_from {case['measure_from']} is outside from {case['from']}")
    if not str(case["integrity"]).startswith("sha512-"):
        problems.append(f"{where}: field 'integrity' is not the registry's sha512-… dist.integrity")
    packed = f"{str(case['project']).lstrip('@').replace('/', '-')}-{case['version']}.tgz"
    if case["tarball"] != packed:
        problems.append(f"{where}: field 'tarball' is {case['tarball']!r}; npm pack names it {packed!r}")
    return problems


LOCKERS = {"npm": ("lockfile_npm", "npm"), "python": ("lockfile_poetry", "Poetry")}


def _lockfile_fields(case: dict[str, Any], where: str) -> list[str]:
    """`lockfile: generated` and the version of the tool that generated it: `lockfile_npm` for an npm
    case (package-lock.json), `lockfile_poetry` for a Python one (poetry.lock); the other's field never."""
    from packaging.version import InvalidVersion, Version

    from agentic_codemod.adapters.npm import versioning

    field, locker = LOCKERS["npm" if fetch.is_npm(case) else "python"]
    stray = [key for key, _ in LOCKERS.values() if key in case and key != field]
    if stray:
        return [
            f"{where}: field {stray[0]!r} is not for {'an npm' if fetch.is_npm(case) else 'a Python'} case"
        ]
    if "lockfile" not in case:
        return [f"{where}: field {field!r} without 'lockfile'"] if field in case else []
    if case["lockfile"] != "generated":
        return [f"{where}: field 'lockfile' must be generated (a lockfile {locker} writes before the commit)"]
    recorded = str(case.get(field, ""))
    if fetch.is_npm(case):
        exact = versioning.is_version(recorded)
    else:
        try:
            exact = bool(recorded) and str(Version(recorded)) == recorded
        except InvalidVersion:
            exact = False
    if not exact:
        return [f"{where}: field {field!r} must be the {locker} version that generated the lockfile"]
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case ids (default: all)")
    parser.add_argument("--limit", type=int, help="at most this many cases")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, help="seconds per case")
    parser.add_argument("--keep", type=Path, help="keep each case's repo and run dir under this directory")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--quick", action="store_true", help="validate the manifest only (no network, no run)"
    )
    args = parser.parse_args()
    if args.quick:
        return validate(fetch.load_cases(args.only)[: args.limit])
    cases = fetch.load_cases(args.only)[: args.limit]
    unmeasured = [c["id"] for c in cases if c.get("expected") not in ("green", "red")]
    if unmeasured:
        raise SystemExit(f"{fetch.MANIFEST}: no measured expected outcome for {', '.join(unmeasured)}")
    rows, results = [], {}
    header = f"{'case':30} {'style':34} {'expected':8} {'exit':>4} {'status':16} {'verdict':14} reason"
    print(header, flush=True)
    for case in cases:
        if args.keep:
            work = args.keep / case["id"]
            work.mkdir(parents=True, exist_ok=True)
            result = run_case(case, work, args.timeout)
        else:
            # Not under /tmp: a CI job's run dir lies in its project dir, and some suites behave
            # differently under /tmp (stevedore turns its cache off when the interpreter lives there).
            WORK.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=f"corpus-{case['id']}-", dir=WORK) as tmp:
                result = run_case(case, Path(tmp), args.timeout)
        verdict, counted = judge(case, result)
        reason = result["reason"] + (f" [proof: {result['proof']}]" if result["proof"] else "")
        reason += " [verification set in the manifest]" if case.get("verification") else ""
        rows.append((case, verdict, counted))
        results[case["id"]] = {k: v for k, v in result.items() if k != "manifest"} | {"verdict": verdict}
        style = case["styles"][0]
        print(
            f"{case['id']:30} {style[:34]:34} {case['expected']:8} {result['exit']!s:>4} "
            f"{result['status'][:16]:16} {verdict:14} {' '.join(reason.split())[:160]} "
            f"({result['seconds']}s{_cost(result)})",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    npm = [row for row in rows if fetch.is_npm(row[0])]
    if npm and len(npm) < len(rows):  # both ecosystems: the npm cases' own line before the total
        print(summary("corpus npm", npm))
    print(summary("corpus", rows))
    print(cost_summary([results[case["id"]] for case, _v, _k in rows]))
    return 0


def _cost(result: dict[str, Any]) -> str:
    """ ", tests 12.3s, 1.8x": the run's wall time against its test runs' seconds (bench/run_times.py)."""
    if not result["tests_s"]:
        return ""
    return f", tests {result['tests_s']:.1f}s, {result['wall_s'] / result['tests_s']:.1f}x"


def cost_summary(results: list[dict[str, Any]]) -> str:
    """What a run costs against its own tests, over the runs that tested both versions (two test runs)."""
    both = [r for r in results if r["test_runs"] >= 2]
    if not both:
        return "corpus cost: no case ran both versions' tests"
    ratios = sorted(r["wall_s"] / r["tests_s"] for r in both)
    wall, tests = sum(r["wall_s"] for r in both), sum(r["tests_s"] for r in both)
    walls = sum(r["tests_wall_s"] for r in both)
    return (
        f"corpus cost: {len(both)} runs that tested both versions, run time against its test runs "
        f"median {statistics.median(ratios):.2f}x (from {ratios[0]:.2f}x to {ratios[-1]:.2f}x); in all "
        f"{wall:.0f} s of runs, {tests:.0f} s of test runs ({walls:.0f} s with overlaps counted once)"
    )


def summary(label: str, rows: list[tuple[dict[str, Any], str, bool]]) -> str:
    false = sum(1 for _c, v, _k in rows if v == "FALSE SUCCESS")
    safe = [k for c, _v, k in rows if c["expected"] == "green" and not c.get("human") and not c.get("stops")]
    breaking = [k for c, _v, k in rows if c["expected"] == "red"]
    human = [k for c, _v, k in rows if c.get("human") or (c.get("stops") and c["expected"] == "green")]
    return (
        f"{label}: {len(rows)} cases, false successes {false}, "
        f"safe green {sum(safe)}/{len(safe)}, breaking honest {sum(breaking)}/{len(breaking)}, "
        f"human as expected {sum(human)}/{len(human)}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
