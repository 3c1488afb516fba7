"""One file that code of the repository's could have written (a test report, an installed package's
package.json or RECORD), read on the host.

    read_regular(path, max_bytes) -> bytes | None   its bytes; None: not a regular file (a link at the
                                                    name, a FIFO, a device, a folder), larger than
                                                    max_bytes, missing or unreadable

The name is opened without following a link (O_NOFOLLOW) and without waiting on a FIFO's writer
(O_NONBLOCK); the type and size are those of what was opened (fstat), so a swap after the check reads
nothing else; the read stops one byte past `max_bytes` whatever the size said.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_regular(path: Path, max_bytes: int) -> bytes | None:
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        data = bytearray()
        while len(data) <= max_bytes and (chunk := os.read(fd, 1 << 20)):
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    return bytes(data) if len(data) <= max_bytes else None
