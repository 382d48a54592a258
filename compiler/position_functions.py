"""S-ops of the position alone, written however the program reaches them, as maps of `indices`.

An s-op built only from `indices`, `length` and constants (`compiler.rewrite.positional_nodes`:
maps, widths and aggregates over selectors of them) reads no token, so at each length n its value
at position i is one number the interpreter computes on any input of that length. Where that value
depends on i alone, the same at every length n > i up to N, the s-op is a function of the position:

    indices % (length + 1)                                   i itself
    aggregate(select(indices, indices, <), indicator(indices < 2))   min(i, 2) / i (0 at i = 0)
    selector_width(select(indices, indices, <=))             i + 1

The compiler writes a map of `indices` and constants in the positional embedding (no MLP, no
head, no layer) and reads it as a class of the position or as one number (`compiler.maps`,
`PlanContext.is_positional`), but it recognises such a map by its inputs: written through `length`,
a head or a width it was computed as a number of (index, length), and a map of it and a token's
mean became a table over every (index, length, mean) combination (`indices % (length + 1) * m` at
N = 16: 14.1M parameters in 2 layers instead of 1,905 in 1).

`position_functions(root, max_len)` replaces each such s-op (one that reads `length`, or a width
or an aggregate; a map of `indices` and constants is already one) by a map of `indices` through the
table of its values, when at every length 1..max_len the map gives exactly the same sequence (the
same values of the same types, the same type label) as the original. An s-op the interpreter
fails on at some length is kept: the map would not fail there. So is a copy of one position's
value (an aggregate that selects at most one key at every length): a head copies it as a number
by matching, where its readers would read a map of indices through the index one-hot. Past N = MAX_LEN nothing is
rewritten (evaluating every length costs seconds there). A graph with nothing to rewrite is
returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compiler.rewrite import positional_nodes, rebuilt
from rasp import sops
from rasp.errors import RaspError
from rasp.written_text import written

# Each length's evaluation reads n x n selectors (the means' sums in Python): one program's
# prefix mean and width took 0.5 s at N = 256 and 17 s at N = 1024. Past this the s-ops stay as
# written (the compile is as before).
MAX_LEN = 256


@dataclasses.dataclass(frozen=True)
class AtPosition:
    """The value an s-op of the position alone takes at each index (the interpreter's own)."""

    table: tuple[Any, ...]

    def __call__(self, i: int) -> Any:
        return self.table[i]


def identical_value(a: Any, b: Any) -> bool:
    """The same value of the same Python type (1, 1.0 and True differ in their labels; -0.0 and
    0.0 print apart; nan is never the same)."""
    return type(a) is type(b) and a == b and repr(a) == repr(b)


def _labelled_alike(seq: sops.SeqValue, loose: bool) -> bool:
    """Whether a map giving `seq`'s values (the same objects: the table's) labels them as `seq` is
    labelled (the interpreter's map labels its values by `make_seq`)."""
    try:
        return sops.make_seq(seq.values, loose=loose).type is seq.type
    except RaspError:
        return False


def _note(node: sops.SOp) -> str | None:
    """What the map computes, for people: the original's source text (its span's, None here), else
    the original rebuilt as program text (`round(aggregate(...))`, rasp.written_text), never
    the table's function called on `indices`, which it is not as the program wrote it."""
    return None if node.span is not None else written(node)


def position_functions(root: sops.Node, max_len: int) -> sops.Node:
    """`root` with every s-op of the position alone that the compiler would not embed a map of
    `indices` (the module docstring); `root` itself if there is none."""
    if max_len > MAX_LEN:
        return root
    order = list(sops.walk(root))
    positional, moving = positional_nodes(order)
    embedded: set[int] = set()  # maps of indices and constants alone: embedded as they are
    for node in order:
        if isinstance(node, sops.IndicesSOp) or (
            isinstance(node, sops.MapSOp)
            and all(
                isinstance(c, (sops.ConstSOp, sops.IndicesSOp)) or c.id in embedded
                for c in node.inputs
            )
        ):
            embedded.add(node.id)
    candidates = [
        node
        for node in order
        if node.id in moving
        and isinstance(node, sops.SOp)
        and node.id not in embedded
        and not isinstance(node, sops.LengthSOp)
    ]
    if not candidates:
        return root
    tables: dict[int, list[Any]] = {node.id: [] for node in candidates}
    # aggregates that average two keys or more somewhere; the others are copies (below)
    averaging: set[int] = set()
    # s-ops a map reads beside an s-op that reads tokens
    mixed = {
        i.id
        for node in order
        if isinstance(node, sops.MapSOp) and any(i.id not in positional for i in node.inputs)
        for i in node.inputs
    }
    # one length at a time (an evaluator keeps every matrix it computes: N x N each)
    for n in range(1, max_len + 1):
        if not tables:
            break  # every candidate depends on the length (or fails)
        evaluator = sops.Evaluator([None] * n, compiling=True)
        for node in candidates:
            table = tables.get(node.id)
            if table is None:
                continue
            try:
                seq = evaluator.seq(node)  # type: ignore[arg-type]
            except RaspError:
                del tables[node.id]  # the interpreter fails here; a map would not
                continue
            if not all(identical_value(v, t) for v, t in zip(seq.values, table, strict=False)):
                del tables[node.id]  # depends on the length
            elif not _labelled_alike(seq, node.loose):
                del tables[node.id]  # the map would label these values otherwise
            else:
                table.append(seq.values[-1])
                if isinstance(node, sops.AggregateSOp) and node.id not in averaging:
                    if evaluator.matrix(node.selector).sum(axis=1).max() > 1:
                        averaging.add(node.id)
    # A copy of one position's value (a select of at most one key at every length, `where =
    # aggregate(select(indices + 1, indices, ==), indices, -1)`) is one head that reads it as a
    # number by matching; as a map of indices, a map of it and a token's s-op reads the index
    # one-hot instead (`where if x == "a"` at N = 64: 20,253 parameters, not 1,996). Read alone
    # or with positional s-ops, the map is embedded: no head at all.
    for node in candidates:
        if isinstance(node, sops.AggregateSOp) and node.id not in averaging and node.id in mixed:
            tables.pop(node.id, None)
    if not tables:
        return root
    replaced = {
        node.id: sops.MapSOp(
            fn=AtPosition(tuple(tables[node.id])),
            inputs=(sops.IndicesSOp(),),
            text="at_position",  # (a function of the position: `note`, or the span, says which)
            span=node.span,
            name=node.name,
            loose=node.loose,
            called_as=node.called_as,
            note=node.note or _note(node),
        )
        for node in candidates
        if node.id in tables
    }
    new: dict[int, sops.Node] = {}
    for node in order:
        new[node.id] = replaced.get(node.id) or rebuilt(node, new)
    return new[root.id]
