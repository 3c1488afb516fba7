"""`agentic-codemod init DIR`: a context for a team's own repositories, ready for `apm install`.

    DIR/
      apm.yml                      the context: targets, no executables, the migration package below
      apm-policy.yml               which sources may ship context: the packages inside DIR only
      README.md                    what to do next (docs/tutorial.md has the whole walk-through)
      packages/<sdk>-<major>-migration/
        apm.yml, README.md
        .apm/skills/<sdk>-<major>-migration/SKILL.md          migration notes (frontmatter: name = folder)
        .apm/skills/<sdk>-<major>-migration/rules/EX001-*.yml one example ast-grep rule
        tests/EX001-*.yml                                     its before/after cases
      tasks/<sdk>-bump.yml         a plain bump: no `migration:`, bump + verify
      tasks/<sdk>-migration.yml    the same bump with the migration package

Packages sit inside DIR because the runtime refuses a local dependency outside the context directory
(`local-path-escape`) and a CI job has only its repository. Nothing is overwritten: an existing file is
bad input (exit 2) naming the file.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentic_codemod.errors import InputError

TEMPLATES = Path(__file__).parent / "scaffold_templates"
# The pipeline's own agents, guardrails and context documents, beside the package in a source checkout.
PIPELINE_APM = Path(__file__).resolve().parents[1] / ".apm"


def add_init_parser(sub: argparse._SubParsersAction) -> None:
    init = sub.add_parser("init", help="scaffold an APM context (policy, migration package, tasks) in DIR")
    init.add_argument("dir", type=Path, help="directory for the context (created; existing files are kept)")
    init.add_argument(
        "--sdk", default="example-sdk", help="distribution name of the SDK (default: %(default)s)"
    )
    init.add_argument(
        "--from", dest="from_range", default=">=1,<2", help="range bumped from (default: %(default)s)"
    )
    init.add_argument("--to", default="2.0.0", help="version bumped to (default: %(default)s)")
    init.set_defaults(handler=init_command)


def init_command(args: argparse.Namespace) -> int:
    written = scaffold(args.dir, args.sdk, args.from_range, args.to)
    for path in written:
        print(path)
    print(
        f"next: cd {args.dir} && apm install && apm audit --ci --policy apm-policy.yml (see README.md there)"
    )
    return 0


def scaffold(dest: Path, sdk: str, from_range: str, to: str) -> list[Path]:
    """Write the context into dest; return the files written. Refuses (InputError) before writing
    anything when an argument is invalid or a file would be overwritten."""
    values = _values(sdk, from_range, to)
    files = {
        _fill(rel, values): _fill(src.read_text(encoding="utf-8"), values) for rel, src in _template_files()
    }
    existing = sorted(rel for rel in files if (dest / rel).exists())
    if existing:
        raise InputError(
            f"{dest / existing[0]}: already exists", hint="init never overwrites: choose an empty directory"
        )
    written = []
    for rel, text in sorted(files.items()):
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    if PIPELINE_APM.is_dir() and not (dest / ".apm").exists():  # agents for LLM mode, when at hand
        shutil.copytree(PIPELINE_APM, dest / ".apm")
        written.append(dest / ".apm")
    return written


def _values(sdk: str, from_range: str, to: str) -> dict[str, str]:
    name = canonicalize_name(sdk)
    if not name or not all(part.isalnum() for part in name.split("-")):
        raise InputError(f"--sdk {sdk!r}: not a distribution name (e.g. 'acme-sdk')")
    try:
        SpecifierSet(from_range)
    except InvalidSpecifier as exc:
        raise InputError(f"--from {from_range!r}: not a version range (e.g. '>=1,<2')") from exc
    try:
        major = Version(to).major
    except InvalidVersion as exc:
        raise InputError(f"--to {to!r}: not a version (e.g. '2.0.0')") from exc
    return {
        "sdk": name,
        "module": name.replace("-", "_"),
        "from_range": from_range,
        "to": to,
        "major": str(major),
        "package": f"{name}-{major}-migration",
    }


def _template_files() -> list[tuple[str, Path]]:
    """(relative path with {{placeholders}}, template file); template file names spell `/` as `__`."""
    return [(src.name.replace("__", "/"), src) for src in sorted(TEMPLATES.iterdir()) if src.is_file()]


def _fill(text: str, values: dict[str, str]) -> str:
    """{{name}} placeholders; `$` stays as it is (ast-grep metavariables)."""
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text
