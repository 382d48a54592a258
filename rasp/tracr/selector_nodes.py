"""tracr's selectors (Select with a Comparison or any predicate, ConstantSelector, and/or/not) and
the two primitives that read them: Aggregate and SelectorWidth.

Semantics as tracr evaluates them: query i selects key j iff `predicate(keys[j], queries[i])`; an
Aggregate gives its default where nothing is selected, the one selected value, or the mean of several
(ints, floats and bools; anything else is an error); SelectorWidth counts the selected keys.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from rasp.seqvalues import sum_in_order
from rasp.tracr.evaluate import evaluate
from rasp.tracr.expr import RASPExpr, SelectorValue, Value, type_said
from rasp.tracr.sop_nodes import Full, SOp

VT = TypeVar("VT", bound=Value)


class Predicate(Protocol):
    def __call__(self, key: Value, query: Value) -> bool:
        """Whether a query with value `query` selects a key with value `key`."""


class Comparison(enum.Enum):
    """A two-place predicate for Select: `key OP query`. Comparing None is an error."""

    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "True"
    FALSE = "False"

    def __call__(self, key: Value, query: Value) -> bool:
        if key is None:
            raise ValueError("key is None!")
        if query is None:
            raise ValueError("query is None!")
        return _COMPARISONS[self](key, query)


_COMPARISONS: dict[Comparison, Callable[[Any, Any], bool]] = {
    Comparison.EQ: lambda key, query: key == query,
    Comparison.LT: lambda key, query: key < query,
    Comparison.LEQ: lambda key, query: key <= query,
    Comparison.GT: lambda key, query: key > query,
    Comparison.GEQ: lambda key, query: key >= query,
    Comparison.NEQ: lambda key, query: key != query,
    Comparison.TRUE: lambda key, query: True,
    Comparison.FALSE: lambda key, query: False,
}


class Selector(RASPExpr):
    """A [query, key] pattern of bools: which keys each query attends to."""

    default_name = "selector"

    def __call__(self, xs: Sequence[Value]) -> SelectorValue:
        return evaluate(self, xs)

    def __and__(self, other: Selector) -> Selector:
        return selector_and(self, other)

    def __rand__(self, other: Selector) -> Selector:
        return selector_and(other, self)

    def __or__(self, other: Selector) -> Selector:
        return selector_or(self, other)

    def __ror__(self, other: Selector) -> Selector:
        return selector_or(other, self)

    def __invert__(self) -> Selector:
        return selector_not(self)


class Select(Selector):
    """Query i selects key j iff `predicate(keys[j], queries[i])`."""

    default_name = "select"

    def __init__(self, keys: SOp, queries: SOp, predicate: Predicate) -> None:
        super().__init__()
        for side, what in ((keys, "keys"), (queries, "queries")):
            if not isinstance(side, SOp):
                raise TypeError(f"Select's {what} must be an s-op, got {type_said(side)}")
        if not callable(predicate):
            # `"=="` from RASP or a tutorial: name the Comparison that is spelt so
            meant = next((c for c in Comparison if c.value == predicate), None)
            also = f" (did you mean rasp.Comparison.{meant.name}?)" if meant else ""
            raise TypeError(
                f"Select's predicate must be a Comparison or a function, got {predicate!r}{also}"
            )
        self.keys = keys
        self.queries = queries
        self.predicate = predicate

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.keys, self.queries]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> SelectorValue:
        keys, queries = inputs
        return [[bool(self.predicate(key, query)) for key in keys] for query in queries]


class ConstantSelector(Selector):
    """A fixed selector matrix (tracr's testing helper)."""

    default_name = "constant_selector"

    def __init__(self, value: SelectorValue, check_length: bool = True) -> None:
        super().__init__()
        self.value = value
        self.check_length = check_length

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> SelectorValue:
        if self.check_length and len(xs) != len(self.value):
            raise ValueError(f"Constant len {len(xs)} doesn't match input len {len(self.value)}.")
        return self.value


class SelectorAnd(Selector):
    default_name = "selector_and"

    def __init__(self, fst: Selector, snd: Selector) -> None:
        super().__init__()
        self.fst, self.snd = _selector(fst), _selector(snd)

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> SelectorValue:
        return np.logical_and(np.array(inputs[0]), np.array(inputs[1])).tolist()


class SelectorOr(Selector):
    default_name = "selector_or"

    def __init__(self, fst: Selector, snd: Selector) -> None:
        super().__init__()
        self.fst, self.snd = _selector(fst), _selector(snd)

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> SelectorValue:
        return np.logical_or(np.array(inputs[0]), np.array(inputs[1])).tolist()


class SelectorNot(Selector):
    default_name = "selector_not"

    def __init__(self, inner: Selector) -> None:
        super().__init__()
        self.inner = _selector(inner)

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> SelectorValue:
        return np.logical_not(np.array(inputs[0])).tolist()


def _selector(value: Any) -> Selector:
    if not isinstance(value, Selector):
        raise TypeError(f"expected a selector, got {type_said(value)}")
    return value


def selector_not(inner: Selector, simplify: bool = True) -> Selector:
    """`~inner`: a Select with the negated predicate when `inner` is a Select (as tracr does)."""
    if simplify and isinstance(inner, Select):
        predicate = inner.predicate
        return Select(inner.keys, inner.queries, lambda k, q: not predicate(k, q))
    return SelectorNot(inner)


def selector_and(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    """`fst & snd`: one Select when both read the same keys and queries (as tracr does)."""
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge_selects(fst, snd, lambda a, b: a and b)
        if merged is not None:
            return merged
    return SelectorAnd(fst, snd)


def selector_or(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    """`fst | snd`: one Select when both read the same keys and queries (as tracr does)."""
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge_selects(fst, snd, lambda a, b: a or b)
        if merged is not None:
            return merged
    return SelectorOr(fst, snd)


def _merge_selects(
    fst: Select, snd: Select, combine: Callable[[bool, bool], bool]
) -> Select | None:
    """tracr's simplification: two Selects over the same keys and queries (a Full side matches any
    s-op, its fill baked into that predicate) become one Select with a combined predicate."""
    fst_pred, snd_pred = fst.predicate, snd.predicate
    keys: SOp | None = None
    queries: SOp | None = None
    if isinstance(fst.keys, Full):
        keys = snd.keys
        fst_pred = _fix_key(fst_pred, fst.keys.fill)
    if isinstance(snd.keys, Full):
        keys = fst.keys
        snd_pred = _fix_key(snd_pred, snd.keys.fill)
    if isinstance(fst.queries, Full):
        queries = snd.queries
        fst_pred = _fix_query(fst_pred, fst.queries.fill)
    if isinstance(snd.queries, Full):
        queries = fst.queries
        snd_pred = _fix_query(snd_pred, snd.queries.fill)
    if fst.keys is snd.keys:
        keys = fst.keys
    if fst.queries is snd.queries:
        queries = fst.queries
    if keys is None or queries is None:
        return None
    first, second = fst_pred, snd_pred
    return Select(keys, queries, lambda k, q: combine(first(k, q), second(k, q)))


def _fix_key(predicate: Predicate, fill: Value) -> Predicate:
    return lambda key, query: predicate(fill, query)


def _fix_query(predicate: Predicate, fill: Value) -> Predicate:
    return lambda key, query: predicate(key, fill)


# ------------------------------------------------------------------------------------------------
# Reading a selector


class SelectorWidth(SOp):
    """How many keys each query selects."""

    default_name = "selector_width"

    def __init__(self, selector: Selector) -> None:
        super().__init__()
        self.selector = _selector(selector)

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return [sum(row) for row in inputs[0]]


class Aggregate(SOp, Generic[VT]):
    """Per query: `default` where nothing is selected, else the mean of the selected values (the
    value itself when one is selected)."""

    default_name = "aggregate"

    def __init__(self, selector: Selector, sop: SOp, default: VT | None = None) -> None:
        super().__init__()
        self.selector = _selector(selector)
        if not isinstance(sop, SOp):
            raise TypeError(f"Aggregate's values must be an s-op, got {type_said(sop)}")
        if default is not None and not isinstance(default, (str, float, bool, int)):
            raise TypeError(f"Aggregate's default must be a value or None, got {default!r}")
        self.sop = sop
        self.default = default

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector, self.sop]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        selector, values = inputs
        return [_mean([v for hit, v in zip(row, values) if hit], self.default) for row in selector]


def _mean(xs: Sequence[Any], default: Any) -> Any:
    if not xs:
        return default
    if len(xs) == 1:
        return xs[0]
    if all(isinstance(x, (int, bool, float)) for x in xs):
        return sum_in_order(xs) / len(xs)  # Python < 3.12's sum on every Python
    raise ValueError(
        f"Only types int, bool, and float are supported for aggregation. Received sequence: {xs}"
    )
