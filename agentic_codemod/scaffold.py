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

The ecosystem's values (the rule's language, the default --from, the files a bump edits, how the code
imports the SDK) come from its adapter (Adapter.scaffold): --ecosystem names it, --repo detects it from
a repository, and without either the context is for Python repositories.

Packages sit inside DIR because the runtime refuses a local dependency outside the context directory
(`local-path-escape`) and a CI job has only its repository. Nothing is overwritten: an existing file is
bad input (exit 2) naming the file.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_codemod.errors import InputError

if TYPE_CHECKING:  # the adapters (pydantic) load when init runs: `agentic-codemod --help` stays light
    from agentic_codemod.adapters.types import Adapter

TEMPLATES = Path(__file__).parent / "scaffold_templates"
DEFAULT_ECOSYSTEM = "python"  # `init` without --ecosystem or --repo, as before there were several
# The pipeline's own agents, guardrails and context documents, beside the package in a source checkout.
PIPELINE_APM = Path(__file__).resolve().parents[1] / ".apm"


def add_init_parser(sub: argparse._SubParsersAction) -> None:
    init = sub.add_parser("init", help="scaffold an APM context (policy, migration package, tasks) in DIR")
    init.add_argument("dir", type=Path, help="directory for the context (created; existing files are kept)")
    init.add_argument(
        "--sdk", default="example-sdk", help="distribution name of the SDK (default: %(default)s)"
    )
    init.add_argument(
        "--from",
        dest="from_range",
        help="range bumped from, in the ecosystem's syntax (default: its 1.x range, e.g. >=1,<2 or ^1.0.0)",
    )
    init.add_argument("--to", default="2.0.0", help="version bumped to (default: %(default)s)")
    init.add_argument("--ecosystem", help="the repositories' ecosystem, an adapter's name (default: python)")
    init.add_argument(
        "--repo", type=Path, help="a repository to take the ecosystem from (its dependency files)"
    )
    init.set_defaults(handler=init_command)


def init_command(args: argparse.Namespace) -> int:
    from agentic_codemod.adapters import detect_ecosystem, get_adapter

    if args.ecosystem:
        get_adapter(args.ecosystem)  # an unknown one: InputError naming the known ones (exit 2)
    if args.ecosystem and args.repo:
        raise InputError("--ecosystem and --repo: give one (--repo detects the ecosystem)")
    ecosystem = args.ecosystem or (detect_ecosystem(args.repo) if args.repo else DEFAULT_ECOSYSTEM)
    written = scaffold(args.dir, args.sdk, args.from_range, args.to, ecosystem)
    for path in written:
        print(path)
    print(
        f"next: cd {args.dir} && apm install && apm audit --ci --policy apm-policy.yml (see README.md there)"
    )
    return 0


def scaffold(
    dest: Path, sdk: str, from_range: str | None, to: str, ecosystem: str = DEFAULT_ECOSYSTEM
) -> list[Path]:
    """Write the context into dest; return the files written. Refuses (InputError) before writing
    anything when an argument is invalid or a file would be overwritten."""
    from agentic_codemod.adapters import get_adapter

    values = _values(get_adapter(ecosystem), sdk, from_range, to)
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


def _values(adapter: Adapter, sdk: str, from_range: str | None, to: str) -> dict[str, str]:
    facts, versioning = adapter.scaffold, adapter.versioning
    if not re.fullmatch(facts.name_pattern, sdk):
        raise InputError(f"--sdk {sdk!r}: not a package name of {adapter.name} (e.g. 'acme-sdk')")
    name = versioning.canonical_name(sdk)
    from_range = facts.from_range if from_range is None else from_range
    try:
        versioning.check(from_range, "")
    except ValueError as exc:
        raise InputError(
            f"--from {from_range!r}: not a {adapter.name} version range (e.g. {facts.from_range!r})"
        ) from exc
    major = re.match(r"\d+", to)
    if not versioning.is_version(to) or major is None:
        raise InputError(f"--to {to!r}: not a {adapter.name} version (e.g. '2.0.0')")
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")  # a folder and APM package name
    return {
        "sdk": name,
        "module": facts.module(name),
        "from_range": from_range,
        "to": to,
        "major": major.group(0),
        "package": f"{slug}-{major.group(0)}-migration",
        "slug": slug,
        "ecosystem": adapter.name,
        "language": facts.rule_language,
        "code": facts.code,
        "bump_paths": json.dumps(list(facts.bump_paths)),
        "migration_paths": json.dumps(["src/**", *facts.bump_paths]),
    }


def _template_files() -> list[tuple[str, Path]]:
    """(relative path with {{placeholders}}, template file); template file names spell `/` as `__`."""
    return [(src.name.replace("__", "/"), src) for src in sorted(TEMPLATES.iterdir()) if src.is_file()]


def _fill(text: str, values: dict[str, str]) -> str:
    """{{name}} placeholders; `$` stays as it is (ast-grep metavariables)."""
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text
