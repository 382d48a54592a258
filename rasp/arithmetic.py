"""Python's arithmetic and comparisons as RASP computes them on atoms, with RASP's errors.

`PYTHON_BINARY` maps each binary operator to the function a map of an s-op calls per position: the
compiler recognises these functions by identity (compiler.vector_maps, compiler.known_affine), so
they stay plain module-level functions, and `apply` wraps a call to word a float overflow, which
Python reports as "int too large to convert to float" or "(34, 'Numerical result out of range')".
Strings and lists built by `+` and `*`, and strings formatted by `%`, are capped at
`MAX_COLLECTION` items.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from rasp.ast import BinaryOp
from rasp.errors import RaspRuntimeError
from rasp.values import kind_name
from rasp.wording import FLOAT_LIMIT, operand_text, with_article

# Lists and strings are for organising a program; cap them so a typo cannot exhaust memory.
MAX_COLLECTION = 100_000
_MAX_POWER_BITS = 100_000


def _too_large(op_text: str, left: Any, right: Any) -> RaspRuntimeError:
    # Python says "int too large to convert to float": name the operation, as `10.0 ^ 400` does
    shown = f"{operand_text(left)} {op_text} {operand_text(right)}"
    return RaspRuntimeError(f"{shown} is too large for a float ({FLOAT_LIMIT})")


def power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        if exponent * base.bit_length() > _MAX_POWER_BITS:
            raise RaspRuntimeError(f"{base} ^ {exponent} is too large a number")
    try:
        result = pow(base, exponent)
    except OverflowError:  # Python says only "(34, 'Numerical result out of range')"
        raise _too_large("^", base, exponent) from None
    if isinstance(result, complex):
        raise RaspRuntimeError(f"{base} ^ {exponent} is not a real number")
    return result


def times(left: Any, right: Any) -> Any:
    for seq, count in ((left, right), (right, left)):
        if (
            isinstance(seq, str | list)
            and isinstance(count, int)
            and len(seq) * count > MAX_COLLECTION
        ):
            raise RaspRuntimeError(
                f"{with_article(kind_name(seq))} longer than {MAX_COLLECTION} items"
            )
    return left * right


def plus(left: Any, right: Any) -> Any:
    result = left + right
    if isinstance(result, str | list) and len(result) > MAX_COLLECTION:
        raise RaspRuntimeError(
            f"{with_article(kind_name(result))} longer than {MAX_COLLECTION} items"
        )
    return result


PYTHON_BINARY: dict[BinaryOp, Callable[[Any, Any], Any]] = {
    BinaryOp.ADD: plus,
    BinaryOp.SUB: operator.sub,
    BinaryOp.MUL: times,
    BinaryOp.DIV: operator.truediv,
    BinaryOp.MOD: operator.mod,
    BinaryOp.POW: power,
    BinaryOp.EQ: operator.eq,
    BinaryOp.NE: operator.ne,
    BinaryOp.LE: operator.le,
    BinaryOp.GE: operator.ge,
    BinaryOp.LT: operator.lt,
    BinaryOp.GT: operator.gt,
}
# (the compiler knows these functions by identity: a float overflow is worded where they are called)
_OPERATION_TEXT = {fn: op.value for op, fn in PYTHON_BINARY.items()}


def apply(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    """`fn(*args)`; a float overflow names the operation (Python: "int too large to convert to
    float")."""
    formats = fn is operator.mod and len(args) == 2 and isinstance(args[0], str)
    if formats:
        _check_widths(args[0])
    try:
        result = fn(*args)
    except OverflowError:
        operation = _OPERATION_TEXT.get(fn)
        if operation is None or len(args) != 2 or formats:
            raise  # (`"%c" % -1`: Python's words are right)
        raise _too_large(operation, *args) from None
    except KeyError as exc:
        if not formats:
            raise
        # (`"%(a)s" % {}`: Python says only KeyError: 'a')
        raise RaspRuntimeError(f"the format's key {exc} is not in the dict") from None
    if formats and len(result) > MAX_COLLECTION:
        raise RaspRuntimeError(f"a string longer than {MAX_COLLECTION} items")
    return result


def _check_widths(text: str) -> None:
    """A width or precision past the cap would build that long a string (`"%99999999999d"` is
    Python's MemoryError) before its length could be checked."""
    for number in _widths(text):
        if len(number) > 6 or int(number) > MAX_COLLECTION:
            raise RaspRuntimeError(f"a string longer than {MAX_COLLECTION} items")


def _widths(text: str) -> list[str]:
    """The digits of every `%` conversion's width and precision, read as Python's printf-style
    formatting reads them: `%%` is a literal percent (`"%d%% 2000000"` has no width 2000000) and
    a mapping key ends at its matching parenthesis (`%(a(b))99999999s`)."""
    found: list[str] = []
    i = text.find("%")
    while i >= 0:
        i += 1
        if text.startswith("%", i):  # a literal %
            i = text.find("%", i + 1)
            continue
        if text.startswith("(", i):
            depth = 0
            while i < len(text):
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
                if depth == 0:
                    break
        while i < len(text) and text[i] in "-#0 +":
            i += 1
        for lead in ("", "."):
            if lead and not text.startswith(lead, i):
                break
            i += len(lead)
            start = i
            while i < len(text) and text[i].isdigit():
                i += 1
            if i > start:
                found.append(text[start:i])
        i = text.find("%", i + 1) if i < len(text) else -1
    return found
