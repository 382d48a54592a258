"""tracr's s-ops: the primitives, Map, SequenceMap, LinearSequenceMap, Full, ConstantSOp, and the
Python operators that build maps (`tokens == "x"`, `a + b`, `~a`, `a & b`).

Each class carries its tracr evaluation (`_evaluate`, given its children's values); `rasp.tracr.evaluate`
walks the graph. Selectors, Aggregate and SelectorWidth are in `rasp.tracr.selector_nodes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from rasp.tracr.evaluate import evaluate
from rasp.tracr.expr import RASPExpr, Value, check_callable, type_said

VT = TypeVar("VT", bound=Value)
SOpT = TypeVar("SOpT", bound="SOp")


class SOp(RASPExpr):
    """A sequence operation: one value per position."""

    default_name = "sop"
    is_sop = True

    def __call__(self, xs: Sequence[Value]) -> list[Value]:
        return evaluate(self, xs)

    # Comparisons and arithmetic with a constant are a Map; with another s-op, a SequenceMap.
    def __lt__(self, other: Value) -> SOp:
        return _written(Map(lambda x: x < other, self), "{0} < {1}", self, other)

    def __le__(self, other: Value) -> SOp:
        return _written(Map(lambda x: x <= other, self), "{0} <= {1}", self, other)

    def __eq__(self, other: Value) -> SOp:  # type: ignore[override]
        return _written(Map(lambda x: x == other, self), "{0} == {1}", self, other)

    def __ne__(self, other: Value) -> SOp:  # type: ignore[override]
        return _written(Map(lambda x: x != other, self), "{0} != {1}", self, other)

    def __gt__(self, other: Value) -> SOp:
        return _written(Map(lambda x: x > other, self), "{0} > {1}", self, other)

    def __ge__(self, other: Value) -> SOp:
        return _written(Map(lambda x: x >= other, self), "{0} >= {1}", self, other)

    __hash__ = RASPExpr.__hash__

    def __add__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x + y, factors=(1, 1), symbol="+")

    def __radd__(self, other: SOp | Value) -> SOp:
        return _binary(other, self, lambda x, y: x + y, factors=(1, 1), symbol="+")

    def __sub__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x - y, factors=(1, -1), symbol="-")

    def __rsub__(self, other: SOp | Value) -> SOp:
        return _binary(other, self, lambda x, y: x - y, factors=(1, -1), symbol="-")

    def __mul__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x * y, symbol="*")

    def __rmul__(self, other: SOp | Value) -> SOp:
        return _binary(other, self, lambda x, y: x * y, symbol="*")

    def __truediv__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x / y, symbol="/")

    def __rtruediv__(self, other: SOp | Value) -> SOp:
        return _binary(other, self, lambda x, y: x / y, symbol="/")

    def __invert__(self) -> SOp:
        return _written(Map(lambda x: not x, self), "~{0}", self)

    def __and__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x and y, symbol="&")

    def __rand__(self, other: SOp | Value) -> SOp:
        return _binary(other, self, lambda x, y: x and y, symbol="&")

    def __or__(self, other: SOp | Value) -> SOp:
        return _binary(self, other, lambda x, y: x or y, symbol="|")

    def __ror__(self, other: SOp | Value) -> SOp:
        # tracr's own quirk, kept: `other | sop` with a constant computes `x or other`.
        if isinstance(other, SOp):
            return _written(SequenceMap(lambda x, y: x or y, other, self), "{0} | {1}", other, self)
        return _written(Map(lambda x: x or other, self), "{1} | {0}", self, other)


def _binary(
    left: SOp | Value,
    right: SOp | Value,
    op: Callable[[Any, Any], Any],
    factors: tuple[int, int] | None = None,
    *,
    symbol: str,
) -> SOp:
    """`left op right` where at least one side is an s-op (tracr's operator rules). `+` and `-`
    of two s-ops record their `factors` (a, b): on numbers the map is a·x + b·y, which the
    compiler reads as a free view (`rasp.tracr.lower`, compiler.known_affine)."""
    form = f"{{0}} {symbol} {{1}}"
    if isinstance(left, SOp) and isinstance(right, SOp):
        sequence_map = SequenceMap(op, left, right)
        sequence_map.operator_factors = factors
        return _written(sequence_map, form, left, right)
    if isinstance(left, SOp):
        return _written(Map(lambda x: op(x, right), left), form, left, right)
    assert isinstance(right, SOp)
    return _written(Map(lambda x: op(left, x), right), form, left, right)


def _written(made: SOp, form: str, *operands: SOp | Value) -> SOp:
    """`made`, an operator's map, with the expression it computes (`form` of the `operands`:
    `"{0} < {1}"` of (balance, 0)), which names it where its source text is a whole library
    call's (rasp.tracr.lower). None where a Map of a Map composed the two functions into one."""
    inner = made.children[0] if isinstance(made, Map) else None
    if inner is None or any(inner is o for o in operands):
        made.operator_form = (form, operands)
    return made


class TokensType(SOp):
    """The input tokens."""

    default_name = "tokens"

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    @property
    def label(self) -> str:
        return "tokens"

    def __repr__(self) -> str:
        return "tokens"

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return list(xs)


class IndicesType(SOp):
    """The position of each token: 0, 1, ..."""

    default_name = "indices"

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    @property
    def label(self) -> str:
        return "indices"

    def __repr__(self) -> str:
        return "indices"

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return list(range(len(xs)))


class LengthType(SOp):
    """The input length at every position."""

    default_name = "length"

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    @property
    def label(self) -> str:
        return "length"

    def __repr__(self) -> str:
        return "length"

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return [len(xs)] * len(xs)


tokens = TokensType()
indices = IndicesType()
length = LengthType()


class Map(SOp):
    """`f` applied to each value of `inner` (None stays None). A Map of a Map is one Map of the
    composed function unless `simplify=False`, as in tracr."""

    default_name = "map"

    def __init__(self, f: Callable[[Value], Value], inner: SOp, simplify: bool = True) -> None:
        super().__init__()
        check_callable(f, "Map's function")
        if not isinstance(inner, SOp):
            raise TypeError(f"Map's input must be an s-op, got {type_said(inner)}")
        self.f = f
        self.inner = inner
        # (form, operands) where an operator built it (`_written`), for its text
        self.operator_form: tuple[str, tuple[Any, ...]] | None = None
        if simplify and isinstance(inner, Map):
            inner_f = inner.f
            self.f = lambda t: f(inner_f(t))
            self.inner = inner.inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return [self.f(x) if x is not None else None for x in inputs[0]]


class SequenceMap(SOp):
    """`f` applied to the values of two s-ops at each position (None if either is None)."""

    default_name = "sequence_map"

    def __init__(self, f: Callable[[Value, Value], Value], fst: SOp, snd: SOp) -> None:
        super().__init__()
        check_callable(f, "SequenceMap's function")
        for side in (fst, snd):
            if not isinstance(side, SOp):
                raise TypeError(f"SequenceMap's inputs must be s-ops, got {type_said(side)}")
        self.f = f
        # (a, b) where this map is `fst + snd` or `fst - snd` built by an operator (`_binary`)
        self.operator_factors: tuple[int, int] | None = None
        self.operator_form: tuple[str, tuple[Any, ...]] | None = None  # (as Map's)
        self.fst = fst
        self.snd = snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        fst, snd = inputs
        return [self.f(x, y) if None not in [x, y] else None for x, y in zip(fst, snd)]


class LinearSequenceMap(SequenceMap):
    """`fst_fac * fst + snd_fac * snd` at each position."""

    default_name = "linear_sequence_map"

    def __init__(self, fst: SOp, snd: SOp, fst_fac: float, snd_fac: float) -> None:
        super().__init__(lambda x, y: fst_fac * x + snd_fac * y, fst, snd)
        self.fst_fac = fst_fac
        self.snd_fac = snd_fac


class Full(SOp):
    """`fill` at every position."""

    default_name = "full"

    def __init__(self, fill: Value) -> None:
        super().__init__()
        self.fill = fill

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        return [self.fill] * len(xs)


class ConstantSOp(SOp, Generic[VT]):
    """A fixed sequence (tracr's testing helper); its length must match the input's."""

    default_name = "constant_sop"

    def __init__(self, value: Sequence[VT], check_length: bool = True) -> None:
        super().__init__()
        self.value = value
        self.check_length = check_length

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> list[Value]:
        if self.check_length and len(xs) != len(self.value):
            raise ValueError(f"Constant len {len(self.value)} doesn't match input len {len(xs)}.")
        return list(self.value)


def sop_not(sop: SOp) -> SOp:
    return Map(lambda t: not t, sop)
