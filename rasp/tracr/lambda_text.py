"""The text of a map of a lambda built inside a library call (`lib.make_sort`'s `SequenceMap(lambda
x, i: x + min_key * i / max_seq_len, keys, rasp.indices)`): every s-op the call builds has the
call's span, whose text names none of them, so such a map read `map(-1 * hist, indices)`, the
operation unsaid. Where the lambda's source is found (the file that defined it, read again), its
body is written with its inputs' program text in place of its parameters and the numbers and
strings its closure holds in place of their names: `(-1 * hist) + 1 * indices / 64`. The lowered
map carries that as its note, as an operator's map does (rasp.tracr.operator_text)."""

from __future__ import annotations

import ast
import functools
import linecache
from collections.abc import Callable, Sequence
from typing import Any

from rasp import sops
from rasp.written_text import label

_WIDTH = 60  # as an operator's note: a longer text is left out (the map is written from its inputs)
_ATOMS = (bool, int, float, str)  # closure values written as their repr


def lambda_note(fn: Callable[..., Any], inputs: Sequence[sops.Node]) -> str | None:
    """`fn`'s body with `inputs` (program text) for its parameters, at most _WIDTH characters;
    None where `fn` is no lambda of a file we can read, its source is ambiguous (two lambdas of
    the same parameters on its line), it returns a parameter as it is, it reads a closure value
    that is no number, string or bool (a function given to the library call), or the text is
    longer."""
    code = getattr(fn, "__code__", None)
    if getattr(fn, "__name__", None) != "<lambda>" or code is None:
        return None
    params = code.co_varnames[: code.co_argcount]
    if len(params) != len(inputs) or code.co_kwonlyargcount or code.co_flags & 0x0C:
        return None  # (*args, **kwargs, keyword-only: not a call of the map's inputs)
    bodies = {
        ast.unparse(node.body)
        for node in _lambdas(code.co_filename, code.co_firstlineno)
        if tuple(a.arg for a in node.args.args) == params
    }
    if len(bodies) != 1:
        return None
    body = ast.parse(bodies.pop(), mode="eval").body
    if isinstance(body, ast.Name) and body.id in params:
        return None  # (`lambda x: x` computes nothing to say)
    closure = dict(zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False))
    marks = {p: f"__arg{k}__" for k, p in enumerate(params)}
    rewrite = _Written(marks, closure)
    written = rewrite.visit(body)
    if rewrite.opaque:
        return None  # (`lambda args: f(*args)`: `f`, a function the call was given, says nothing)
    text = ast.unparse(written)
    for param, mark in marks.items():
        # (an operation bracketed: `(-1 * hist) + ...`)
        text = text.replace(mark, label(inputs[params.index(param)], _WIDTH))
    return text if len(text) <= _WIDTH else None


class _Written(ast.NodeTransformer):
    """Parameters as marks (replaced by their inputs' text after unparsing), closure atoms as
    their values."""

    def __init__(self, marks: dict[str, str], closure: dict[str, Any]) -> None:
        self._marks = marks
        self._closure = closure
        self.opaque = False  # whether it reads a closure value that is no atom

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self._marks:
            return ast.Name(id=self._marks[node.id], ctx=node.ctx)
        cell = self._closure.get(node.id)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:  # (an empty cell)
                return node
            if type(value) in _ATOMS:
                return ast.Constant(value=value)
            self.opaque = True
        return node


def _lambdas(filename: str, line: int) -> list[ast.Lambda]:
    """The lambdas that start on `line` of `filename`."""
    return [node for node in _parsed(filename) if node.lineno == line]


def _parsed(filename: str) -> tuple[ast.Lambda, ...]:
    linecache.checkcache(filename)  # (a file edited since: its text now)
    return _lambdas_of("".join(linecache.getlines(filename)))


@functools.lru_cache(maxsize=32)
def _lambdas_of(source: str) -> tuple[ast.Lambda, ...]:
    if not source:
        return ()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.Lambda))
