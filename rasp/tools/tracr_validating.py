"""tracr's `compiler.validating`, for programs that call it (`tracr.compiler.validating` under
`--tracr-compat`).

tracr's validator lists the parts of a program its compiler cannot handle. rasp-forge compiles every
rasp.tracr program exactly or refuses it with located reasons when compiling, so here `validate`
only checks the program evaluates on `xs` (when given) and reports nothing unsupported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from rasp.tracr.evaluate import evaluate
from rasp.tracr.expr import RASPExpr


@dataclasses.dataclass
class TracrUnsupportedExpr:
    """An expression that cannot be compiled, and why."""

    expr: RASPExpr
    reason: str


def static_validate(program: RASPExpr) -> list[TracrUnsupportedExpr]:
    del program
    return []


def dynamic_validate(
    program: RASPExpr, xs: Sequence[Any] | None = None
) -> list[TracrUnsupportedExpr]:
    if xs is not None:
        evaluate(program, xs)
    return []


def validate(program: RASPExpr, xs: Sequence[Any] | None = None) -> list[TracrUnsupportedExpr]:
    return static_validate(program) + dynamic_validate(program, xs)
