"""Residual layout: one stable index per residual dimension.

Order: `one`, `bos`, `pad`, the raw token one-hot (`tokens:<t>` in vocabulary order; left out
where nothing reads any of it, as in `length`: |V| dimensions no block reads), the used index
one-hots (`indices:<i>`), the numerical `indices` and `indices^2` when used, the maps of the
position the positional embedding writes (`parity:0`), then every dimension written by layer 0's
heads, layer 0's MLP, layer 1's heads, ... in the order the blocks list them. The labels are the
metadata's `residual` list.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compiler.blocks import BOS, INDEX, INDEX_SQUARE, ONE, PAD, Atom, Dim, Encoded
from compiler.schedule import Schedule, head_reads
from rasp.residual_labels import value_texts


@dataclass(frozen=True)
class Layout:
    dims: tuple[Dim, ...]
    index: dict[Dim, int]
    token_dims: tuple[Dim, ...]  # in vocabulary order; empty where nothing reads the tokens
    index_dims: tuple[Dim, ...]  # indices:0..N-1 that are read (possibly empty)
    numeric_index: Dim | None  # the numerical `indices` dim, when read
    square_index: Dim | None = None  # `indices^2`, when read (numerical addressing)
    positional: tuple[Dim, ...] = ()  # read dims of maps of the position (Plan.positional)

    @property
    def d_model(self) -> int:
        return len(self.dims)

    def labels(self) -> list[str]:
        """The metadata's `residual`: `name:text` per categorical dim, its value's text unique
        among its s-op's (`rasp.residual_labels`: `tokens:1` beside `tokens:"1"`)."""
        labels = [d.label for d in self.dims]
        groups: dict[str, list[int]] = {}
        for i, d in enumerate(self.dims):
            if not d.is_numerical:
                groups.setdefault(d.name, []).append(i)
        for name, dims in groups.items():
            texts = value_texts([self.dims[i].value for i in dims])
            for i, text in zip(dims, texts):
                labels[i] = f"{name}:{text}"
        return labels

    def values(self) -> list[list[Atom] | None]:
        """The metadata's `residual_values`: per dim, `[value]` (the typed value of a one-hot
        column, which its label's text cannot give back: `tokens:1` is the int 1 or the str "1")
        or None (a numerical dim, `one`, a value JSON holds no atom for, a joint one's tuple)."""
        return [
            None if d.is_numerical else _json_atom(d.value, label.partition(":")[2])
            for d, label in zip(self.dims, self.labels(), strict=True)
        ]


def _json_atom(value: Atom, text: str) -> list[Atom] | None:
    """`[value]`, or None for a tuple (a joint column), a number JSON cannot write, or a value
    whose text its type had to tell apart (`1.0 (float64)`: never in a RASP program)."""
    quoted = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else None
    if text not in (str(value), quoted):
        return None
    if value is None or isinstance(value, str | bool | int):
        return [value]
    if isinstance(value, float) and math.isfinite(value):
        return [value]
    return None


def lay_out(
    schedule: Schedule,
    output: Encoded,
    vocab: Sequence[Atom],
    max_len: int,
    positional: Iterable[Dim] = (),
    whole: Iterable[tuple[Dim, ...]] = (),
    keep_tokens: bool = True,
) -> Layout:
    """`positional`: the dims the positional embedding writes (compiler.positional), laid out
    where read; `whole`: the dims of each program s-op among them, laid out whole where any of
    them is read, so that the residual stream can be read back as that s-op (a one-hot of which
    only `parity:True` is read would decode `False` as no value); `keep_tokens`: the token one-hot
    is laid out even where nothing reads it (the program mentions the tokens)."""
    read: set[Dim] = set(output.dims())
    written: list[Dim] = []
    for layer in schedule.layers:
        for head in layer.heads:
            read |= head_reads(head)
            written.extend(head.out_dims)
        for mlp in layer.mlps:
            read |= set(mlp.W_in)
            written.extend(mlp.out_dims)
    # the whole one-hot where any of it is read (`rasp verify` and `:residual` read it back as
    # `tokens`) or the program mentions the tokens (the size bounds count it there: they must
    # not exceed the build), none otherwise: W_E then writes only `one` for a token
    reads_tokens = keep_tokens or any(d.name == "tokens" for d in read)
    token_dims = tuple(Dim.categorical("tokens", t) for t in vocab) if reads_tokens else ()
    index_dims = tuple(
        d for d in (Dim.categorical("indices", i) for i in range(max_len)) if d in read
    )
    numeric_index = INDEX if INDEX in read else None
    square_index = INDEX_SQUARE if INDEX_SQUARE in read else None
    shown = {d for dims in whole if read.intersection(dims) for d in dims}
    by_position = tuple(d for d in positional if d in read or d in shown)
    dims = _unique(
        [
            ONE,
            BOS,
            PAD,
            *token_dims,
            *index_dims,
            *([numeric_index] if numeric_index else []),
            *([square_index] if square_index else []),
            *by_position,
            *written,
        ]
    )
    unknown = sorted(d.label for d in read - set(dims))  # one set, not one per dimension
    if unknown:
        raise ValueError(f"blocks read dimensions nobody writes: {unknown[:5]}")  # a compiler bug
    return Layout(
        dims,
        {d: i for i, d in enumerate(dims)},
        token_dims,
        index_dims,
        numeric_index,
        square_index,
        by_position,
    )


def _unique(dims: Iterable[Dim]) -> tuple[Dim, ...]:
    return tuple(dict.fromkeys(dims))
