"""The nodes of the lazy s-op graph: inputs, constants, maps, selects, selector logic, aggregates.

Every RASP s-op or selector expression creates one node (see `rasp.sops`, which re-exports all of
them and evaluates them); a node keeps the `Span` of the expression that created it and the program
variable it was last assigned to. `Comparison` and `TokenKind` are the closed sets a select and an
input s-op take; `walk` visits a graph children first.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from rasp.errors import Span
from rasp.text_width import clip
from rasp.walks import first_visits
from rasp.wording import int_text

Atom = int | float | str | bool | None

LABEL_MAX = 40  # an unnamed node's label: its expression, cut to this many terminal columns


def cut_label(text: str) -> str:
    """`text` cut to LABEL_MAX terminal columns, its end marked `...` where it was cut (between
    graphemes: `日` takes two columns, and a cut never splits `👨‍👩‍👧`; ASCII by characters)."""
    return clip(text, LABEL_MAX, "...")


# a name, possibly dotted (`x`, `lib.make_sort`)
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_CLOSES = {"(": ")", "[": "]", "{": "}"}


def is_one_term(text: str) -> bool:
    """Whether `text` reads as one term inside other text, so needs no brackets there: a name, a
    call or an index (`x`, `f(x, y)`, `lib.make_sort(...)`, `d[x]`, `f(x)[0]`); an operation
    (`x + 1`, `a and b`, `f(x) + g(y)`) does. A scan that keeps count of the brackets (and skips
    quoted strings): a pattern of `name(.*)` took `f(x) + g(y)` for one call."""
    name = _NAME.match(text)
    if name is None:
        return False
    at = name.end()
    while at < len(text):
        if text[at] in "([":
            at = _after_group(text, at)
        elif text[at] == "." and (attribute := _NAME.match(text, at + 1)) is not None:
            at = attribute.end()  # `f(x).y`
        else:
            return False
        if at < 0:
            return False
    return True


def _after_group(text: str, start: int) -> int:
    """The index after the bracket that closes the one at `start` (brackets inside a quoted
    string do not count), or -1 where it is not closed, or closed by another kind."""
    expected: list[str] = []
    at = start
    while at < len(text):
        char = text[at]
        if char in "\"'":
            at = _after_string(text, at)
            if at < 0:
                return -1
            continue
        if char in _CLOSES:
            expected.append(_CLOSES[char])
        elif char in ")]}":
            if char != expected.pop():
                return -1
            if not expected:
                return at + 1
        at += 1
    return -1


def _after_string(text: str, start: int) -> int:
    """The index after the quote that closes the string opened at `start` (a backslash escapes
    the character after it), or -1 where it is not closed."""
    quote, at = text[start], start + 1
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text[at] == quote:
            return at + 1
        else:
            at += 1
    return -1


_node_ids = itertools.count()


def fresh_id() -> int:
    """A new node id: every node made after this call has a larger one."""
    return next(_node_ids)


def mark_call(results: Sequence[Any], after: int, function: str, span: Span | None) -> None:
    """Record on every node `results` reach that was made after id `after` (by a call of
    `function` at `span`) that call, outermost last."""
    if span is None:
        return
    values, stack = list(results), []
    while values:  # the s-ops returned, also inside lists and dicts
        value = values.pop()
        if isinstance(value, Node) and value.id > after:
            stack.append(value)
        elif isinstance(value, list | tuple):
            values.extend(value)
        elif isinstance(value, dict):
            values.extend(value.values())
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        node.calls = (*node.calls, (function, span))
        if node.span is not None:  # what a compile refusal located at the node reads
            node.span = replace(node.span, calls=node.calls)
        stack.extend(c for c in node.children() if c.id > after and c.id not in seen)


class Comparison(Enum):
    """A select comparison; `apply(key, query)` is `key OP query`, as in the original."""

    EQ = "=="
    NEQ = "!="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="

    def apply(self, key: Any, query: Any) -> bool:
        return bool(_COMPARE[self](key, query))


_COMPARE: dict[Comparison, Callable[[Any, Any], Any]] = {
    Comparison.EQ: operator.eq,
    Comparison.NEQ: operator.ne,
    Comparison.LT: operator.lt,
    Comparison.LEQ: operator.le,
    Comparison.GT: operator.gt,
    Comparison.GEQ: operator.ge,
}


class TokenKind(Enum):
    """Which conversion an input s-op applies to each raw token."""

    STR = "str"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    ASIS = "asis"


def _token_text(token: Any) -> str:
    """`str(token)`, also for an int past Python's 4,300-digit limit on writing one, which the
    REPL prints in full too (docs/language.md, section 6)."""
    return int_text(token) if isinstance(token, int) else str(token)


_TOKEN_CONVERT: dict[TokenKind, Callable[[Any], Any]] = {
    TokenKind.STR: _token_text,
    TokenKind.INT: int,
    TokenKind.FLOAT: float,
    TokenKind.BOOL: bool,
    TokenKind.ASIS: lambda x: x,
}


def read_token(kind: TokenKind, token: Any) -> Any:
    """The raw input token as an input s-op of `kind` reads it, as the interpreter converts it
    (`tokens_int` reads 3 from "3", `tokens` = `tokens_str` the token's `str()`): for tools that
    reason about a vocabulary, such as the compiler's value sets. Raises what the conversion
    raises (ValueError, TypeError or OverflowError: `int("a")`), where the interpreter refuses
    the input."""
    return _TOKEN_CONVERT[kind](token)


@dataclass(eq=False)
class Node:
    """A lazy RASP value. Identity matters (two identical `select(...)` calls are two heads)."""

    span: Span | None = field(default=None, kw_only=True, repr=False)
    # The variable name the program last bound this node to (the original renames on assignment).
    name: str | None = field(default=None, kw_only=True)
    # Values of several types may mix in this node's sequence (tracr allows it; RASP does not).
    loose: bool = field(default=False, kw_only=True, repr=False)
    # The call that returned this node, for its label while it has no name: the original's
    # `f(indices , "a")`, its arguments by value.
    called_as: str | None = field(default=None, kw_only=True, repr=False, compare=False)
    # What a node made by a rewrite computes, for people (a compiled model's operation column),
    # where its span is the rewritten expression's; None: its source text.
    note: str | None = field(default=None, kw_only=True, repr=False, compare=False)
    # The calls of `def`s that made this node, innermost first: (function, the call's span). A
    # node of a function's body (the prelude's too) has its span there; a compile refusal of it
    # is then also shown where the program called the function.
    calls: tuple[tuple[str, Span], ...] = field(default=(), kw_only=True, repr=False, compare=False)
    # The `def` whose body gave the node its `name` (a local of that function), None where a
    # file's top level did: messages then say which function's `name` it is and where it was called.
    named_in: str | None = field(default=None, kw_only=True, repr=False, compare=False)
    id: int = field(default_factory=lambda: next(_node_ids), init=False, repr=False)

    def children(self) -> tuple[Node, ...]:
        return ()

    @property
    def label(self) -> str:
        """The name, else the call that returned the node (`f(indices)`) or the expression that
        made it (`(tokens == "a")`, each name in it written as what it held: `(1 * indices)` for
        `x * indices`), as the original names an unnamed s-op; `s-op` or `selector` without a
        source."""
        if self.name:
            return self.name
        text = self.called_as or (self.span.shown_text() if self.span else "")
        if not text:
            return "selector" if isinstance(self, Selector) else "s-op"
        one_term = is_one_term(text)
        text = cut_label(text)
        # a bare call or name reads as one; an operation is bracketed (`(x + 1)("abc")`)
        return text if one_term else f"({text})"


class SOp(Node):
    """A sequence operator: one value per position."""


class Selector(Node):
    """A bool [query, key] pattern."""


@dataclass(eq=False)
class TokensSOp(SOp):
    kind: TokenKind = TokenKind.STR


@dataclass(eq=False)
class IndicesSOp(SOp):
    pass


@dataclass(eq=False)
class LengthSOp(SOp):
    """The input length at every position (a primitive here; RASP code in the original)."""


@dataclass(eq=False)
class ConstSOp(SOp):
    """An atom broadcast to every position (e.g. the `0` of `select(indices, 0, ==)`)."""

    value: Atom = 0


@dataclass(eq=False)
class MapSOp(SOp):
    """`fn` applied per position to the values of `inputs`; `text` describes it for people."""

    fn: Callable[..., Any] = field(default=lambda x: x, repr=False)
    inputs: tuple[SOp, ...] = ()
    text: str = "map"

    def children(self) -> tuple[Node, ...]:
        return self.inputs


@dataclass(eq=False)
class Select(Selector):
    keys: SOp = field(default_factory=IndicesSOp)
    queries: SOp = field(default_factory=IndicesSOp)
    comparison: Comparison = Comparison.EQ

    def children(self) -> tuple[Node, ...]:
        return (self.keys, self.queries)


@dataclass(eq=False)
class PredicateSelect(Selector):
    """Query i selects key j iff `fn(keys[j], queries[i])` is truthy: tracr's `Select` with a Python
    predicate. The compiler turns it into `Select`s for a vocabulary (`compiler.resolve`)."""

    keys: SOp = field(default_factory=IndicesSOp)
    queries: SOp = field(default_factory=IndicesSOp)
    fn: Callable[[Any, Any], Any] = field(default=lambda key, query: True, repr=False)
    text: str = "predicate"

    def children(self) -> tuple[Node, ...]:
        return (self.keys, self.queries)


@dataclass(eq=False)
class SelectAnd(Selector):
    left: Selector = field(default_factory=Select)
    right: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(eq=False)
class SelectOr(Selector):
    left: Selector = field(default_factory=Select)
    right: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(eq=False)
class SelectNot(Selector):
    inner: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.inner,)


@dataclass(eq=False)
class AggregateSOp(SOp):
    """Per query: nothing selected -> default; one -> that value; several -> their mean (numbers).

    `bools_as_numbers` is tracr's mean: bools among several selected values count as 0/1 (RASP
    refuses to average them), and the mean is `sum(values) / len(values)` added in key order.
    """

    selector: Selector = field(default_factory=Select)
    sop: SOp = field(default_factory=IndicesSOp)
    default: Atom = 0
    bools_as_numbers: bool = False
    # called with the selector's row and the values of each mean of several (rasp.tracr: tracr
    # refuses numpy's ints and bools there); it raises where the evaluator must. The compiler
    # ignores it.
    mean_check: Callable[[Any, Sequence[Any]], None] | None = field(default=None, repr=False)
    # the default as a tracr program wrote it, where that is a numpy scalar (`default` holds the
    # Python value, as every value of the graph): the form tracr gives a reader of it
    numpy_default: Any = field(default=None, repr=False)

    def children(self) -> tuple[Node, ...]:
        return (self.selector, self.sop)


@dataclass(eq=False)
class SelectorWidthSOp(SOp):
    """How many keys each query selects (a primitive; the original builds it with the BOS trick)."""

    selector: Selector = field(default_factory=Select)

    def children(self) -> tuple[Node, ...]:
        return (self.selector,)


def walk(root: Node, skip: Container[int] = ()) -> Iterator[Node]:
    """Every node `root` depends on, each once, children before parents (iterative: graphs get
    deep); nodes whose id is in `skip` are left out, with what only they depend on."""
    return first_visits(root, _children, _node_id, skip)


def _children(node: Node) -> tuple[Node, ...]:
    return node.children()


def _node_id(node: Node) -> int:
    return node.id
