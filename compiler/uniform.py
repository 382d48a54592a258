"""S-ops that hold one value at every position of an input, and keys that differ given them.

A node is *uniform* when, on any one input, it holds the same value at every position: `length`,
a constant, a map of uniform s-ops, and a selector_width or aggregate of a selector that selects
the same keys for every query (its queries are uniform: `select(checks, 0, ==)`). Its value still
depends on the input (a count of the "a"s), so the value analysis knows only its set.

InterpBench's "invert if sorted" moves each token to `avg + decider * (indices - avg)`, where
`decider` (1 or -1) is uniform: a map of a count over all keys. Without knowing that `decider` is
one value across the positions, the keys of `select(target, indices, ==)` may repeat, and the
aggregate is any mean of the tokens (34M parameters at N = 16). `keys_differ` evaluates the keys at
every position of every length, for each combination of the uniform s-ops they read (their values
as sets, an over-approximation), and proves that no two positions of one input hold equal keys:
an EQ select over such keys selects at most one key per query.

Where the uniform s-ops take too many values to try each (the original RASP's long addition aligns
the first number with `indices + (length - add_index)`, `add_index` a mean of indices), keys that
are an affine function of `indices` with a non-zero coefficient, through maps that state their
form (`compiler.known_affine`), differ without trying any: two positions' exact keys are at least
that coefficient apart, and float64 rounding is bounded below half of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.known_affine import finite_number, known_affine
from compiler.relations import Relation
from compiler.rounded import unrounded

# combinations of the uniform s-ops' values tried, and positions x combinations x maps evaluated
MAX_UNIFORM_COMBINATIONS = 64
MAX_EVALUATIONS = 2_000_000


def is_uniform(node: IRNode, uniform: Sequence[bool], rel: Relation | None) -> bool:
    """Whether `node` holds one value at every position of an input, given its inputs' flags
    (`uniform[i]`, for every earlier node i; a selector's flag says it ignores its query) and its
    own relation (`map(lambda x: 0, indices)` is one value per length)."""
    match node.op:
        case Op.LENGTH | Op.CONST:
            return True
        case Op.MAP | Op.AND | Op.OR | Op.NOT | Op.SELECTOR_WIDTH if all(
            uniform[i] for i in node.inputs
        ):
            return True
        case Op.SELECT if uniform[node.inputs[1]]:
            return True  # one query value: every query selects the same keys
        case Op.AGGREGATE if uniform[node.inputs[0]]:
            return True  # the same keys for every query: the same mean
    # tokens, indices, and what reads them: uniform only where positions give one value per length
    return rel is not None and _one_per_length(rel)


def keys_differ(
    graph: Graph,
    keys: int,
    uniform: Sequence[bool],
    relation: Sequence[Relation | None],
    values: Callable[[int], Sequence[Atom]],
    max_len: int,
) -> bool:
    """Whether node `keys` holds pairwise different values (as `==` compares them) at the
    positions of every input of length 1..max_len: it is computed by maps from s-ops known at each
    position (one value per (index, length)) and from uniform s-ops, and differs at every position
    for every combination of the uniform ones' values (module doc). A map that raises anywhere
    makes no claim."""
    found = _free_uniforms(graph, keys, uniform, relation)
    if found is None or not found[0]:
        return False  # not read from positions and uniform s-ops, or positions alone (elsewhere)
    if _affine_in_indices(graph, keys, uniform, values, max_len):
        return True
    leaves, known, maps = found
    choices = [values(i) for i in leaves]
    combinations = math.prod(len(c) for c in choices)
    cost = combinations * max_len * (max_len + 1) // 2 * max(maps, 1)
    if combinations > MAX_UNIFORM_COMBINATIONS or cost > MAX_EVALUATIONS:
        return False
    for assignment in _assignments(leaves, choices):
        for n in range(1, max_len + 1):
            seen: set[Any] = set()
            for i in range(n):
                ok, key = _evaluate(graph, keys, i, n, assignment, relation, known)
                if not ok:
                    return False
                compared = equality_key(key)
                if compared is None or compared in seen:
                    return False
                seen.add(compared)
    return True


# Relative error of one map's result against its affine form, as 1e-12 of max(1, |value|): Python's
# float64 roundings of it, at most three (tracr's a·x + b·y: two products and the sum, each 2^-53
# of a term no larger than the value's bound), over 3,000 times fewer. A tracr output map's
# rounding to 12 digits (5e-12) is not covered, and not met: only the program's output is rounded
# (compiler.resolve), which no select reads; a map so wrapped is tried value by value here. Keys
# of numpy float32 values (2^-24) are refused before (a select compares them as tracr does not).
_MAP_ERROR = 1e-12


def _affine_in_indices(
    graph: Graph,
    keys: int,
    uniform: Sequence[bool],
    values: Callable[[int], Sequence[Atom]],
    max_len: int,
) -> bool:
    """Whether node `keys` is c * indices + (uniform s-ops and constants) with c != 0, through
    maps that state their affine form, and float64 errors below |c| / 2 (module doc)."""
    # node -> (coefficient of indices, bound on |value|, error bound on the value), exact form
    found: dict[int, tuple[float, float, float]] = {}

    def form(index: int) -> tuple[float, float, float] | None:
        if index in found:
            return found[index]
        node = graph[index]
        result: tuple[float, float, float] | None
        if node.op is Op.INDICES:
            result = (1.0, float(max_len - 1), 0.0)
        elif uniform[index] or node.op is Op.CONST:
            numbers = [v for v in values(index) if finite_number(v)]
            if len(numbers) != len(values(index)):
                return None
            result = (0.0, max((abs(float(v)) for v in numbers), default=0.0), 0.0)
        elif node.op is Op.MAP and node.fn is not None and unrounded(node.fn) is node.fn:
            coefficients = known_affine(node.fn, [values(j) for j in node.inputs])
            if coefficients is None:
                return None
            parts = [p for p in (form(j) for j in node.inputs) if p is not None]
            if len(parts) != len(node.inputs):
                return None
            c, bound, error = 0.0, abs(coefficients[-1]), 0.0
            for a, part in zip(coefficients, parts, strict=False):  # the last coefficient: b
                c += a * part[0]
                bound += abs(a) * part[1]
                error += abs(a) * part[2]
            result = (c, bound, error + _MAP_ERROR * max(1.0, bound))
        else:
            return None
        found[index] = result
        return result

    top = form(keys)
    return top is not None and top[0] != 0 and 2 * top[2] < abs(top[0])


def _one_per_length(rel: Relation) -> bool:
    by_length: dict[int, tuple[Atom, ...]] = {}
    for (_, n), vs in rel.items():
        first = by_length.setdefault(n, vs)
        # (value sets are mostly interned: identity first, the values' keys where it fails)
        if len(vs) != 1 or (vs is not first and value_key(vs[0]) != value_key(first[0])):
            return False
    return True


def _known_at_positions(rel: Relation | None) -> bool:
    return rel is not None and all(len(v) == 1 for v in rel.values())


def _free_uniforms(
    graph: Graph, index: int, uniform: Sequence[bool], relation: Sequence[Relation | None]
) -> tuple[list[int], set[int], int] | None:
    """The uniform s-ops (not known per position) that node `index`'s maps read, the nodes known
    per position that they read, and how many maps one evaluation runs (for the cost bound); None
    when it reads anything else that is not known per position."""
    found: list[int] = []
    known: set[int] = set()
    maps = 0
    stack, visited = [index], set()
    while stack:
        i = stack.pop()
        if i in visited:
            continue
        visited.add(i)
        node = graph[i]
        if _known_at_positions(relation[i]):
            known.add(i)
        elif node.op is Op.CONST:
            continue
        elif uniform[i]:
            found.append(i)
        elif node.op is Op.MAP and node.fn is not None:
            maps += 1
            stack.extend(node.inputs)
        else:
            return None
    return sorted(found), known, maps


def _assignments(leaves: list[int], choices: list[Sequence[Atom]]) -> list[dict[int, Atom]]:
    out: list[dict[int, Atom]] = [{}]
    for leaf, options in zip(leaves, choices, strict=True):
        out = [{**a, leaf: v} for a in out for v in options]
    return out


def _evaluate(
    graph: Graph,
    index: int,
    i: int,
    n: int,
    assignment: dict[int, Atom],
    relation: Sequence[Relation | None],
    known: set[int],
) -> tuple[bool, Atom]:
    """Node `index` at position i of length n, the uniform s-ops taking `assignment`'s values
    (`known`: the nodes read from their relation)."""
    if index in assignment:
        return True, assignment[index]
    node = graph[index]
    if index in known:
        return True, relation[index][(i, n)][0]  # type: ignore[index]
    if node.op is Op.CONST:
        return True, node.value
    args = []
    for j in node.inputs:
        ok, value = _evaluate(graph, j, i, n, assignment, relation, known)
        if not ok:
            return False, None
        args.append(value)
    try:
        return True, node.fn(*args)  # type: ignore[misc]
    except Exception:  # noqa: BLE001 (a program's function may raise anything)
        return False, None


def equality_key(value: Atom) -> Any:
    """A key equal exactly where `==` holds: numbers (bools among them) by value, others by
    `value_key`; None for NaN, which equals nothing and would need its own care."""
    if isinstance(value, bool | int | float):
        if isinstance(value, float) and math.isnan(value):
            return None
        return ("number", value)  # 1 == 1.0 == True hash alike in Python
    return ("other", value_key(value))
