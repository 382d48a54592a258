"""Summarising a compiled-model file (`rasp show`): `summarize` turns a file checked by
`rasp.tools.model_file.read_model_file` into a `ModelSummary`; `format_summary` and
`summary_json` render it.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rasp import residual_labels
from rasp.seqvalues import SeqType
from rasp.text_width import display_width, ljust, printable, printable_with
from rasp.tools.certificate_text import table_lines
from rasp.tools.model_file import ModelFile
from rasp.tools.residual_traffic import Traffic, TrafficCounter
from transformer.digests import edited_text

# ------------------------------------------------------------------------------------------------
# Summary


SHOWN_VALUES = 12  # a residual group's line lists at most this many values (or runs of them)
WRITERS_COLUMN = 40  # the writers of a group line up after descriptions up to this wide


@dataclass(frozen=True)
class ResidualGroup:
    """Consecutive residual dimensions of one variable: `values` for a categorical one, else None."""

    name: str
    start: int
    stop: int
    values: tuple[str, ...] | None
    # the variable's strings are written as JSON (`tokens:"1"` beside `tokens:1`: docs/format.md)
    quoted: bool = False

    def describe(self) -> str:
        if self.values is None:
            return self.name
        parts = _compress_values(self.values, self.quoted)
        if len(parts) <= SHOWN_VALUES:
            return f"{self.name}: {' '.join(parts)}"
        # A one-hot of a mean can hold thousands of values: a line of them hides the layout.
        head, tail = parts[: SHOWN_VALUES - 4], parts[-3:]
        return (
            f"{self.name}: {' '.join(head)} ... {' '.join(tail)} "
            f"({len(self.values):,} values; --json lists them all)"
        )


@dataclass(frozen=True)
class Operation:
    layer: int | None  # None: the positional embedding writes it (before layer 0)
    sublayer: str  # "head 0", "mlp", "pos_embed"
    name: str
    op: str


@dataclass(frozen=True)
class ModelSummary:
    path: str
    meta: dict[str, Any]
    total_params: int
    nonzero_params: int
    operations: tuple[Operation, ...]
    residual: tuple[ResidualGroup, ...]
    # the tensors and runtime fields that differ from the file's digests (None: it records none)
    edited: tuple[str, ...] | None = None
    edited_fields: tuple[str, ...] | None = None
    # per residual group, the sublayers that write and read it (read off the weights)
    traffic: tuple[Traffic, ...] = ()


def split_label(label: str) -> tuple[str, str | None]:
    """`"tokens:a"` -> ("tokens", "a"); `"frac"` -> ("frac", None). Names never contain ':'."""
    name, sep, value = label.partition(":")
    return (name, value) if sep else (name, None)


def group_residual(labels: list[str]) -> tuple[ResidualGroup, ...]:
    split = [split_label(label) for label in labels]
    texts: dict[str, list[str]] = {}
    for name, value in split:
        if value is not None:
            texts.setdefault(name, []).append(value)
    quoted = {name: residual_labels.quoted(values) for name, values in texts.items()}
    groups: list[ResidualGroup] = []
    for dim, (name, value) in enumerate(split):
        last = groups[-1] if groups else None
        if last is not None and last.name == name and value is not None and last.values is not None:
            groups[-1] = replace(last, stop=dim + 1, values=(*last.values, value))
        else:
            values = None if value is None else (value,)
            groups.append(ResidualGroup(name, dim, dim + 1, values, quoted.get(name, False)))
    return tuple(groups)


def layer_operations(meta: dict[str, Any]) -> tuple[Operation, ...]:
    """One row per head and MLP, after one per s-op the positional embedding writes; a masked
    head's block says which keys it sees (`head 0 (keys <= query)`: key positions at or before the
    query's)."""
    ops = [
        Operation(None, "pos_embed", str(op.get("name")), str(op.get("op")))
        for op in (meta.get("embedding") or [])
    ]
    shapes = meta.get("config", {}).get("layers") or []
    for index, layer in enumerate(meta.get("layers", [])):
        masks = shapes[index].get("masks") or [] if index < len(shapes) else []
        for head in layer.get("attn", []):
            h = head.get("head", 0)
            mask = masks[h] if isinstance(h, int) and h < len(masks) else ""
            block = f"head {h}" + (f" (keys {mask} query)" if mask else "")
            ops.append(Operation(index, block, str(head.get("name")), str(head.get("op"))))
        for mlp in layer.get("mlp", []):
            ops.append(Operation(index, "mlp", str(mlp.get("name")), str(mlp.get("op"))))
    return tuple(ops)


def printable_file(model: ModelFile) -> ModelFile:
    """`model` with every control or format character in its metadata's strings written as its
    escape (`\\x1b`, `\\n`, `\\u202e`), for a terminal: a crafted file's names cannot move the
    cursor, recolour the terminal, reorder text or fake lines of `rasp show`'s table.

    Tokens and residual values are left as they are: the table quotes them (`_quoted`), and a
    backslash this escape added would be quoted as one of the token's own. So are the output's
    values, which the table does not print."""
    meta = _printable(model.meta)
    vocab, raw_vocab = meta.get("vocab"), model.meta.get("vocab")
    if isinstance(vocab, dict) and isinstance(raw_vocab, dict) and "tokens" in raw_vocab:
        vocab["tokens"] = raw_vocab["tokens"]
    output, raw_output = meta.get("output"), model.meta.get("output")
    if isinstance(output, dict) and isinstance(raw_output, dict) and "values" in raw_output:
        # not printed; `output_type_text` reads tracr's tuples from them
        output["values"] = raw_output["values"]
    if isinstance(model.meta.get("residual"), list):
        meta["residual"] = [_printable_name(str(label)) for label in model.meta["residual"]]
    return replace(model, meta=meta)


def _printable_name(label: str) -> str:
    """A residual label with its name escaped and its value as it is (`_label_value_text`)."""
    name, value = split_label(label)
    return printable(name) + ("" if value is None else f":{value}")


def _quoted(value: str) -> str:
    """A string in double quotes as JSON writes it, with the characters JSON leaves raw that a
    terminal acts on (DEL, C1 controls, bidi overrides, line separators) as its `\\u` escapes; a
    zero-width joiner inside an emoji sequence stays (`"👨‍👩‍👧"`: `printable_with`)."""
    return printable_with(json.dumps(value, ensure_ascii=False), lambda c: json.dumps(c)[1:-1])


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_printable(v) for v in value]
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    return value


def summarize(model: ModelFile) -> ModelSummary:
    total = nonzero = 0
    counter = TrafficCounter(int(model.meta["config"]["d_model"]))
    for name, tensor in model.tensors():
        total += tensor.size
        nonzero += int(np.count_nonzero(tensor))
        counter.add(name, tensor)
    residual = group_residual([str(label) for label in model.meta["residual"]])
    return ModelSummary(
        path=str(model.path),
        meta=model.meta,
        total_params=total,
        nonzero_params=nonzero,
        operations=layer_operations(model.meta),
        residual=residual,
        edited=model.edited,
        edited_fields=model.edited_fields,
        traffic=tuple(counter.traffic(g.start, g.stop) for g in residual),
    )


def _grid_text(output: dict[str, Any]) -> str:
    """How a grid output decodes (format versions 4 to 6, 10), for the summary's output line."""
    for key, d, at in (
        ("denominators", "d_i", "position i"),
        ("length_denominators", "d_n", "length n"),
        ("end_denominators", "d_j", "j = n - 1 - i from the end"),
        ("pair_denominators", "d_(i,n)", "position i of length n"),
    ):
        denominators = output.get(key)
        if isinstance(denominators, list) and denominators:
            ints = output.get("int_positions")
            flagged = (
                f", ints at position{'s' if len(ints) > 1 else ''} {_positions_text(ints)}"
                if isinstance(ints, list) and ints
                else ""
            )
            return f", decoded as k / {d} at {at}, {d} up to {max(denominators)}{flagged}"
    return ""


def output_type_text(output: dict[str, Any]) -> str:
    """The output's type as `rasp run --model` labels its values: where the file says its marked
    strings are tracr's tuples (`output.tuples`), "tuples" or "lists" when every value is one."""
    values = output.get("values")
    if isinstance(values, list) and values and all(v is None for v in values):
        # (a tracr output that is always None: the file's type says strings, no type has None)
        return SeqType.NONE.value
    if output.get("tuples") is not True or not isinstance(values, list):
        return str(output.get("type"))
    from rasp.display import values_label
    from rasp.tracr.boxes import model_values

    return values_label(model_values(values, True), str(output.get("type")))


def _types_text(output: dict[str, Any]) -> str:
    """The cells `output.whole_types` (format version 7, or 8 on a categorical output) flags,
    for the summary's output line."""
    rows = output.get("whole_types")
    if not isinstance(rows, list):
        return ""
    text = "".join(row for row in rows if isinstance(row, str))
    return (
        f"; whole numbers typed per length and position ({text.count('i'):,} ints, "
        f"{text.count('f'):,} floats, {text.count('.'):,} either)"
    )


def _positions_text(positions: list[Any]) -> str:
    """`0`, `0, 3` or `0, 3, ... (12 positions)`."""
    shown = ", ".join(str(i) for i in positions[:3])
    return shown if len(positions) <= 3 else f"{shown}, ... ({len(positions)} positions)"


def format_summary(summary: ModelSummary) -> str:
    """The plain-text table `rasp show` prints."""
    meta, cfg = summary.meta, summary.meta["config"]
    program = meta.get("program") or {}
    output = meta["output"]
    vocab = meta["vocab"]
    heads_per_layer = [
        sum(1 for op in summary.operations if op.layer == layer and op.sublayer != "mlp")
        for layer in range(cfg["n_layers"])
    ]
    share = 100.0 * summary.nonzero_params / summary.total_params if summary.total_params else 0.0
    lines = [
        (
            f"model:       {summary.path} (format {meta['format_version']}, "
            f"compiler {meta.get('compiler_version', '?')})"
        ),
        f"program:     {program.get('file', '?')}",
        f"sha256:      {program.get('sha256', '?')}",
        f"output:      {output.get('name')} ({output.get('encoding')}, {output_type_text(output)})"
        + _grid_text(output)
        + (f", {output['none_at']!r} decoded as None" if "none_at" in output else "")
        + _types_text(output),
        (
            f"vocab:       {' '.join(_token_text(t) for t in vocab.get('tokens', []))}"
            f"  (bos id {vocab.get('bos_id')}, pad id {vocab.get('pad_id')})"
        ),
        f"max length:  {meta.get('max_len')}",
        f"shape:       {shape_text(cfg)}",
        f"heads used:  {' '.join(str(h) for h in heads_per_layer) or '-'} (per layer)",
        f"parameters:  {summary.total_params:,} total, {summary.nonzero_params:,} non-zero ({share:.1f}%)",
        "",
    ]
    lines += operations_table(summary.operations)
    note = output_read_note(meta, summary.operations)
    lines += [] if note is None else ["", note]  # after the blank line ending the table
    certificate = table_lines(meta.get("certificate"))
    if meta.get("certificate"):  # a claim anyone editing the file can rewrite: say who checks it
        certificate.insert(
            1,
            f"  as the file records it; `rasp verify --model {shlex.quote(str(summary.path))}` "
            "re-checks it from "
            "the weights",
        )
    edited, fields = summary.edited, summary.edited_fields
    if meta.get("certificate") and (edited or fields):  # proved for another file
        certificate[:1] = [
            "certificate: NOT for this file: "
            + edited_text(summary.path, edited, fields).removeprefix(f"{summary.path}: "),
            "  the file records: " + certificate[0].removeprefix("certificate: "),
        ]
    lines += [""] + certificate
    lines += ["", f"residual stream ({cfg['d_model']} dims, and the sublayers that write them):"]
    described = [group.describe() for group in summary.residual]
    width = min(max(map(display_width, described), default=0), WRITERS_COLUMN)
    for k, group in enumerate(summary.residual):
        writers = ", ".join(summary.traffic[k].written_by) if summary.traffic else ""
        lines.append(f"  {group.start:>4}  {ljust(described[k], width)}  {writers}")
    repeated = _repeated_label(summary.residual)
    if repeated is not None:
        lines.append(
            f"note: the label {repeated!r} names more than one dimension (a file written before "
            "labels were made unique, docs/format.md): compile the program again to tell them apart"
        )
    return "\n".join(line.rstrip() for line in lines)


def _repeated_label(groups: tuple[ResidualGroup, ...]) -> str | None:
    """The first residual label two dimensions share (`tokens:1` for 1 and "1"), if any."""
    seen: set[str] = set()
    for group in groups:
        for value in group.values or (None,):
            label = group.name if value is None else f"{group.name}:{value}"
            if label in seen:
                return label
            seen.add(label)
    return None


def shape_text(cfg: dict[str, Any]) -> str:
    """`2 layers, d_model 31, n_ctx 11, bidirectional; heads 1x4 1x16, d_mlp 16 0`: the `shape:`
    line of `rasp show` (per layer: heads x d_head, then each MLP's hidden width)."""
    layers = layer_shapes(cfg)
    heads = " ".join(f"{n}x{d}" for n, d, _ in layers)
    mlps = " ".join(str(m) for _, _, m in layers)
    return (
        f"{_count(cfg['n_layers'], 'layer')}, d_model {cfg['d_model']}, n_ctx {cfg['n_ctx']}, "
        f"{cfg.get('attention_dir', 'bidirectional')}; heads {heads or '-'}, d_mlp {mlps or '-'}"
    )


def layer_shapes(cfg: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(n_heads, d_head, d_mlp) of every layer: its own (format version 2) or the config's."""
    own = cfg.get("layers")
    if own:
        return [(layer["n_heads"], layer["d_head"], layer["d_mlp"]) for layer in own]
    return [(cfg["n_heads"], cfg["d_head"], cfg["d_mlp"])] * cfg["n_layers"]


def heads_text(cfg: dict[str, Any]) -> str:
    """`2 layers, 3 heads` (`1 layer, 1 head`): how many blocks and attention heads a model has."""
    return f"{_count(cfg['n_layers'], 'layer')}, {_count(sum(n for n, _, _ in layer_shapes(cfg)), 'head')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def output_read_note(meta: dict[str, Any], operations: tuple[Operation, ...]) -> str | None:
    """A line for an output no row computes (`depth = opens - closes`, a free view of two counts),
    which the table left a reader to look for in vain."""
    name = str((meta.get("output") or {}).get("name"))
    if not operations or any(op.name == name for op in operations):
        return None
    return (
        f"no row computes the output {name!r}: the unembedding reads it off the residual stream "
        "directly (a free view, docs/compiler.md)"
    )


def operations_table(operations: tuple[Operation, ...]) -> list[str]:
    """The `layer  block  name  operation` table of `rasp show`, one line per head and MLP."""
    rows = [("layer", "block", "name", "operation")]
    rows += [
        ("-" if op.layer is None else str(op.layer), op.sublayer, op.name, op.op)
        for op in operations
    ]
    # by terminal columns: a Python program's names may be CJK (`.named("長さ")`)
    widths = [max(display_width(row[i]) for row in rows) for i in range(3)]
    return [
        "  ".join(ljust(cell, width) for cell, width in zip(row[:3], widths)) + "  " + row[3]
        for row in rows
    ]


def summary_json(summary: ModelSummary) -> dict[str, Any]:
    """The `rasp show --json` object."""
    meta = summary.meta
    recorded = meta.get("program")
    # the source is in the file; the summary names and hashes it. null: the file records none
    # (as for `certificate`), never an empty object
    program = None if recorded is None else {k: v for k, v in recorded.items() if k != "source"}
    return {
        "file": summary.path,
        "format_version": meta["format_version"],
        "compiler_version": meta.get("compiler_version"),
        "config": meta["config"],
        "max_len": meta.get("max_len"),
        "vocab": meta["vocab"],
        "output": meta["output"],
        "program": program,
        "parameters": {"total": summary.total_params, "nonzero": summary.nonzero_params},
        "embedding": (meta.get("embedding") or []),
        "layers": meta["layers"],
        "certificate": meta.get("certificate"),
        # tensors and runtime fields that differ from the digests the compiler recorded: the
        # certificate is not theirs (null: the file records no digests)
        "edited_tensors": None if summary.edited is None else list(summary.edited),
        "edited_fields": None if summary.edited_fields is None else list(summary.edited_fields),
        "residual": [
            {
                "name": g.name,
                "dims": [g.start, g.stop],
                "encoding": "numerical" if g.values is None else "categorical",
                "values": None if g.values is None else list(g.values),
                # its strings are JSON among the texts (`"1"` beside the int's `1`): a reader
                # decodes each text starting with `"` (rasp.residual_labels)
                "quoted": g.quoted,
                # the values themselves, typed (`residual_values`: 1 beside "1"); null where
                # the file records none (compilers before 2026-12-06) or the group is a number
                "typed_values": _typed_values(meta, g),
                # the blocks whose weights write and read its dims (rasp.tools.residual_traffic)
                "written_by": list(t.written_by) if t else None,
                "read_by": list(t.read_by) if t else None,
            }
            for g, t in zip(
                summary.residual, summary.traffic or [None] * len(summary.residual), strict=True
            )
        ],
    }


def _token_text(token: Any) -> str:
    from rasp.tools.arguments import token_text

    if isinstance(token, str) and printable(token) != token:  # (`👨‍👩‍👧` bare, as `日` is)
        return _quoted(token)
    return token_text(token)


_INT = re.compile(r"-?[0-9]+")


def _int_text(value: str) -> bool:
    """Whether `value` is an int as written (`7`, `-1`): not `07`, `+2` or other scripts' digits,
    which a run `5..7` would show as another token."""
    return _INT.fullmatch(value) is not None and str(int(value)) == value


def _label_value_text(value: str) -> str:
    """A residual label's value as the vocabulary line shows a token: bare, or in double quotes
    (JSON, as RASP writes a string) where it is empty or holds a space, a quote or a backslash,
    which bare would run into the next value."""
    if value and printable(value) == value and not any(c.isspace() or c in '"\\' for c in value):
        return value
    return _quoted(value)


def _typed_values(meta: dict[str, Any], group: ResidualGroup) -> list[Any] | None:
    """A one-hot group's values as the file types them (`residual_values`), else None (also
    where one is a value JSON cannot write)."""
    entries = (meta.get("residual_values") or [])[group.start : group.stop]
    if group.values is None or not entries or None in entries:
        return None
    return [entry[0] for entry in entries]


def _compress_values(values: tuple[str, ...], quoted: bool = False) -> list[str]:
    """`0 1 2 3` -> [`0..3`] (runs of consecutive integers); other values are listed, a quoted
    label's string always in quotes (`1 "1" 2 "x"`)."""
    parts: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if len(run) >= 3:
            parts.append(f"{run[0]}..{run[-1]}")
        else:
            parts.extend(str(v) for v in run)
        run.clear()

    for value in values:
        if _int_text(value) and (not run or int(value) == run[-1] + 1):
            run.append(int(value))
            continue
        flush()
        string = residual_labels.shown_text(value, quoted)
        if string is not None:
            parts.append(_quoted(string))  # bare, `True` would read as the bool's column
        elif _int_text(value):
            run.append(int(value))
        else:
            parts.append(_label_value_text(value))
    flush()
    return parts
