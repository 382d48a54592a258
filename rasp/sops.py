"""Lazy s-ops and selectors: the computation graph a RASP program builds, and its reference evaluator.

The contract between the language and the compiler: everything here is imported from `rasp.sops`.
The node classes are defined in `rasp.nodes` and evaluated sequences in `rasp.seqvalues`; both are
re-exported here. This module evaluates them.

Running a program's statements (see `interpreter.py`) does not compute values: every s-op or selector
expression creates a node of this module, exactly as in the original RASP (`UnfinishedSequence`).
`evaluate(node, tokens)` then computes a node on one input, vectorised over positions with numpy.

This graph is also the compiler's input: `def`s are already inlined, `for` loops unrolled and list,
dict and atom expressions folded to constants by the time it exists. Its node set is closed:

    TokensSOp, IndicesSOp, LengthSOp, ConstSOp    inputs and constants
    MapSOp                                        elementwise function of one or several s-ops
    AggregateSOp, SelectorWidthSOp                attention
    Select, SelectAnd, SelectOr, SelectNot        selectors
    PredicateSelect                               a select with a Python predicate (rasp.tracr)

A selector's value is a bool matrix `[n_query, n_key]`, where `[i, j]` is `key[j] OP query[i]`.

Programs lowered from tracr (`rasp.tracr`) may also hold `None` (tracr's "no value") and, on nodes
marked `loose`, values of several types; a RASP program never produces either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from rasp.errors import RaspInputError, RaspRuntimeError
from rasp.failing_values import failing_values

# The graph's nodes and evaluated sequences are defined apart and re-exported for every caller.
from rasp.nodes import (  # noqa: F401
    _COMPARE,
    _TOKEN_CONVERT,
    AggregateSOp,
    Atom,
    Comparison,
    ConstSOp,
    IndicesSOp,
    LengthSOp,
    MapSOp,
    Node,
    PredicateSelect,
    Select,
    SelectAnd,
    SelectNot,
    SelectOr,
    Selector,
    SelectorWidthSOp,
    SOp,
    TokenKind,
    TokensSOp,
    read_token,
    walk,
)
from rasp.seqvalues import (  # noqa: F401
    BOX_MARK,
    SeqType,
    SeqValue,
    make_seq,
    sum_in_order,
    type_of_value,
)
from rasp.wording import FLOAT_LIMIT, atom_text, operand_text

MAP_MIXED_HINT = (
    "an operation must give one type at every position: numbers and bools mix, strings do not"
)
AGGREGATE_MIXED_HINT = (
    "an aggregate's default (0 unless given) must have the type of the aggregated values"
)

# ------------------------------------------------------------------------------------------------
# Evaluation


# the evaluation running now, None outside one
_CURRENT: ContextVar[Evaluator | None] = ContextVar("rasp_evaluation", default=None)


def current_evaluation() -> Evaluator | None:
    """The evaluation running now (its `notes`, where a node's function keeps what it learned on
    this input, so that no value depends on inputs evaluated before; its memo, which it reads);
    None outside one (the compiler calling a function on its value sets)."""
    return _CURRENT.get()


def evaluation_notes() -> dict[Any, Any] | None:
    """The notes of `current_evaluation()`, None outside one."""
    current = _CURRENT.get()
    return None if current is None else current.notes


def evaluate(node: Node, tokens: Sequence[Any]) -> SeqValue | np.ndarray:
    """The value of `node` on one input: a `SeqValue` for an s-op, a bool `[n, n]` matrix for a selector."""
    return Evaluator(tokens).value(node)


class Evaluator:
    """Evaluates nodes on one fixed input, memoising every node it computes."""

    def __init__(self, tokens: Sequence[Any], *, compiling: bool = False) -> None:
        if not isinstance(tokens, (Sequence, np.ndarray)) or isinstance(tokens, (bytes, bytearray)):
            # an API caller's mistake (None, a number, a set), not a RASP error: said as such
            raise TypeError(
                "evaluate takes one input as a sequence of tokens (a str or a list), got "
                f"{type(tokens).__name__}"
            )
        if len(tokens) == 0:
            raise RaspRuntimeError(
                "the input is empty", hint="RASP programs run on inputs of length >= 1"
            )
        self.tokens = list(tokens)
        self.n = len(self.tokens)
        self.memo: dict[int, SeqValue | np.ndarray] = {}
        self.notes: dict[Any, Any] = {}  # (`evaluation_notes`: per input, as the memo is)
        # the compiler's own evaluation (of positions, of a constant input): what a lowered tracr
        # function sees in it is a fact of the compile (`rasp.tracr.input_forms.compile_facts`)
        self.compiling = compiling

    def value(self, root: Node) -> SeqValue | np.ndarray:
        if root.id not in self.memo:
            token = _CURRENT.set(self)
            try:
                for node in walk(root, skip=self.memo):  # what is known is not walked again
                    self.memo[node.id] = self._compute(node)
            finally:
                _CURRENT.reset(token)
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
            case TokensSOp():
                return self._tokens(node)
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
            case PredicateSelect():
                return self._predicate_select(node)
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

    def _tokens(self, node: TokensSOp) -> SeqValue:
        kind = node.kind.value
        convert = _TOKEN_CONVERT[node.kind]
        values = []
        for position, token in enumerate(self.tokens):
            try:
                values.append(convert(token))
            except (ValueError, TypeError, OverflowError):
                raise RaspInputError(
                    f"cannot read the input as tokens_{kind}: {kind}() cannot read the token "
                    f"{operand_text(token)} at position {position}",
                    node.span,
                    f"tokens_{kind} reads every token with {kind}(): give an input of numbers, "
                    "such as [3, 1, 2]",
                ) from None
        try:
            return make_seq(
                values,
                node.span,
                loose=node.loose,
                mixed_hint="an input's tokens must have one type (numbers may mix)",
            )
        except RaspRuntimeError as exc:  # mixed types: the input's fault too
            raise RaspInputError(exc.message, exc.span, exc.hint) from None

    def _map(self, node: MapSOp) -> SeqValue:
        columns = [self.seq(s).values for s in node.inputs]
        rows = zip(*columns, strict=True) if columns else [()] * self.n
        out: list[Any] = []
        try:
            for args in rows:
                out.append(node.fn(*args))
        except RaspRuntimeError as exc:
            if exc.hint is None and node.inputs:  # `"abc"[indices]`: where and on which values
                exc.hint = failing_values(node.inputs, len(out), args)
            raise exc.with_span(node.span) from None
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError) as exc:
            # the message is Python's; the hint says where and on which values it failed
            hint = failing_values(node.inputs, len(out), args) if node.inputs else None
            if isinstance(exc, TypeError) and hint is not None and _reads_str_tokens(node, args):
                hint += f"; {STR_TOKENS_HINT}"
            raise RaspRuntimeError(python_error_text(exc), node.span, hint) from None
        return make_seq(out, node.span, loose=node.loose, mixed_hint=MAP_MIXED_HINT)

    def _select(self, node: Select) -> np.ndarray:
        keys, queries = self.seq(node.keys), self.seq(node.queries)
        k, q = keys.array(), queries.array()
        if k.dtype == object or q.dtype == object or _inexact_mix(k, q):
            # None, mixed types, or whole numbers past 2^53 against floats: Python compares
            return self._cells(node, keys.values, queries.values, node.comparison.apply)
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
        # [1, n_key] OP [n_query, 1] -> [n_query, n_key]
        return np.asarray(_COMPARE[node.comparison](k[None, :], q[:, None]), dtype=bool)

    def _predicate_select(self, node: PredicateSelect) -> np.ndarray:
        keys, queries = self.seq(node.keys), self.seq(node.queries)
        return self._cells(node, keys.values, queries.values, node.fn)

    def _cells(
        self,
        node: Node,
        keys: Sequence[Any],
        queries: Sequence[Any],
        test: Callable[[Any, Any], Any],
    ) -> np.ndarray:
        """[n_query, n_key] of `bool(test(key, query))`, cell by cell; any exception is an error at
        `node` (Python's message, as the original reports a failing comparison)."""
        out = np.zeros((len(queries), len(keys)), dtype=bool)
        for i, query in enumerate(queries):
            for j, key in enumerate(keys):
                try:
                    out[i, j] = bool(test(key, query))
                except RaspRuntimeError as exc:
                    if exc.hint is None:  # (a tracr predicate's error: on which values)
                        exc.hint = f"it failed at key {key!r}, query {query!r}"
                    raise exc.with_span(node.span) from None
                except Exception as exc:  # noqa: BLE001 (a user's predicate may raise anything)
                    raise RaspRuntimeError(
                        f"the selector failed on key {key!r}, query {query!r}: "
                        f"{python_error_text(exc)}",
                        node.span,
                    ) from None
        return out

    def _aggregate(self, node: AggregateSOp) -> SeqValue:
        sel = self.matrix(node.selector)  # [n_query, n_key]
        vals = self.seq(node.sop)
        if node.bools_as_numbers or vals.array().dtype == object:
            return self._aggregate_by_rows(node, sel, vals)
        widths = sel.sum(axis=1)  # [n_query]
        several = widths >= 2
        if several.any():
            if vals.type in (SeqType.STRINGS, SeqType.BOOLS):
                raise _average_error(node, sel, vals.values)
            means = _means(sel, vals.array(), widths)
            if means is None:  # whole numbers past float64's exact sums
                return self._aggregate_by_rows(node, sel, vals)
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
        return _aggregated(out, node, sel)

    def _aggregate_by_rows(self, node: AggregateSOp, sel: np.ndarray, vals: SeqValue) -> SeqValue:
        """Values that numpy cannot average in one product (None, mixed types) or tracr's mean
        (`bools_as_numbers`): `sum(values) / len(values)` per query, added in key order."""
        out: list[Any] = []
        for row in sel:
            picked = [v for v, hit in zip(vals.values, row, strict=True) if hit]
            if not picked:
                out.append(node.default)
            elif len(picked) == 1:
                out.append(picked[0])
            elif _averageable(picked, node.bools_as_numbers):
                if node.mean_check is not None:
                    try:
                        node.mean_check(row, picked)
                    except RaspRuntimeError as exc:
                        raise exc.with_span(node.span) from None
                # tracr's mean, or the original's `sum(values) * 1.0 / n` (which rounds a sum
                # of whole numbers to a float before dividing), added in key order
                try:
                    total = sum_in_order(picked)  # (a float plus an int past float's range fails)
                except OverflowError:
                    raise _mean_too_large(node, None, len(picked)) from None
                try:
                    out.append((total if node.bools_as_numbers else total * 1.0) / len(picked))
                except OverflowError:  # whole numbers past float's range: no internal error
                    raise _mean_too_large(node, total, len(picked)) from None
            else:
                raise _average_error(node, sel, vals.values)
        return _aggregated(out, node, sel)


def _aggregated(out: list[Any], node: AggregateSOp, sel: np.ndarray) -> SeqValue:
    """An aggregate's values; where the default's type mixes with theirs, the hint names a query
    that selects nothing and a default to write (`aggregate(prev, tokens)`: 0 among strings)."""
    try:
        return make_seq(out, node.span, loose=node.loose, mixed_hint=AGGREGATE_MIXED_HINT)
    except RaspRuntimeError as exc:
        empty = ~np.asarray(sel, dtype=bool).any(axis=1)  # (only here: not on every call)
        at = next((i for i, e in enumerate(empty) if e), None)
        kind = type_of_value(node.default)
        other = next((type_of_value(v) for i, v in enumerate(out) if not empty[i]), None)
        if at is not None and other is not None and other is not kind:
            fits = {SeqType.STRINGS: '"_"', SeqType.BOOLS: "False"}.get(other, "0")
            default = node.default
            shown = f'"{default}"' if isinstance(default, str) else operand_text(default)
            exc.hint = (
                f"position {at} selects no key, so it gets the default {shown}, among "
                f"{other.value}: give a default of their type as the third argument, "
                f"aggregate(sel, values, {fits})"
            )
        raise


def _inexact_mix(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether numpy would compare whole numbers past 2^53 as floats (2^53 + 1 == 2^53.0), where
    Python compares them exactly."""
    ints = [x for x in (a, b) if x.dtype.kind in "iu"]
    floats = any(x.dtype.kind == "f" for x in (a, b))
    return floats and any(len(x) and int(np.abs(x).max()) > 2**53 for x in ints)


def _means(sel: np.ndarray, values: np.ndarray, widths: np.ndarray) -> np.ndarray | None:
    """Each query's mean of its selected values as the original computes it, a Python sum in key
    order over the count, so that the value does not depend on a BLAS build: whole numbers whose
    sums float64 holds exactly in one product (any order gives the same sum), floats by adding the
    keys one by one, for all queries at once. None for whole numbers past 2^53."""
    count = np.maximum(widths, 1)  # [n_query]
    if values.dtype.kind in "iub":
        if len(values) and int(np.abs(values).max()) * len(values) >= 2**53:
            return None
        return (sel.astype(np.float64) @ values.astype(np.float64)) / count
    total = np.zeros(len(sel))  # [n_query]
    # overflow to inf (1e308 + 1e308) as Python's sum does: silently, not a numpy warning
    with np.errstate(over="ignore", invalid="ignore"):
        for k, value in enumerate(values.astype(np.float64)):
            total = np.where(sel[:, k], total + value, total)  # IEEE adds, as Python's sum
        return total / count


def _averageable(picked: Sequence[Any], bools_as_numbers: bool) -> bool:
    """RASP averages numbers (bools among ints count, a selection of bools alone does not); tracr
    averages any ints, floats and bools."""
    if not all(isinstance(v, (int, float)) for v in picked):
        return False
    return bools_as_numbers or not all(isinstance(v, bool) for v in picked)


def _mean_too_large(node: AggregateSOp, total: Any, count: int) -> RaspRuntimeError:
    # Python says only "int too large to convert to float" (or "integer division result ...")
    if total is None:  # the sum itself failed: a float added to a whole number past its range
        return RaspRuntimeError(
            f"the mean of {count} selected values adds a float to a whole number too large for "
            f"a float ({FLOAT_LIMIT})",
            node.span,
        )
    return RaspRuntimeError(
        f"the mean of {count} selected values, whose sum is {operand_text(total)}, "
        f"is too large for a float ({FLOAT_LIMIT})",
        node.span,
    )


def _average_error(node: AggregateSOp, sel: np.ndarray, values: Sequence[Any]) -> RaspRuntimeError:
    """The original's message; the hint names the first query that selects several keys and
    what they hold, so that a beginner sees which position breaks (a tie in a sort)."""
    return RaspRuntimeError(
        "asked to average multiple values, but they are non-numbers",
        node.span,
        hint=_average_hint(sel, values),
    )


def _average_hint(sel: np.ndarray, values: Sequence[Any]) -> str:
    for query, row in enumerate(sel):
        keys = [k for k, hit in enumerate(row) if hit]
        picked = [values[k] for k in keys]
        if len(keys) >= 2 and not _averageable(picked, False):
            break
    else:  # (not reached: the caller found such a query)
        return "several positions were selected for one query"
    shown = ", ".join(atom_text(v) for v in picked[:4]) + (", ..." if len(picked) > 4 else "")
    where = f"position {query} selects {_positions_text(keys)}, holding {shown}"
    if all(isinstance(v, bool) for v in picked):
        # the paper's `numerical aggregate(prevs, tokens == "(")`: the original wants indicator
        return (
            f"{where}: aggregate does not average booleans; aggregate(sel, indicator(x)) "
            "gives the fraction of the selected positions where x holds"
        )
    return (
        f"{where}: aggregate averages numbers only, so make the selection pick at most one "
        "position per query (a sort needs a tie-break), or aggregate numbers"
    )


def _positions_text(keys: Sequence[int]) -> str:
    """`positions 1 and 2`, `9 positions (0, 1, 2, 3, ...)`."""
    if len(keys) > 4:
        return f"{len(keys)} positions (" + ", ".join(map(str, keys[:4])) + ", ...)"
    return "positions " + ", ".join(map(str, keys[:-1])) + f" and {keys[-1]}"


# `tokens + 1` or `tokens > 2` over an input of digits: the tokens are strings (the original's too)
STR_TOKENS_HINT = (
    "tokens gives each token as a string: tokens_int (or tokens_float) reads them as numbers"
)


def _reads_str_tokens(node: MapSOp, values: Sequence[Any]) -> bool:
    """Whether the map read `tokens` where its token was a number's text ("3", not "h")."""
    return any(
        isinstance(sop, TokensSOp) and sop.kind is TokenKind.STR and number_text(v)
        for sop, v in zip(node.inputs, values, strict=False)
    )


def number_text(value: Any) -> bool:
    """Whether `value` is a string that reads as a number ("3", "2.5"): a token `tokens` gave as
    text where `tokens_int` would give the number (the compiler's refusal hints it too)."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str)


def python_error_text(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        if not exc.args:
            return "key not in dict."
        key = exc.args[0]
        # quoted as `rasp.values.describe` quotes a string (`d["zz"]` gives `index [ "zz" ] ...`):
        # the same miss reads the same whether an atom or an s-op indexed the dict
        return f"index [ {atom_text(key)} ] not in dict."
    return str(exc) or type(exc).__name__
