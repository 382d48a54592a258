"""Pictures of a compiled model at work (`rasp draw`, the REPL's `draw(...)`).

For one input, `trace_model` runs the model with its activation cache and keeps what a person wants to
see: every used head's attention pattern (rows = queries, columns = keys, BOS first) and the residual
stream after the embedding and after every layer, labelled `name:value`. `draw_trace` renders both as
one matplotlib figure (Agg backend, PNG; laid out by `draw_figure`). The computation graph as DOT
text is `draw_graph`'s.

matplotlib is the optional `viz` extra; without it drawing raises a `RaspError` saying what to install.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rasp.errors import ErrorKind, RaspError
from rasp.tools.draw_figure import (
    PLAIN_TEXT,
    HeadPattern,
    Trace,
    require_matplotlib,
    token_text,
    trace_figure,
)
from rasp.tools.draw_graph import computation_dot, write_dot

__all__ = ["HeadPattern", "Trace", "draw_trace", "trace_figure", "trace_model", "write_pictures"]


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
        positions=("BOS", *(token_text(t) for t in tokens)),
        labels=tuple(str(label) for label in meta["residual"]),
        residuals=tuple(residuals),
        heads=tuple(heads),
        output_name=str(meta["output"]["name"]),
        output=tuple(output),
    )


def draw_trace(trace: Trace, path: str | Path, picture: str | None = None) -> None:
    """Attention patterns (above) and residual streams (below) as one picture, in the format
    `picture` or else the one `path`'s suffix names (PNG without one: written at `path` itself,
    no suffix added)."""
    plt = require_matplotlib()
    with plt.rc_context(PLAIN_TEXT):  # tick labels may be made as the figure is saved
        fig = trace_figure(trace)
        fig.savefig(str(path), dpi=110, format=picture or picture_format(path))
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
    from transformer.digests import EditedWeightsWarning

    checked = read_model_file(model_path)
    try:
        with warnings.catch_warnings():  # a picture claims no certificate: nothing to warn of
            warnings.simplefilter("ignore", EditedWeightsWarning)
            model = transformer.load(str(model_path), device)
        trace = trace_model(model, tokens)
    except transformer.ModelFormatError as err:
        raise RaspError(str(err), kind=ErrorKind.IO) from None
    except transformer.ModelInputError as err:
        vocab = tuple(checked.meta["vocab"]["tokens"])
        raise ModelInputRefused.of(model_path, err, vocab) from None
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
    from rasp.tools.output_files import staged, writing

    # a full disk: `cannot write PNG: ...`, not a bare errno; staged: never half a picture
    with writing(png), staged(png) as partial:
        draw_trace(trace, partial, picture_format(png))
    heads, snapshots = len(trace.heads), len(trace.residuals)
    written = [
        f"wrote {png} ({heads} attention head{'s' * (heads != 1)}, "
        f"{snapshots} residual snapshot{'s' * (snapshots != 1)})"
    ]
    if dot is not None and weights is not None:
        with writing(dot):
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
    text = ("" if single else "-").join(token_text(t) for t in tokens)
    stem = f"{_SHELL_SAFE.sub('_', name or 'out')}_{_SHELL_SAFE.sub('_', text)}"
    if _SHELL_SAFE.search(text) or len(stem) > 100:
        digest = hashlib.sha256(json.dumps(list(tokens)).encode()).hexdigest()[:6]
        stem = f"{stem[:93]}-{digest}"
    return stem
