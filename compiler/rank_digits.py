"""The digit maps of compiler.order_digits, and the order they spell (`digit_order`): apart, so
that the value analysis (compiler.count_keys) reads a rank counted over digits as the rank it
counts without importing the rewrite."""

from __future__ import annotations

import bisect
import dataclasses

from compiler.blocks import Atom
from compiler.graph import Graph, IRNode, Op
from compiler.key_predicates import conjuncts_of
from rasp import sops


@dataclasses.dataclass(frozen=True)
class Digit:
    """Digit `place` (a power of `base`) of a number's rank among `values`."""

    values: tuple[Atom, ...]  # sorted numbers
    place: int
    base: int

    def __call__(self, value: Atom) -> int:
        rank = bisect.bisect_left(self.values, value)  # type: ignore[arg-type]
        return rank // self.place % self.base


def digit_order(graph: Graph, selector: int) -> tuple[int, sops.Comparison] | None:
    """(x, order) where `selector` is order_digits' rewrite of `select(x, x, order)`, checked
    term by term: for each digit place p of x's rank, the term "every higher digit `==`, digit p
    strictly ordered" (one strict order for all), and for `<=` and `>=` one more of every digit
    `==`, with nothing else; each select compares one digit map of x with itself."""
    terms: list[list[IRNode]] = []
    stack = [selector]
    while stack:
        node = graph[stack.pop()]
        if node.op is Op.OR:
            stack.extend(node.inputs)
        else:
            terms.append([graph[i] for i in conjuncts_of(graph, node.index)])
    sources, strict, digits = set(), set(), set()
    shape = []  # per term: the places compared by `==`, and the place ordered (None: none)
    for term in terms:
        equal, ordered = [], []
        for atom in term:
            if atom.op is not Op.SELECT or atom.inputs[0] != atom.inputs[1]:
                return None
            digit = graph[atom.inputs[0]]
            if digit.op is not Op.MAP or not isinstance(digit.fn, Digit) or len(digit.inputs) != 1:
                return None
            sources.add(digit.inputs[0])
            digits.add((digit.fn.values, digit.fn.base))
            if atom.comparison is sops.Comparison.EQ:
                equal.append(digit.fn.place)
            else:
                strict.add(atom.comparison)
                ordered.append(digit.fn.place)
        if len(ordered) > 1 or len(set(equal)) != len(equal):
            return None
        shape.append((frozenset(equal), ordered[0] if ordered else None))
    if len(sources) != 1 or len(digits) != 1:
        return None
    if strict not in ({sops.Comparison.LT}, {sops.Comparison.GT}):
        return None
    base = next(iter(digits))[1]
    count = sum(1 for _, p in shape if p is not None)
    places = [base**j for j in range(count)]
    expected = {(frozenset(q for q in places if q > p), p) for p in places}
    (order,) = strict
    if len(shape) == count + 1:  # `<=`, `>=`: equal ranks too
        expected.add((frozenset(places), None))
        order = sops.Comparison.LEQ if order is sops.Comparison.LT else sops.Comparison.GEQ
    if len(shape) != len(expected) or set(shape) != expected:
        return None
    return sources.pop(), order
