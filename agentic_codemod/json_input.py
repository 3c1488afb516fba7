"""A JSON document the tool did not write (a repository's package.json or lockfile, a test run's report,
an installed package's package.json), parsed with one kind of error.

    loads(text) -> object      json.loads; ValueError for anything it cannot read, nesting included

json.loads raises RecursionError, not ValueError, for arrays or objects nested past the interpreter's
recursion limit (a package.json of `[[[[…` a hundred thousand deep): a reader that catches ValueError for
"not JSON" would crash the run instead of naming the file.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested deeper than this tool reads") from None
