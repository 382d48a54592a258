"""Pictures of a compiled model at work (`rasp draw`, the REPL's `draw(...)`).

For one input, `trace_model` runs the model with its activation cache and keeps what a person wants to
see: every used head's attention pattern (rows = queries, columns = keys, BOS first) and the residual
stream after the embedding and after every layer, labelled `name:value`. `draw_trace` renders both as
one matplotlib figure (Agg backend, PNG). The computation graph as DOT text is `draw_graph`'s.

matplotlib is the optional `viz` extra; without it drawing raises a `RaspError` saying what to install.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rasp.errors import ErrorKind, RaspError
from rasp.tools.draw_graph import SPECIAL_DIMS, computation_dot, write_dot

_ANNOTATE_MAX_POSITIONS = (
    16  # write numbers into numerical residual cells up to this many positions
)


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


def trace_model(model: Any, tokens: Sequence[Any]) -> Trace:
    """Run a `transformer.CompiledTransformer` on `tokens` and collect patterns and residuals."""
    from rasp.tools.residuals import residual_at

    meta = model.meta.raw
    ids, _ = model.encode([list(tokens)])
    logits, cache = model.run_with_cache(ids)
    n = len(tokens) + 1  # BOS + tokens

    def grab(name: str) -> np.ndarray:
        return residual_at(cache, name).detach().float().cpu().numpy()[0]

    residuals = [("embedding", grab("blocks.0.hook_resid_pre")[:n])]
    heads: list[HeadPattern] = []
    for layer, ops in enumerate(meta["layers"]):
        if ops.get("attn"):
            pattern = grab(f"blocks.{layer}.attn.hook_pattern")  # [head, q, k]
            for op in ops["attn"]:
                h = int(op.get("head", 0))
                heads.append(
                    HeadPattern(
                        layer, h, str(op.get("name")), str(op.get("op")), pattern[h, :n, :n]
                    )
                )
        residuals.append((f"after layer {layer}", grab(f"blocks.{layer}.hook_resid_post")[:n]))
    from rasp.tracr.boxes import model_values

    # a tracr program's tuples, as `rasp run --model` shows them
    output = model_values(model.decode(logits, [len(tokens)])[0], model.meta.output.tuples)
    return Trace(
        positions=("BOS", *(_token_text(t) for t in tokens)),
        labels=tuple(str(label) for label in meta["residual"]),
        residuals=tuple(residuals),
        heads=tuple(heads),
        output_name=str(meta["output"]["name"]),
        output=tuple(output),
    )


def _token_text(token: Any) -> str:
    if isinstance(token, (tuple, list)):  # a tracr program's tuple or list: its repr
        return repr(token)
    return token if isinstance(token, str) else json.dumps(token)


def _require_matplotlib() -> Any:
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


def draw_trace(trace: Trace, path: str | Path) -> None:
    """Attention patterns (top row) and residual streams (bottom row) as one picture, in the format
    `path`'s suffix names (PNG without one: written at `path` itself, no suffix added)."""
    plt = _require_matplotlib()
    with plt.rc_context(_PLAIN_TEXT):  # tick labels may be made as the figure is saved
        fig = trace_figure(trace)
        fig.savefig(str(path), dpi=110, format=picture_format(path))
    plt.close(fig)


def picture_format(path: str | Path) -> str:
    """The image format of `path`: its suffix, lower case ("png" without one)."""
    return Path(path).suffix[1:].lower() or "png"


def picture_format_problem(path: str | Path) -> str | None:
    """Why matplotlib cannot write a picture at `path` (its suffix names no format it writes), or
    None; None too without matplotlib (drawing then says it is missing)."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ModuleNotFoundError:
        return None
    supported = FigureCanvasBase.get_supported_filetypes()
    wanted = picture_format(path)
    if wanted in supported:
        return None
    return f"{path}: matplotlib writes no '{wanted}' pictures (it writes {', '.join(sorted(supported))})"


_CHAR_W = 0.075  # inches per character of 8-point text (monospace; proportional text is narrower)
_TITLE_H = 0.45  # inches for the figure's title row
# Every text is the program's or the file's own (tokens, names, operations): matplotlib would
# read the part between two `$` as TeX, drawing `$x b$` as italic `xb` or failing on `"$\\alpha"`.
_PLAIN_TEXT = {"text.parse_math": False}


def trace_figure(trace: Trace) -> Any:
    """The matplotlib figure `draw_trace` saves. Its title has a row of its own and every head is
    wide enough for its wrapped title, so no two titles overlap and no label leaves the figure."""
    plt = _require_matplotlib()
    with plt.rc_context(_PLAIN_TEXT):
        return _figure(plt, trace)


def _figure(plt: Any, trace: Trace) -> Any:
    n_pos, d_model = len(trace.positions), len(trace.labels)
    label_width = max((len(label) for label in trace.labels), default=4) * _CHAR_W + 0.6
    panel_w = max(1.6, 0.32 * n_pos + 0.4)
    head_w = max(panel_w + 0.9, 2.6)  # pattern, its query labels and a title of ~30 characters
    resid_h = max(2.5, 0.17 * d_model + 1.2)
    head_h = max(2.4, 0.32 * n_pos + 1.3) + 0.4 if trace.heads else 0.0
    n_resid = len(trace.residuals)
    width = max(label_width + n_resid * panel_w + 1.2, len(trace.heads) * head_w + 1.2, 6.0)
    fig = plt.figure(figsize=(width, _TITLE_H + head_h + resid_h + 0.5), layout="constrained")
    fig.get_layout_engine().set(w_pad=0.1, h_pad=0.1)
    output = ", ".join(
        _token_text(v) if not isinstance(v, float) else f"{v:.3g}" for v in trace.output
    )
    title = f"{trace.output_name}({' '.join(trace.positions[1:])}) = [{output}]"
    heights = [_TITLE_H, head_h, resid_h] if trace.heads else [_TITLE_H, resid_h]
    parts = fig.subfigures(len(heights), 1, height_ratios=heights)
    parts[0].text(
        0.5, 0.5, _shorten(title, int(width / _CHAR_W * 0.8)), ha="center", va="center", fontsize=11
    )
    if trace.heads:
        _draw_heads(parts[1], trace, max(16, int(head_w / 0.065)))
    _draw_residuals(parts[-1], trace)
    return fig


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 4, 1)] + " ..."


def _draw_heads(fig: Any, trace: Trace, wrap: int) -> None:
    axes = fig.subplots(1, len(trace.heads), squeeze=False)[0]
    ticks = range(len(trace.positions))
    for ax, head in zip(axes, trace.heads):
        image = ax.imshow(head.pattern, cmap="Blues", vmin=0.0, vmax=1.0)
        ax.set_xticks(ticks, trace.positions, fontsize=8, family="monospace", rotation=90)
        ax.set_yticks(ticks, trace.positions, fontsize=8, family="monospace")
        ax.set_xlabel("key", fontsize=8)
        ax.set_ylabel("query", fontsize=8)
        name = _shorten(f"layer {head.layer} head {head.head}: {head.name}", wrap)
        op = "\n".join(textwrap.wrap(head.op, wrap, max_lines=2, placeholder=" ..."))
        ax.set_title(f"{name}\n{op}", fontsize=8)
    fig.colorbar(image, ax=list(axes), shrink=0.8, label="attention")


def _draw_residuals(fig: Any, trace: Trace) -> None:
    axes = fig.subplots(1, len(trace.residuals), sharey=True, squeeze=False)[0]
    numerical = [":" not in label and label not in SPECIAL_DIMS for label in trace.labels]
    annotate = len(trace.positions) <= _ANNOTATE_MAX_POSITIONS
    for index, (ax, (title, resid)) in enumerate(zip(axes, trace.residuals)):
        values = resid.T  # [d_model, pos]
        image = ax.imshow(
            np.clip(values, -1.0, 1.0),
            cmap="RdBu_r",
            vmin=-1.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_xticks(
            range(len(trace.positions)),
            trace.positions,
            fontsize=8,
            family="monospace",
            rotation=90,
        )
        ax.set_title(title, fontsize=9)
        if index == 0:
            ax.set_yticks(range(len(trace.labels)), trace.labels, fontsize=7, family="monospace")
        ax.tick_params(axis="y", length=0)
        if annotate:
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
    fig.colorbar(image, ax=list(axes), shrink=0.6, label="value (colour clipped to ±1)")


# ------------------------------------------------------------------------------------------------
# Entry points


def draw_model_file(
    model_path: str | Path,
    tokens: Sequence[Any],
    png: str | Path,
    dot: str | Path | None = None,
    device: str = "cpu",
) -> list[str]:
    """Draw a compiled model on one input; returns one line per file written."""
    from safetensors.numpy import load_file

    import transformer
    from rasp.tools.model_file import ModelInputRefused, read_model_file

    checked = read_model_file(model_path)
    try:
        model = transformer.load(str(model_path), device)
        trace = trace_model(model, tokens)
    except transformer.ModelFormatError as err:
        raise RaspError(str(err), kind=ErrorKind.IO) from None
    except transformer.ModelInputError as err:
        vocab = tuple(checked.meta["vocab"]["tokens"])
        raise ModelInputRefused(model_path, str(err), vocab) from None
    weights = load_file(str(model_path)) if dot is not None else None
    return write_pictures(trace, png, checked.meta, weights, dot)


def write_pictures(
    trace: Trace,
    png: str | Path,
    meta: Mapping[str, Any],
    weights: Mapping[str, np.ndarray] | None = None,
    dot: str | Path | None = None,
) -> list[str]:
    """Draw `trace` into `png` (and the computation graph of `meta`/`weights` into `dot`, if given);
    one line per file written."""
    draw_trace(trace, png)
    heads, snapshots = len(trace.heads), len(trace.residuals)
    written = [
        f"wrote {png} ({heads} attention head{'s' * (heads != 1)}, "
        f"{snapshots} residual snapshot{'s' * (snapshots != 1)})"
    ]
    if dot is not None and weights is not None:
        rendered = write_dot(computation_dot(meta, weights), dot)
        written.append(
            f"wrote {dot}"
            + (f" and {rendered}" if rendered else " (install graphviz to render it)")
        )
    return written


def draw_for_repl(
    sop: Any, tokens: Sequence[Any], path: str | Path, dot: str | Path | None = None
) -> str:
    """The REPL's `draw(sop, input)`: compile for exactly this input's tokens and length, then draw."""
    import compiler
    from rasp.sops import SOp
    from rasp.tools.arguments import distinct_tokens

    if not isinstance(sop, SOp):
        raise RaspError(
            "draw needs an s-op, not a selector",
            getattr(sop, "span", None),
            hint="draw an aggregate or selector_width of the selector",
            kind=ErrorKind.TYPE,
        )
    with tempfile.TemporaryDirectory() as tmp:
        model_path = Path(tmp) / "draw.safetensors"
        vocab = distinct_tokens(tokens)  # the input's own tokens (1 and true apart), first first
        compiler.compile_sop(sop, vocab, len(tokens), name=getattr(sop, "name", None)).save(
            model_path
        )
        # only now: a selector, a refusal or a missing package leaves no empty folder behind
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return "\n".join(draw_model_file(model_path, tokens, path, dot))


def repl_draw_hook(node: Any, tokens: Sequence[Any], directory: str | Path = "comp_flows") -> str:
    """`ReplSession(draw_hook=...)`: like the original, files go to `comp_flows/NAME_INPUT.png|.dot`."""
    stem = flow_stem(getattr(node, "name", None), tokens)
    folder = Path(directory)
    return draw_for_repl(node, tokens, folder / f"{stem}.png", folder / f"{stem}.dot")


_SHELL_SAFE = re.compile(r"[^A-Za-z0-9_+=.,-]")


def flow_stem(name: str | None, tokens: Sequence[Any]) -> str:
    """`NAME_INPUT` (the original's `comp_flows/` pictures, `NAME(INPUT)`, in characters a shell
    needs no quotes for): `reverse_abca`. Other characters become `_`, and then a short hash of
    the exact input keeps two inputs apart (`dyck1____-3b1c9e` for `(())`)."""
    single = all(isinstance(t, str) and len(t) == 1 for t in tokens)
    text = ("" if single else "-").join(_token_text(t) for t in tokens)
    stem = f"{_SHELL_SAFE.sub('_', name or 'out')}_{_SHELL_SAFE.sub('_', text)}"
    if _SHELL_SAFE.search(text) or len(stem) > 100:
        digest = hashlib.sha256(json.dumps(list(tokens)).encode()).hexdigest()[:6]
        stem = f"{stem[:93]}-{digest}"
    return stem
