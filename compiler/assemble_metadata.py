"""The metadata of an assembled model: its format version, vocabulary, output decoding, residual
labels and layers' names, and the program's source (`compiler.assemble` adds the reach; the driver
the certificate)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from compiler.blocks import Atom, Plan
from compiler.grid import GRID_KEYS, MAX_OUTPUT_VALUES
from compiler.layout import Layout
from compiler.model import (
    COMPILER_VERSION,
    FORMAT,
    FORMAT_VERSION,
    INT_POSITIONS_FORMAT_VERSION,
    LENGTH_GRID_FORMAT_VERSION,
    MASK_FORMAT_VERSION,
    MASKLESS_FORMAT_VERSION,
    NONE_AT_FORMAT_VERSION,
    ONE_HOT_TYPES_FORMAT_VERSION,
    POSITION_GRID_FORMAT_VERSION,
    WHOLE_TYPES_FORMAT_VERSION,
)
from compiler.schedule import Schedule
from rasp.errors import Source
from rasp.sops import SeqType
from rasp.tracr.boxes import marked


def model_metadata(
    config: dict,
    schedule: Schedule,
    layout: Layout,
    plan: Plan,
    vocab: Sequence[Atom],
    max_len: int,
    name: str,
    source: Source | None,
    tuples: bool = False,
) -> dict:
    # an output that is always None (a tracr aggregate that never selects) is labelled as a mix
    # of types is: the file's types name what its values decode as, and None is none of them
    kind = plan.output_type
    output: dict = {
        "name": name,
        "encoding": plan.output.encoding.value,
        "type": (SeqType.STRINGS if kind is SeqType.NONE else kind).value,
    }
    if plan.output.is_categorical:
        output["values"] = list(plan.output.values)
    elif plan.output_grid is not None:
        # position i (or an input of length n, or both) decodes as round(x * d) / d
        # (compiler.grid): no list to snap to
        key = GRID_KEYS[plan.output_grid.axis]
        output[key] = list(plan.output_grid.denominators)
        if plan.output_grid.int_positions:
            output["int_positions"] = list(plan.output_grid.int_positions)
    elif len(plan.output_values) <= MAX_OUTPUT_VALUES:
        output["values"] = list(plan.output_values)  # what the program can output, to snap to
    if plan.output_types is not None:
        # per length, per position: a whole number's type (compiler.output_types)
        output["whole_types"] = list(plan.output_types)
    if plan.output_none_at is not None:  # a stand-in for tracr's None, decoded as None
        output["none_at"] = plan.output_none_at
    if tuples and any(marked(v) for v in output.get("values", ())):
        # a tracr program's tuple (or list), boxed: readers unbox its marked strings, and only
        # this output's (a RASP program's own token "\x00(1, 2)" is a string)
        output["tuples"] = True
    program = None
    if source is not None:
        program = {
            "file": source.name,
            "source": source.text,
            "sha256": hashlib.sha256(source.text.encode("utf-8")).hexdigest(),
        }
    # an s-op whose columns another one embedded first is listed too (its residual name is theirs)
    on_position = set(layout.positional)
    embedded = [
        {"name": n, "op": op}
        for n, (op, dims) in plan.embedded.items()
        if on_position.intersection(dims)
    ]
    masked = any(layer.get("masks") for layer in config["layers"])
    if "pair_denominators" in output:
        version = FORMAT_VERSION
    elif "none_at" in output:
        version = NONE_AT_FORMAT_VERSION
    elif "whole_types" in output and plan.output.is_categorical:
        version = ONE_HOT_TYPES_FORMAT_VERSION
    elif "whole_types" in output:
        version = WHOLE_TYPES_FORMAT_VERSION
    elif "int_positions" in output:
        version = INT_POSITIONS_FORMAT_VERSION
    elif "length_denominators" in output or "end_denominators" in output:
        version = LENGTH_GRID_FORMAT_VERSION
    elif "denominators" in output:
        version = POSITION_GRID_FORMAT_VERSION
    elif masked or not config.get("positional", True):
        version = MASK_FORMAT_VERSION
    else:
        version = MASKLESS_FORMAT_VERSION
    return {
        "format": FORMAT,
        # a reader that predates per-head masks, models without W_pos or output grids must
        # refuse such a model, not run it unmasked, fail on a missing tensor or misread its output
        "format_version": version,
        "compiler_version": COMPILER_VERSION,
        "config": config,
        "max_len": max_len,
        "vocab": {
            "tokens": list(vocab),
            "bos_id": len(vocab),
            "pad_id": len(vocab) + 1,
        },
        "output": output,
        "residual": layout.labels(),
        # each one-hot column's typed value (`tokens:1` is 1 or "1"): for sop_hook and readers
        "residual_values": layout.values(),
        # the s-ops the positional embedding writes (maps of the position alone), as `layers` lists
        # the blocks' (readers that do not know the key ignore it: W_pos holds them anyway)
        **({"embedding": embedded} if embedded else {}),
        "layers": [
            {
                "attn": [
                    {"head": h, "name": head.name, "op": head.op}
                    for h, head in enumerate(layer.heads)
                ],
                "mlp": [{"name": m.name, "op": m.op} for m in layer.mlps],
            }
            for layer in schedule.layers
        ],
        "program": program,
    }
