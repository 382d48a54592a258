"""The RASP syntax tree: one frozen dataclass per construct, each with its source `Span`.

`rasp.parser.parse` builds it; `rasp.interpreter.Interpreter` runs it. Operators are enums so the
interpreter's dispatch over them is closed and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rasp.errors import Source, Span
from rasp.sops import Comparison


class BinaryOp(Enum):
    """A binary operator, by its source text."""

    IN = "in"
    AND = "and"
    OR = "or"
    EQ = "=="
    NE = "!="
    LE = "<="
    GE = ">="
    LT = "<"
    GT = ">"
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    POW = "^"


class UnaryOp(Enum):
    NOT = "not"
    NEG = "-"
    POS = "+"
    ROUND = "round"
    INDICATOR = "indicator"


# ------------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True, slots=True)
class Name:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Literal:
    """An int, float or string written in the source (`True`/`False` are names)."""

    value: int | float | str
    span: Span


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class DictLit:
    pairs: tuple[tuple[Expr, Expr], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ListComp:
    """`[element for targets in iterable]`; several targets destructure each item."""

    element: Expr
    targets: tuple[str, ...]
    iterable: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class DictComp:
    key: Expr
    value: Expr
    targets: tuple[str, ...]
    iterable: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    """`not e`, `-e`, `+e`, `round(e)`, `indicator(e)`."""

    op: UnaryOp
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    """Every infix operator, `in` included; `op_span` locates the operator itself."""

    op: BinaryOp
    left: Expr
    right: Expr
    span: Span
    op_span: Span


@dataclass(frozen=True, slots=True)
class Ternary:
    """`then if cond else orelse`."""

    then: Expr
    cond: Expr
    orelse: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    target: Expr
    index: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    """`f(args)`: a `def` function, a built-in, or an s-op/selector applied to an input."""

    func: Expr
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Select:
    keys: Expr
    queries: Expr
    comparison: Comparison
    span: Span


@dataclass(frozen=True, slots=True)
class Aggregate:
    selector: Expr
    sop: Expr
    default: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Range:
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Zip:
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Len:
    arg: Expr
    span: Span


Expr = (
    Name
    | Literal
    | ListLit
    | DictLit
    | ListComp
    | DictComp
    | Unary
    | Binary
    | Ternary
    | Index
    | Call
    | Select
    | Aggregate
    | Range
    | Zip
    | Len
)


# ------------------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Assign:
    """`a = e;` or `a, b = e1, e2;` (or `a, b = f();` when f returns two values)."""

    targets: tuple[str, ...]
    values: tuple[Expr, ...]
    span: Span
    target_spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class FuncDef:
    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    returns: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    targets: tuple[str, ...]
    iterable: Expr
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Load:
    """`load "path";` runs `path.rasp`."""

    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class Draw:
    expr: Expr
    input: Expr | None
    span: Span


class CommandKind(Enum):
    SET_EXAMPLE = "set example"
    SHOW_EXAMPLE = "show example"
    TOGGLE_EXAMPLES = "examples"
    FULL_SEQ_DISPLAY = "full seq display"
    EXIT = "exit"


class ExampleSubset(Enum):
    """Which running example / example display a command addresses (`both` when none is named)."""

    BOTH = "both"
    SOP = "s-op"
    SELECTOR = "selector"


@dataclass(frozen=True, slots=True)
class ReplCommand:
    """A REPL command: `set [s-op|selector] example E`, `show [..] example`, `[..] examples on|off`,
    `full seq display on|off`, `exit`/`quit`. `switch` is True for `on`; `example` is E."""

    command: CommandKind
    subset: ExampleSubset
    switch: bool | None
    example: Expr | None
    span: Span


Stmt = ExprStmt | Assign | FuncDef | For | Load | Draw | ReplCommand


@dataclass(frozen=True, slots=True)
class Program:
    statements: tuple[Stmt, ...]
    source: Source
