"""tracr expressions -> the `rasp.sops` graph the compiler reads, with the same values.

`to_sops(program)` keeps tracr's semantics exactly: a lowered map returns None where tracr's does
(any input None) and calls the program's function otherwise; `Select` with a `Comparison` becomes a
`rasp.sops.Select`, with any other predicate a `PredicateSelect` (the compiler resolves it for a
vocabulary); an `Aggregate` is an `AggregateSOp` with tracr's mean (`bools_as_numbers`). Names given
with `.named(...)` label the compiled model; the others get the compiler's generated names.
Lowered nodes are `loose` (a tracr s-op may mix value types).

Tuples and lists (tracr's n-ary maps pack values into tuples) travel as interned string tokens
(`rasp.tracr.boxes`) and are unpacked before a program's function sees them. What a lowered
function returns that no model can hold (a dict, NaN) is recorded on the function;
`value_problems(root)` reports it, located. `is_lowered(root)` tells a graph holding a lowered node
(whose marked strings are such tokens) from a RASP program's, which may hold such a string as its
own.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rasp import sops
from rasp.errors import CompileError, Diagnostic, RaspRuntimeError
from rasp.tracr.boxes import (
    box,
    is_value,
    marked,
    marked_problem,
    plain,
    unbox,
)
from rasp.tracr.evaluate import postorder
from rasp.tracr.expr import RASPExpr, explicit_name, type_said
from rasp.tracr.functions import (
    ConstantFn,
    LengthCheck,
    MatrixFn,
    NoneCheck,
    TracrFn,
    TracrPredicate,
)
from rasp.tracr.input_forms import MeanCheck
from rasp.tracr.lambda_text import lambda_note
from rasp.tracr.numpy_values import (
    NumpyTypes,
    ambiguous_problems,
    comparison_problem,
    sources_of,
)
from rasp.tracr.operator_text import made_with_inputs, operator_note
from rasp.tracr.selector_nodes import (
    Aggregate,
    Comparison,
    ConstantSelector,
    Select,
    SelectorAnd,
    SelectorNot,
    SelectorOr,
    SelectorWidth,
)
from rasp.tracr.signed_zeros import lowered_fn, signed_zero_problems
from rasp.tracr.sop_nodes import (
    ConstantSOp,
    Full,
    IndicesType,
    LengthType,
    LinearSequenceMap,
    Map,
    SequenceMap,
    TokensType,
)
from rasp.written_text import LIMIT, label

_COMPARISONS = {
    Comparison.EQ: sops.Comparison.EQ,
    Comparison.NEQ: sops.Comparison.NEQ,
    Comparison.LT: sops.Comparison.LT,
    Comparison.LEQ: sops.Comparison.LEQ,
    Comparison.GT: sops.Comparison.GT,
    Comparison.GEQ: sops.Comparison.GEQ,
}


def is_tracr(value: object) -> bool:
    return isinstance(value, RASPExpr)


# the nodes `to_sops` made: graphs holding one carry boxed tuples as strings with the tuple mark
_lowered: weakref.WeakSet[sops.Node] = weakref.WeakSet()


def is_lowered(node: object) -> bool:
    """Whether `node`'s graph holds a node `to_sops` lowered from a tracr program (the root it
    returned, or a `rasp.sops` node built on one): its strings that start with the tuple mark are
    tracr's tuples and lists (`rasp.tracr.boxes`), and a token with the mark would be read as one."""
    return isinstance(node, sops.Node) and any(n in _lowered for n in sops.walk(node))


def to_sops(program: RASPExpr) -> sops.Node:
    """The `rasp.sops` graph of a tracr s-op (or selector), node for node."""
    if not isinstance(program, RASPExpr):
        raise TypeError(f"expected a rasp.tracr expression, got {type_said(program)}")
    done: dict[int, sops.Node] = {}
    # per s-op, the length of its tracr value where it is a constant's, not the input's
    fixed: dict[int, int | None] = {}
    # per Python function, the numpy types its maps gave: one for all (compiler.dedupe keeps one
    # map of a function on the same inputs, maybe not the one a reader's `sources` names)
    numpy: dict[int, NumpyTypes] = {}
    for expr in postorder(program):  # (the evaluator's order: children first, each once)
        fixed[id(expr)] = _fixed_length(expr, [fixed[id(c)] for c in expr.children])
        inputs = [done[id(c)] for c in expr.children]
        if isinstance(expr, Select):
            inputs = [_own_length(n, fixed[id(c)]) for n, c in zip(inputs, expr.children)]
        done[id(expr)] = _lower(expr, inputs, numpy)
    root = _own_length(done[id(program)], fixed[id(program)])
    _lowered.update(done.values())
    _lowered.add(root)
    return root


def _fixed_length(expr: RASPExpr, children: list[int | None]) -> int | None:
    """The length of `expr`'s tracr value when it is not the input's: a ConstantSOp that does not
    check its length keeps its own (tracr returns it as given), a Map keeps its input's, a
    SequenceMap zips its two (the shorter). None for every other s-op: the input's length."""
    match expr:
        case ConstantSOp() if not expr.check_length:
            return len(expr.value)
        case Map():
            return children[0]
        case SequenceMap() if children[0] is not None and children[1] is not None:
            return min(children[0], children[1])  # type: ignore[type-var]
    return None


def _own_length(node: sops.Node, fixed: int | None) -> sops.Node:
    """`node`, where its tracr value has `fixed` positions, read through a check that raises on
    inputs of another length: there tracr's value (or a selector over it) has the constant's
    length, not the input's, which no model's output or attention pattern can have. (Read by a
    SequenceMap with an s-op of the input's length, tracr zips it to that length: no check.)"""
    if fixed is None or not isinstance(node, sops.SOp):
        return node
    return sops.MapSOp(
        fn=LengthCheck(fixed),
        inputs=(node, sops.LengthSOp()),
        text=f"{node.label} has the input's length",
        span=node.span,
        loose=True,
    )


def _lower(expr: RASPExpr, inputs: list[sops.Node], numpy: dict[int, NumpyTypes]) -> sops.Node:
    where = {"span": expr.span, "name": explicit_name(expr)}
    text = _text(expr)
    if isinstance(expr, Map | SequenceMap):  # (LinearSequenceMap is a SequenceMap)
        types = numpy.setdefault(id(expr.f), NumpyTypes())
    match expr:
        case TokensType():
            return sops.TokensSOp(kind=sops.TokenKind.ASIS, loose=True, **where)
        case IndicesType():
            return sops.IndicesSOp(**where)
        case LengthType():
            return sops.LengthSOp(**where)
        case Map():
            fn = TracrFn(expr.f, text, sources=sources_of(inputs), numpy=types)
            note = _map_note(expr, inputs)
            return sops.MapSOp(
                fn=fn, inputs=_sops(inputs), text=text, loose=True, note=note, **where
            )
        case LinearSequenceMap():
            affine = _linear_form(expr, (expr.fst_fac, expr.snd_fac))
            fn = TracrFn(expr.f, text, affine=affine, sources=sources_of(inputs), numpy=types)
            return sops.MapSOp(fn=fn, inputs=_sops(inputs), text=text, loose=True, **where)
        case SequenceMap():  # `a + b`, `a - b` of two s-ops state their factors too
            factors = getattr(expr, "operator_factors", None)  # a subclass may skip __init__
            affine = _linear_form(expr, factors)
            fn = TracrFn(expr.f, text, affine=affine, sources=sources_of(inputs), numpy=types)
            note = _map_note(expr, inputs)
            return sops.MapSOp(
                fn=fn, inputs=_sops(inputs), text=text, loose=True, note=note, **where
            )
        case Full() if not isinstance(expr.fill, np.generic):
            return sops.ConstSOp(value=_atom(expr.fill, "Full", expr.span), loose=True, **where)
        case Full() | ConstantSOp():
            full = isinstance(expr, Full)
            written = (expr.fill,) if full else tuple(expr.value)
            values = tuple(_atom(v, type(expr).__name__, expr.span) for v in written)
            fn = ConstantFn(values, not full and expr.check_length, full)
            if any(isinstance(v, np.generic) for v in written):
                # numpy scalars, given back to the functions reading them (as a map's are)
                types = NumpyTypes()
                for form in written:
                    types.note(form)
                fn = replace(fn, forms=written, numpy=types, text=text)
            positions = (sops.IndicesSOp(), sops.LengthSOp())
            return sops.MapSOp(fn=fn, inputs=positions, text=text, loose=True, **where)
        case Select():
            return _select(expr, inputs, where)
        case ConstantSelector():
            # always checked: without the check, tracr's value at another length is the constant
            # matrix, whose rows are not the input's positions
            check = ConstantFn(tuple(range(len(expr.value))), True)
            keys = sops.MapSOp(fn=check, inputs=(sops.IndicesSOp(), sops.LengthSOp()), text=text)
            matrix = tuple(tuple(bool(v) for v in row) for row in expr.value)
            return sops.PredicateSelect(
                keys=keys, queries=sops.IndicesSOp(), fn=MatrixFn(matrix), text=text, **where
            )
        case SelectorAnd():
            return sops.SelectAnd(left=_selector(inputs[0]), right=_selector(inputs[1]), **where)
        case SelectorOr():
            return sops.SelectOr(left=_selector(inputs[0]), right=_selector(inputs[1]), **where)
        case SelectorNot():
            return sops.SelectNot(inner=_selector(inputs[0]), **where)
        case SelectorWidth():
            if _selects_everything(inputs[0]):
                # tracr's make_length (tracr has no length the compiler takes): the length, so that
                # the compiler's forms that read `length` (fractions c / length, ratios) apply
                return sops.LengthSOp(**where)
            return sops.SelectorWidthSOp(selector=_selector(inputs[0]), **where)
        case Aggregate():
            # tracr's mean refuses numpy's ints and bools: where the values may be a function's
            # numpy scalars, each mean's are checked (in the forms this input gave them)
            (averaged,) = sources_of([inputs[1]], averaged=True)
            # (the graph holds Python values; a numpy default's form is kept for its readers)
            default = _unmarked(expr.default, "Aggregate's default", expr.span)
            return sops.AggregateSOp(
                selector=_selector(inputs[0]),
                sop=_sop(inputs[1]),
                default=plain(default),
                bools_as_numbers=True,
                mean_check=None if averaged is None else MeanCheck(averaged),
                numpy_default=default if isinstance(default, np.generic) else None,
                loose=True,
                **where,
            )
    raise CompileError(
        [
            Diagnostic(
                f"'{type(expr).__name__}' is not one of tracr's RASP expressions, so it cannot be "
                "compiled",
                expr.span,
                "build the program from rasp.tracr's classes (Map, Select, Aggregate, ...)",
            )
        ]
    )


def _map_note(expr: Map | SequenceMap, inputs: list[sops.Node]) -> str | None:
    """What a map a library call built computes, where the call's span names it not: its
    operator's text, else its lambda's body over its inputs (`(-1 * hist) + 1 * indices / 64`)."""
    note = operator_note(expr, inputs)
    if note is None and made_with_inputs(expr, inputs):
        note = lambda_note(expr.f, inputs)
    return note


def _linear_form(
    expr: SequenceMap, factors: tuple[Any, Any] | None
) -> tuple[int | float, int | float, int] | None:
    """(a, b, 0) for a LinearSequenceMap, or an operator's `+` or `-` of two s-ops, whose factors
    are numbers its function still uses (checked on two points: factors set after construction
    are not what it computes); the factors keep their types, which decide the type of a·x + b·y."""
    if factors is None:
        return None
    a, b = factors
    if not all(type(c) in (int, float) and math.isfinite(c) for c in (a, b)):
        return None
    try:
        agrees = expr.f(1, 0) == a and expr.f(0, 1) == b
    except Exception:  # noqa: BLE001 (the function is the program's own)
        return None
    return (a, b, 0) if agrees else None


def _select(expr: Select, inputs: list[sops.Node], where: dict[str, Any]) -> sops.Selector:
    keys, queries = _sop(inputs[0]), _sop(inputs[1])
    predicate = expr.predicate
    if isinstance(predicate, Comparison) and predicate in _COMPARISONS:
        # tuples travel as string tokens, whose text is not tracr's order nor, for equal numbers
        # of two types ((1,) == (1.0,)), its equality: the checks compare them as tracr does
        tuples = "equal" if predicate in (Comparison.EQ, Comparison.NEQ) else "order"
        checked = _no_none(keys, "key", where, tuples)
        # one s-op on both sides (tracr's sort compares `keys` with itself): one check, which
        # raises where the key's would (the key is checked first), and one reading of it
        queries = checked if queries is keys else _no_none(queries, "query", where, tuples)
        keys = checked
        sources_of([keys, queries], compared=True)  # (numpy floats noted: `comparison_problem`)
        return sops.Select(keys=keys, queries=queries, comparison=_COMPARISONS[predicate], **where)
    if predicate is Comparison.TRUE or predicate is Comparison.FALSE:
        # The same for every key and query: constants (the compiler reads them for free), still
        # raising where a side is None, as tracr's Comparison does.
        key = _constant_side(keys, 0, "key", where)
        query = _constant_side(queries, 0 if predicate is Comparison.TRUE else 1, "query", where)
        return sops.Select(keys=key, queries=query, comparison=sops.Comparison.EQ, **where)
    text = _text(expr)
    fn = TracrPredicate(predicate, text, sources=sources_of([keys, queries]))
    return sops.PredicateSelect(keys=keys, queries=queries, fn=fn, text=text, **where)


def _selects_everything(node: sops.Node) -> bool:
    """A select of two constants that compare true (Comparison.TRUE of sides that are never None):
    every query selects every key, on every input."""
    return (
        isinstance(node, sops.Select)
        and isinstance(node.keys, sops.ConstSOp)
        and isinstance(node.queries, sops.ConstSOp)
        and node.comparison is sops.Comparison.EQ
        and type(node.keys.value) is type(node.queries.value)
        and node.keys.value == node.queries.value
    )


def _no_none(side: sops.SOp, role: str, where: dict[str, Any], tuples: str = "") -> sops.SOp:
    """A Comparison's side that may hold None (a map's or an aggregate's value), read through a
    check that raises there, as tracr's Comparison does ("key is None!"): the compiler then never
    sees None in a comparison. `tuples` (NoneCheck's): how the check reads a tuple's token."""
    if _may_be_none(side) or (isinstance(side, sops.ConstSOp) and marked(side.value)):
        return sops.MapSOp(
            fn=NoneCheck(role, tuples=tuples),
            inputs=(side,),
            text=f"{role} is not None",
            span=where["span"],
            loose=True,
            note=_checked(side, role),
        )
    return side


def _constant_side(side: sops.SOp, value: int, role: str, where: dict[str, Any]) -> sops.SOp:
    if _may_be_none(side):
        return sops.MapSOp(
            fn=NoneCheck(role, value),
            inputs=(side,),
            text=f"{role} is not None",
            span=where["span"],
            note=_checked(side, role),
        )
    return sops.ConstSOp(value=value)


def _checked(side: sops.SOp, role: str) -> str:
    """The check as messages name it: the select's side as the program wrote it, not the check's
    own words applied to a generated name (`key is not None(_map_16)`)."""
    return f"{label(side, LIMIT)} (as a {role})"  # (an operation bracketed: `(x + 1) (as a key)`)


def _may_be_none(side: sops.SOp) -> bool:
    return isinstance(side, (sops.MapSOp, sops.AggregateSOp)) or (
        isinstance(side, sops.ConstSOp) and side.value is None
    )


def _text(expr: RASPExpr) -> str:
    if expr.span is not None:
        text = " ".join(expr.span.text().split())
        if text and len(text) <= 80:
            return text
    return explicit_name(expr) or type(expr).default_name


def _sop(node: sops.Node) -> sops.SOp:
    assert isinstance(node, sops.SOp)
    return node


def _sops(nodes: Sequence[sops.Node]) -> tuple[sops.SOp, ...]:
    return tuple(_sop(n) for n in nodes)


def _selector(node: sops.Node) -> sops.Selector:
    assert isinstance(node, sops.Selector)
    return node


# ------------------------------------------------------------------------------------------------
# The functions a lowered graph calls


def _unmarked(value: Any, what: str, span: Any) -> Any:
    if marked(value):
        raise CompileError([marked_problem(value, what, span)])
    return value


def _atom(value: Any, what: str, span: Any = None) -> Any:
    value = box(_unmarked(plain(value), f"{what}'s value", span))
    if not is_value(value):
        raise RaspRuntimeError(
            f"{what}'s values must be None, bools, ints, floats or strings, got {value!r}"
        )
    return value


def value_problems(
    root: sops.Node, vocab: Sequence[Any] | None = None, max_len: int | None = None
) -> list[Diagnostic]:
    """Each lowered map that returned a value no compiled model can hold, located at the map, and
    each select side given a tuple no model compares as tracr does (an order, NaN), at the select.
    `vocab` and `max_len` (the compile's) tell which numbers a Comparison meets
    (`comparison_problem`); without them, any it cannot read from the graph is unknown."""
    problems = []
    clashes: set[int] = set()  # (maps of one function share their types: said once)
    for node in sops.walk(root):
        fn = lowered_fn(node)
        if isinstance(fn, NoneCheck) and fn.refused:
            problems.append(Diagnostic(fn.refused[0], node.span))
        if isinstance(fn, TracrFn):
            problems.extend(
                ambiguous_problems(
                    fn.f, fn.sources, fn.ambiguous, fn.text, node.span, max_len=max_len
                )
            )
        if isinstance(fn, TracrPredicate):
            problems.extend(
                ambiguous_problems(
                    fn.predicate, fn.sources, fn.ambiguous, fn.text, node.span, max_len=max_len
                )
            )
        if (
            isinstance(node, sops.Select)
            and (found := comparison_problem(node, vocab, max_len)) is not None
        ):
            problems.append(found)
        types = getattr(fn, "numpy", None)
        clash = isinstance(types, NumpyTypes) and types.read and types.clash is not None
        if clash and id(types) not in clashes:
            clashes.add(id(types))
            one, other = types.clash
            problems.append(
                Diagnostic(
                    f"'{fn.text}' gives {one!r} and {other!r}, one value to a compiled model, and "
                    "a function of the program reads it: numpy's scalars compute differently "
                    "(np.True_ + np.True_ is True, True + True is 2)",
                    node.span,
                    "return one kind of value (bool(...), int(...), float(...))",
                )
            )
        if isinstance(fn, TracrFn) and fn.bad is not None:
            args, out = fn.bad
            shown = ", ".join(repr(unbox(a)) for a in args)
            shown = shown if len(args) == 1 else f"({shown})"
            if marked(out):
                problems.append(
                    marked_problem(out, f"'{fn.text}' gives", node.span, f" for {shown}")
                )
                continue
            if isinstance(out, RASPExpr):  # tracr's `a == b` of two s-ops: a value vs an s-op
                problems.append(
                    Diagnostic(
                        f"'{fn.text}' gives an s-op ({type(out).__name__}) for {shown}, not a "
                        "value: tracr's operators take a constant, so a value compared with (or "
                        "combined with) another s-op is a new s-op object, as in tracr",
                        node.span,
                        "combine two s-ops with rasp.SequenceMap(lambda x, y: x == y, a, b)",
                    )
                )
                continue
            problems.append(
                Diagnostic(
                    f"'{fn.text}' gives {out!r} for {shown}; a compiled model's values are None, "
                    "bools, ints, finite floats, strings and tuples of them",
                    node.span,
                    "return one of those (a string, say, instead of a dict)",
                )
            )
    return [*problems, *signed_zero_problems(root, vocab)]
