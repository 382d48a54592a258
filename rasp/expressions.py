"""What a RASP expression means: atoms, lists, dicts, comprehensions, operators, select, aggregate.

`Expressions.eval(expr, scope)` computes an expression's value in a scope. Nothing here computes a
sequence: an operator on an s-op builds a `rasp.sops` node (`rasp.operators`). A call goes back to
the interpreter (`call`), which runs a `def`'s body as statements; `in` needs the prelude's `full_s`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from rasp import ast, builtins
from rasp import operators as ops
from rasp.errors import RaspTypeError
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

# call(function value, argument values, the call expression) -> the call's value
Call = Callable[[Any, list[Any], ast.Call], Any]


class Expressions:
    def __init__(
        self, call: Call, full_s: Callable[[], Selector], indices: SOp, length: SOp
    ) -> None:
        self.call, self.full_s = call, full_s
        # the input s-ops `x[i]` reads with (an s-op indexed by an s-op)
        self.indices, self.length = indices, length

    def eval(self, expr: ast.Expr, scope: Scope) -> Any:
        """The value of `expr` in `scope`: an atom, list, dict, function, or a lazy s-op or selector."""
        match expr:
            case ast.Name(name=name):
                value = scope.lookup(name, expr.span)
                if isinstance(value, TokensSOp) and value.span is None:
                    value.span = expr.span  # the input's errors point at its first use
                return value
            case ast.Literal(value=value):
                return value
            case ast.ListLit(items=items):
                return [self.eval(item, scope) for item in items]
            case ast.DictLit(pairs=pairs):
                result: dict[Any, Any] = {}
                for key_expr, value_expr in pairs:
                    result[self._key(key_expr, scope)] = self.eval(value_expr, scope)
                return result
            case ast.ListComp(element=element, targets=targets, iterable=iterable):
                return [
                    self.eval(element, inner)
                    for inner in self._comprehension(targets, iterable, scope)
                ]
            case ast.DictComp(key=key, value=value, targets=targets, iterable=iterable):
                out: dict[Any, Any] = {}
                for inner in self._comprehension(targets, iterable, scope):
                    out[self._key(key, inner)] = self.eval(value, inner)
                return out
            case ast.Unary(op=op, operand=operand):
                return ops.unary(op, self.eval(operand, scope), expr.span)
            case ast.Binary(op=op, left=left_expr, right=right_expr):
                left, right = self.eval(left_expr, scope), self.eval(right_expr, scope)
                if op is ast.BinaryOp.IN:
                    return ops.contains(left, right, expr.span, self.full_s())
                return ops.binary(op, left, right, expr.span)
            case ast.Ternary(then=then, cond=cond_expr, orelse=orelse):
                cond = self.eval(cond_expr, scope)
                if isinstance(cond, SOp):
                    return ops.elementwise_ternary(
                        cond, self.eval(then, scope), self.eval(orelse, scope), expr.span
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
                return self.eval(then, scope) if cond else self.eval(orelse, scope)
            case ast.Index(target=target, index=key):
                target_value, key_value = self.eval(target, scope), self.eval(key, scope)
                return ops.index(target_value, key_value, expr.span, self.indices, self.length)
            case ast.Call(func=func, args=args):
                return self.call(self.eval(func, scope), [self.eval(a, scope) for a in args], expr)
            case ast.Select(keys=keys, queries=queries, comparison=comparison):
                spans = (keys.span, queries.span)
                return ops.select(
                    self.eval(keys, scope),
                    self.eval(queries, scope),
                    comparison,
                    expr.span,
                    spans,
                )
            case ast.Aggregate(selector=sel, sop=sop, default=default):
                parts = [sel, sop] + ([default] if default is not None else [])
                values = [self.eval(p, scope) for p in parts]
                spans = tuple(p.span for p in parts)
                return ops.aggregate(
                    values[0], values[1], values[2] if default else None, expr.span, spans
                )
            case ast.Range(args=args):
                return builtins.make_range([self.eval(a, scope) for a in args], expr.span)
            case ast.Zip(args=args):
                return builtins.make_zip([self.eval(a, scope) for a in args], expr.span)
            case ast.Len(arg=arg):
                value = self.eval(arg, scope)
                if not isinstance(value, list):
                    raise RaspTypeError(
                        f"attempting to compute length of non-list: {describe(value)}", arg.span
                    )
                return len(value)
        raise TypeError(f"unknown expression {expr!r}")

    def _key(self, expr: ast.Expr, scope: Scope) -> Any:
        key = self.eval(expr, scope)
        if not is_atom(key):
            raise RaspTypeError(
                f"dictionary keys can only be atoms, but instead got: {describe(key)}", expr.span
            )
        return key

    def _comprehension(
        self, targets: tuple[str, ...], iterable_expr: ast.Expr, scope: Scope
    ) -> Iterator[Scope]:
        iterable = self.eval(iterable_expr, scope)
        if not isinstance(iterable, list | dict):
            raise RaspTypeError(
                f"a comprehension loops over a list or dict, but got: {describe(iterable)}",
                iterable_expr.span,
            )
        for item in list(iterable):
            inner = Scope(scope, BASE_RESERVED, "comprehension")
            builtins.bind_targets(inner, targets, item, iterable_expr.span)
            yield inner
