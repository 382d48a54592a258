"""S-ops of the position alone, written by the positional embedding (`W_pos`) instead of a block.

`indices` and any chain of maps over it and constants (`indices % 2 == 0`, `indices * indices`) take
one value per position, whatever the input: `W_pos` row i + 1 can hold it. A one-hot of a few classes
(a map with few values, the classes a select side or a map tells apart) or a number float32 holds
exactly costs a few columns there, where a block would read the N-wide index one-hot and take a
layer. The planners ask `position_values` for the values and register the columns in `Built`;
assembly writes them (`Plan.positional`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, Dim, Encoded
from compiler.graph import Op
from compiler.plan_context import PlanContext
from compiler.plan_state import Built

# float32 holds every whole number below this exactly
FLOAT32_WHOLE = 2.0**24


def of_position(ctx: PlanContext, index: int) -> bool:
    """Whether node `index` is `indices` or a map of the position alone."""
    return ctx.graph[index].op is Op.INDICES or ctx.is_positional(index)


def position_values(ctx: PlanContext, index: int) -> list[tuple[bool, Atom]]:
    """Node `index`'s value at positions 0..N-1 ((False, None) where a map raises there: every
    input that long fails in the interpreter too). `of_position(ctx, index)` must hold."""
    if ctx.graph[index].op is Op.INDICES:
        return [(True, i) for i in range(ctx.max_len)]
    indices = next(n.index for n in ctx.graph.nodes if n.op is Op.INDICES)
    return [ctx.chain_value(index, {indices: i}) for i in range(ctx.max_len)]


def exact_in_float32(numbers: Sequence[float]) -> bool:
    return all(math.isfinite(x) and float(np.float32(x)) == x for x in numbers)


def embed_one_hot(
    built: Built, enc: Encoded, value_at: Sequence[tuple[bool, Atom]], op: str
) -> Encoded:
    """`W_pos` columns for categorical reading `enc` (one dim per value): position i holds the
    one-hot of value_at[i] = (ok, value) (not ok: no dim set; None is a value, tracr's). A column
    equal to one already embedded (the classes `indices == 0` and a select's `indices` vs 0 split
    the positions alike) is that one: the reading returned uses it."""
    at = [enc.index_of(v) if ok else -1 for ok, v in value_at]
    have = {
        column: dim
        for dim, column in built.positional.items()
        if any(column) and not dim.is_numerical  # a one-hot's column, labelled as one
    }
    one_hot = []
    for k, terms in enumerate(enc.one_hot):
        column = tuple(float(j == k) for j in at)
        dim = have.get(column) if any(column) else None
        if dim is None:
            dim = terms[0][0]
            built.positional[dim] = column
        one_hot.append(((dim, 1.0),))
    out = Encoded(enc.name, enc.encoding, enc.values, one_hot=tuple(one_hot))
    built.bound_one_hot(out)
    built.exact.update(out.dims())
    built.embedded[enc.name] = (op, out.dims())
    return out


def embed_number(built: Built, dim: Dim, numbers: Sequence[float], op: str) -> Dim:
    """A `W_pos` column holding `numbers[i]` at position i (float32-exact: the caller checks), or
    the one already embedded that holds them."""
    column = tuple(numbers)
    for have, held in built.positional.items():
        if held == column and have.is_numerical:
            built.embedded[dim.name] = (op, (have,))
            return have
    built.positional[dim] = column
    built.bounds[dim] = max((abs(x) for x in numbers), default=0.0)
    built.exact.add(dim)
    built.embedded[dim.name] = (op, (dim,))
    return dim
