"""A select that compares one s-op with itself through a term of the length: the term cancels.

A key and its query lie in one input, so they see one `length`. In

    v1 = length - v0;
    select(v1, v1, >)

key k is selected where length - v0[k] > length - v0[q], which is v0[k] < v0[q] wherever the map
`length - v0` is strictly monotone in v0 at each length. Read as v1, the head compares a one-hot
of every value of length - v0 (25 at N = 4), written by a step MLP over that number whose large
pre-activations leave each column an error of about 2e-4; the head's scores sum those errors over
every column at SCORE_UNIT each, so the weights of the keys a width counts err by e^4 and the
width was refused at N = 4 (a relu margin of 4 against a float32 error of 1.09e+06). Read as v0,
the head compares v0's few values a layer earlier.

`select_offsets(root, vocab, max_len)` rewrites a `Select` whose keys and queries are one map node
x = F(t_1, ..., y), where every t_j is the length, a constant or a map of them (the same at every
position of an input) and y is one other s-op that reads the tokens (a select of the position
alone is exact as it is), into `select(y, y, op')` when, for every length
n = 1..max_len, F(n, ·) is strictly increasing on y's values (op' = op) or strictly decreasing
(op' is op mirrored: `<` for `>`, `<=` for `>=`, `==` and `!=` unchanged), as Python computes F
(the interpreter's own function) on each value of y the compiler's value analysis lists, every
value and every result a finite number. Then for any two of y's values u, v, F(n, u) op F(n, v)
is u op' v: strict monotony keeps order and equality, so the two selects select the same keys of
every input. Where F raises on some value the select is kept (the original fails there). A graph
with nothing to rewrite is returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom, is_number
from compiler.rewrite import ValueFacts, positional_nodes, rebuilt
from rasp import sops
from rasp.errors import CompileError

# (length, value) points one select's map may be evaluated at: a check, not a table
MAX_POINTS = 1_000_000

_MIRRORED = {
    sops.Comparison.EQ: sops.Comparison.EQ,
    sops.Comparison.NEQ: sops.Comparison.NEQ,
    sops.Comparison.LT: sops.Comparison.GT,
    sops.Comparison.LEQ: sops.Comparison.GEQ,
    sops.Comparison.GT: sops.Comparison.LT,
    sops.Comparison.GEQ: sops.Comparison.LEQ,
}


def select_offsets(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with each select of one s-op against itself through a length term read as the
    s-op under the term (the module docstring); `root` itself if there is none."""
    order = list(sops.walk(root))
    per_length = _per_length(order)
    positional, _ = positional_nodes(order)
    sites = {
        node.id: found
        for node in order
        if isinstance(node, sops.Select)
        and node.keys is node.queries
        and (found := _under(node.keys, per_length)) is not None
        # a select of the position alone is exact as it is (its sides come from the embedding
        # or exact steps), and its s-op may be read beside it anyway (`select(length, x, <=) or
        # select(x, x, <=)` with x = length - indices: 3 layers as `indices`, not 2)
        and found[0].id not in positional
    }
    if not sites or not vocab:
        return root
    try:  # y's values, from the compiler's own analysis
        facts = ValueFacts([y for y, _ in sites.values()], vocab, max_len)
    except CompileError:
        return root  # the compile itself reports it, in its own words
    flips: dict[int, bool] = {}
    for node_id, (y, x) in sites.items():
        direction = _direction(x, y, facts.values(y), max_len)
        if direction is not None:
            flips[node_id] = direction < 0
    if not flips:
        return root
    new: dict[int, sops.Node] = {}
    for node in order:
        if node.id not in flips:
            new[node.id] = rebuilt(node, new)
            continue
        assert isinstance(node, sops.Select)
        y = new[sites[node.id][0].id]
        assert isinstance(y, sops.SOp)
        comparison = _MIRRORED[node.comparison] if flips[node.id] else node.comparison
        new[node.id] = dataclasses.replace(node, keys=y, queries=y, comparison=comparison)
    return new[root.id]


def _per_length(order: list[sops.Node]) -> set[int]:
    """Nodes the same at every position of an input: the length, constants and maps of them."""
    out: set[int] = set()
    for node in order:
        if isinstance(node, (sops.LengthSOp, sops.ConstSOp)) or (
            isinstance(node, sops.MapSOp) and all(c.id in out for c in node.inputs)
        ):
            out.add(node.id)
    return out


def _under(x: sops.SOp, per_length: set[int]) -> tuple[sops.SOp, sops.SOp] | None:
    """(y, x) where x is a map computed by maps from per-length nodes, at least one of which reads
    the length, and from one other s-op y; None otherwise."""
    if not isinstance(x, sops.MapSOp) or x.id in per_length:
        return None
    others: dict[int, sops.SOp] = {}
    reads_length = False
    seen = {x.id}  # each node once: maps reading one another twice made the walk exponential
    stack: list[sops.SOp] = [x]
    while stack:
        node = stack.pop()
        if node.id in per_length:
            reads_length = reads_length or not isinstance(node, sops.ConstSOp)
        elif isinstance(node, sops.MapSOp):
            fresh = [c for c in node.inputs if c.id not in seen]
            seen.update(c.id for c in fresh)
            stack.extend(fresh)
        else:
            others[node.id] = node
    if len(others) != 1 or not reads_length:
        return None
    return next(iter(others.values())), x


def _direction(x: sops.SOp, y: sops.SOp, values: Sequence[Atom], max_len: int) -> int | None:
    """+1 where x, as a function of y at each length 1..max_len, is strictly increasing on
    `values`, -1 where strictly decreasing at every length, else None."""
    if not values or len(values) * max_len > MAX_POINTS:
        return None
    if not all(is_number(v) and math.isfinite(v) for v in values):
        return None
    if any(float(v) != v for v in values):
        return None  # an int beyond float64's whole numbers: leave it
    # values equal as numbers (1 and 1.0) compare alike on both sides: one group, one result
    groups: dict[float, list[Atom]] = {}
    for v in values:
        groups.setdefault(float(v), []).append(v)
    ordered = [groups[k] for k in sorted(groups)]
    direction = 0
    for n in range(1, max_len + 1):
        outs: list[Any] = []
        for members in ordered:
            try:
                results = [_evaluate(x, y, v, n) for v in members]
            except Exception:  # noqa: BLE001 (a program's function may raise anything)
                return None
            if not all(is_number(r) and math.isfinite(r) for r in results):
                return None
            if any(r != results[0] for r in results):
                return None
            outs.append(results[0])
        for a, b in zip(outs, outs[1:]):
            step = 1 if b > a else -1 if b < a else 0
            if step == 0 or direction not in (0, step):
                return None
            direction = step
    return direction or None


def _evaluate(node: sops.SOp, y: sops.SOp, value: Atom, n: int) -> Any:
    """`node` where y is `value` and the length n (node is computed from them by maps)."""
    if node is y:
        return value
    if isinstance(node, sops.LengthSOp):
        return n
    if isinstance(node, sops.ConstSOp):
        return node.value
    assert isinstance(node, sops.MapSOp)
    return node.fn(*(_evaluate(c, y, value, n) for c in node.inputs))
