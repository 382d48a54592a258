"""The program's computation graph by layer, as DOT text read off a compiled model's weights.

A head or MLP reads the variables whose residual dimensions its input weights touch and writes the
variables its output weights touch (`rasp draw --dot`, the REPL's `draw(...)`); `write_dot` writes
the text and renders it with graphviz's `dot` when that is installed.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rasp.errors import ErrorKind, RaspError

SPECIAL_DIMS = ("one", "bos", "pad")  # residual dimensions that are no program variable


def computation_dot(meta: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> str:
    """Operations as nodes, one `rank=same` row per sublayer, edges read off the weights.

    A residual variable belongs to the operation whose output weights write it (a head's `W_O`
    columns, an MLP's `W_out` columns), so helper dimensions such as `length.frac` lead back to the
    operation that computes them; variables nobody writes are the embedding's inputs.
    """
    dim_var = [str(label).partition(":")[0] for label in meta["residual"]]
    writer = _writers(meta, weights, dim_var)  # variable -> id of the operation that writes it
    inputs = [v for v in dict.fromkeys(dim_var) if v not in SPECIAL_DIMS and v not in writer]
    output = writer.get(
        str(meta["output"]["name"]), str(meta["output"]["name"])
    )  # the output's node
    lines = [
        "digraph computation {",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
        "  edge [fontsize=8];",
    ]
    # a map of the position alone is written by the positional embedding: shown with its operation
    embedded = {str(op.get("name")): str(op.get("op")) for op in (meta.get("embedding") or [])}
    rows: list[tuple[str, list[str]]] = [
        (
            "embedding",
            [
                _node(
                    v,
                    _escape(v)
                    if embedded.get(v, v) == v
                    else f"{_escape(v)}\\n{_escape(embedded[v])}",
                    "input",
                    v == output,
                )
                for v in inputs
            ],
        )
    ]
    edges: list[str] = []

    def connect(sources: list[str], target: str, role: str = "") -> None:
        label = f' [label="{role}"]' if role else ""
        for source in dict.fromkeys(writer.get(v, v) for v in sources):
            if source != target:
                edges.append(f'  "{_escape(source)}" -> "{_escape(target)}"{label};')

    for layer, ops in enumerate(meta["layers"]):
        attn_nodes, mlp_nodes = [], []
        for op in ops.get("attn", []):
            head = int(op.get("head", 0))
            node = f"L{layer}:H{head}"
            attn_nodes.append(
                _node(
                    node,
                    _title(op, f"L{layer} H{head}"),
                    "head",
                    node == output,
                )
            )
            for role in "QKV":
                matrix = weights[f"blocks.{layer}.attn.W_{role}"][head]  # [d_model, d_head]
                connect(_read_vars(matrix, dim_var), node, role.lower())
        w_in, w_out = weights[f"blocks.{layer}.mlp.W_in"], weights[f"blocks.{layer}.mlp.W_out"]
        for index, op in enumerate(ops.get("mlp", [])):
            node = f"L{layer}:MLP{index}"
            mlp_nodes.append(
                _node(
                    node,
                    _title(op, f"L{layer} MLP"),
                    "mlp",
                    node == output,
                )
            )
            out_dims = [d for d, v in enumerate(dim_var) if writer.get(v) == node]
            units = np.flatnonzero(np.abs(w_out[:, out_dims]).max(axis=1) > 0) if out_dims else []
            if len(units):  # the hidden units that write this operation's variables
                connect(_read_vars(w_in[:, units], dim_var), node)
        rows.append((f"layer {layer} attn", attn_nodes))
        rows.append((f"layer {layer} mlp", mlp_nodes))
    rows = [row for row in rows if row[1]]
    for index, (title, nodes) in enumerate(rows):
        lines.append(
            f'  subgraph row{index} {{ rank=same; "row:{title}" [shape=plaintext, label="{title}"];'
        )
        lines.extend("    " + node for node in nodes)
        lines.append("  }")
    for upper, lower in itertools.pairwise(rows):
        lines.append(f'  "row:{upper[0]}" -> "row:{lower[0]}" [style=invis];')
    lines.extend(dict.fromkeys(edges))  # unique, in order
    lines.append("}")
    return "\n".join(lines) + "\n"


def _writers(
    meta: Mapping[str, Any], weights: Mapping[str, np.ndarray], dim_var: list[str]
) -> dict[str, str]:
    """Which operation (`L0:H1`, `L2:MLP0`) writes each residual variable; later writers win."""
    writer: dict[str, str] = {}
    for layer, ops in enumerate(meta["layers"]):
        for op in ops.get("attn", []):
            head = int(op.get("head", 0))
            w_o = weights[f"blocks.{layer}.attn.W_O"][head]  # [d_head, d_model]
            for v in _read_vars(w_o.T, dim_var):
                writer[v] = f"L{layer}:H{head}"
        # One MLP may compute several variables: a dimension belongs to the operation it is named after.
        names = [[n.strip() for n in str(op.get("name")).split(",")] for op in ops.get("mlp", [])]
        for v in _read_vars(weights[f"blocks.{layer}.mlp.W_out"].T, dim_var) if names else []:
            base = v.split(".")[0]
            owner = next((i for i, ns in enumerate(names) if v in ns or base in ns), None)
            if owner is None and len(names) == 1:
                owner = 0
            if owner is not None:
                writer[v] = f"L{layer}:MLP{owner}"
    return writer


def _node(name: str, label: str, kind: str, is_output: bool) -> str:
    shape = {"input": "ellipse", "head": "box", "mlp": "box"}[kind]
    style = {
        "input": "",
        "head": ', style="rounded,filled", fillcolor="#dbe9f6"',
        "mlp": ', style=filled, fillcolor="#fde7c8"',
    }[kind]
    extra = ", peripheries=2" if is_output else ""
    return f'"{_escape(name)}" [label="{label}", shape={shape}{style}{extra}];'


def _title(op: dict[str, Any], where: str) -> str:
    """A block's node label: its name, then where it is and its operation (`L0 H1: aggregate(...)`),
    the operation left out where it is the name itself (`length\\nL0 H0: length` said it twice)."""
    name, text = _escape(op.get("name")), _escape(op.get("op"))
    return f"{name}\\n{where}" if op.get("op") == op.get("name") else f"{name}\\n{where}: {text}"


def _escape(text: Any) -> str:
    """`text` inside a DOT double-quoted string (ids too: a tracr label may hold `"` or `\\`)."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def _read_vars(matrix: np.ndarray, dim_var: list[str]) -> list[str]:
    """Variables whose dims have a non-zero row in `matrix` [d_model, ...] (special dims left out)."""
    rows = np.flatnonzero(np.abs(matrix).reshape(matrix.shape[0], -1).max(axis=1) > 0)
    return [v for v in dict.fromkeys(dim_var[d] for d in rows) if v not in SPECIAL_DIMS]


def rendered_path(path: str | Path) -> Path:
    """Where `write_dot` renders the DOT file `path`: `graph.dot` -> `graph.dot.png` (graphviz's
    own `-O` naming), never the `graph.png` a picture drawn beside it may be called."""
    path = Path(path)
    return path.with_name(path.name + ".png")


def write_dot(dot: str, path: str | Path) -> Path | None:
    """Write DOT text; also render `<path>.png` when graphviz's `dot` is on PATH (returns that path)."""
    path = Path(path)
    path.write_text(dot)
    binary = shutil.which("dot")
    if binary is None:
        return None
    png = rendered_path(path)
    result = subprocess.run(
        [binary, "-Tpng", str(path), "-o", str(png)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RaspError(f"dot could not render {path}: {result.stderr.strip()}", kind=ErrorKind.IO)
    return png
