"""A private copy of the APM context for every run of a local fleet.

Each `run` verifies its context with `apm install --frozen` and `apm audit`, which rewrite apm_modules/ and
.agents/ in the context root. Several runs at once on one root race each other ("content hash differs",
"skill is not installed", "drift detected" — seen with --jobs 3). So each repository's run gets its own
copy: the APM files, what is installed, and every local dependency apm.yml names, at the same relative
path. Remote dependencies are fetched by APM as usual. (In CI every job has its own checkout already.)

    snapshot_context(root, dest) -> dest
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agentic_codemod.apm.manifest import MANIFEST, read_manifest
from agentic_codemod.errors import InputError

ITEMS = ("apm.yml", "apm.lock.yaml", "apm-policy.yml", ".apm", "apm_modules", ".agents")


def snapshot_context(root: Path, dest: Path) -> Path:
    root = root.resolve()
    manifest = read_manifest(root / MANIFEST)  # a bad apm.yml is refused here, before any run
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    paths = [Path(name) for name in ITEMS]
    for dep in manifest.dependencies:
        if dep.local_path is None:
            continue
        source = (root / Path(dep.local_path).expanduser()).resolve()
        if not source.is_relative_to(root):
            raise InputError(
                f"{root / MANIFEST}: local dependency {dep.raw!r} lies outside the context root",
                hint="fleet --local copies the context per run; keep local packages inside it",
            )
        paths.append(source.relative_to(root))
    for rel in paths:
        source, target = root / rel, dest / rel
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest
