"""What an install command in a tox testenv or nox session asks for (pure: reads one command line).

    parse(tokens) -> Installs | None      None when the line is not an install command

A testenv often installs its test requirements with a command rather than `deps`
(`commands_pre = pdm sync -G :all,test`). The command is never run (it may reach the network and
build its own environment); what it names is installed by the tool's own pip instead:

    pip install ARGS / python -m pip install ARGS   requirement strings, -r/-c/-e FILE, --group NAME (other
                                                    options left out with their values: --timeout 60;
                                                    global ones too: `pip -q install`, `python -I -m pip`)
    pdm sync|install -G A,B --group C               groups A, B, C (a PEP 735 / PDM dev group or an extra);
                                                    `:all`: every extra
    uv sync|pip install --extra A --group B         extras A, groups B; --all-extras, --all-groups
    poetry install --with A,B / --extras "x y"      groups A, B; extras x, y; --all-extras

Groups are resolved by the caller (test_requirements.py): a PEP 735 group, else a Poetry group, else an
extra of that name.
"""

from __future__ import annotations

import collections
import itertools
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

# pip options that take a value and say what to install.
PIP_FILE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable"})
# uv's spellings of them: its plural `--constraints`, and its overrides (a version forced on every
# install, read here as a constraint: what the tests' install may take of the SDK).
_FILE_ALIASES = {"--constraints": "--constraint", "--override": "--constraint", "--overrides": "--constraint"}
# The other options of `pip install` and `uv pip install` that take a value: the value is not a
# requirement (`--upgrade-strategy eager`, `-i URL`: the tool's own index configuration decides where
# packages come from).
_VALUE_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "-t", "--target",
     "--platform", "--python-version", "--implementation", "--abi", "--root", "--prefix", "--src",
     "--upgrade-strategy", "--progress-bar", "--root-user-action", "--report", "--no-binary",
     "--only-binary", "-C", "--config-settings", "--global-option", "--build-option", "--install-option",
     "--log", "--log-file", "--proxy", "--retries", "--timeout", "--exists-action", "--cert",
     "--client-cert", "--cache-dir", "--python", "--keyring-provider", "--use-feature",
     "--use-deprecated", "--resume-retries", "--group", "--format", "--config-setting",
     "--build-constraint", "--build-constraints", "-b", "-p", "--python-platform", "--index",
     "--default-index", "--index-strategy", "--resolution", "--prerelease", "--exclude-newer",
     "--link-mode", "-P", "--upgrade-package", "--reinstall-package", "--no-build-isolation-package",
     "--torch-backend", "--config-file", "--directory", "--project", "--color", "--allow-insecure-host",
     "--extra", "--refresh-package", "--no-build-package", "--no-binary-package", "--config-settings-package",
     "--exclude-newer-package", "--excludes", "--fork-strategy"}
)  # fmt: skip
# Their flags (no value): pip reads a long option by any unambiguous prefix of all of its long options,
# flags included (`--no-build-isolation` is itself, not a prefix of uv's `--no-build-isolation-package`).
_FLAGS = frozenset(
    {"--no-deps", "--pre", "--user", "--upgrade", "--force-reinstall", "--ignore-installed",
     "--ignore-requires-python", "--no-build-isolation", "--use-pep517", "--no-use-pep517",
     "--check-build-dependencies", "--break-system-packages", "--compile", "--no-compile",
     "--no-warn-script-location", "--no-warn-conflicts", "--prefer-binary", "--require-hashes",
     "--no-clean", "--dry-run", "--no-index", "--isolated", "--verbose", "--quiet", "--no-input",
     "--no-cache-dir", "--disable-pip-version-check", "--no-color", "--no-python-version-warning",
     "--debug", "--require-virtualenv", "--reinstall", "--refresh", "--offline", "--no-cache", "--system",
     "--strict", "--compile-bytecode", "--no-sources", "--exact", "--no-build", "--verify-hashes",
     "--no-verify-hashes", "--native-tls", "--no-progress", "--no-config", "--preview", "--all-extras",
     "--no-binary-all", "--only-binary-all", "--no-strict"}
)  # fmt: skip
_LONG_OPTIONS = sorted(
    o for o in (*PIP_FILE_OPTIONS, *_FILE_ALIASES, *_VALUE_OPTIONS, *_FLAGS) if o.startswith("--")
)
# `python -I -m pip`, `python3.11 -m pip`: an interpreter, its own flags, then the module
_INTERPRETER = re.compile(r"^(?:python|pypy)[\d.]*$")
ALL = ":all"


@dataclass
class Installs:
    requirement_lines: list[str] = field(default_factory=list)  # requirements-file syntax
    groups: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)  # ":all" for every extra
    all_groups: bool = False


def parse(tokens: list[str]) -> Installs | None:
    words = [PurePosixPath(t).name if i == 0 else t for i, t in enumerate(tokens)]
    if words and _INTERPRETER.match(words[0]):  # python [-I -E -s ...] -m pip|uv ARGS
        flags = list(itertools.takewhile(lambda w: w != "-m", words[1:]))
        module = words[len(flags) + 2 : len(flags) + 3]
        if all(re.fullmatch(r"-[A-Za-z]+", f) for f in flags) and module in (["pip"], ["uv"]):
            words = [*module, *words[len(flags) + 3 :]]
    tool, rest = (words[0], words[1:]) if words else ("", [])
    if tool in ("pip", "pip3", "uv"):  # global options before the command (`pip -q install`, `uv -q pip`)
        rest = _after_global_options(rest)
        if tool == "uv" and rest[:1] == ["pip"]:
            rest = ["pip", *_after_global_options(rest[1:])]
    if tool == "uv" and rest[:2] == ["pip", "install"]:
        return pip_lines(rest[2:])
    if tool in ("pip", "pip3") and rest[:1] == ["install"]:
        return pip_lines(rest[1:])
    if tool in ("pdm", "uv", "poetry") and rest[:1] in (["sync"], ["install"]):
        return _grouped(tool, rest[1:])
    return None


def pip_lines(args: list[str]) -> Installs:
    """pip install arguments as requirements-file lines: requirements, and -r/-c/-e FILE (`--constraint
    FILE`, `--constraint=FILE`, `-cFILE`, `--constr FILE`); other options left out with their values
    (`--upgrade-strategy eager`, `-i URL`), flags (--upgrade, --pre ...) left out."""
    found = Installs()
    queue = collections.deque(args)
    while queue:
        arg = queue.popleft()
        option, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        option = _long_option(option)
        option = _FILE_ALIASES.get(option, option)
        if option in PIP_FILE_OPTIONS:
            value = value if equals else (queue.popleft() if queue else "")
            if value:
                found.requirement_lines.append(f"{option} {value}")
        elif option in _VALUE_OPTIONS:
            value = value if equals else (queue.popleft() if queue else "")
            if option == "--group" and value:  # pip 25.1: a PEP 735 group (PYPROJECT:NAME: another file's)
                found.groups.append(value)
        elif re.match(r"^-[rce]\S", arg):
            found.requirement_lines.append(f"{arg[:2]} {arg[2:]}")
        elif not arg.startswith("-"):
            found.requirement_lines.append(arg)
    return found


def _after_global_options(words: list[str]) -> list[str]:
    """The words from the first that is not an option (or an option's value) on."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if "=" not in words[i] and takes_value(words[i]) else 1
    return words[i:]


def takes_value(option: str) -> bool:
    """Whether an install command option (`--index-url`, `-r`, `--constr`) takes the next argument."""
    option = _long_option(option)
    return option in PIP_FILE_OPTIONS or option in _FILE_ALIASES or option in _VALUE_OPTIONS


def _long_option(option: str) -> str:
    """A long option as pip reads it: itself where it is one, else the one long option (flags included)
    it is an unambiguous prefix of."""
    if not option.startswith("--") or option in _LONG_OPTIONS:
        return option
    matching = {_FILE_ALIASES.get(o, o) for o in _LONG_OPTIONS if o.startswith(option)}
    return matching.pop() if len(matching) == 1 else option


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
