"""What one residual dimension holds: its program variable, its typed value, and who writes it.

    model.residual_dim("tokens:1")
    # ResidualDim(index=3, label='tokens:1', group='tokens', variable='tokens', value=1, ...)
    model.residual_dims("tokens")   # every dim of a group (or of a variable and its helpers)

A label is `name:text` (one column of a one-hot s-op) or `name` (a number); `name` is the s-op or
a part the compiler derives from it (`x.frac` = 1/(x + 1), `x.int`, `x.sq`, `x.part0`,
`indices^2`, `indices~...`), whose variable is `x`. The value comes from the file's typed
`residual_values` (`transformer.residual_values`). The writers are read off the weights, as
`rasp show` lists them: the embedding (`W_E`, `W_pos`), a head (its `W_O` columns), a layer's
shared attention bias `b_O` where no head of it writes the dim, an MLP (`W_out`, `b_out`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from transformer.errors import ModelInputError
from transformer.model import Transformer

SPECIAL = ("one", "bos", "pad")
# the suffixes the compiler derives helper dims' names with (compiler: `{name}.frac`, ...)
_DERIVED = re.compile(r"(\.(frac\d*|int|sq|sum|rest|pick\d+|part\d+|x\d+)|\^2|~.*)$")


@dataclass(frozen=True)
class ResidualDim:
    """Residual dimension `index`, labelled `label`."""

    index: int
    label: str
    group: str  # the label's name: what `sop_hook` takes
    variable: str | None  # the program variable it belongs to; None for one, bos, pad
    categorical: bool  # one column of a one-hot (`name:text`), else a number
    value: Any  # a column's typed value (None for a number, or where `typed` is False)
    # whether the file records the dim's typed value (compilers from 2026-12-06; a number's is
    # None): False where `value` is unknown, not None
    typed: bool
    written_by: tuple[str, ...]  # "embedding", "layer 0 head 1", "layer 0 attn", "layer 1 mlp"
    hook: str  # the residual hook after its last writer (`blocks.1.hook_resid_mid`)


def residual_dim(
    model: Transformer,
    labels: tuple[str, ...],
    typed: tuple[tuple[Any] | None, ...] | None,
    key: str | int,
) -> ResidualDim:
    """The `ResidualDim` of label `key`, or of dimension `key` (an int)."""
    if isinstance(key, int) and not isinstance(key, bool):
        if not 0 <= key < len(labels):
            raise ModelInputError(
                f"residual dimension {key} is out of range: the model has {len(labels)} "
                f"(0..{len(labels) - 1})"
            )
        index = key
    elif isinstance(key, str) and key in labels:
        index = labels.index(key)
    elif isinstance(key, str) and _named(labels, key):
        # `sorted` for `sorted:a`, `sorted:b`, ...: a name, not a label, is several dims
        named = _named(labels, key)
        shown = ", ".join(labels[d] for d in named[:3]) + (", ..." if len(named) > 3 else "")
        raise ModelInputError(
            f"no residual dimension is labelled {key!r}; {key!r} names several ({shown})",
            f"model.residual_dims({key!r}) gives them all",
        )
    else:
        import difflib

        close = difflib.get_close_matches(str(key), list(labels), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else "model.residual_labels lists them"
        raise ModelInputError(f"no residual dimension is labelled {key!r}", hint)
    label = labels[index]
    group, colon, text = label.partition(":")
    entry = typed[index] if typed is not None else None
    writers = _writers(model, index)
    return ResidualDim(
        index=index,
        label=label,
        group=group,
        variable=None if group in SPECIAL and not colon else variable_of(group),
        categorical=bool(colon),
        value=entry[0] if entry is not None else None,
        typed=typed is not None and (entry is not None or not colon),
        written_by=tuple(name for _, name in writers),
        hook=_hook(max((stage for stage, _ in writers), default=0)),
    )


def residual_dims(
    model: Transformer,
    labels: tuple[str, ...],
    typed: tuple[tuple[Any] | None, ...] | None,
    name: str,
) -> tuple[ResidualDim, ...]:
    """Every dimension of residual group `name` (`sorted`: `sorted:a`, `sorted:b`, ...), or, where
    no group has that name, of program variable `name` with its helper dims (`target_position`:
    `.frac0`, `.part0`, `.int`, ...), in residual order."""
    found = _named(labels, name) if isinstance(name, str) else []
    if not found:
        import difflib

        names = sorted({label.partition(":")[0] for label in labels})
        names += sorted({variable_of(n) for n in names} - set(names))
        close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else "model.residual_labels lists them"
        raise ModelInputError(f"no residual group or variable is named {name!r}", hint)
    return tuple(residual_dim(model, labels, typed, d) for d in found)


def _named(labels: tuple[str, ...], name: str) -> list[int]:
    """The dims of group `name`, else of variable `name` (`residual_dims`)."""
    groups = [label.partition(":")[0] for label in labels]
    found = [d for d, group in enumerate(groups) if group == name]
    if found or name in SPECIAL:
        return found
    return [d for d, group in enumerate(groups) if variable_of(group) == name]


def variable_of(group: str) -> str:
    """The program variable of a residual group: its name without the suffixes the compiler
    derives helper dims with (`x.frac` -> `x`, `indices^2` -> `indices`)."""
    while (found := _DERIVED.search(group)) is not None and found.start() > 0:
        group = group[: found.start()]
    return group


def _writers(model: Transformer, dim: int) -> list[tuple[int, str]]:
    """(residual stage after it, name) of each sublayer whose weights write `dim`, in run order."""

    def writes(tensor: torch.Tensor | None) -> bool:
        return tensor is not None and bool((tensor[..., dim] != 0).any())

    found: list[tuple[int, str]] = []
    if writes(model.embed.W_E) or writes(model.pos_embed.W_pos):
        found.append((0, "embedding"))
    for layer, block in enumerate(model.blocks):
        heads = [
            (2 * layer + 1, f"layer {layer} head {h}")
            for h in range(block.attn.W_O.shape[0])
            if writes(block.attn.W_O[h])
        ]
        if not heads and writes(block.attn.b_O):  # the shared bias, where no head writes it
            heads = [(2 * layer + 1, f"layer {layer} attn")]
        found += heads
        if writes(block.mlp.W_out) or writes(block.mlp.b_out):
            found.append((2 * layer + 2, f"layer {layer} mlp"))
    return found


def _hook(stage: int) -> str:
    if stage == 0:
        return "blocks.0.hook_resid_pre"
    return f"blocks.{(stage - 1) // 2}.hook_resid_{'mid' if stage % 2 else 'post'}"


def read_in_heads(name: str, layers: Sequence[Any]) -> str:
    """Where the heads read `name`, a selector (or a value folded into a head's scores), which
    has no residual dimension: the hint for `residual_dims("flip")` of reverse, which said only
    that no group is named so ("" where no head's operation names it)."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    found = [
        (layer, head.head, head.op)
        for layer, ops in enumerate(layers)
        for head in ops.attn
        if word.search(head.op)
    ]
    if not found:
        return ""
    layer, head, op = found[0]
    where = ", ".join(f"layer {at} head {h}" for at, h, _ in found)
    return (
        f"{name} is read inside {where} ({op}): a selector, or a value folded into a head's "
        f'scores, has no residual dimensions; the head\'s attention pattern is cache["pattern", '
        f"{layer}][:, {head}] (model.meta.layers[{layer}].attn names what each head computes)"
    )
