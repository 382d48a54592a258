"""Files the CLI writes get the permissions any other program's would.

safetensors writes a file by renaming a private temporary file into place, so what it writes is
mode 0600 whatever the user's umask says, and an existing file loses its mode. `user_mode(path)`
wraps such a write: a new file gets `0666 & ~umask`, a replaced one keeps the mode it had.

`check_writable(path)` refuses an output path before the work that produces it (a compile can take
minutes); `writing(path)` turns a failed write (an `OSError`, or safetensors' own error type) into
one `cannot write PATH: reason` line.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rasp.errors import ErrorKind, RaspError


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


def check_writable(path: str | Path, *, renamed: bool = False) -> None:
    """Raise a `RaspError` (`cannot write PATH: why`) unless a file can be created at `path`: its
    directory exists and takes a new file (tried with a nameless temporary file), and `path` is not
    a directory. `renamed`: the file is written by renaming a new one into place (safetensors), so
    `path` must not be a device, FIFO or socket, which the rename would replace (`-o /dev/null`
    run as root replaced /dev/null with a model file), and a symlink is written through, so its
    target is checked (a link into a missing directory was refused after the compile)."""
    out = Path(path)
    place = _written_place(out) if renamed else out
    shown = f"{out}" if place == out else f"{out} (a link to {place})"
    if place.is_dir():
        raise RaspError(f"cannot write {shown}: it is a directory", kind=ErrorKind.IO)
    if renamed and place.exists() and not place.is_file():
        raise RaspError(
            f"cannot write {shown}: not a regular file (a model file is written by renaming a new "
            "file into place, which would replace it)",
            kind=ErrorKind.IO,
        )
    missing = no_directory(place)
    if missing is not None:
        raise RaspError(f"cannot write {shown}: {missing}", kind=ErrorKind.IO)
    try:
        with tempfile.TemporaryFile(dir=place.parent):
            pass
    except OSError as exc:
        raise RaspError(f"cannot write {shown}: {exc.strerror or exc}", kind=ErrorKind.IO) from None
    if place.exists() and not os.access(place, os.W_OK):
        raise RaspError(f"cannot write {shown}: permission denied", kind=ErrorKind.IO)


def _written_place(out: Path) -> Path:
    """Where a file renamed into place at `out` lands: a symlink's target (transformer.fileformat
    writes through it), else `out`. A symlink loop is refused."""
    if not out.is_symlink():
        return out
    try:
        os.path.realpath(out, strict=True)
    except FileNotFoundError:
        pass  # a dangling link: its target is created
    except OSError as exc:  # a loop ("Too many levels of symbolic links")
        raise RaspError(f"cannot write {out}: {exc.strerror or exc}", kind=ErrorKind.IO) from None
    return Path(os.path.realpath(out))


def no_directory(path: str | Path) -> str | None:
    """Why `path`'s directory cannot take it (None where it is a directory): it does not exist,
    or it is a file (which was said not to exist)."""
    parent = Path(path).parent
    if parent.is_dir():
        return None
    if parent.exists():
        return f"{parent} is not a directory"
    return f"directory {parent} does not exist"


@contextmanager
def staged(path: str | Path) -> Iterator[Path]:
    """Around a write of `path` (a picture): the path to write, `.NAME.partial` beside it, renamed
    into place once the write completes (a Ctrl-C while an SVG was drawn left half a picture, in
    place of any earlier one), with the mode `user_mode` gives; removed where the write fails.
    A symlink is written through; a path that is no regular file (/dev/stdout) is written itself."""
    from rasp.tools.interrupts import held

    place = Path(path)
    if place.is_symlink():
        try:
            place = Path(os.path.realpath(place, strict=True))
        except FileNotFoundError:
            place = Path(os.path.realpath(place))  # a dangling link: its target is created
        except OSError:  # a loop: written as it is, the write says so (never replaced by a file)
            place = Path(path)
    if place.is_symlink() or (place.exists() and not place.is_file()):
        yield place
        return
    partial = place.with_name(f".{place.name}.partial")
    try:
        yield partial
        with held(), user_mode(place):  # (a Ctrl-C waits for the rename)
            os.replace(partial, place)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Around a write of `path`: a failure is one `cannot write PATH: reason` error."""
    from safetensors import SafetensorError

    try:
        yield
    except (OSError, SafetensorError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0] or type(exc).__name__
        raise RaspError(f"cannot write {path}: {reason}", kind=ErrorKind.IO) from None


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether the paths name one file (through links too, where both exist)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet), or is a symlink loop
        # (os.path.realpath, not Path.resolve: that raises RuntimeError on a loop)
        return os.path.realpath(a) == os.path.realpath(b)
