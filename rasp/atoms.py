"""One rule for telling atoms apart: 1, 1.0, True and "1" are four different values.

Python's own equality merges them (1 == 1.0 == True), which would merge tokens and values that the
user, JSON and the model file keep apart. The compiler's value sets (`compiler.blocks.value_key`)
and the CLI's token lists (`rasp.tools.arguments.token_key`) use this key; the runtime, which
imports neither package, applies the same rule to a model file's vocabulary
(`transformer.vocab.token_key`, which also accepts numpy scalars).
"""

from __future__ import annotations

from typing import Any


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
    return (type(value).__name__, value)


_EXACT = {bool: "bool", int: "int", float: "float", str: "str"}
