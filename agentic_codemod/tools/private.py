"""Where a cache shared between runs may live: what no one but this user can have written.

    private(path, regular=False) -> bool    a folder (a regular file with regular=True) that is no link,
                                            owned by this uid, without a group or other write bit

Like ssh's checks of ~/.ssh: a cache another user (or a job of another uid) could write would let them
choose what this tool reads as verified (apm/verified.py) or installs as a template
(adapters/python/env_template.py). Jobs of one uid that share a cache are not told apart by this: that
cache is only as trusted as every job that writes it (SECURITY.md).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def private(path: Path, *, regular: bool = False) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    kind_ok = stat.S_ISREG(st.st_mode) if regular else stat.S_ISDIR(st.st_mode)
    return kind_ok and st.st_uid == os.getuid() and not st.st_mode & 0o022
