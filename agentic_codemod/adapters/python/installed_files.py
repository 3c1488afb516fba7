"""What an installed distribution's RECORD lists, against what its package folders hold: read on the host,
after the bump's install and before any repository code runs in the environment again.

    unlisted(env_root, name) -> str | None      why the environment does not hold `name` as its installer
                                                wrote it (None: it does)

The bump reinstalls its pins (InstallPlan.reinstall), and an installer removes only what the old
dist-info's RECORD lists before it writes the new files: a file the baseline's build backend added to the
package's folder stays. Python imports `__init__.so` before `__init__.py` and `client.so` before
`client.py`, so such a file would be the code the tests run while run.json names the target's version.
So every file inside a regular package of the distribution (a folder whose `__init__.py` its RECORD
lists) must be listed there, apart from `__pycache__` (bytecode is read only beside its listed source, and
the installer compiled it afresh); a top-level module `m.py` must have no unlisted `m/` package or
extension `m.<suffix>` beside it; and one dist-info only may name the distribution.

Namespace folders (no `__init__.py` of this distribution) hold other distributions' files and are not
walked; `.pth` files and other packages are out of reach here (SECURITY.md, file system). Nothing is
followed: a link inside a package folder is a file like any other, listed or not.
"""

from __future__ import annotations

import csv
import importlib.machinery
import os
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_name

CACHE = "__pycache__"
MAX_RECORD_BYTES = 50_000_000


def unlisted(env_root: Path, name: str) -> str | None:
    """Why the environment at `env_root` does not hold distribution `name` exactly as its RECORD lists it,
    or None. A missing distribution is the listing's business (None here)."""
    found = [
        (site, entry)
        for site in sorted((env_root / "lib").glob("python3*/site-packages"))
        for entry in sorted(os.scandir(site), key=lambda e: e.name)
        if entry.name.endswith(".dist-info") and _dist_name(entry.name) == name
    ]
    if not found:
        return None
    if len(found) > 1:
        names = ", ".join(entry.name for _, entry in found)
        return f"{len(found)} distributions are named {name} in the environment ({names})"
    site, dist_info = found[0]
    listed = _listed(Path(dist_info.path) / "RECORD")
    if listed is None:
        return f"{dist_info.name}/RECORD cannot be read"
    packages = {p.parent for p in listed if p.name == "__init__.py" and ".." not in p.parts}
    for package in sorted(packages):
        extra = _unlisted_in(site, package, listed)
        if extra is not None:
            return f"{extra} is inside {name}'s package {package} but not in its RECORD"
    for module in sorted(p for p in listed if len(p.parts) == 1 and p.suffix == ".py"):
        for shadow in (module.stem, *(module.stem + s for s in importlib.machinery.EXTENSION_SUFFIXES)):
            if PurePosixPath(shadow) not in listed and os.path.lexists(site / shadow):
                return f"{shadow} is beside {name}'s module {module} but not in its RECORD"
    return None


def _dist_name(folder: str) -> str:
    return canonicalize_name(folder[: -len(".dist-info")].rpartition("-")[0] or folder)


def _listed(record: Path) -> set[PurePosixPath] | None:
    try:
        if record.is_symlink() or record.stat().st_size > MAX_RECORD_BYTES:
            return None
        with record.open(encoding="utf-8", newline="") as rows:
            return {PurePosixPath(row[0]) for row in csv.reader(rows) if row and row[0]}
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def _unlisted_in(site: Path, package: PurePosixPath, listed: set[PurePosixPath]) -> str | None:
    """The first file or link under site/package (not under a __pycache__) that `listed` lacks."""
    root = site / package
    if root.is_symlink():
        return str(package)  # the package folder itself, a link
    if not root.is_dir():
        return None
    for folder, dirs, files in os.walk(root):  # os.walk does not follow links to folders
        here = PurePosixPath(Path(folder).relative_to(site).as_posix())
        dirs[:] = sorted(d for d in dirs if d != CACHE)
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        for entry in sorted([*files, *links]):
            if here / entry not in listed:
                return str(here / entry)
    return None
