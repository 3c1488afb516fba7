"""What an install command in a tox testenv or nox session asks for (pure: reads one command line).

    parse(tokens) -> Installs | None      None when the line is not an install command

A testenv often installs its test requirements with a command rather than `deps`
(`commands_pre = pdm sync -G :all,test`). The command is never run (it may reach the network and
build its own environment); what it names is installed by the tool's own pip instead:

    pip install ARGS / python -m pip install ARGS   requirement strings, -r/-c/-e FILE (other flags left out)
    pdm sync|install -G A,B --group C               groups A, B, C (a PEP 735 / PDM dev group or an extra);
                                                    `:all`: every extra
    uv sync|pip install --extra A --group B         extras A, groups B; --all-extras, --all-groups
    poetry install --with A,B / --extras "x y"      groups A, B; extras x, y; --all-extras

Groups are resolved by the caller (test_requirements.py): a PEP 735 group, else a Poetry group, else an
extra of that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

# pip options that take a value and say what to install.
PIP_FILE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable"})
ALL = ":all"


@dataclass
class Installs:
    requirement_lines: list[str] = field(default_factory=list)  # requirements-file syntax
    groups: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)  # ":all" for every extra
    all_groups: bool = False


def parse(tokens: list[str]) -> Installs | None:
    words = [PurePosixPath(t).name if i == 0 else t for i, t in enumerate(tokens)]
    if words[:1] in (["python"], ["python3"]) and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]
    tool, rest = (words[0], words[1:]) if words else ("", [])
    if tool == "uv" and rest[:2] == ["pip", "install"]:
        return pip_lines(rest[2:])
    if tool in ("pip", "pip3") and rest[:1] == ["install"]:
        return pip_lines(rest[1:])
    if tool in ("pdm", "uv", "poetry") and rest[:1] in (["sync"], ["install"]):
        return _grouped(tool, rest[1:])
    return None


def pip_lines(args: list[str]) -> Installs:
    """pip install arguments as requirements-file lines; other pip flags (--upgrade, --pre ...) left out."""
    found = Installs()
    queue = list(args)
    while queue:
        arg = queue.pop(0)
        option, equals, value = arg.partition("=")
        if arg in PIP_FILE_OPTIONS and queue:
            found.requirement_lines.append(f"{arg} {queue.pop(0)}")
        elif equals and option in PIP_FILE_OPTIONS and option.startswith("--"):
            found.requirement_lines.append(f"{option} {value}")
        elif re.match(r"^-[rce]\S", arg):
            found.requirement_lines.append(f"{arg[:2]} {arg[2:]}")
        elif not arg.startswith("-"):
            found.requirement_lines.append(arg)
    return found


def _grouped(tool: str, args: list[str]) -> Installs:
    found = Installs()
    group_options = {"pdm": ("-G", "--group"), "uv": ("--group",), "poetry": ("--with", "--only")}[tool]
    queue = list(args)
    while queue:
        name, _, value = queue.pop(0).partition("=")
        if name == "--all-extras":
            found.extras.append(ALL)
        elif name == "--all-groups":
            found.all_groups = True
        elif name in (*group_options, "--extra", "--extras", "-E"):
            value = value or (queue.pop(0) if queue else "")
            items = [v for v in re.split(r"[,\s]+", value) if v]
            if name in group_options:
                found.extras += [ALL for v in items if v == ALL]
                found.groups += [v for v in items if v != ALL]
            else:
                found.extras += items
    return found
