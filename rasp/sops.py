"""Lazy s-ops and selectors: the computation graph a RASP program builds, and its reference evaluator.

Running a program's statements (see `interpreter.py`) does not compute values: every s-op or selector
expression creates a node of this module, exactly as in the original RASP (`UnfinishedSequence`).
`evaluate(node, tokens)` then computes a node on one input, vectorised over positions with numpy.

This graph is also the compiler's input: `def`s are already inlined, `for` loops unrolled and list,
dict and atom expressions folded to constants by the time it exists. Its node set is closed:

    TokensSOp, IndicesSOp, LengthSOp, ConstSOp    inputs and constants
    MapSOp                                        elementwise function of one or several s-ops
    AggregateSOp, SelectorWidthSOp                attention
    Select, SelectAnd, SelectOr, SelectNot        selectors

A selector's value is a bool matrix `[n_query, n_key]`, where `[i, j]` is `key[j] OP query[i]`.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from rasp.errors import RaspRuntimeError, Span

Atom = int | float | str | bool

_node_ids = itertools.count()


class Comparison(Enum):
    """A select comparison; `apply(key, query)` is `key OP query`, as in the original."""

    EQ = "=="
    NEQ = "!="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="

    def apply(self, key: Any, query: Any) -> bool:
        return bool(_COMPARE[self](key, query))


_COMPARE: dict[Comparison, Callable[[Any, Any], Any]] = {
    Comparison.EQ: operator.eq,
    Comparison.NEQ: operator.ne,
    Comparison.LT: operator.lt,
    Comparison.LEQ: operator.le,
    Comparison.GT: operator.gt,
    Comparison.GEQ: operator.ge,
}


class SeqType(Enum):
    """The type label of an evaluated sequence, as the original prints it."""

    INTS = "ints"
    FLOATS = "floats"
    STRINGS = "strings"
    BOOLS = "bools"


class TokenKind(Enum):
    """Which conversion an input s-op applies to each raw token."""

    STR = "str"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    ASIS = "asis"


_TOKEN_CONVERT: dict[TokenKind, Callable[[Any], Any]] = {
    TokenKind.STR: str,
    TokenKind.INT: int,
    TokenKind.FLOAT: float,
    TokenKind.BOOL: bool,
    TokenKind.ASIS: lambda x: x,
}


# ------------------------------------------------------------------------------------------------
# Nodes


@dataclass(eq=False)
class Node:
    """A lazy RASP value. Identity matters (two identical `select(...)` calls are two heads)."""

    span: Span | None = field(default=None, kw_only=True, repr=False)
    # The variable name the program last bound this node to (the original renames on assignment).
    name: str | None = field(default=None, kw_only=True)
    id: int = field(default_factory=lambda: next(_node_ids), init=False, repr=False)

    def children(self) -> tuple[Node, ...]:
        return ()

    @property
    def label(self) -> str:
        return self.name or f"{type(self).__name__}#{self.id}"


class SOp(Node):
    """A sequence operator: one value per position."""


class Selector(Node):
    """A bool [query, key] pattern."""


@dataclass(eq=False)
class TokensSOp(SOp):
    kind: TokenKind = TokenKind.STR


@dataclass(eq=False)
class IndicesSOp(SOp):
    pass


@dataclass(eq=False)
class LengthSOp(SOp):
    """The input length at every position (a primitive here; RASP code in the original)."""


@dataclass(eq=False)
class ConstSOp(SOp):
    """An atom broadcast to every position (e.g. the `0` of `select(indices, 0, ==)`)."""

    value: Atom = 0


@dataclass(eq=False)
class MapSOp(SOp):
    """`fn` applied per position to the values of `inputs`; `text` describes it for people."""

    fn: Callable[..., Any] = field(default=lambda x: x, repr=False)
    inputs: tuple[SOp, ...] = ()
    text: str = "map"

    def children(self) -> tuple[Node, ...]:
        return self.inputs


@dataclass(eq=False)
class Select(Selector):
    keys: SOp = field(default_factory=IndicesSOp)
    queries: SOp = field(default_factory=IndicesSOp)
    comparison: Comparison = Comparison.EQ

    def children(self) -> tuple[Node, ...]:
        return (self.keys, self.queries)


@dataclass(eq=False)
class SelectAnd(Selector):
    left: Selector = field(default_factory=Select)
    right: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(eq=False)
class SelectOr(Selector):
    left: Selector = field(default_factory=Select)
    right: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(eq=False)
class SelectNot(Selector):
    inner: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.inner,)


@dataclass(eq=False)
class AggregateSOp(SOp):
    """Per query: nothing selected -> default; one -> that value; several -> their mean (numbers)."""

    selector: Selector = field(default_factory=Select)
    sop: SOp = field(default_factory=IndicesSOp)
    default: Atom = 0

    def children(self) -> tuple[Node, ...]:
        return (self.selector, self.sop)


@dataclass(eq=False)
class SelectorWidthSOp(SOp):
    """How many keys each query selects (a primitive; the original builds it with the BOS trick)."""

    selector: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.selector,)


def walk(root: Node) -> Iterator[Node]:
    """Every node `root` depends on, each once, children before parents (iterative: graphs get deep)."""
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        if node.id in seen:
            continue
        seen.add(node.id)
        stack.append((node, True))
        for child in reversed(node.children()):
            if child.id not in seen:
                stack.append((child, False))


# ------------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class SeqValue:
    """An evaluated s-op: plain Python values (an int stays an int) and their type label."""

    values: tuple[Any, ...]
    type: SeqType

    def __len__(self) -> int:
        return len(self.values)

    def array(self) -> np.ndarray:
        """The values as a typed numpy array (for vectorised select and aggregate)."""
        if self.type is SeqType.STRINGS:
            return np.array(self.values, dtype=str)
        if self.type is SeqType.BOOLS:
            return np.array(self.values, dtype=bool)
        if self.type is SeqType.INTS:
            try:
                return np.array(self.values, dtype=np.int64)
            except OverflowError:
                return np.array(self.values, dtype=object)
        return np.array(self.values, dtype=np.float64)


def type_of_value(value: Any) -> SeqType | None:
    if isinstance(value, bool):
        return SeqType.BOOLS
    if isinstance(value, int):
        return SeqType.INTS
    if isinstance(value, float):
        return SeqType.FLOATS
    if isinstance(value, str):
        return SeqType.STRINGS
    return None


def make_seq(values: Sequence[Any], span: Span | None = None) -> SeqValue:
    """A `SeqValue`, checking the original's rule: one type, except that numbers mix.

    Bools count as ints (as Python's isinstance has it); ints or bools with floats are floats.
    """
    types = {type_of_value(v) for v in values}
    if None in types:
        bad = next(v for v in values if type_of_value(v) is None)
        raise RaspRuntimeError(
            f"s-op values must be ints, floats, strings or bools, got {type(bad).__name__}: {bad!r}",
            span,
        )
    if len(types) > 1 and types <= {SeqType.BOOLS, SeqType.INTS, SeqType.FLOATS}:
        # The original checks isinstance(v, int), which bools pass: a default 0 among bools
        # (`aggregate(sel, tokens == "a")`) makes ints, and any mix with floats makes floats.
        # The values themselves are kept as they are (True stays True).
        mixed = SeqType.FLOATS if SeqType.FLOATS in types else SeqType.INTS
        return SeqValue(tuple(values), mixed)
    if len(types) > 1:
        kinds = ", ".join(sorted(t.value for t in types if t is not None))
        raise RaspRuntimeError(
            f"attempted to create sequence with vals of different types ({kinds})",
            span,
            hint="an aggregate's default (0 unless given) must have the type of the aggregated values",
        )
    (only,) = types
    assert only is not None
    return SeqValue(tuple(values), only)


# ------------------------------------------------------------------------------------------------
# Evaluation


def evaluate(node: Node, tokens: Sequence[Any]) -> SeqValue | np.ndarray:
    """The value of `node` on one input: a `SeqValue` for an s-op, a bool `[n, n]` matrix for a selector."""
    return Evaluator(tokens).value(node)


class Evaluator:
    """Evaluates nodes on one fixed input, memoising every node it computes."""

    def __init__(self, tokens: Sequence[Any]) -> None:
        if len(tokens) == 0:
            raise RaspRuntimeError("the input is empty", hint="RASP programs run on inputs of length >= 1")
        self.tokens = list(tokens)
        self.n = len(self.tokens)
        self.memo: dict[int, SeqValue | np.ndarray] = {}

    def value(self, root: Node) -> SeqValue | np.ndarray:
        if root.id not in self.memo:
            for node in walk(root):
                if node.id not in self.memo:
                    self.memo[node.id] = self._compute(node)
        return self.memo[root.id]

    def seq(self, node: SOp) -> SeqValue:
        value = self.value(node)
        assert isinstance(value, SeqValue)
        return value

    def matrix(self, node: Selector) -> np.ndarray:
        value = self.value(node)
        assert isinstance(value, np.ndarray)
        return value

    def _compute(self, node: Node) -> SeqValue | np.ndarray:
        n = self.n
        match node:
            case TokensSOp(kind=kind):
                convert = _TOKEN_CONVERT[kind]
                try:
                    return make_seq([convert(t) for t in self.tokens], node.span)
                except (ValueError, TypeError) as exc:
                    raise RaspRuntimeError(
                        f"cannot read the input as tokens_{kind.value}: {exc}", node.span
                    ) from None
            case IndicesSOp():
                return SeqValue(tuple(range(n)), SeqType.INTS)
            case LengthSOp():
                return SeqValue((n,) * n, SeqType.INTS)
            case ConstSOp(value=value):
                return make_seq([value] * n, node.span)
            case MapSOp():
                return self._map(node)
            case Select():
                return self._select(node)
            case SelectAnd(left=left, right=right):
                return self.matrix(left) & self.matrix(right)
            case SelectOr(left=left, right=right):
                return self.matrix(left) | self.matrix(right)
            case SelectNot(inner=inner):
                return ~self.matrix(inner)
            case AggregateSOp():
                return self._aggregate(node)
            case SelectorWidthSOp(selector=selector):
                widths = self.matrix(selector).sum(axis=1)
                return SeqValue(tuple(int(w) for w in widths), SeqType.INTS)
        raise TypeError(f"unknown node {node!r}")  # a bug in this module, not a user error

    def _map(self, node: MapSOp) -> SeqValue:
        columns = [self.seq(s).values for s in node.inputs]
        rows = zip(*columns, strict=True) if columns else [()] * self.n
        try:
            out = [node.fn(*args) for args in rows]
        except RaspRuntimeError as exc:
            raise exc.with_span(node.span) from None
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError) as exc:
            raise RaspRuntimeError(_python_error_text(exc), node.span) from None
        return make_seq(out, node.span)

    def _select(self, node: Select) -> np.ndarray:
        keys, queries = self.seq(node.keys), self.seq(node.queries)
        strings = (keys.type is SeqType.STRINGS, queries.type is SeqType.STRINGS)
        if strings[0] != strings[1]:
            # Python semantics: a string never equals a number, and cannot be ordered against one.
            if node.comparison is Comparison.EQ:
                return np.zeros((self.n, self.n), dtype=bool)
            if node.comparison is Comparison.NEQ:
                return np.ones((self.n, self.n), dtype=bool)
            key_t = "str" if strings[0] else type(keys.values[0]).__name__
            query_t = "str" if strings[1] else type(queries.values[0]).__name__
            raise RaspRuntimeError(
                f"'{node.comparison.value}' not supported between instances of '{key_t}' and '{query_t}'",
                node.span,
            )
        k = keys.array()[None, :]  # [1, n_key]
        q = queries.array()[:, None]  # [n_query, 1]
        return np.asarray(_COMPARE[node.comparison](k, q), dtype=bool)  # [n_query, n_key]

    def _aggregate(self, node: AggregateSOp) -> SeqValue:
        sel = self.matrix(node.selector)  # [n_query, n_key]
        vals = self.seq(node.sop)
        widths = sel.sum(axis=1)  # [n_query]
        several = widths >= 2
        if several.any():
            if vals.type in (SeqType.STRINGS, SeqType.BOOLS):
                raise RaspRuntimeError(
                    "asked to average multiple values, but they are non-numbers",
                    node.span,
                    hint="several positions were selected for one query; aggregate them only if "
                    "the values are numbers, or make the selection pick at most one position",
                )
            means = (sel.astype(np.float64) @ vals.array().astype(np.float64)) / np.maximum(widths, 1)
        first = sel.argmax(axis=1)
        out: list[Any] = []
        for i in range(self.n):
            w = widths[i]
            if w == 0:
                out.append(node.default)
            elif w == 1:
                out.append(vals.values[first[i]])
            else:
                out.append(float(means[i]))
        return make_seq(out, node.span)


def _python_error_text(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"index [ {exc.args[0]!r} ] not in dict." if exc.args else "key not in dict."
    return str(exc) or type(exc).__name__
