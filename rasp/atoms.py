"""One rule for telling atoms apart: 1, 1.0, True and "1" are four different values; and one for
when a model's value equals the interpreter's (`same_value`).

Python's own equality merges them (1 == 1.0 == True), which would merge tokens and values that the
user, JSON and the model file keep apart. The compiler's value sets (`compiler.blocks.value_key`)
and the CLI's token lists (`rasp.tools.arguments.token_key`) use this key; the runtime, which
imports neither package, applies the same rule to a model file's vocabulary
(`transformer.vocab.token_key`, which also accepts numpy scalars).
"""

from __future__ import annotations

import math
from typing import Any

# the compiler's promise for numbers: equal within this (relative or absolute)
OUTPUT_REL_TOL = 1e-6


def atom_key(value: Any) -> tuple[str, Any]:
    """A dictionary key equal only for atoms of the same type and value."""
    kind = _EXACT.get(type(value))  # fast path for the plain types (same keys as below)
    if kind is not None:
        return (kind, value)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, tuple):  # ('a', False) == ('a', 0) in Python: element by element
        return ("tuple", tuple(atom_key(v) for v in value))
    return (type(value).__name__, value)


_EXACT = {bool: "bool", int: "int", float: "float", str: "str"}


def same_value(got: Any, want: Any, rel_tol: float = OUTPUT_REL_TOL) -> bool:
    """Equal as a compiled model promises RASP values: ints exactly, numbers involving a float
    within `rel_tol`, a bool never equal to a number or a string, anything else exactly and of one
    type. `rasp verify` judges a model by it; the compiler merges results by it."""
    if isinstance(got, bool) or isinstance(want, bool):
        return isinstance(got, bool) and isinstance(want, bool) and got == want
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        if isinstance(want, int) and isinstance(got, int):
            return got == want
        return math.isclose(float(got), float(want), rel_tol=rel_tol, abs_tol=rel_tol)
    return type(got) is type(want) and got == want
