"""How redaction time grows with input size on hostile inputs (it must stay linear).

For each hostile unit, prints the time to redact 64 KB and 256 KB of it and their ratio: about 4 is
linear; much more means a regex backtracks. Not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import time

from agentic_codemod.tools.trace import Redactor

UNITS = ["a.", "token.", "eyJ", "password_", "ghp_", "://a:", "bearer ", "x-api-key "]


def seconds(text: str) -> float:
    redactor = Redactor(["abcdefgh"])
    start = time.perf_counter()
    redactor.redact(text)
    return time.perf_counter() - start


def main() -> None:
    worst = 0.0
    for unit in UNITS:
        small, large = (seconds(unit * (size // len(unit))) for size in (64_000, 256_000))
        ratio = large / small if small else float("nan")
        worst = max(worst, ratio)
        print(
            f"{unit!r:14} 64 KB {small * 1000:8.1f} ms   256 KB {large * 1000:8.1f} ms   ratio {ratio:5.2f}"
        )
    print(f"worst growth for 4x input: {worst:.2f}x (linear is about 4)")


if __name__ == "__main__":
    main()
