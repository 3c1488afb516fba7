"""How redaction time grows with input size on hostile inputs (it must stay linear).

For each hostile unit, prints the time to redact 64 KB and 256 KB of it and their ratio: about 4 is
linear; much more means a regex backtracks. Not a test: it prints figures and asserts nothing. `--quick`
measures 4 KB and 16 KB of two units (a smoke test for CI).
"""

from __future__ import annotations

import argparse
import time

from agentic_codemod.tools.trace import Redactor

UNITS = ["a.", "token.", "eyJ", "password_", "ghp_", "://a:", "bearer ", "x-api-key "]


def seconds(text: str) -> float:
    redactor = Redactor(["abcdefgh"])
    start = time.perf_counter()
    redactor.redact(text)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 KB and 16 KB of two units (CI smoke test)")
    args = parser.parse_args(argv)
    units, sizes = (UNITS[:2], (4_000, 16_000)) if args.quick else (UNITS, (64_000, 256_000))
    worst = 0.0
    for unit in units:
        small, large = (seconds(unit * (size // len(unit))) for size in sizes)
        ratio = large / small if small else float("nan")
        worst = max(worst, ratio)
        print(
            f"{unit!r:14} {sizes[0] // 1000} KB {small * 1000:8.1f} ms   {sizes[1] // 1000} KB "
            f"{large * 1000:8.1f} ms   ratio {ratio:5.2f}"
        )
    print(f"worst growth for 4x input: {worst:.2f}x (linear is about 4)")


if __name__ == "__main__":
    main()
