"""The picture `rasp draw` saves: a `Trace`'s attention patterns and residual snapshots as one
matplotlib figure, laid out here in inches (no layout engine).

matplotlib's constrained layout measured every tick label of every panel, again at each of its
passes, and then the figure was drawn twice: a model of 40 heads took over a minute. The sizes
below are computed once from the text lengths, the panels wrap into rows no wider than
`_MAX_WIDTH`, and cells shrink for long inputs (`_axis`), so a drawing of 64 positions stays a
few thousand pixels wide.
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np

from rasp.display import atom_text
from rasp.errors import ErrorKind, RaspError
from rasp.tools.draw_graph import SPECIAL_DIMS

ANNOTATE_MAX_POSITIONS = 16  # write numbers into numerical residual cells up to this many positions

_CHAR_W = 0.075  # inches per character of 8-point monospace text (with some room)
_PROP_W = 0.065  # inches per character of 8-point proportional text (titles), on average
_LINE = 0.15  # inches per line of 8-point text
_TITLE_H = 0.45  # inches for the figure's title row
_MIN_FONT = 6.0  # points: tick labels are never smaller; where they would be, only some are written
_MAX_WIDTH = 40.0  # inches: panels wrap into rows no wider (unless one panel is wider)
_ONE_ROW = 24.0  # inches: panels that fit in a row this wide stay in one row
_MAX_AREA = 2400.0  # square inches (29 M pixels at 110 dpi): larger figures shrink their cells
_ASPECT = 3.0  # the width / height a block of more panels is wrapped towards
_GAP = 0.25  # inches between two panels of a row
_COLORBAR_W = 1.1  # inches right of a block for its colour bar and its label
_MARGIN = 0.15
# Every text is the program's or the file's own (tokens, names, operations): matplotlib would
# read the part between two `$` as TeX, drawing `$x b$` as italic `xb` or failing on `"$\\alpha"`.
PLAIN_TEXT = {"text.parse_math": False}


@dataclass(frozen=True)
class HeadPattern:
    layer: int
    head: int
    name: str
    op: str
    pattern: np.ndarray  # [query, key], model positions (0 = BOS)


@dataclass(frozen=True)
class Trace:
    """What the model did on one input."""

    positions: tuple[str, ...]  # "BOS", then the input tokens
    labels: tuple[str, ...]  # residual labels, one per dimension
    residuals: tuple[tuple[str, np.ndarray], ...]  # (title, [pos, d_model])
    heads: tuple[HeadPattern, ...]
    output_name: str
    output: tuple[Any, ...]


def token_text(token: Any) -> str:
    """A token or output value as the picture writes it: a string as it is, else JSON (a tracr
    program's tuple or list: its repr)."""
    if isinstance(token, (tuple, list)):
        return repr(token)
    return token if isinstance(token, str) else json.dumps(token)


def require_matplotlib() -> Any:
    """matplotlib's pyplot on the Agg backend, or a `RaspError` saying what to install."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise RaspError(
            "drawing needs matplotlib, which is not installed",
            hint="install the viz extra: pip install 'rasp-forge[viz]'",
            kind=ErrorKind.IO,
        ) from None
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


@dataclass(frozen=True)
class _Axis:
    """How the positions (or dimensions) along one axis are drawn: `size` inches each, tick
    labels of `font` points on every `every`-th."""

    size: float
    font: float
    every: int


def _axis(count: int, most: float, least: float, room: float, font: float) -> _Axis:
    """`count` items take `most` inches each while `room` inches hold them, then shrink to fill
    `room`; below `least` inches they take up to twice `room`, then shrink again (257 positions:
    12 inches). Labels keep the font that fits an item, at least `_MIN_FONT`, then thin out."""
    count = max(count, 1)
    size = max(min(most, room / count), min(least, 2 * room / count))
    fits = size * 72 * 0.8
    if fits >= _MIN_FONT:
        return _Axis(size, min(font, fits), 1)
    return _Axis(size, _MIN_FONT, math.ceil(_MIN_FONT / 0.8 / 72 / size))


@dataclass(frozen=True)
class _Rows:
    """`count` panels of one kind in rows of at most `cols`, each panel in a cell of `cell_w` x
    `cell_h` inches whose axes start `left` inches from its left and `bottom` from its bottom."""

    count: int
    cols: int
    cell_w: float
    cell_h: float
    left: float
    bottom: float
    axes_w: float
    axes_h: float

    @property
    def rows(self) -> int:
        return math.ceil(self.count / self.cols) if self.count else 0

    @property
    def width(self) -> float:
        return min(self.count, self.cols) * self.cell_w - (_GAP if self.count else 0.0)

    @property
    def height(self) -> float:
        return self.rows * self.cell_h


def _columns(count: int, cell_w: float, cell_h: float, room: float) -> int:
    """How many panels of `cell_w` x `cell_h` inches to put in a row of at most `room` inches:
    the count whose block is nearest to `_ASPECT` times as wide as tall (one row of a few heads,
    several rows of forty), its rows balanced."""
    if count == 0:
        return 1
    if count * cell_w <= _ONE_ROW + _GAP:  # a few panels: side by side, as a reader expects
        return count
    most = max(1, min(count, int((room + _GAP) // cell_w)))

    def misfit(cols: int) -> float:
        rows = math.ceil(count / cols)
        return abs(math.log(cols * cell_w / (rows * cell_h) / _ASPECT))

    cols = min(range(1, most + 1), key=misfit)
    return math.ceil(count / math.ceil(count / cols))


def trace_figure(trace: Trace) -> Any:
    """The matplotlib figure `draw_trace` saves. Its title has a row of its own, every head is
    wide enough for its wrapped title, and the sizes are worked out from the texts, so no two
    titles overlap and no label leaves the figure."""
    plt = require_matplotlib()
    with plt.rc_context(PLAIN_TEXT):
        return _figure(plt, trace)


@dataclass(frozen=True)
class _Layout:
    positions: _Axis
    dims: _Axis
    wrap: int  # characters per line of a head's title
    heads: _Rows
    resid: _Rows
    resid_left: float  # inches of residual labels left of each residual row
    content: float  # inches: the wider block's width
    width: float
    height: float


def _fit(trace: Trace) -> _Layout:
    """The layout at the sizes `_layout` gives, or, where that figure would be larger than
    `_MAX_AREA` square inches (a 41-head model at 64 positions: 38 x 268 inches, most of its time
    spent compressing 120 M pixels), cells and dimensions shrunk until it is not (or are 1/4)."""
    shrink = 1.0
    layout = _layout(trace, shrink)
    for _ in range(4):
        area = layout.width * layout.height
        if area <= _MAX_AREA * 1.05 or shrink <= 0.25:
            break
        shrink = max(0.25, shrink * math.sqrt(_MAX_AREA / area))
        layout = _layout(trace, shrink)
    return layout


def _layout(trace: Trace, shrink: float) -> _Layout:
    """Sizes and places in inches: cells and dimensions scaled by `shrink`, texts not."""
    n_pos, d_model = len(trace.positions), len(trace.labels)
    # a pattern's cell and a residual column: 0.32 inches up to 18 positions, 0.13 at 47 to 92
    positions = _axis(n_pos, 0.32 * shrink, 0.13 * shrink, 6.0 * shrink, 8.0)
    shown = [len(p) for p in _position_labels(trace, positions)]
    token_w = max(shown, default=3) * _CHAR_W * positions.font / 8
    side = positions.size * n_pos
    # heads: a square pattern, query labels and "query" left of it, key labels and "key" below,
    # a title of a name line and up to two operation lines above
    head_left = token_w + 0.35
    head_w = max(head_left + side, 2.6) + _GAP
    wrap = max(16, int((head_w - _GAP) / _PROP_W))
    op_lines = max((len(_op_lines(head.op, wrap, head.name)) for head in trace.heads), default=0)
    head_h = side + token_w + 0.35 + (1 + op_lines) * _LINE + 0.3
    heads = _Rows(
        len(trace.heads),
        _columns(len(trace.heads), head_w, head_h, _MAX_WIDTH - _COLORBAR_W),
        head_w,
        head_h,
        head_left,
        token_w + 0.35,
        side,
        side,
    )
    # a residual dimension: 0.17 inches up to 82 dimensions, 0.11 at 128 to 254
    dims = _axis(d_model, 0.17 * shrink, 0.11 * shrink, 14.0 * shrink, 7.0)
    shown = [len(label) for label in trace.labels[:: dims.every]]
    label_w = max(shown, default=4) * _CHAR_W * dims.font / 8
    resid_left = label_w + 0.1
    panel_w = max(side, 1.6)
    # at least 2.5 inches: the colour bar's label beside the block is about 2 inches long
    resid_h = max(d_model * dims.size + token_w + 0.15 + 0.35, 2.5)
    room = _MAX_WIDTH - _COLORBAR_W - resid_left
    resid = _Rows(
        len(trace.residuals),
        _columns(len(trace.residuals), panel_w + _GAP, resid_h, room),
        panel_w + _GAP,
        resid_h,
        0.0,
        token_w + 0.15,
        panel_w,
        d_model * dims.size,
    )
    content = max(heads.width, resid_left + resid.width, 4.5)
    width = 2 * _MARGIN + content + _COLORBAR_W
    height = 2 * _MARGIN + _TITLE_H + heads.height + resid.height
    return _Layout(positions, dims, wrap, heads, resid, resid_left, content, width, height)


def _figure(plt: Any, trace: Trace) -> Any:
    layout = _fit(trace)
    positions, dims, wrap = layout.positions, layout.dims, layout.wrap
    heads, resid, resid_left = layout.heads, layout.resid, layout.resid_left
    content, width, height = layout.content, layout.width, layout.height
    fig = plt.figure(figsize=(width, height))
    # each value as `rasp run --model` prints it (`T`, `2.0`, `0.123`)
    output = ", ".join(atom_text(v) for v in trace.output)
    title = f"{trace.output_name}({' '.join(trace.positions[1:])}) = [{output}]"
    fig.text(
        0.5,
        1 - (_MARGIN + _TITLE_H / 2) / height,
        _shorten(title, int(width / _CHAR_W * 0.8)),
        ha="center",
        va="center",
        fontsize=11,
    )

    def axes_at(rows: _Rows, index: int, top: float, left: float) -> Any:
        row, col = divmod(index, rows.cols)
        x = left + col * rows.cell_w + rows.left
        y = height - top - (row + 1) * rows.cell_h + rows.bottom
        return fig.add_axes((x / width, y / height, rows.axes_w / width, rows.axes_h / height))

    # each block centred in the width the wider one takes
    heads_x = _MARGIN + (content - heads.width) / 2
    resid_x = _MARGIN + (content - resid_left - resid.width) / 2
    top = _MARGIN + _TITLE_H
    if trace.heads:
        image = None
        for index, head in enumerate(trace.heads):
            ax = axes_at(heads, index, top, heads_x)
            image = _draw_head(ax, trace, head, wrap, positions)
        bar = _colorbar_axes(fig, width, height, heads_x + heads.width, top, heads.height)
        fig.colorbar(image, cax=bar, label="attention")
        top += heads.height
    numerical = [":" not in label and label not in SPECIAL_DIMS for label in trace.labels]
    image = None
    for index, (title, values) in enumerate(trace.residuals):
        ax = axes_at(resid, index, top, resid_x + resid_left)
        first = index % resid.cols == 0
        image = _draw_residual(ax, trace, title, values.T, numerical, first, positions, dims)
    bar_x = resid_x + resid_left + resid.width
    bar = _colorbar_axes(fig, width, height, bar_x, top, resid.height)
    fig.colorbar(image, cax=bar, label="value (colour clipped to ±1)")
    return fig


def _colorbar_axes(fig: Any, width: float, height: float, x: float, top: float, h: float) -> Any:
    """A colour bar's axes right of a block of panels: at most 3 inches tall, centred on it."""
    bar_h = min(3.0, max(h - 0.8, 0.5))
    y = height - top - h / 2 - bar_h / 2
    return fig.add_axes(((x + 0.3) / width, y / height, 0.15 / width, bar_h / height))


def _ticks(ax: Any, trace: Trace, positions: _Axis, axis: str = "both") -> None:
    ticks = range(0, len(trace.positions), positions.every)
    labels = _position_labels(trace, positions)
    font = {"fontsize": positions.font, "family": "monospace"}
    ax.set_xticks(ticks, labels, rotation=90, **font)
    if axis == "both":
        ax.set_yticks(ticks, labels, **font)


def _position_labels(trace: Trace, positions: _Axis) -> list[str]:
    """The positions' tick labels: each token, or, where only every k-th is labelled, the
    labelled ones with their index (`12 a`), so that two labels never read as neighbours."""
    if positions.every == 1:
        return list(trace.positions)
    return [f"{i} {trace.positions[i]}" for i in range(0, len(trace.positions), positions.every)]


def _draw_head(ax: Any, trace: Trace, head: Any, wrap: int, positions: _Axis) -> Any:
    image = ax.imshow(head.pattern, cmap="Blues", vmin=0.0, vmax=1.0, interpolation="nearest")
    _ticks(ax, trace, positions)
    ax.set_xlabel("key", fontsize=8, labelpad=2)
    ax.set_ylabel("query", fontsize=8, labelpad=2)
    name = _shorten(f"layer {head.layer} head {head.head}: {head.name}", wrap)
    ax.set_title("\n".join([name, *_op_lines(head.op, wrap, head.name)]), fontsize=8)
    return image


def _draw_residual(
    ax: Any,
    trace: Trace,
    title: str,
    values: np.ndarray,
    numerical: list[bool],
    first: bool,
    positions: _Axis,
    dims: _Axis,
) -> Any:
    image = ax.imshow(
        np.clip(values, -1.0, 1.0),
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
    )
    _ticks(ax, trace, positions, axis="x")
    ax.set_title(title, fontsize=9)
    if first:  # the first panel of each row names the dimensions
        rows = range(0, len(trace.labels), dims.every)
        labels = trace.labels[:: dims.every]
        ax.set_yticks(rows, labels, fontsize=dims.font, family="monospace")
    else:
        ax.set_yticks([])
    ax.tick_params(axis="y", length=0)
    if len(trace.positions) <= ANNOTATE_MAX_POSITIONS:
        for d in (d for d, is_num in enumerate(numerical) if is_num):
            for p in range(values.shape[1]):
                if abs(values[d, p]) > 1e-6:
                    ax.text(
                        p,
                        d,
                        f"{values[d, p]:.3g}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if abs(values[d, p]) > 0.6 else "black",
                    )
    return image


def _op_lines(op: str, wrap: int, name: str | None = None) -> list[str]:
    """A head's operation as its title's lines under the name: at most two; none where it is the
    name itself (`length` computing `length`: the title said `length` twice)."""
    if op == name:
        return []
    return textwrap.wrap(op, wrap, max_lines=2, placeholder=" ...") or [""]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 4, 1)] + " ..."
