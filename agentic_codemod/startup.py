"""The command-line process and Python's cyclic garbage collector (issue 13: the offline run's overhead).

A run loads about a thousand modules (agno, pydantic models, the workflow) whose objects live as long as
the process. Collecting while they load finds next to nothing and cost about 0.1 s of a 2.5 s fixture
run; the interpreter's exit walks every one of them once more, another 0.1 s. So the command-line entry
(`cli.entry`) defers collection until the command's modules are in (`loaded`: what they made moves to
the permanent generation, `gc.freeze`, and collection is back on), and freezes again before the exit.

Only the entry defers. Code that calls `cli.main` or `run.execute` in its own process (the tests, a
library user) keeps its collector as it is: `loaded` does nothing there.
"""

from __future__ import annotations

import gc

_deferred = False


def defer() -> None:
    """At process start: no collection while the command's modules load."""
    global _deferred
    if gc.isenabled():
        gc.disable()
        _deferred = True


def loaded() -> None:
    """The command's modules are in: collect again, leaving what they made out of every collection."""
    global _deferred
    if _deferred:
        _deferred = False
        gc.freeze()
        gc.enable()


def before_exit() -> None:
    """Nothing but the exit comes after this (atexit handlers still run): no last walk of every object.
    What only that walk would free is then never finalised: an unclosed file held in a reference cycle
    would lose its buffer. The tool writes every file in a `with` block, and its temporary directories
    are removed by atexit, so nothing it writes depends on that walk."""
    loaded()
    gc.freeze()
