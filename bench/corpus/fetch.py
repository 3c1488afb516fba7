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
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
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


def load_cases(only: list[str] | None = None) -> list[dict[str, Any]]:
    cases = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["cases"]
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
    """Whether the case's repository commits a generated package-lock.json (`lockfile: generated`)."""
    return is_npm(case) and case.get("lockfile") == "generated"


def npm_version() -> str:
    done = subprocess.run(["npm", "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else ""


def generate_lockfile(case: dict[str, Any], src: Path) -> str:
    """`lockfile: generated`: write src/package-lock.json (module docstring); the version it locks the
    dependency at. SystemExit, naming the case, on anything that would make it another tree."""
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
