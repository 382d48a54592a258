"""Where a tracr expression was created: the `Span` of the user's code that built it.

A tracr program is Python, so its s-ops have no RASP source. Each expression records the call in the
user's file that created it (the first frame outside this package), so that compile errors point at
`prog.py:12:5` with the source line and a caret, as they do for `.rasp` programs.
"""

from __future__ import annotations

import linecache
import sys
from pathlib import Path
from types import CodeType, FrameType

from rasp.errors import Source, Span

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
_sources: dict[str, Source] = {}
_positions: dict[CodeType, list[tuple[int | None, int | None, int | None, int | None]]] = {}
_inside: dict[str, bool] = {}


def creation_span() -> Span | None:
    """The span of the user's expression that is creating a node now (None when unknown)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return _span_of(frame)


def _in_package(filename: str) -> bool:
    inside = _inside.get(filename)
    if inside is None:
        try:
            inside = str(Path(filename).resolve().parent).startswith(_PACKAGE_DIR)
        except (OSError, ValueError):
            inside = False
        _inside[filename] = inside
    return inside


def _span_of(frame: FrameType) -> Span | None:
    code = frame.f_code
    source = _source(code.co_filename)
    if source is None:
        return None
    positions = _positions.get(code)
    if positions is None:
        positions = list(code.co_positions())
        _positions[code] = positions
    index = frame.f_lasti // 2
    if not 0 <= index < len(positions):
        return None
    line, end_line, col, end_col = positions[index]
    if line is None:
        return None
    end_line = end_line or line
    start = _char_col(source.line(line), col)
    end = _char_col(source.line(end_line), end_col) if end_col is not None else start + 1
    if end_line == line:
        end = max(end, start + 1)
    return Span(source, line, start + 1, end_line, end + 1)


def _char_col(text: str, byte_col: int | None) -> int:
    """Python reports columns as UTF-8 byte offsets; a Span counts characters."""
    if byte_col is None:
        return 0
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _source(filename: str) -> Source | None:
    source = _sources.get(filename)
    if source is None:
        lines = linecache.getlines(filename)
        if not lines:
            return None
        source = Source(filename, "".join(lines))
        _sources[filename] = source
    return source


def forget_sources() -> None:
    """Drop the cached program texts (a file loaded again may have changed)."""
    _sources.clear()
    linecache.clearcache()
