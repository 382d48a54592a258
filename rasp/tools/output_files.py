"""Files the CLI writes get the permissions any other program's would.

safetensors writes a file by renaming a private temporary file into place, so what it writes is
mode 0600 whatever the user's umask says, and an existing file loses its mode. `user_mode(path)`
wraps such a write: a new file gets `0666 & ~umask`, a replaced one keeps the mode it had.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def user_mode(path: str | Path) -> Iterator[None]:
    """Around a write of `path`: afterwards the file has the mode a plain `open(path, "w")` gives."""
    try:
        before: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        before = None
    yield
    os.chmod(path, before if before is not None else 0o666 & ~current_umask())


def current_umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it; put it straight back
    os.umask(mask)
    return mask
