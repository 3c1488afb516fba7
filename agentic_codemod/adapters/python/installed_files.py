"""What an installed distribution's RECORD lists, against what Python would import in its place: read on
the host, after the bump's install and before any repository code runs in the environment again.

    unlisted(env_root, name) -> str | None      why the environment does not hold `name` as its installer
                                                wrote it (None: it does)
    fresh_bytecode(env_root, name)              its .py files' bytecode written afresh on the host
    dist_infos(env_root) -> {DistInfo}          the environment's dist-info folders, before an install
    written(env_root, before, pins) -> [name]   what an install wrote: the pins, and each distribution
                                                whose dist-info is new since `before` (added or replaced);
                                                OSError where a folder on the way to site-packages is a
                                                link (the host would read and write where it leads)
    listed(record) -> {path} | None             the paths a RECORD lists (None: not a regular, bounded,
                                                UTF-8 CSV file)
    dist_name(dist_info_folder) -> name         the canonical distribution name of a dist-info folder
    holding(env_root, name, modules) -> [str]   what on disk says the environment holds `name`, whatever
                                                its listing says (a dist-info, a Requires-Dist on it,
                                                an import name no RECORD lists)
    capping(env, name, version, declared) -> [str]  each installed distribution whose Requires-Dist on `name`
                                                excludes `version` ("acme-widgets 1.0.0 requires
                                                acme-sdk<2"), read from METADATA on the host

The bump reinstalls its pins (InstallPlan.reinstall), and an installer removes only what the old
dist-info's RECORD lists before it writes the new files: a file the baseline's build backend added stays.
Python's finder takes, for a module `m` of a folder, a package `m/` first, then an extension `m.<suffix>`
(`.cpython-311-x86_64-linux-gnu.so`, `.abi3.so`, `.so`), and only then `m.py`: so an `__init__.so` beside
a listed `__init__.py`, or a `widget/` package beside a listed `widget.py`, is the code the tests would run
while run.json names the target's version. For every module file the RECORD lists, nothing unlisted may
stand before it there; no folder on the way to a listed file may be a link; one dist-info only may name
the distribution.

The bump's install is checked this way for every distribution it wrote, not only its pins: a dependency
the target newly brings in lands in folders the baseline's build backend could write to as well. What it
wrote is told by each dist-info folder's site, name and identity (inode, ctime), so a folder of the same
name left elsewhere beforehand (another `lib/python3*/site-packages`) hides nothing. A distribution the
baseline's code planted whole, which the installer then takes as installed and does not write, stays what
that code left (SECURITY.md, file system).

In each package the distribution ships an `__init__` of, a module or package that no installed RECORD
lists is refused too: what an earlier version left where code took its dist-info away before the install
(helper-49: 1.x's `acme/errors.py` beside 2.1.0's files). Other unlisted files are left alone: data files,
namespace folders and other distributions' files in shared folders (`backports/`), which their RECORDs
list. A `.pth` file, a module of a new name and other packages are out of reach here (SECURITY.md, file
system). Nothing is followed.
"""

from __future__ import annotations

import csv
import functools
import importlib.machinery
import importlib.util
import io
import os
import platform
import py_compile
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from email.header import decode_header, make_header
from email.message import Message
from email.parser import HeaderParser
from email.policy import compat32
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentic_codemod import json_input
from agentic_codemod.adapters.python import install_plan, ranges
from agentic_codemod.adapters.types import VerificationEnv
from agentic_codemod.config import ENV_RECORD_MAX_BYTES, WHEEL_METADATA_MAX_BYTES
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.sandbox import REPO_MOUNT
from agentic_codemod.tools.untrusted_file import read_regular

CACHE = "__pycache__"


def unlisted(env_root: Path, name: str) -> str | None:
    """Why the environment at `env_root` does not hold distribution `name` exactly as its RECORD lists it,
    or None. A missing distribution is the listing's business (None here)."""
    try:
        sites = site_packages(env_root)
    except OSError as exc:
        return str(exc)
    found = [
        (site, entry)
        for site in sites
        for entry in sorted(os.scandir(site), key=lambda e: e.name)
        if entry.name.endswith(".dist-info") and dist_name(entry.name) == name
    ]
    if not found:
        return None
    if len(found) > 1:
        names = ", ".join(entry.name for _, entry in found)
        return f"{len(found)} distributions are named {name} in the environment ({names})"
    site, dist_info = found[0]
    if not dist_info.is_dir(follow_symlinks=False):  # a link to a folder elsewhere is not one
        return f"{dist_info.name} is not a folder of the environment's own"
    paths = listed(Path(dist_info.path) / "RECORD")
    if paths is None:
        return f"{dist_info.name}/RECORD cannot be read"
    inside = [p for p in paths if ".." not in p.parts and not p.is_absolute()]
    folders = {parent for p in inside for parent in p.parents if parent.parts}  # where it lists files
    for folder in sorted(folders):
        if (site / folder).is_symlink():
            return f"{folder} is a link on the way to {name}'s files"
    for module in sorted(p for p in inside if _suffix(p.name)):
        shadow = _before(site, module, paths, folders)
        if shadow is not None:
            return f"{shadow} is not in {name}'s RECORD, and Python imports it before {module}"
    stale = _stale(site, dist_info.name, paths, folders)
    if stale is not None:
        return f"{stale} is in a package of {name}'s, and no installed distribution's RECORD lists it"
    return None


def _stale(
    site: Path, own: str, paths: set[PurePosixPath], folders: set[PurePosixPath]
) -> PurePosixPath | None:
    """A module or package in a folder the distribution lists files in that no installed RECORD lists:
    what an earlier version left (an install removes only what the old dist-info's RECORD lists, and code
    that ran in the environment can take that dist-info away first, helper-49), or what code planted.
    Only the packages it ships an `__init__` of are looked in (a namespace folder is everybody's), and
    other distributions' files there (backports/, whose __init__.py several ship) are theirs: listed."""
    others: set[PurePosixPath] | None = None
    packages = {
        p.parent for p in paths if p.parent.parts and p.name[: -len(_suffix(p.name)) or None] == "__init__"
    }
    for folder in sorted(packages & folders):
        try:
            entries = sorted(os.scandir(site / folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = folder / entry.name
            if entry.name == CACHE or rel in paths or rel in folders:
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and not any(os.path.lexists(site / rel / f"__init__{s}") for s in _ORDER):
                continue  # a data folder, or a namespace portion: no module of its own here
            if not is_dir and not _suffix(entry.name):
                continue  # a data file: no code Python imports
            if others is None:
                others = _all_listed(site, own)
            if rel not in others:  # a file another RECORD lists, or a folder it lists files in
                return rel
    return None


def _all_listed(site: Path, own: str) -> set[PurePosixPath]:
    """Every path the RECORDs of the site's other dist-info folders list, and every folder on the way."""
    found: set[PurePosixPath] = set()
    for entry in os.scandir(site):
        if entry.name.endswith(".dist-info") and entry.name != own:
            for path in listed(Path(entry.path) / "RECORD") or ():
                found.add(path)
                found.update(parent for parent in path.parents if parent.parts)
    return found


def fresh_bytecode(env_root: Path, name: str) -> None:
    """The bytecode of every .py file distribution `name`'s RECORD lists, written afresh on the host (no
    code runs: py_compile only compiles): whatever `__pycache__` held for them goes first. The baseline's
    build backend can plant an unchecked-hash .pyc, which Python loads without looking at the source, in a
    `__pycache__` it made read-only, which the installer's own compile then skips without failing; the
    tests run with PYTHONDONTWRITEBYTECODE on a read-only venv, so nothing replaces it after. Call after
    `unlisted` found nothing (no folder on the way is a link)."""
    found = [
        (site, Path(entry.path))
        for site in site_packages(env_root)
        for entry in os.scandir(site)
        if entry.name.endswith(".dist-info") and dist_name(entry.name) == name
    ]
    for site, dist_info in found:
        for module in sorted(listed(dist_info / "RECORD") or ()):
            source = site / module
            if module.suffix != ".py" or ".." in module.parts or module.is_absolute():
                continue
            if source.is_symlink() or not source.is_file():
                continue
            cache = source.parent / CACHE
            if cache.is_symlink() or (cache.exists() and not cache.is_dir()):
                repo_copy.remove(cache)
            if cache.is_dir():
                os.chmod(cache, 0o755)  # the box's code may have made it read-only
                for level in ("", 1, 2):
                    repo_copy.discard(Path(importlib.util.cache_from_source(str(source), optimization=level)))
            py_compile.compile(str(source), doraise=False, quiet=2)


def site_packages(env_root: Path) -> list[Path]:
    """The environment's `lib/python3*/site-packages` folders; OSError naming the first of `lib`, a
    `python3*` folder or a `site-packages` that is a link (code that ran in the environment made it: the
    host would read and write wherever it leads)."""
    lib = env_root / "lib"
    if lib.is_symlink():
        raise OSError(f"{lib} is a link")
    found: list[Path] = []
    for version in sorted(lib.glob("python3*")):
        for folder in (version, version / "site-packages"):
            if folder.is_symlink():
                raise OSError(f"{folder} is a link")
        if (version / "site-packages").is_dir():
            found.append(version / "site-packages")
    return found


DistInfo = tuple[str, str, int, int]  # site-packages folder, dist-info folder name, its inode and ctime


def dist_infos(env_root: Path) -> set[DistInfo]:
    """Every dist-info folder of the environment's site-packages, by where and what it is: a folder made
    anew under the same name (a reinstall) is another one. Empty where a folder on the way is a link
    (`written` refuses the environment afterwards)."""
    try:
        sites = site_packages(env_root)
    except OSError:
        return set()
    found: set[DistInfo] = set()
    for site in sites:
        for entry in os.scandir(site):
            if entry.name.endswith(".dist-info"):
                st = entry.stat(follow_symlinks=False)
                found.add((site.parent.name, entry.name, st.st_ino, st.st_ctime_ns))
    return found


def written(env_root: Path, before: set[DistInfo], pins: list[str]) -> list[str]:
    """The distributions an install wrote into the environment: `pins` (installed afresh whatever their
    dist-info is called), then, by name, each one whose dist-info folder was not there `before` (a
    dependency added, or replaced by another version). OSError where a folder on the way to a
    site-packages is a link."""
    site_packages(env_root)
    added = sorted({dist_name(folder) for _, folder, _, _ in dist_infos(env_root) - before})
    return list(dict.fromkeys([*pins, *added]))


# Python's finder tries, for each name in a folder, a package, then these loaders in this order.
_ORDER = (
    *importlib.machinery.EXTENSION_SUFFIXES,
    *importlib.machinery.SOURCE_SUFFIXES,
    *importlib.machinery.BYTECODE_SUFFIXES,
)


def _suffix(filename: str) -> str:
    """The longest module suffix `filename` ends with ("" for none): `.abi3.so`, not `.so`."""
    return max((s for s in _ORDER if filename.endswith(s) and len(filename) > len(s)), key=len, default="")


def _before(
    site: Path, module: PurePosixPath, listed: set[PurePosixPath], folders: set[PurePosixPath]
) -> PurePosixPath | None:
    """What Python's finder would take before `module` (a module file of the RECORD: source, extension or
    bytecode) in its folder: a package of that name the distribution lists nothing in (none for an
    `__init__` module itself), or an unlisted module of that name with a suffix tried before its own."""
    suffix = _suffix(module.name)
    folder, stem = module.parent, module.name[: -len(suffix)]
    package = folder / stem
    if stem != "__init__" and package not in folders:
        for init in _ORDER:
            if os.path.lexists(site / package / f"__init__{init}"):
                return package
    for earlier in _ORDER[: _ORDER.index(suffix)]:
        other = folder / f"{stem}{earlier}"
        if other not in listed and os.path.lexists(site / other):
            return other
    return None


def dist_name(folder: str) -> str:
    return canonicalize_name(folder[: -len(".dist-info")].rpartition("-")[0] or folder)


def listed(record: Path) -> set[PurePosixPath] | None:
    """The paths a RECORD lists; None where it is not a regular file of at most ENV_RECORD_MAX_BYTES (a
    link, a FIFO that would block the host's read) or not UTF-8 CSV."""
    data = read_regular(record, ENV_RECORD_MAX_BYTES)
    if data is None:
        return None
    try:
        rows = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
        return {PurePosixPath(row[0]) for row in rows if row and row[0]}
    except (UnicodeDecodeError, csv.Error):
        return None


def capping(env: VerificationEnv, name: str, version: str, declared: Sequence[str]) -> list[str]:
    """What in the environment requires `name` (canonical) in a range that excludes `version`: each
    "DIST VERSION requires REQUIREMENT", read on the host from every other dist-info's METADATA (no code
    runs). The bump's install puts the target beside what is installed and upgrades nothing, so a
    dependency that caps the package below it stays: the tests run on a set no installer would resolve.
    A requirement whose marker holds for this interpreter counts, with no extra or with one something
    asks that distribution for (requested_extras): the repository's own install (`env.extras`:
    `acme-widgets[sdk]` in requirements.txt, its project's `.[test]`, helper-52, helper-53) or something
    installed (helper-50's `widgets[sdk]`). A URL requirement counts (its version cannot be read), and so
    do a header no parser reads that names the package and a METADATA that cannot be read. Of the
    repository's own projects, installed from its copy
    (direct_url.json `dir_info` with the copy's URL, as the installer writes it for `-e .` or `.`), a
    requirement spelled as one of the repository's own declarations before the bump (`declared`: their
    ranges) is left out: that METADATA is what those said before the bump edited them. Any other one
    counts; a registry wheel shipping such a file that claims the copy's URL still hides a cap equal to a
    range the repository declares (open, helper-51). Empty where nothing is in the way."""
    try:
        target = Version(version)
    except InvalidVersion:
        return [f"{name} {version}: not a version any requirement can be read against"]
    found: list[str] = []
    folders = {
        (dist_name(folder), folder): env.root / "lib" / site / "site-packages" / folder
        for site, folder, _inode, _ctime in sorted(dist_infos(env.root))
    }
    headers = {key: _headers(path) for key, path in folders.items()}  # each METADATA read once
    local = {key: _installed_from(path) for key, path in folders.items()}  # installed from the repository
    seeds = {
        dist: extras
        for dist, extras in env.extras.items()
        if not dist.startswith((".", install_plan.URL_KEY))
    }
    for (dist, _folder), where in local.items():  # `.[test]`, `-e ./plugin[sdk]`, a URL's: by its name
        if where is not None:
            seeds[dist] = [*seeds.get(dist, []), *env.extras.get(where[0], [])]
    asked = requested_extras({dist: read for (dist, _folder), read in headers.items()}, seeds)
    for dist, folder in folders:
        if dist == name:
            continue
        requirements = _requires(headers[dist, folder], name, sorted(asked.get(dist, ())))
        if requirements is None:
            found.append(f"{folder}: its METADATA cannot be read, so whether it caps {name} is not known")
            continue
        where = local[dist, folder]
        own = where is not None and where[1]
        for each in requirements:
            r = each.requirement
            if own and r is not None and not r.url and _spelled_as(r.specifier, declared):
                continue
            if r is None or r.url or not r.specifier.contains(target, prereleases=True):
                extra = f" (with its extra {each.extra}, if the install asks for it)" if each.extra else ""
                unread = "" if r is not None else " (a requirement no parser reads)"
                found.append(f"{dist} {_version_of(folder)} requires {each.text}{extra}{unread}")
    return found


def holding(env_root: Path, name: str, modules: Iterable[str]) -> list[str]:
    """What the host reads in the environment's site-packages that says it holds distribution `name`
    (canonical), whatever a listing the environment's own interpreter printed says: a dist-info of that
    name, another distribution's Requires-Dist on it (a marker for this interpreter, no extra: an
    installer installed it beside), or a top-level module or package of one of its import names
    (`modules`) that no installed RECORD lists (what is left where code took its dist-info away during the
    install, helper-49). Empty: nothing there holds it."""
    try:
        sites = site_packages(env_root)
    except OSError as exc:
        return [str(exc)]
    tops = {module.split(".")[0] for module in modules}
    found: list[str] = []
    for site in sites:
        accounted: set[PurePosixPath] | None = None
        for entry in sorted(os.scandir(site), key=lambda e: e.name):
            if entry.name.endswith(".dist-info"):
                if dist_name(entry.name) == name:
                    found.append(entry.name)
                requires = _requires(_headers(Path(entry.path)), name) or []
                found += [f"{entry.name} requires {r.text}" for r in requires]
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            suffix = "" if is_dir else _suffix(entry.name)
            if (suffix or is_dir) and entry.name[: -len(suffix) or None] in tops:
                if accounted is None:
                    accounted = _all_listed(site, "")
                if PurePosixPath(entry.name) not in accounted:
                    found.append(f"{entry.name}, which no installed distribution's RECORD lists")
    return found


@dataclass(frozen=True)
class Requires:
    """One Requires-Dist of an installed distribution on the package asked about: the requirement (None:
    no parser reads it, yet it names the package), as written, and the extra it comes with ("" none)."""

    requirement: Requirement | None
    text: str
    extra: str = ""


def _requires(headers: Message | None, name: str | None, extras: Iterable[str] = ()) -> list[Requires] | None:
    """The Requires-Dist headers of a dist-info's METADATA (`headers`: _headers) on `name` (canonical;
    None: on any package) that apply here: no marker, or one that holds for this interpreter without an
    extra or with one of `extras` (those something asked this distribution for). Headers are read as
    installers read them: email's parser (a header folded onto a continuation line is one requirement),
    RFC 2047 encoded words decoded (uv does; helper-50, helper-51); one that no parser reads but that
    names `name` is returned with no requirement. None where METADATA cannot be read."""
    if headers is None:
        return None
    offered = ["", *extras]
    found = []
    for value in headers.get_all("Requires-Dist") or []:
        written = " ".join(_decoded(value).split())
        try:
            requirement = Requirement(written)
        except InvalidRequirement:
            if (
                name is not None
                and canonicalize_name(re.split(r"[\s\[;(<>=!~@]", written, maxsplit=1)[0]) == name
            ):
                found.append(Requires(None, written))
            continue
        if name is not None and canonicalize_name(requirement.name) != name:
            continue
        for extra in offered:
            if requirement.marker is None or _may_hold(requirement.marker, extra):
                found.append(Requires(requirement, written, extra))
                break
    return found


def _may_hold(marker: Marker, extra: str) -> bool:
    """Whether `marker` holds here with `extra`, as any installer may read it: packaging's reading, and
    with `platform_release` as the version it starts with (`6.18.44-generic`: 6.18.44). packaging finds
    `platform_release >= "5"` false, since the release is no PEP 440 version; PEP 508 (and uv) compare
    such values otherwise (helper-51). A marker nobody can evaluate may hold."""
    release = _release_version()
    environments = [{"extra": extra}, *([{"extra": extra, "platform_release": release}] if release else [])]
    for environment in environments:
        try:
            if marker.evaluate(environment):
                return True
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            return True
    return False


@functools.cache
def _release_version() -> str:
    """The version this system's release starts with, where the release itself is more ("" otherwise)."""
    leading = re.match(r"\d+(\.\d+)*", platform.release())
    return leading.group(0) if leading is not None and leading.group(0) != platform.release() else ""


def _headers(dist_info: Path) -> Message | None:
    """A dist-info's METADATA headers, read on the host (bounded, no link); None where it cannot be read."""
    data = read_regular(dist_info / "METADATA", WHEEL_METADATA_MAX_BYTES)
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        return None
    return HeaderParser(policy=compat32).parsestr(text, headersonly=True) if text else None


def _decoded(value: object) -> str:
    """A header's value with its RFC 2047 encoded words decoded (`=?utf-8?q?acme-sdk=3C2?=`)."""
    try:
        return str(make_header(decode_header(str(value))))
    except (ValueError, LookupError, UnicodeDecodeError):
        return str(value)


def requested_extras(
    metadata: dict[str, Message | None], seeds: dict[str, list[str]] | None = None
) -> dict[str, set[str]]:
    """{canonical name: the extras something asks it for}: those `seeds` name (what the repository's own
    install asks: VerificationEnv.extras), then from each distribution's METADATA headers (by canonical
    name) every Requires-Dist that applies (with the extras asked of that distribution in turn, until
    nothing more is asked)."""
    asked: dict[str, set[str]] = {
        dist: {canonicalize_name(e) for e in extras} for dist, extras in (seeds or {}).items() if extras
    }
    todo = list(metadata)
    while todo:
        dist = todo.pop()
        for each in _requires(metadata[dist], None, sorted(asked.get(dist, ()))) or []:
            if each.requirement is None or not each.requirement.extras:
                continue
            target = canonicalize_name(each.requirement.name)
            new = {canonicalize_name(e) for e in each.requirement.extras} - asked.get(target, set())
            if new:
                asked.setdefault(target, set()).update(new)
                if target in metadata:
                    todo.append(target)
    return asked


def _installed_from(dist_info: Path) -> tuple[str, bool] | None:
    """Where a distribution was installed from, as install_plan.asked_extras keys it, where its
    direct_url.json names a URL: under the repository's copy in the install box (the copy's mount or a
    path below it), that path as install_plan.local_key names it ("." the root, "./plugin",
    "./wheels/x.whl"), and whether it is one of the repository's own projects (a folder: `dir_info`, as the
    installer writes it for `-e .` or `.`; an archive in the repository is not); any other URL,
    install_plan.URL_KEY (never own). None without a direct_url.json naming a URL."""
    data = read_regular(dist_info / "direct_url.json", WHEEL_METADATA_MAX_BYTES)
    try:
        found = json_input.loads((data or b"null").decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, or nested past what json_input reads
        return None
    if not isinstance(found, dict) or not isinstance(found.get("url"), str) or not found["url"]:
        return None
    url, copy = found["url"], REPO_MOUNT.as_uri()
    if url != copy and not url.startswith(copy + "/"):
        return install_plan.URL_KEY, False
    return install_plan.local_key(unquote(url[len(copy) :]).lstrip("/")), isinstance(
        found.get("dir_info"), dict
    )


def _spelled_as(specifier: SpecifierSet, declared: Sequence[str]) -> bool:
    """Whether `specifier` is the range of one of the declarations (as sets: `<2,>=1` is `>=1,<2`; a
    Poetry range as the PEP 440 range its build writes: `^1.4` is `>=1.4,<2.0`, helper-51)."""
    for text in declared:
        for style in ("pep440", "poetry"):
            try:
                if any(admits == specifier for admits in ranges.admitted(text, style)):
                    return True
            except ValueError:
                continue
    return False


def _version_of(folder: str) -> str:
    return folder[: -len(".dist-info")].rpartition("-")[2]
