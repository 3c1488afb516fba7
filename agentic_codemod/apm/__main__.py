"""`python -m agentic_codemod.apm [--context DIR] [--record-key FILE]`: verify an APM context as a run does
(every check, the `apm` CLI required) and record the pass (apm/verified.py). CI's codemod:context job runs
it once; the run jobs then find the record instead of starting the CLI again.

Exit 0 verified (the key is printed, and written to --record-key), 2 refused (every violation named).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_codemod.apm.command import find_apm
from agentic_codemod.apm.load import load_context
from agentic_codemod.apm.manifest import MANIFEST, read_manifest
from agentic_codemod.apm.verified import ENV, VerifiedCache, verification_key
from agentic_codemod.errors import CodemodError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentic_codemod.apm", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--context", type=Path, default=Path("."), help="the APM project (default: .)")
    parser.add_argument("--record-key", type=Path, help="write the verified key to this file")
    args = parser.parse_args(argv)
    cache = VerifiedCache.from_environment()
    if cache is None:
        print(f"agentic-codemod: no place for the record: set {ENV}", file=sys.stderr)
        return 2
    try:
        context = load_context(args.context, use_cli=True, cache=cache)
        apm = find_apm(True)
        assert apm is not None  # find_apm(True) raises when the CLI is missing
        root = args.context.resolve()
        key = verification_key(root, read_manifest(root / MANIFEST), apm)
    except CodemodError as exc:
        print(f"agentic-codemod: {exc}", file=sys.stderr)
        return exc.exit_code
    if not cache.holds(key):
        print(f"agentic-codemod: the pass could not be recorded in {cache.directory}", file=sys.stderr)
        print(
            "  hint: the directory must be the user's own, not writable by group or others", file=sys.stderr
        )
        return 2
    if args.record_key is not None:
        args.record_key.write_text(key + "\n", encoding="utf-8")
    print(f"context verified: lock {context.lock_sha256[:12]}, key {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
