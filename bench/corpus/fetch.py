"""Fetch the corpus sources into .cache/corpus and verify each against the sha256 of manifest.yml.

    .venv/bin/python bench/corpus/fetch.py [--only ID ...]

Python cases (`sdist:`): `pip download --no-deps --no-binary :all: NAME==VERSION` with pip's own
configuration (index, certificates). npm cases (`ecosystem: npm`, `tarball:`): `npm pack NAME@VERSION`
with npm's own configuration (registry, .npmrc), which also checks the registry's integrity hash. A file
whose sha256 (npm: or sha512 integrity) differs from the manifest is deleted and the script exits 1.
Nothing is committed but the manifest and the scripts. Also used by bench/corpus/measure.py and
bench/corpus.py (`prepare`).

npm cases with `lockfile: generated`: `generate_lockfile` writes the package-lock.json the package's owner
would commit, in the unpacked package, the same way for the measurement and the run:

    npm install --package-lock-only --ignore-scripts --no-audit --no-fund \
        --omit-lockfile-registry-resolved=false

It fails loudly (SystemExit) when the running npm's major is not the one of `lockfile_npm` (the npm that
generated the lockfile the case was measured with), when the tarball ships a lockfile already, when npm
fails, or when the lock's version of the dependency is not `measure_from` (a release since the
measurement moved it: measure again). npm's --before cannot pin the rest of the tree: the registry's
publish times are not reliable enough (this machine's registry finds no mocha 2 before 2024-09).

Python cases with `lockfile: generated` (Poetry projects): `generate_lockfile` writes the poetry.lock the
project's owner would commit, in the unpacked sdist:

    POETRY_VIRTUALENVS_CREATE=false poetry lock --no-interaction

(no virtualenv of the project left in the user's cache) with the Poetry the tool itself would refresh it
with (on PATH, else beside this interpreter: the venv's, as agentic_codemod.adapters.python.update.lock_tool
finds it). It fails loudly when that Poetry's major is not the one of `lockfile_poetry`, when the sdist is
not a Poetry project ([tool.poetry] or a poetry build backend), when it ships a lockfile already
(poetry.lock, uv.lock, pdm.lock, Pipfile.lock: the owner's own lock would be replaced, or a second one added
beside it; such a sdist is the owner's repository as it is, a case without `lockfile:`), when Poetry fails,
or when the lock does not lock the dependency at exactly `measure_from` (every entry of that name). Poetry
resolves over the project's whole python range and, for a release it knows only as an sdist, asks the
index's JSON API, which some releases lack (docutils 0.21.post1: python-poetry/poetry#9293): a project whose
dev tools reach such a release cannot be locked today, by the owner either.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).resolve().parent / "manifest.yml"
CACHE = ROOT / ".cache" / "corpus"
DOWNLOAD_TIMEOUT_S = 600
# npm's own lockfile defaults, whatever the user config says (this machine's omits `resolved` URLs; an
# owner's lockfile carries them, and so does the one the tool refreshes, which reads no such user key).
LOCK_COMMAND = [
    "npm",
    "install",
    "--package-lock-only",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--omit-lockfile-registry-resolved=false",
]
NPM_LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")
POETRY_LOCK_COMMAND = ["lock", "--no-interaction"]
# A sdist shipping any of these is refused for `lockfile: generated` (module docstring).
PYTHON_LOCKFILES = ("poetry.lock", "uv.lock", "pdm.lock", "Pipfile.lock")


class _UniqueKeys(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (YAML would keep the last, silently:
    a case's `measured:` pasted into the wrong case went unnoticed that way)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if key in seen:
                raise SystemExit(f"{MANIFEST}:{key_node.start_mark.line + 1}: key {key!r} given twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_cases(only: list[str] | None = None) -> list[dict[str, Any]]:
    cases = yaml.load(MANIFEST.read_text(encoding="utf-8"), Loader=_UniqueKeys)["cases"]
    if only:
        unknown = sorted(set(only) - {c["id"] for c in cases})
        if unknown:
            raise SystemExit(f"{MANIFEST}: no case {', '.join(unknown)}")
        cases = [c for c in cases if c["id"] in only]
    return cases


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_npm(case: dict[str, Any]) -> bool:
    return case.get("ecosystem") == "npm"


def source_name(case: dict[str, Any]) -> str:
    """The cached file of a case: the sdist's name, or the npm tarball's."""
    return str(case["tarball"] if is_npm(case) else case["sdist"])


def fetch(case: dict[str, Any]) -> Path:
    """The verified sdist (or npm tarball) of one case, downloaded when it is not in the cache yet."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / source_name(case)
    if not path.is_file() and is_npm(case):
        argv = ["npm", "pack", "--silent", f"{case['project']}@{case['version']}"]
        argv += ["--pack-destination", str(CACHE)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S)
        if done.returncode != 0 or not path.is_file():
            raise SystemExit(f"{case['id']}: npm pack failed: {(done.stderr or done.stdout)[-600:]}")
    elif not path.is_file():
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        argv += ["-d", str(CACHE), f"{case['project']}=={case['version']}"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S)
        if done.returncode != 0 or not path.is_file():
            raise SystemExit(f"{case['id']}: pip download failed: {(done.stderr or done.stdout)[-600:]}")
    got = sha256(path)
    if got != case["sha256"]:
        path.unlink()
        raise SystemExit(f"{case['id']}: {path.name} has sha256 {got}, the manifest says {case['sha256']}")
    if is_npm(case) and case.get("integrity") and integrity(path) != case["integrity"]:
        path.unlink()
        raise SystemExit(f"{case['id']}: {path.name} is not the registry's {case['integrity']}")
    return path


def integrity(path: Path) -> str:
    """npm's dist.integrity of a file: sha512-<base64 digest>."""
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def unpack(case: dict[str, Any], dest: Path) -> Path:
    """The sdist's (npm: the tarball's `package/`) top directory, extracted under dest (a fresh directory)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(fetch(case)) as tar:
        tar.extractall(dest, filter="data")
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def has_lockfile(case: dict[str, Any]) -> bool:
    """Whether the case's repository commits a generated lockfile (`lockfile: generated`): npm's
    package-lock.json, or Poetry's poetry.lock for a Python case."""
    return case.get("lockfile") == "generated"


def lockfile_name(case: dict[str, Any]) -> str:
    """The file `generate_lockfile` writes for the case."""
    return "package-lock.json" if is_npm(case) else "poetry.lock"


def npm_version() -> str:
    done = subprocess.run(["npm", "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else ""


def poetry_program() -> str | None:
    """The Poetry the tool refreshes a poetry.lock with: on PATH, else beside this interpreter."""
    beside = Path(sys.executable).parent / "poetry"
    return shutil.which("poetry") or (str(beside) if beside.is_file() else None)


def poetry_version() -> str:
    """`poetry --version` as a bare version ('2.5.1'), '' when there is no Poetry or it fails."""
    program = poetry_program()
    if program is None:
        return ""
    done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=120)
    match = re.search(r"version ([^\s)]+)", done.stdout) if done.returncode == 0 else None
    return match.group(1) if match else ""


def canonical(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def poetry_locked(lock: Path, name: str) -> list[str]:
    """Every version poetry.lock locks `name` at (one per `[[package]]` entry of that name)."""
    document = tomllib.loads(lock.read_text(encoding="utf-8"))
    return [
        str(entry.get("version", ""))
        for entry in document.get("package", [])
        if isinstance(entry, dict) and canonical(str(entry.get("name", ""))) == canonical(name)
    ]


def generate_lockfile(case: dict[str, Any], src: Path) -> str:
    """`lockfile: generated`: write the lockfile the owner would commit into src (module docstring); the
    version it locks the dependency at. SystemExit, naming the case, on anything that would make it
    another tree."""
    return _generate_npm_lockfile(case, src) if is_npm(case) else _generate_poetry_lockfile(case, src)


def _generate_poetry_lockfile(case: dict[str, Any], src: Path) -> str:
    program, recorded = poetry_program(), str(case["lockfile_poetry"])
    have = poetry_version()
    if program is None or have.split(".")[0] != recorded.split(".")[0]:
        raise SystemExit(
            f"{case['id']}: the lockfile was measured with Poetry {recorded}; this Poetry is "
            f"{have or '(none: pip install poetry beside the tool)'!r}"
        )
    try:
        project = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"{case['id']}: the sdist's pyproject.toml cannot be read: {exc}") from exc
    backend = str(project.get("build-system", {}).get("build-backend", ""))
    if "poetry" not in project.get("tool", {}) and not backend.startswith("poetry"):
        raise SystemExit(f"{case['id']}: the sdist is not a Poetry project: Poetry would not be its locker")
    shipped = [name for name in PYTHON_LOCKFILES if (src / name).exists()]
    if shipped:
        what = "replace it" if shipped[0] == "poetry.lock" else "put a second lockfile beside it"
        raise SystemExit(f"{case['id']}: the sdist ships {shipped[0]}: generating poetry.lock would {what}")
    argv = [program, *POETRY_LOCK_COMMAND]
    # Poetry's lock makes the project a virtualenv in the user's cache unless told not to: none is needed
    env = {**os.environ, "POETRY_NO_INTERACTION": "1", "POETRY_VIRTUALENVS_CREATE": "false"}
    done = subprocess.run(argv, cwd=src, env=env, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S)
    lock = src / "poetry.lock"
    if done.returncode != 0 or not lock.is_file():
        command = f"poetry {' '.join(POETRY_LOCK_COMMAND)}"
        raise SystemExit(f"{case['id']}: {command} failed: {(done.stderr or done.stdout)[-600:]}")
    locked = poetry_locked(lock, str(case["dep"]))
    if locked != [str(case["measure_from"])]:
        raise SystemExit(
            f"{case['id']}: the generated poetry.lock locks {case['dep']} "
            f"{' and '.join(locked) or '(nothing)'}, not measure_from {case['measure_from']}"
        )
    return locked[0]


def _generate_npm_lockfile(case: dict[str, Any], src: Path) -> str:
    have, recorded = npm_version(), str(case["lockfile_npm"])
    if have.split(".")[0] != recorded.split(".")[0]:
        raise SystemExit(f"{case['id']}: the lockfile was measured with npm {recorded}; this npm is {have!r}")
    shipped = [name for name in NPM_LOCKFILES if (src / name).exists()]
    if shipped:
        raise SystemExit(f"{case['id']}: the tarball ships {shipped[0]}: generating one would replace it")
    argv = LOCK_COMMAND
    done = subprocess.run(argv, cwd=src, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S)
    lock = src / "package-lock.json"
    if done.returncode != 0 or not lock.is_file():
        raise SystemExit(f"{case['id']}: {' '.join(argv)} failed: {(done.stderr or done.stdout)[-600:]}")
    packages = json.loads(lock.read_text(encoding="utf-8")).get("packages", {})
    locked = str(packages.get(f"node_modules/{case['dep']}", {}).get("version", ""))
    if locked != str(case["measure_from"]):
        raise SystemExit(
            f"{case['id']}: the generated package-lock.json locks {case['dep']} {locked or '(nothing)'}, "
            f"not measure_from {case['measure_from']}"
        )
    return locked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case ids")
    args = parser.parse_args()
    for case in load_cases(args.only):
        print(f"{case['id']:32} {fetch(case).name} sha256 ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
