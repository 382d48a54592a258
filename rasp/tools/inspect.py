"""Reading and summarising a compiled-model file without torch (`rasp show`).

`read_model_file` checks a `.safetensors` file against `docs/format.md` (every tensor present with the
shape its config promises, a metadata entry this version understands) and refuses anything else with a
`ModelFileError` naming the file and the problem in one line. The other model commands call it before
handing the file to the torch runtime, so a bad file gives the same message everywhere.

`summarize` turns a checked file into a `ModelSummary`; `format_summary` and `summary_json` render it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rasp.tools.certificate_text import table_lines
from rasp.errors import ErrorKind, RaspError

FORMAT_NAME = "rasp-forge-model"
FORMAT_VERSION = 1
METADATA_KEY = "rasp_forge"
_CONFIG_INTS = ("n_layers", "d_model", "n_heads", "d_head", "d_mlp", "n_ctx", "d_vocab", "d_vocab_out")


class ModelFileError(RaspError):
    """A model file that is missing, unreadable or not the format of `docs/format.md`."""

    kind = ErrorKind.IO

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")  # one line, whatever the problem


@dataclass(frozen=True)
class ModelFile:
    """A checked model file: its parsed metadata and the shape of every tensor."""

    path: Path
    meta: dict[str, Any]
    shapes: dict[str, tuple[int, ...]]

    @property
    def config(self) -> dict[str, Any]:
        return self.meta["config"]

    def tensors(self) -> Iterator[tuple[str, np.ndarray]]:
        """Every tensor, loaded one at a time (float32 numpy arrays)."""
        from safetensors import safe_open

        with safe_open(str(self.path), "np") as handle:
            for name in sorted(self.shapes):
                yield name, handle.get_tensor(name)


def expected_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensors a file with this config must hold, and their shapes (docs/format.md)."""
    d_model, n_heads, d_head, d_mlp = config["d_model"], config["n_heads"], config["d_head"], config["d_mlp"]
    shapes: dict[str, tuple[int, ...]] = {
        "embed.W_E": (config["d_vocab"], d_model),
        "pos_embed.W_pos": (config["n_ctx"], d_model),
        "unembed.W_U": (d_model, config["d_vocab_out"]),
        "unembed.b_U": (config["d_vocab_out"],),
    }
    for layer in range(config["n_layers"]):
        attn, mlp = f"blocks.{layer}.attn", f"blocks.{layer}.mlp"
        for qkv in "QKV":
            shapes[f"{attn}.W_{qkv}"] = (n_heads, d_model, d_head)
            shapes[f"{attn}.b_{qkv}"] = (n_heads, d_head)
        shapes[f"{attn}.W_O"] = (n_heads, d_head, d_model)
        shapes[f"{attn}.b_O"] = (d_model,)
        shapes[f"{mlp}.W_in"] = (d_model, d_mlp)
        shapes[f"{mlp}.b_in"] = (d_mlp,)
        shapes[f"{mlp}.W_out"] = (d_mlp, d_model)
        shapes[f"{mlp}.b_out"] = (d_model,)
    return shapes


def read_model_file(path: str | Path) -> ModelFile:
    """Open and check a compiled-model file; raises `ModelFileError` with one clear line if it is bad."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(path, "no such model file")
    try:
        from safetensors import safe_open

        with safe_open(str(path), "np") as handle:
            metadata = handle.metadata() or {}
            shapes = {name: tuple(handle.get_slice(name).get_shape()) for name in handle.keys()}  # noqa: SIM118
    except Exception as exc:  # noqa: BLE001 - safetensors raises several private error types
        raise ModelFileError(
            path, f"not a readable safetensors file ({_first_line(exc)}); truncated, or not a compiled model?"
        ) from None
    meta = _parse_metadata(path, metadata)
    _check_tensors(path, meta["config"], shapes)
    return ModelFile(path, meta, shapes)


def _parse_metadata(path: Path, metadata: dict[str, str]) -> dict[str, Any]:
    if METADATA_KEY not in metadata:
        raise ModelFileError(path, f"no '{METADATA_KEY}' metadata entry: not a rasp-forge compiled model")
    try:
        meta = json.loads(metadata[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise ModelFileError(path, f"the '{METADATA_KEY}' metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFileError(path, f"the metadata does not describe a '{FORMAT_NAME}' file")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(path, "the metadata has no integer 'format_version'")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            path, f"format version {version} is newer than this rasp-forge understands ({FORMAT_VERSION}); "
            "upgrade rasp-forge or recompile the program"
        )
    config = meta.get("config")
    if not isinstance(config, dict):
        raise ModelFileError(path, "the metadata has no 'config' object")
    for key in _CONFIG_INTS:
        value = config.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ModelFileError(path, f"config.{key} is missing or not a non-negative integer")
    for key, kind in (("residual", list), ("layers", list), ("vocab", dict), ("output", dict)):
        if not isinstance(meta.get(key), kind):
            raise ModelFileError(path, f"the metadata has no '{key}' {kind.__name__}")
    if len(meta["residual"]) != config["d_model"]:
        raise ModelFileError(
            path, f"{len(meta['residual'])} residual labels for d_model = {config['d_model']}"
        )
    return meta


def _check_tensors(path: Path, config: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> None:
    for name, shape in expected_shapes(config).items():
        if name not in shapes:
            raise ModelFileError(path, f"missing tensor '{name}'")
        if shapes[name] != shape:
            raise ModelFileError(
                path, f"tensor '{name}' has shape {list(shapes[name])}, the config says {list(shape)}"
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# ------------------------------------------------------------------------------------------------
# Summary


@dataclass(frozen=True)
class ResidualGroup:
    """Consecutive residual dimensions of one variable: `values` for a categorical one, else None."""

    name: str
    start: int
    stop: int
    values: tuple[str, ...] | None

    def describe(self) -> str:
        if self.values is None:
            return self.name
        return f"{self.name}: {_compress_values(self.values)}"


@dataclass(frozen=True)
class Operation:
    layer: int
    sublayer: str  # "head 0", "mlp"
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


def split_label(label: str) -> tuple[str, str | None]:
    """`"tokens:a"` -> ("tokens", "a"); `"frac"` -> ("frac", None). Names never contain ':'."""
    name, sep, value = label.partition(":")
    return (name, value) if sep else (name, None)


def group_residual(labels: list[str]) -> tuple[ResidualGroup, ...]:
    groups: list[ResidualGroup] = []
    for dim, label in enumerate(labels):
        name, value = split_label(label)
        last = groups[-1] if groups else None
        if last is not None and last.name == name and value is not None and last.values is not None:
            groups[-1] = ResidualGroup(name, last.start, dim + 1, (*last.values, value))
        else:
            groups.append(ResidualGroup(name, dim, dim + 1, None if value is None else (value,)))
    return tuple(groups)


def layer_operations(meta: dict[str, Any]) -> tuple[Operation, ...]:
    ops: list[Operation] = []
    for index, layer in enumerate(meta.get("layers", [])):
        for head in layer.get("attn", []):
            ops.append(Operation(index, f"head {head.get('head', 0)}", str(head.get("name")), str(head.get("op"))))
        for mlp in layer.get("mlp", []):
            ops.append(Operation(index, "mlp", str(mlp.get("name")), str(mlp.get("op"))))
    return tuple(ops)


def summarize(model: ModelFile) -> ModelSummary:
    total = nonzero = 0
    for _, tensor in model.tensors():
        total += tensor.size
        nonzero += int(np.count_nonzero(tensor))
    return ModelSummary(
        path=str(model.path),
        meta=model.meta,
        total_params=total,
        nonzero_params=nonzero,
        operations=layer_operations(model.meta),
        residual=group_residual([str(label) for label in model.meta["residual"]]),
    )


def format_summary(summary: ModelSummary) -> str:
    """The plain-text table `rasp show` prints."""
    meta, cfg = summary.meta, summary.meta["config"]
    program = meta.get("program") or {}
    output = meta["output"]
    vocab = meta["vocab"]
    heads_per_layer = [sum(1 for op in summary.operations if op.layer == l and op.sublayer != "mlp")
                       for l in range(cfg["n_layers"])]
    share = 100.0 * summary.nonzero_params / summary.total_params if summary.total_params else 0.0
    lines = [
        (f"model:       {summary.path} (format {meta['format_version']}, "
         f"compiler {meta.get('compiler_version', '?')})"),
        f"program:     {program.get('file', '?')}",
        f"sha256:      {program.get('sha256', '?')}",
        f"output:      {output.get('name')} ({output.get('encoding')}, {output.get('type')})",
        (f"vocab:       {' '.join(_token_text(t) for t in vocab.get('tokens', []))}"
         f"  (bos id {vocab.get('bos_id')}, pad id {vocab.get('pad_id')})"),
        f"max length:  {meta.get('max_len')}",
        f"shape:       {shape_text(cfg)}",
        f"heads used:  {' '.join(str(h) for h in heads_per_layer) or '-'} (per layer)",
        f"parameters:  {summary.total_params:,} total, {summary.nonzero_params:,} non-zero ({share:.1f}%)",
        "",
    ]
    lines += operations_table(summary.operations)
    lines += [""] + table_lines(meta.get("certificate"))
    lines += ["", f"residual stream ({cfg['d_model']} dims):"]
    for group in summary.residual:
        lines.append(f"  {group.start:>4}  {group.describe()}")
    return "\n".join(line.rstrip() for line in lines)


def shape_text(cfg: dict[str, Any]) -> str:
    """`2 layers, 1 heads/layer, d_model 31, ...`: the `shape:` line of `rasp show`."""
    return (f"{cfg['n_layers']} layers, {cfg['n_heads']} heads/layer, d_model {cfg['d_model']}, "
            f"d_head {cfg['d_head']}, d_mlp {cfg['d_mlp']}, n_ctx {cfg['n_ctx']}, "
            f"{cfg.get('attention_dir', 'bidirectional')}")


def operations_table(operations: tuple[Operation, ...]) -> list[str]:
    """The `layer  block  name  operation` table of `rasp show`, one line per head and MLP."""
    rows = [("layer", "block", "name", "operation")]
    rows += [(str(op.layer), op.sublayer, op.name, op.op) for op in operations]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3]
            for row in rows]


def summary_json(summary: ModelSummary) -> dict[str, Any]:
    """The `rasp show --json` object."""
    meta = summary.meta
    program = dict(meta.get("program") or {})
    program.pop("source", None)  # the source is in the file; the summary names and hashes it
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
        "layers": meta["layers"],
        "certificate": meta.get("certificate"),
        "residual": [
            {"name": g.name, "dims": [g.start, g.stop],
             "encoding": "numerical" if g.values is None else "categorical",
             "values": None if g.values is None else list(g.values)}
            for g in summary.residual
        ],
    }


def _token_text(token: Any) -> str:
    return token if isinstance(token, str) and token.strip() == token and token else json.dumps(token)


_INT = re.compile(r"-?\d+")


def _compress_values(values: tuple[str, ...]) -> str:
    """`0 1 2 3` -> `0..3` (runs of consecutive integers); other values are listed."""
    parts: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if len(run) >= 3:
            parts.append(f"{run[0]}..{run[-1]}")
        else:
            parts.extend(str(v) for v in run)
        run.clear()

    for value in values:
        if _INT.fullmatch(value) and (not run or int(value) == run[-1] + 1):
            run.append(int(value))
            continue
        flush()
        if _INT.fullmatch(value):
            run.append(int(value))
        else:
            parts.append(value if value.strip() == value and value else repr(value))
    flush()
    return " ".join(parts)
