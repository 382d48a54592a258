"""The values a RASP program computes with, and the scopes that name them.

A value is an atom (int, float, str, bool), a list, a dict, a function (`RaspFunction` from `def`,
or a `BuiltinFunction`), a lazy s-op or selector (`rasp.sops.SOp` / `Selector`), or the result of
applying an s-op or selector to an input (`SeqValue` / bool matrix `[n_query, n_key]`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasp import ast
from rasp.errors import RaspNameError, Span
from rasp.foreign_syntax import BUILT_IN_NAME_HINTS, FOREIGN_NAME_HINTS
from rasp.sops import Selector, SeqValue, SOp
from rasp.wording import atom_text, close_name

Atom = int | float | str | bool

# Names no program may assign, in any scope (the original's reserved words; keywords of the
# grammar cannot even be written as a name).
RESERVED_WORDS = frozenset("if else not and or out def return range for in zip len get".split())
_BASE_CONSTANTS = (
    "tokens_str",
    "tokens_int",
    "tokens_float",
    "tokens_bool",
    "tokens_asis",
    "indices",
)
# Reserved in every scope, function bodies included (as in the original).
BASE_RESERVED = RESERVED_WORDS | frozenset(_BASE_CONSTANTS) | {"True", "False"}


def _reserved_hint(name: str) -> str:
    # `out` and the other reserved words are no built-in or library name: say what they are.
    if name == "out":
        return (
            "'out' is a reserved word: RASP binds each expression statement's value to it; "
            "choose another name, e.g. result"
        )
    if name in RESERVED_WORDS:
        return f"'{name}' is a reserved word of RASP; choose another name"
    return "built-in and library names cannot be reassigned; choose another name"


@dataclass(eq=False)
class RaspFunction:
    """A `def`: a closure over the scope it was defined in (names resolve when it is called)."""

    name: str
    params: tuple[str, ...]
    body: tuple[ast.Stmt, ...]
    returns: tuple[ast.Expr, ...]
    scope: Scope = field(repr=False)
    creator: str  # the label of the scope it was defined in ("console", a loaded file, ...)

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)})"


@dataclass(eq=False)
class BuiltinFunction:
    """A function the interpreter provides (e.g. the primitive `selector_width`)."""

    name: str
    params: tuple[str, ...]
    impl: Callable[[tuple[Any, ...], Span], Any] = field(repr=False)

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)})"


Value = (
    Atom
    | list[Any]
    | dict[Any, Any]
    | RaspFunction
    | BuiltinFunction
    | SOp
    | Selector
    | SeqValue
    | np.ndarray
)


def is_atom(value: object) -> bool:
    return isinstance(value, int | float | str | bool)


def is_function(value: object) -> bool:
    return isinstance(value, RaspFunction | BuiltinFunction)


def kind_name(value: object) -> str:
    """The kind of a value in the words of the original (`s-op`, `selector`, `list`, ...)."""
    if isinstance(value, SOp):
        return "s-op"
    if isinstance(value, Selector):
        return "selector"
    if isinstance(value, RaspFunction | BuiltinFunction):
        return "function"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, SeqValue):
        return "evaluated s-op"
    if isinstance(value, np.ndarray):
        return "evaluated selector"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def is_evaluated(value: object) -> bool:
    """An s-op or selector applied to an input (`f("abc")`): a value to show, not to compute with."""
    return isinstance(value, SeqValue | np.ndarray)


def evaluated_inside(value: object) -> SeqValue | np.ndarray | None:
    """The first evaluated s-op or selector in `value` or its lists and dicts (keys too), else
    None."""
    found = _first_inside(value, (SeqValue, np.ndarray))
    return found if isinstance(found, SeqValue | np.ndarray) else None


def non_token_inside(value: object) -> object | None:
    """The first value in `value` or its lists and dicts (keys too) that no input token may be or
    hold: an s-op, selector or function, evaluated or not (its text as a token would be numpy's
    or our class's repr; the original's is its Python object's), else None."""
    return _first_inside(
        value, (SeqValue, np.ndarray, SOp, Selector, RaspFunction, BuiltinFunction)
    )


TOKEN_HINT = "an input token is a string, number or bool, or a list or dict of them"


def _first_inside(value: object, kinds: tuple[type, ...]) -> object | None:
    """The first of `kinds` in `value` or its lists and dicts, depth first (a stack, not
    recursion: a list may nest deeper than Python recurses; each list once, as `l = [l, l]`
    repeated shares them)."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, kinds):
            return item
        if isinstance(item, list | tuple | dict):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                stack += [inner, key]
    return None


def evaluated_hint(value: object) -> str | None:
    """How to compute with what `value` was evaluated from (None where it is no such value).
    Its truth or order means nothing, and its operators would be numpy's or internal errors."""
    if isinstance(value, SeqValue):
        return (
            "an applied s-op is a value for display, not an s-op: compute with the s-op "
            'itself, then apply it: (f + 1)("abc"), not f("abc") + 1'
        )
    if isinstance(value, np.ndarray):
        return (
            "an applied selector is a value for display, not a selector: combine the "
            'selectors themselves, then apply: (s and t)("abc"), not s("abc") and t("abc")'
        )
    return None


def describe(value: object, cap: int | None = 40) -> str:
    """A short description of a value for error messages (names for s-ops, quoted strings)."""
    if isinstance(value, SOp | Selector):
        return value.name or kind_name(value)
    if isinstance(value, RaspFunction | BuiltinFunction):
        return f"function {value.signature()}"
    if isinstance(value, list):
        text = "[" + ", ".join(describe(v, None) for v in value) + "]"
    elif isinstance(value, dict):
        text = (
            "{"
            + ", ".join(f"{describe(k, None)}: {describe(v, None)}" for k, v in value.items())
            + "}"
        )
    elif isinstance(value, SeqValue):  # as the REPL shows it: `[0, 1, 2] (ints)`
        text = "[" + ", ".join(describe(v, None) for v in value.values) + f"] ({value.type.value})"
    elif isinstance(value, np.ndarray):  # as the REPL shows it: {query: [0/1 per key]}
        rows = np.asarray(value, dtype=bool).astype(int).tolist()
        text = "{" + ", ".join(f"{i}: {row}" for i, row in enumerate(rows)) + "}"
    else:
        text = atom_text(value)
    if cap is not None and len(text) > cap:
        return f"({kind_name(value)})"
    return text


# Built-in forms the grammar reads only as calls (`select(`), so that their bare name is no value.
# The grammar's built-in forms (no value a name holds), each with how it is called
FORM_USAGE = {
    "select": "select(keys, queries, OP)",
    "aggregate": "aggregate(selector, sop[, default])",
    "range": "range(a[, b[, c]])",
    "zip": "zip(a, b, ...)",
    "len": "len(x)",
}
_FORM_HINTS = {
    name: f"'{name}' is a built-in form, not a value; call it: {usage}"
    for name, usage in FORM_USAGE.items()
}


_UNBOUND = object()  # (in a scope's journal: the name was not bound)


class CopyRefused(RaspNameError):
    """A loaded file bound a name its caller reserves: bound in the file's scope, not copied."""


class UndefinedName(RaspNameError):
    """`Undefined variable: NAME`: the name is kept, for the REPL to say why it is unbound (its
    statement failed: `rasp.tools.repl_unbound`)."""

    def __init__(self, name: str, span: Span | None, hint: str | None) -> None:
        super().__init__(f"Undefined variable: {name}", span, hint)
        self.name = name


class Scope:
    """One level of names: lookups walk up to the parents, assignments stay here and respect
    `reserved`."""

    def __init__(self, parent: Scope | None, reserved: frozenset[str], label: str) -> None:
        self.parent = parent
        self.reserved = reserved
        self.label = label
        self.values: dict[str, Any] = {}
        # Where each name was last assigned, so that an error about its value can point there.
        self.spans: dict[str, Span] = {}
        # While `recording`: each binding's previous value and span, so that `undo` costs what the
        # undone statements changed, not the number of names (a long REPL session stays fast).
        self._journal: list[tuple[str, Any, Any]] | None = None
        # A loaded file's scope: the caller its names are copied to (rasp.loads), which may
        # reserve names this scope does not (the library's, at the top level).
        self.copied_to: Scope | None = None

    def lookup(self, name: str, span: Span | None) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        # the grammar's forms are no names in a scope, but `agregate` or `Aggregate` mean one
        close = close_name(name, [*self.visible(), *FORM_USAGE])
        usage = f" call it: {FORM_USAGE[close]}" if close in FORM_USAGE else ""
        hint = (
            FOREIGN_NAME_HINTS.get(name)
            or _FORM_HINTS.get(name)
            or (f"did you mean '{close}'?{usage}" if close else None)
            or BUILT_IN_NAME_HINTS.get(name)
        )
        raise UndefinedName(name, span, hint)

    def assignable(self, name: str) -> bool:
        return name not in self.reserved

    def check_assignable(self, name: str, span: Span) -> None:
        if name in self.reserved:
            raise RaspNameError(
                f"Cannot set reserved name: {name}",
                span,
                _reserved_hint(name),
            )

    def assign(self, name: str, value: Any, span: Span) -> None:
        self.check_assignable(name, span)
        self._record(name)
        self.values[name] = value
        self.spans[name] = span
        if not name.startswith("_") and self._reserved_above(name):
            # bound here all the same: the original's file scope sets it, then its copy fails
            raise CopyRefused(f"Cannot set reserved name: {name}", span, _reserved_hint(name))

    def _reserved_above(self, name: str) -> bool:
        """Whether a scope this one's names are copied into, directly or through the loads that
        load it (a file loaded by a loaded file), reserves `name`: the original's file scope
        passes each name on up its chain of loading scopes as it binds it."""
        scope = self.copied_to
        while scope is not None:
            if name in scope.reserved:
                return True
            scope = scope.copied_to
        return False

    def force(self, name: str, value: Any) -> None:
        """Bind without the reserved-name check (for `out` and the built-ins themselves)."""
        self._record(name)
        self.values[name] = value

    def _record(self, name: str) -> None:
        if self._journal is not None:
            self._journal.append(
                (name, self.values.get(name, _UNBOUND), self.spans.get(name, _UNBOUND))
            )

    @contextmanager
    def recording(self) -> Iterator[int]:
        """Remember what bindings change from here on; the mark it yields is for `undo` and
        `changed_since`. Recordings nest; the outermost one forgets what it remembered."""
        outermost = self._journal is None
        if self._journal is None:
            self._journal = []
        try:
            yield len(self._journal)
        finally:
            if outermost:
                self._journal = None

    def undo(self, mark: int) -> None:
        """Put back every binding (and its span) as it was at `mark`, a mark of a recording that
        is still open."""
        journal = self._journal
        if journal is None:
            raise ValueError("undo outside a recording")  # a bug of ours, not the user's
        while len(journal) > mark:
            name, value, span = journal.pop()
            for table, old in ((self.values, value), (self.spans, span)):
                if old is _UNBOUND:
                    table.pop(name, None)
                else:
                    table[name] = old

    def changed_since(self, mark: int) -> set[str]:
        """The names bound to another value (or newly bound) since `mark`."""
        journal = self._journal or []
        first: dict[str, Any] = {}
        for name, value, _span in journal[mark:]:
            first.setdefault(name, value)  # (the value at the mark)
        return {n for n, old in first.items() if old is _UNBOUND or self.values.get(n) is not old}

    def visible(self) -> Iterator[str]:
        seen: set[str] = set()
        scope: Scope | None = self
        while scope is not None:
            for name in scope.values:
                if name not in seen:
                    seen.add(name)
                    yield name
            scope = scope.parent
