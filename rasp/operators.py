"""What RASP's operators mean on each kind of value: plain Python on atoms, lazy nodes on s-ops.

An operator with an s-op operand becomes one `MapSOp` whose `fn` does the Python operation on one
position's values; constant operands are closed over, not broadcast, so `tokens == "a"` is a map of
one s-op. Selectors combine with `and`/`or`/`not` only. Every error is a `RaspError` at the span of
the expression that caused it. Indexing and `in` are `rasp.lookups`'.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from rasp import arithmetic, compare
from rasp.arithmetic import PYTHON_BINARY
from rasp.ast import BinaryOp, UnaryOp
from rasp.atoms import atom_key
from rasp.errors import RaspRuntimeError, RaspTypeError, Span
from rasp.selector_hints import (
    INDICATOR,
    mixed_logic_hint,
    selector_as_value_hint,
    unary_on_selector_hint,
)
from rasp.sops import (
    AggregateSOp,
    Comparison,
    ConstSOp,
    MapSOp,
    Select,
    SelectAnd,
    SelectNot,
    SelectOr,
    Selector,
    SOp,
)
from rasp.values import (
    describe,
    evaluated_hint,
    evaluated_inside,
    is_atom,
    is_evaluated,
    is_function,
    kind_name,
    non_token_inside,
)
from rasp.wording import with_article


def _indicator(value: Any) -> int:
    return 1 if value else 0


# Module-level, not lambdas: a `Lifted` map's structure names its function, so two maps made by
# the same operation compare equal (compiler.dedupe).


def _both(a: Any, b: Any) -> bool:
    return bool(a) and bool(b)


def _either(a: Any, b: Any) -> bool:
    return bool(a) or bool(b)


def _choose(cond: Any, then: Any, orelse: Any) -> Any:
    return then if cond else orelse


def _not(value: Any) -> bool:
    return not value


PYTHON_UNARY: dict[UnaryOp, Callable[[Any], Any]] = {
    UnaryOp.NOT: _not,
    UnaryOp.NEG: operator.neg,
    UnaryOp.POS: operator.pos,
    UnaryOp.ROUND: round,
    UnaryOp.INDICATOR: _indicator,
}


def on_atoms(fn: Callable[..., Any], args: Sequence[Any], span: Span) -> Any:
    """`fn(*args)` on plain values, with Python's errors turned into located RASP errors."""
    try:
        return fn(*args)
    except RaspRuntimeError as exc:
        raise exc.with_span(span) from None
    except TypeError as exc:
        raise RaspTypeError(str(exc), span) from None
    except (ArithmeticError, ValueError) as exc:
        raise RaspRuntimeError(str(exc) or type(exc).__name__, span) from None


@dataclass(frozen=True, eq=False, slots=True)
class Lifted:
    """`fn` per position: the s-op arguments of `template` (at `positions`) are filled with one
    position's values, the other arguments (atoms, or a list or dict of them) are kept."""

    fn: Callable[..., Any]
    template: tuple[Any, ...]
    positions: tuple[int, ...]

    def __call__(self, *values: Any) -> Any:
        full = list(self.template)
        for i, v in zip(self.positions, values):
            full[i] = v
        return arithmetic.apply(self.fn, full)

    def structure(self) -> Hashable | None:
        """Equal for two maps that compute the same function of their inputs (compiler.dedupe):
        one Python operation (a module-level function, never a fresh closure) and constants equal
        by type and value (1, 1.0 and True differ); None where a constant has no such key."""
        try:
            constants = tuple(
                strict_key(a) for i, a in enumerate(self.template) if i not in self.positions
            )
        except TypeError:
            return None
        return ("lifted", self.fn, self.positions, constants)


def strict_key(value: Any) -> Hashable:
    """A key equal only for values of the same types and values all the way down (lists,
    tuples, dicts in their order, atoms; a float by its bits, so -0.0 is not 0.0); TypeError
    for anything else."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(strict_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((strict_key(k), strict_key(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("float", value.hex())
    if is_atom(value):
        return atom_key(value)
    raise TypeError(f"no key for {type(value).__name__}")


def lift(fn: Callable[..., Any], args: Sequence[Any], span: Span) -> MapSOp:
    """One `MapSOp` computing `fn` per position: s-op arguments are its inputs, atoms are
    closed over."""
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, SOp))
    template = tuple(args)
    inputs = tuple(template[i] for i in positions)
    fn_at = Lifted(fn, template, positions)
    return MapSOp(fn=fn_at, inputs=inputs, text=source_text(span), span=span)


def source_text(span: Span) -> str:
    return span.shown_text()


_COMPARING = frozenset(
    (BinaryOp.EQ, BinaryOp.NE, BinaryOp.LT, BinaryOp.GT, BinaryOp.LE, BinaryOp.GE, BinaryOp.IN)
)


def refuse_evaluated(op_text: str, operands: Sequence[Any], span: Span) -> None:
    """An applied s-op or selector (`f("abc")`) is no operand: its truth is numpy's error (or
    always True), and its arithmetic Python's error about our classes."""
    for operand in operands:
        if is_evaluated(operand):
            raise RaspTypeError(
                f"Cannot apply {op_text} to {kind_name(operand)}: {describe(operand)}",
                span,
                hint=evaluated_hint(operand),
            )


def refuse_evaluated_inside(op_text: str, operands: Sequence[Any], span: Span) -> None:
    """Nor one inside a list or dict that is compared, searched or closed over by an s-op's map
    (Python compares the items: an evaluated selector's truth is numpy's error)."""
    for operand in operands:
        if isinstance(operand, list | dict):
            found = evaluated_inside(operand)
            if found is not None:
                raise RaspTypeError(
                    f"Cannot apply {op_text} to {with_article(kind_name(operand))} holding "
                    f"{with_article(kind_name(found))}: {describe(found)}",
                    span,
                    hint=evaluated_hint(found),
                )


def binary(op: BinaryOp, left: Any, right: Any, span: Span) -> Any:
    """`left op right` for every operator except `in` (see `contains`)."""
    refuse_evaluated(op.value, (left, right), span)
    if op is BinaryOp.MOD and (
        isinstance(left, str) or (isinstance(left, SOp) and isinstance(right, list | dict))
    ):
        _refuse_formatting_nodes(right, span)
    if op in _COMPARING or isinstance(left, SOp) or isinstance(right, SOp):
        refuse_evaluated_inside(op.value, (left, right), span)
    if op in (BinaryOp.AND, BinaryOp.OR):
        return _logic(op, left, right, span)
    if isinstance(left, Selector) or isinstance(right, Selector):
        raise RaspTypeError(
            f"Cannot apply {op.value} to selector(s)",
            span,
            hint="selectors combine only with 'and', 'or' and 'not'",
        )
    fn = PYTHON_BINARY[op]
    if isinstance(left, SOp) or isinstance(right, SOp):
        # The other operand may be any value but a selector, as in the original: `indices == [1]`
        # is Python's `0 == [1]` at each position; a position whose value is not an atom fails
        # when the s-op is evaluated. A function fails at every position but in `==` and `!=`
        # (Python's message named our class, 'RaspFunction'): refused here, as `f + 1` is.
        if op not in (BinaryOp.EQ, BinaryOp.NE):
            _check_plain(op.value, [a for a in (left, right) if not isinstance(a, SOp)], span)
        return lift(fn, (left, right), span)
    if op in (BinaryOp.EQ, BinaryOp.NE) and (is_function(left) or is_function(right)):
        # Python's `==` on the original's function objects: a function equals only itself
        return compare.same(left, right) is (op is BinaryOp.EQ)
    _check_plain(op.value, (left, right), span)
    if op in _COMPARING and (compare.holds_node(left) or compare.holds_node(right)):
        fn = _COMPARE_HOLDING_NODES[op]  # lists or dicts holding s-ops: as the original compares
    return on_atoms(arithmetic.apply, (fn, (left, right)), span)


_COMPARE_HOLDING_NODES: dict[BinaryOp, Callable[[Any, Any], bool]] = {
    BinaryOp.EQ: compare.same,
    BinaryOp.NE: lambda a, b: not compare.same(a, b),
    BinaryOp.LT: lambda a, b: compare.ordered(operator.lt, a, b),
    BinaryOp.LE: lambda a, b: compare.ordered(operator.le, a, b),
    BinaryOp.GT: lambda a, b: compare.ordered(operator.gt, a, b),
    BinaryOp.GE: lambda a, b: compare.ordered(operator.ge, a, b),
}


def _refuse_formatting_nodes(right: Any, span: Span) -> None:
    """`"<%s>" % x` formats x's text: the original's, for an s-op, selector or function (or a list
    or dict holding one), is its Python object's, never its values (`"%d" % indices` fails there).
    A string s-op on the left formats each position's string with the same right operand."""
    found = right if isinstance(right, SOp) else non_token_inside(right)
    if found is None:
        return
    kind = kind_name(found)
    if found is not right:
        kind = f"{kind_name(right)} holding {with_article(kind)}"
    raise RaspTypeError(
        f"Cannot format {with_article(kind)} into a string with %",
        span,
        hint="the original formats its Python object's text there, not its values; to build a "
        'string at each position, join strings with +: "<" + tokens + ">"',
    )


def _check_plain(op_text: str, args: Sequence[Any], span: Span) -> None:
    for arg in args:
        if not is_atom(arg) and not isinstance(arg, list | dict):
            raise RaspTypeError(
                f"Cannot apply {op_text} to {kind_name(arg)}: {describe(arg)}", span
            )


def _logic(op: BinaryOp, left: Any, right: Any, span: Span) -> Any:
    selectors = (isinstance(left, Selector), isinstance(right, Selector))
    if any(selectors):
        if not all(selectors):
            raise RaspTypeError(
                f"Cannot apply {op.value} between selector and non-selector",
                span,
                hint=mixed_logic_hint(op.value),
            )
        node = SelectAnd if op is BinaryOp.AND else SelectOr
        return node(left=left, right=right, span=span)
    if isinstance(left, SOp) or isinstance(right, SOp):
        # The original makes an atom operand a constant s-op; one of a list, dict or function
        # holds no s-op value, so it has no value there (as for an elementwise `if`).
        _require_elementwise((left, right), f"the operands of an elementwise '{op.value}'", span)
        if op is BinaryOp.AND:
            return lift(_both, (left, right), span)
        return lift(_either, (left, right), span)
    # Atoms, lists, ...: Python's own `and`/`or` (`3 and 4` is 4).
    return (left and right) if op is BinaryOp.AND else (left or right)


def unary(op: UnaryOp, operand: Any, span: Span) -> Any:
    refuse_evaluated(op.value, (operand,), span)
    if isinstance(operand, Selector):
        if op is UnaryOp.NOT:
            return SelectNot(inner=operand, span=span)
        hint = unary_on_selector_hint(op is UnaryOp.INDICATOR)
        raise RaspTypeError(f"Cannot apply {op.value} to selector(s)", span, hint=hint)
    if op is UnaryOp.INDICATOR and not isinstance(operand, SOp):
        raise RaspTypeError(
            f"indicator operator expects s-op, got: {describe(operand)}",
            span,
            hint=f"{INDICATOR}; for a single value, write 1 or 0",
        )
    fn = PYTHON_UNARY[op]
    if isinstance(operand, SOp):
        return lift(fn, (operand,), span)
    if op is not UnaryOp.NOT:
        _check_plain(op.value, (operand,), span)
    return on_atoms(fn, (operand,), span)


def elementwise_ternary(cond: SOp, then: Any, orelse: Any, span: Span) -> MapSOp:
    """`then if cond else orelse` per position (both branches computed; atoms broadcast)."""
    _require_elementwise((then, orelse), "the branches of an elementwise 'if'", span)
    return lift(_choose, (cond, then, orelse), span)


def _require_elementwise(values: tuple[Any, ...], what: str, span: Span) -> None:
    """Each of `values` is an s-op or an atom (broadcast to every position); a list, dict or
    function has no value at a position."""
    for value in values:
        if not isinstance(value, SOp) and not is_atom(value):
            raise RaspTypeError(
                f"{what} must be s-ops or atoms, got {kind_name(value)}: {describe(value)}", span
            )


def as_sop(value: Any, span: Span, what: str) -> SOp:
    """An s-op argument, broadcasting an atom to a `ConstSOp`."""
    if isinstance(value, SOp):
        return value
    if is_atom(value):
        return ConstSOp(value=value, span=span)
    hint = evaluated_hint(value)
    if hint is None and isinstance(value, Selector):
        # `select(sel, indices, ==)`, `aggregate(sel, sel)`: a selector has no value per position
        hint = selector_as_value_hint(value)
    raise RaspTypeError(f"Expected {what}, got: {describe(value)}", span, hint=hint)


def select(
    keys: Any, queries: Any, comparison: Comparison, span: Span, arg_spans: tuple[Span, Span]
) -> Select:
    return Select(
        keys=as_sop(keys, arg_spans[0], "s-op or atom"),
        queries=as_sop(queries, arg_spans[1], "s-op or atom"),
        comparison=comparison,
        span=span,
    )


# what a non-selector where a selector belongs is told (`aggregate(indices, tokens)`)
SELECTOR_HINT = "a selector is select(keys, queries, OP), or selectors combined with and, or, not"


def aggregate(
    selector: Any, sop: Any, default: Any, span: Span, arg_spans: tuple[Span, ...]
) -> AggregateSOp:
    if not isinstance(selector, Selector):
        raise RaspTypeError(
            f"Expected selector, got: {describe(selector)}",
            arg_spans[0],
            hint=evaluated_hint(selector)
            or f"aggregate(selector, sop) takes a selector first: {SELECTOR_HINT}",
        )
    values = as_sop(sop, arg_spans[1], "s-op")
    if default is None:
        default = 0
    elif isinstance(default, SOp | Selector) or evaluated_inside(default) is not None:
        # Any other default is accepted, as in the original: a list, dict or function fails only
        # where it is used (an s-op's values are atoms), so one never used is harmless.
        raise RaspTypeError(
            f"Expected atom, got: {describe(default)}",
            arg_spans[-1],
            hint=evaluated_hint(evaluated_inside(default)),
        )
    return AggregateSOp(selector=selector, sop=values, default=default, span=span)
