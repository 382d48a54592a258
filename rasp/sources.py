"""Reading program text: from a file, or from bytes (standard input), as one `Source`.

Programs are UTF-8. Bytes that are not UTF-8 are a located error like any other (`file:line:col`,
the line with the bad byte shown as U+FFFD, a caret under it), never a byte offset in a Python
message. A UTF-8 byte-order mark, which some editors write, is dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import resources
from itertools import islice
from pathlib import Path

from rasp.errors import ErrorKind, RaspError, Source, Span
from rasp.wording import close_name

_BOM = "\ufeff"

# `progress(stage, done, total)`: how far reading a program has got ("parsing": characters,
# "running": statements). The language core only calls it; the tools draw it.
Progress = Callable[[str, int, int], None]


def decode_source(data: bytes, name: str) -> Source:
    """The program text in `data`, reported under `name`; raises a located `RaspError` for bytes
    that are not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(data, name, exc) from None
    return Source(name, text.removeprefix(_BOM))


def read_source(path: str | Path) -> Source:
    """The program in the file `path` (reported under the path as given)."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise RaspError(f"cannot read {path}: it is a directory", kind=ErrorKind.IO) from None
    except OSError as exc:
        raise RaspError(
            f"cannot read {path}: {exc.strerror or exc}",
            hint=missing_program_hint(path) if isinstance(exc, FileNotFoundError) else None,
            kind=ErrorKind.IO,
        ) from None
    if is_safetensors(data):  # (`load "reverse.safetensors";` showed its header as bad UTF-8)
        raise RaspError(
            f"{path} is a compiled model (a safetensors file), not a RASP program",
            hint=f"`rasp show {path}` summarises it; `rasp run --model {path} --input INPUT` "
            "runs it",
            kind=ErrorKind.IO,
        )
    return decode_source(data, str(path))


def missing_program_hint(path: str | Path) -> str | None:
    """The program the user most likely meant: `rasp run programs/reverse` (no suffix), a typo
    of a program beside it (`revers.rasp`), or one of the shipped library typed from another
    directory (`rasp run programs/sort.rasp` outside the repository, `rasp run sort.rasp`)."""
    given = Path(path)
    if given.suffix != ".rasp" and given.with_name(given.name + ".rasp").is_file():
        return f"did you mean {path}.rasp?"
    if given.suffix not in ("", ".rasp"):
        return None
    wanted = given.stem + ".rasp"
    try:
        beside = sorted(p.name for p in islice(given.parent.glob("*.rasp"), _MAX_LISTED))
    except OSError:
        beside = []
    close = close_name(wanted, beside)
    if close is not None:
        return f"did you mean {given.with_name(close)}?"
    library = _library()
    if library is not None and (library / wanted).is_file():
        return f"the program library shipped with rasp-forge has it: {library / wanted}"
    return None


_MAX_LISTED = 1000  # (a directory's programs looked at for a close name)


def _library() -> Path | None:
    """The shipped program library (`programs/`), where the package is importable."""
    try:
        return Path(str(resources.files("programs")))
    except (ModuleNotFoundError, TypeError):
        return None


def is_safetensors(start: bytes, size: int | None = None) -> bool:
    """Whether bytes starting a file of `size` (default: their length) frame a safetensors file:
    an 8-byte little-endian header length, then the header's JSON object. Program text never
    starts so (its first 8 bytes would make a length of petabytes)."""
    size = len(start) if size is None else size
    length = int.from_bytes(start[:8], "little")
    return len(start) >= 9 and start[8:9] == b"{" and 2 <= length <= size - 8


def is_safetensors_file(path: str | Path) -> bool:
    """Whether the file at `path` is framed as a safetensors file (`is_safetensors`); False where
    it cannot be read (the command reading it says why)."""
    try:
        with open(path, "rb") as handle:
            return is_safetensors(handle.read(9), os.fstat(handle.fileno()).st_size)
    except OSError:
        return False


def _not_utf8(data: bytes, name: str, exc: UnicodeDecodeError) -> RaspError:
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    line = data.count(b"\n", 0, exc.start) + 1
    shown = data.decode("utf-8", errors="replace").removeprefix(_BOM)
    col = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
    if line == 1 and data.startswith(_BOM.encode("utf-8")):
        col -= 1
    span = Span(Source(name, shown), line, col, line, col + 1)
    return RaspError(
        f"the program is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be read here",
        span,
        hint="save the file as UTF-8",
        kind=ErrorKind.IO,
    )
