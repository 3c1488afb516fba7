"""A program, not a module of the tool: the verification environment's own interpreter runs its source
(`python -c`, in the test box) and prints {canonical name: version} of every installed distribution, as
`importlib.metadata.distributions()` finds them in that interpreter (its sys.path, .pth files included).

Importing importlib.metadata (email, zipfile, csv, pathlib) is about 60 ms of a 75 ms process, twice a run.
The usual environment is read here without it: plain directories on sys.path, `*.dist-info` directories,
a METADATA whose header lines all read as `Key: value` with unfolded `Name` and `Version`, and no import
hook of its own that lists distributions. Anything else (a zip or an egg on sys.path, an `.egg-info`, a
folded Name or Version, a line email reads otherwise, a decoding error, an empty METADATA) is Unusual,
and importlib.metadata lists the whole environment itself, as it did before. The result is the same
dict either way; a test compares both on environments of each shape
(tests/adapters/python/test_python_installed_listing.py).

It runs in isolated mode (`python -I`: no current directory on sys.path, no PYTHON* variables), so a
module at the repository's root (a json.py, a __future__.py) cannot stand in for the standard library's.
It imports only json and importlib.machinery (and, for the fallback, importlib.metadata): the venvs are
made from the tool's own interpreter (3.11 or later), so the annotations below are read there.

The direct reading never looks past the header block; email parses the body too. A METADATA that declares
a Content-Type (a multipart or message/rfc822 body, which email would parse part by part and can fail
on) goes to importlib.metadata, so a body that made the listing fail still does.
"""

import json
import os
import sys


class Unusual(Exception):
    """Something the direct reading does not model: importlib.metadata lists the environment instead."""


_SEPARATORS = "-_."
_HEADER_NAME = frozenset(chr(c) for c in range(0x21, 0x7F)) - {":"}  # email's header-name characters


def canonical(name: str) -> str:
    """re.sub(r"[-_.]+", "-", name).lower(), without importing re."""
    out: list[str] = []
    in_run = False
    for ch in name:
        if ch in _SEPARATORS:
            if not in_run:
                out.append("-")
            in_run = True
        else:
            out.append(ch)
            in_run = False
    return "".join(out).lower()


def header_fields(text: str) -> tuple[str, str]:
    """(Name, Version) as email.message_from_string(text)["Name"] / ["Version"] give them, for a header
    block this function can read exactly; Unusual otherwise."""
    if "\r" in text:  # read in text mode, a file has none; email would break lines there too
        raise Unusual("a carriage return")
    fields: dict[str, str] = {}
    last = ""
    for line in text.split("\n"):
        if line == "":  # the end of the header block
            break
        if line[0] in " \t":  # a continuation line: it would fold into the header before it
            if last in ("name", "version") or not last:
                raise Unusual("a folded Name or Version header")
            continue
        key, colon, value = line.partition(":")
        if not colon or not key or not _HEADER_NAME.issuperset(key):
            raise Unusual("a line email would not read as a header")
        last = key.lower()
        if last == "content-type":  # email would parse the body as its parts (it may fail there)
            raise Unusual("a Content-Type header")
        if last in ("name", "version") and last not in fields:  # email: the first one is the one read
            fields[last] = value.lstrip(" \t")
    if not fields.get("name") or "version" not in fields:
        raise Unusual("no Name or no Version")
    return fields["name"], fields["version"]


def _prepared(child_lower: str) -> str:
    """importlib.metadata's grouping key of a `*.dist-info` name (Prepared.normalize of its first part)."""
    return canonical(child_lower.rpartition(".")[0].partition("-")[0]).replace("-", "_")


def direct() -> dict[str, str]:
    """The listing, read from the directories on sys.path in importlib.metadata's order; Unusual when the
    environment is not one this reads exactly."""
    import importlib.machinery

    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if finders != [importlib.machinery.PathFinder]:
        raise Unusual("an import hook that lists distributions of its own")
    found: dict[str, str] = {}
    for entry in sys.path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            raise Unusual("a sys.path entry that is not a plain path")
        root = entry or "."
        if not os.path.isdir(root):
            if os.path.lexists(root):
                raise Unusual("a sys.path entry that is a file (a zip)")
            continue
        try:
            children = os.listdir(root)
        except OSError as exc:
            raise Unusual("an unreadable sys.path directory") from exc
        groups: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith(".egg-info"):
                raise Unusual("an .egg-info")
            if low.endswith(".dist-info"):
                groups.setdefault(_prepared(low), []).append(child)
        for members in groups.values():
            for child in members:
                path = os.path.join(entry, child)
                if not os.path.isdir(path):
                    raise Unusual("a .dist-info that is not a directory")
                try:
                    with open(os.path.join(path, "METADATA"), encoding="utf-8") as handle:
                        text = handle.read()
                except (OSError, UnicodeDecodeError) as exc:
                    raise Unusual("an unreadable METADATA") from exc
                name, version = header_fields(text)
                found[canonical(name)] = version  # a later one of the same name wins, as in the dict below
    return found


def by_importlib() -> dict[str, str]:
    import importlib.metadata as m
    import re

    return {
        re.sub(r"[-_.]+", "-", (d.metadata["Name"] or "")).lower(): d.version
        for d in m.distributions()
        if d.metadata["Name"]
    }


def main() -> None:
    try:
        listing = direct()
    except Unusual:
        listing = by_importlib()
    print(json.dumps(listing, sort_keys=True))


if __name__ == "__main__":
    main()
