"""Run the attack suite (tests/security) and count what the enforcement layer stopped.

Every test named `test_attack*` is one attack. An attack that passes was refused and contained (refusal
raised or gate failed, refused trace line with a reason, no secret in the trace, nothing outside the
worktree changed); one that fails or errors leaked. Skipped attacks (e.g. mknod without root) are
listed and not counted as tried. The last line is

    attacks tried N, refused N, leaked 0

computed from the test reports, after a line counting the end-to-end runs: every call of the CLI
(`agentic_codemod.cli.main`: a run of a hostile repository, model script or package, a publish, a
fleet) made by an attack. Exit status 0 only when nothing leaked and at least one attack ran. `--quick`
runs only the attacks that need no end-to-end run (QUICK), a smoke test for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "security"


class Tally:
    """pytest plugin: one outcome per attack id (setup, call or teardown failure all count as leaked)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}
        self.current = ""
        self.cli_calls: dict[str, int] = {}

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.current = item.nodeid

    def counting(self, main: Callable[..., int]) -> Callable[..., int]:
        """The CLI entry point, counting its calls per attack."""

        def counted(*args: Any, **kwargs: Any) -> int:
            if "::test_attack" in self.current:
                self.cli_calls[self.current] = self.cli_calls.get(self.current, 0) + 1
            return main(*args, **kwargs)

        return counted

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "::test_attack" not in report.nodeid:
            return
        previous = self.outcomes.get(report.nodeid, "passed")
        if report.failed:
            self.outcomes[report.nodeid] = "leaked"
        elif report.skipped and previous != "leaked":
            self.outcomes[report.nodeid] = "skipped"
        elif report.when == "call" and previous == "passed":
            self.outcomes[report.nodeid] = "refused"


# --quick: the attacks that need no end-to-end run (seconds, a smoke test of the tally for CI)
QUICK = ("test_attacks_paths.py",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (CI smoke test)")
    args = parser.parse_args(argv)
    targets = [str(SUITE / name) for name in QUICK] if args.quick else [str(SUITE)]
    os.environ.setdefault("AGNO_TELEMETRY", "false")
    tally = Tally()
    import agentic_codemod.cli as cli

    cli.main = tally.counting(cli.main)  # before the suite's conftest imports it
    code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *targets], plugins=[tally])
    outcomes = list(tally.outcomes.values())
    refused, leaked = outcomes.count("refused"), outcomes.count("leaked")
    skipped = [nodeid.split("::", 1)[1] for nodeid, o in tally.outcomes.items() if o == "skipped"]
    for name in skipped:
        print(f"skipped (not counted): {name}")
    for nodeid, outcome in tally.outcomes.items():
        if outcome == "leaked":
            print(f"LEAKED: {nodeid.split('::', 1)[1]}")
    tried = refused + leaked
    e2e = [n for n in tally.cli_calls if tally.outcomes.get(n) in ("refused", "leaked")]
    print(f"end-to-end runs through the CLI {sum(tally.cli_calls[n] for n in e2e)}, in {len(e2e)} attacks")
    print(f"attacks tried {tried}, refused {refused}, leaked {leaked}")
    return 0 if code in (pytest.ExitCode.OK,) and leaked == 0 and tried > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
