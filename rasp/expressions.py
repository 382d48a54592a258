"""What a RASP expression means: atoms, lists, dicts, comprehensions, operators, select, aggregate.

`Expressions.eval(expr, scope)` computes an expression's value in a scope. Nothing here computes a
sequence: an operator on an s-op builds a `rasp.sops` node (`rasp.operators`). A call goes back to
the interpreter (`call`), which runs a `def`'s body as statements; `in` needs the prelude's `full_s`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from rasp import ast, builtins, lookups
from rasp import operators as ops
from rasp.errors import RaspNameError, RaspTypeError, Span, Written
from rasp.sops import Selector, SOp, TokensSOp
from rasp.values import (
    BASE_RESERVED,
    Scope,
    describe,
    evaluated_hint,
    is_atom,
    is_evaluated,
    kind_name,
)
from rasp.wording import with_article

# `len(tokens)` from Python: an s-op's length is per input, which the built-in s-op holds
_LEN_HINT = (
    "len(x) counts a list's items; the input's length at every position is the built-in "
    "s-op `length`"
)

# operators whose operand beside an s-op is a value per position: `tokens == a` meant "a"
_COMPARING = frozenset(
    (
        ast.BinaryOp.EQ,
        ast.BinaryOp.NE,
        ast.BinaryOp.LT,
        ast.BinaryOp.GT,
        ast.BinaryOp.LE,
        ast.BinaryOp.GE,
        ast.BinaryOp.IN,
    )
)


def _is_sop(value: Any, scope: Scope) -> bool:
    """Whether `value` is an s-op, or an expression that is a name bound to one (read without
    evaluating anything: the other operand of a failing one is not evaluated)."""
    if isinstance(value, ast.Name):
        try:
            value = scope.lookup(value.name, value.span)
        except RaspNameError:
            return False
    return isinstance(value, SOp)


def iteration_hint(value: Any) -> str | None:
    """What to loop over instead of `value` (a `for` or comprehension takes a list or dict):
    `for t in tokens` from Python, where an s-op already holds every position's value."""
    if isinstance(value, SOp):
        return (
            "an s-op holds its value at every position at once, and a program cannot loop over "
            'positions: write the operation on the s-op itself (tokens == "a" compares every '
            "position; aggregate(select(...), x) reads other positions), or loop over range(n)"
        )
    if isinstance(value, Selector):
        return "a selector is used by aggregate(sel, x) or selector_width(sel), not looped over"
    if isinstance(value, str):
        return f"a string is no list here: write its items as a list, {_as_list(value)}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"to loop {value} times, loop over range({value})"
    return None


def _as_list(text: str) -> str:
    return "[" + ", ".join(f'"{c}"' for c in text[:5]) + (", ...]" if len(text) > 5 else "]")


# call(function value, argument values, the call expression) -> the call's value
Call = Callable[[Any, list[Any], ast.Call], Any]


class Expressions:
    def __init__(
        self, call: Call, full_s: Callable[[], Selector], indices: SOp, length: SOp
    ) -> None:
        self.call, self.full_s = call, full_s
        # the input s-ops `x[i]` reads with (an s-op indexed by an s-op)
        self.indices, self.length = indices, length
        # What the names of the expression being evaluated held, by their spans, in the order
        # they were read: an atom, or the label of an s-op or selector the name does not name.
        # A node made from the expression shows them in its label (`_shown`), as the original
        # names `x * indices` with x = 1 `( 1 * indices )`.
        self._held: list[tuple[Span, Any]] = []

    def eval(self, expr: ast.Expr, scope: Scope) -> Any:
        """The value of `expr` in `scope`: an atom, list, dict, function, or a lazy s-op or selector."""
        mark = len(self._held)
        try:
            return self._eval(expr, scope)
        finally:
            # what its names held shows only in the nodes it made: not in an expression around
            # it (a comprehension's element, a call's body, evaluated once per item or call)
            del self._held[mark:]

    def _shown(self, span: Span, mark: int) -> Span:
        """`span`, with what its names held since `mark` (Span.shown_text)."""
        if len(self._held) == mark:
            return span
        return replace(span, values=tuple(self._held[mark:]))

    def _eval(self, expr: ast.Expr, scope: Scope) -> Any:
        mark = len(self._held)
        match expr:
            case ast.Name(name=name):
                value = scope.lookup(name, expr.span)
                if isinstance(value, TokensSOp) and value.span is None:
                    value.span = expr.span  # the input's errors point at its first use
                if is_atom(value):
                    self._held.append((expr.span, value))
                elif isinstance(value, SOp | Selector) and name not in BASE_RESERVED:
                    # a parameter or loop variable holding `indices` reads `indices`; the input
                    # names (`tokens_str` is the s-op `tokens`) read as written. The label, cut
                    # to LABEL_MAX characters, keeps labels built of labels short.
                    label = value.label
                    if label != name:
                        self._held.append((expr.span, Written(label)))
                return value
            case ast.Literal(value=value):
                return value
            case ast.ListLit(items=items):
                return [self._eval(item, scope) for item in items]
            case ast.DictLit(pairs=pairs):
                result: dict[Any, Any] = {}
                for key_expr, value_expr in pairs:
                    key = self._key(self._eval(key_expr, scope), key_expr)
                    result[key] = self._eval(value_expr, scope)
                return result
            case ast.ListComp(element=element, targets=targets, iterable=iterable):
                return [
                    self.eval(element, inner)
                    for inner in self._comprehension(targets, iterable, scope)
                ]
            case ast.DictComp(key=key_expr, value=value, targets=targets, iterable=iterable):
                out: dict[Any, Any] = {}
                for inner in self._comprehension(targets, iterable, scope):
                    key = self._key(self.eval(key_expr, inner), key_expr)
                    out[key] = self.eval(value, inner)
                return out
            case ast.Unary(op=op, operand=operand):
                value = self._eval(operand, scope)
                return ops.unary(op, value, self._shown(expr.span, mark))
            case ast.Binary(op=op, left=left_expr, right=right_expr):
                if op in _COMPARING:
                    left = self._beside(left_expr, scope, (right_expr,))
                    right = self._beside(right_expr, scope, (left,))
                else:
                    left, right = self._eval(left_expr, scope), self._eval(right_expr, scope)
                span = self._shown(expr.span, mark)
                if op is ast.BinaryOp.IN:
                    return lookups.contains(left, right, span, self.full_s())
                return ops.binary(op, left, right, span)
            case ast.Ternary(then=then, cond=cond_expr, orelse=orelse):
                cond = self._eval(cond_expr, scope)
                if isinstance(cond, SOp):
                    then_value, else_value = self._eval(then, scope), self._eval(orelse, scope)
                    return ops.elementwise_ternary(
                        cond, then_value, else_value, self._shown(expr.span, mark)
                    )
                if isinstance(cond, Selector):
                    raise RaspTypeError(
                        "the condition of 'if' cannot be a selector", cond_expr.span
                    )
                if is_evaluated(cond):  # its truth is numpy's error, or always True
                    raise RaspTypeError(
                        f"the condition of 'if' cannot be {with_article(kind_name(cond))}: "
                        f"{describe(cond)}",
                        cond_expr.span,
                        hint=evaluated_hint(cond),
                    )
                return self._eval(then, scope) if cond else self._eval(orelse, scope)
            case ast.Index(target=target, index=key):
                target_value, key_value = self._eval(target, scope), self._eval(key, scope)
                span = self._shown(expr.span, mark)
                length = self._length_in(scope, target_value, key_value, span)
                return lookups.index(target_value, key_value, span, self.indices, length)
            case ast.Call(func=func, args=args):
                func_value = self._eval(func, scope)
                arg_values: list[Any] = []
                for i, arg in enumerate(args):
                    beside = (*arg_values, *args[i + 1 :])
                    arg_values.append(self._argument(func_value, arg, scope, beside))
                span = self._shown(expr.span, mark)
                call = expr if span is expr.span else replace(expr, span=span)
                return self.call(func_value, arg_values, call)
            case ast.Select(keys=keys, queries=queries, comparison=comparison):
                values, spans = self._arguments((keys, queries), scope, quotable=(0, 1))
                return ops.select(
                    values[0],
                    values[1],
                    comparison,
                    self._shown(expr.span, mark),
                    (spans[0], spans[1]),
                )
            case ast.Aggregate(selector=sel, sop=sop, default=default):
                parts = (sel, sop) + ((default,) if default is not None else ())
                values, spans = self._arguments(parts, scope, quotable=(2,))
                return ops.aggregate(
                    values[0],
                    values[1],
                    values[2] if default else None,
                    self._shown(expr.span, mark),
                    spans,
                )
            case ast.Range(args=args):
                return builtins.make_range([self._eval(a, scope) for a in args], expr.span)
            case ast.Zip(args=args):
                return builtins.make_zip([self._eval(a, scope) for a in args], expr.span)
            case ast.Len(arg=arg):
                value = self._eval(arg, scope)
                if not isinstance(value, list):
                    raise RaspTypeError(
                        f"attempting to compute length of non-list: {describe(value)}",
                        arg.span,
                        _LEN_HINT if isinstance(value, SOp) else None,
                    )
                return len(value)
        raise TypeError(f"unknown expression {expr!r}")

    def _argument(
        self, func: Any, arg: ast.Expr, scope: Scope, beside: tuple[Any, ...] = ()
    ) -> Any:
        """A call's argument; `reverse(hello)` for `reverse("hello")`: an undefined name given
        to an s-op or selector, whose argument is an input, gets the quoted string as a hint
        (and so does one beside an s-op in a def's arguments: `count(tokens, a)`)."""
        try:
            return self._beside(arg, scope, beside)
        except RaspNameError as exc:
            if isinstance(func, SOp | Selector) and isinstance(arg, ast.Name) and exc.hint is None:
                call = f'{func.name}("{arg.name}")' if func.name else f'"{arg.name}"'
                exc.hint = f"an input is written in quotes: {call}"
            raise

    def _beside(self, expr: ast.Expr, scope: Scope, beside: tuple[Any, ...]) -> Any:
        """`expr`'s value; `tokens == a` for `tokens == "a"`: an undefined name (or list item,
        `tokens in [a, e]`) beside an s-op, as an operand or argument, gets the quoted string as
        a hint. `beside`: the other operands, values or (not yet evaluated) expressions."""
        try:
            return self._eval(expr, scope)
        except RaspNameError as exc:
            items = expr.items if isinstance(expr, ast.ListLit) else (expr,)
            name = next(
                (i.name for i in items if isinstance(i, ast.Name) and i.span == exc.span), None
            )
            if name is not None and exc.hint is None and any(_is_sop(b, scope) for b in beside):
                exc.hint = f'a string is written in quotes: "{name}"'
            raise

    def _arguments(
        self, exprs: tuple[ast.Expr, ...], scope: Scope, quotable: tuple[int, ...] = ()
    ) -> tuple[list[Any], tuple[Span, ...]]:
        """The values of `exprs`, and their spans showing what their names held (an atom argument
        becomes a constant s-op labelled by the argument); an undefined name at a `quotable`
        index beside an s-op gets the quoted string as a hint (`select(tokens, a, ==)`)."""
        values: list[Any] = []
        spans = []
        for i, expr in enumerate(exprs):
            mark = len(self._held)
            beside = (*values, *exprs[i + 1 :]) if i in quotable else ()
            values.append(self._beside(expr, scope, beside))
            spans.append(self._shown(expr.span, mark))
        return values, tuple(spans)

    def _length_in(self, scope: Scope, target: Any, key: Any, span: Span) -> SOp:
        """The length `x[-k]` counts back from: the name `length` where the index is read, as the
        original looks it up, so that a def's local `length` (or a comprehension's variable)
        means there what it means here; at the top level it is the input's length."""
        if not (isinstance(target, SOp) and isinstance(key, int) and key < 0):
            return self.length
        length = scope.lookup("length", span)
        if isinstance(length, SOp):
            return length
        raise RaspTypeError(
            f"a negative index counts back from the s-op named `length`, which holds "
            f"{with_article(kind_name(length))} here: {describe(length)}",
            span,
            hint="a local named `length` hides the input's length; rename it, or index by a "
            "whole number from the start",
        )

    @staticmethod
    def _key(key: Any, expr: ast.Expr) -> Any:
        if not is_atom(key):
            raise RaspTypeError(
                f"dictionary keys can only be atoms, but instead got: {describe(key)}", expr.span
            )
        return key

    def _comprehension(
        self, targets: tuple[str, ...], iterable_expr: ast.Expr, scope: Scope
    ) -> Iterator[Scope]:
        iterable = self._eval(iterable_expr, scope)
        if not isinstance(iterable, list | dict):
            raise RaspTypeError(
                f"a comprehension loops over a list or dict, but got: {describe(iterable)}",
                iterable_expr.span,
                iteration_hint(iterable),
            )
        for item in list(iterable):
            inner = Scope(scope, BASE_RESERVED, "comprehension")
            builtins.bind_targets(inner, targets, item, iterable_expr.span)
            yield inner
