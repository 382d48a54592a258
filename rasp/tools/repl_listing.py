"""What a `load` prints in the REPL, in the original's order (tech-srl/RASP `REPL.loadFile` and
`filter_and_dump_prints`).

The original keeps what each top-level statement of a loaded file would print (its names and
their values at that statement, the output of `show example`, its errors) and prints it all when
the file ends, names without examples (its `loadFile` turns them off while the file runs,
and back as they were after it; a file's own `examples on` shows them in its listing: the
REPL's `_entered` and `_left`). When none of it is an error, only the last statement that
binds a name lists it; with an error, everything is printed in order. Names bound only inside a
`for` body are not listed (they are imported all the same), nor private ones (`_x`) or `out`. A
nested load prints what has gathered so far when it ends, the loading file's part included, and
so does a load in a def's body (before an error the call then meets); a load in a `for` body does
so at each iteration (`ReplSession._check_in_loop`), as the original's. A
syntax error takes its place in the file's order (the original prints it as soon as its reader
meets it, before everything gathered, so that an error on line 4 came before line 1's names), and
it does not count as an error for the rule above.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rasp.errors import RaspError, RaspSyntaxError
from rasp.results import StatementResult

_Item = RaspError | tuple[str, Any] | list[str] | Callable[[], list[str]]


@dataclass
class LoadListing:
    """Gathers a load's output as its statements run; `dump` moves it to `lines`.

    `errors` is the `ReplLoading`'s list, which the interpreter appends a failing statement to;
    `render(name, value)` gives a name's lines."""

    errors: list[RaspError]
    render: Callable[[str, Any], list[str]]
    # adds to a failing statement's error its likely cause among the file's warnings
    cause: Callable[[RaspError], None] = lambda err: None
    width: int | None = None  # an error's message and hint are wrapped to it (the session's)
    lines: list[str] = field(default_factory=list)
    _items: list[_Item] = field(default_factory=list)
    _taken: int = 0

    def named(self, result: StatementResult) -> None:
        """A statement that binds or shows names (an assignment, a def, a bare name)."""
        self._take_errors()
        for name, value in zip(result.names, result.values, strict=False):
            if name != "out" and not name.startswith("_"):
                self._items.append((name, value))

    def printed(self, lines: list[str] | Callable[[], list[str]]) -> None:
        """What a REPL command in the file printed, or prints when the listing is (`show
        example`: the original prints the example in force then, after a later `set example`)."""
        self._take_errors()
        if lines:
            self._items.append(lines)

    def dump(self) -> None:
        """A load has ended: what gathered is printed."""
        self._take_errors()
        items = self._items
        if not any(_counts_as_error(item) for item in items):
            last = {item[0]: k for k, item in enumerate(items) if isinstance(item, tuple)}
            items = [i for k, i in enumerate(items) if not isinstance(i, tuple) or last[i[0]] == k]
        for item in items:
            if isinstance(item, RaspError):
                self.cause(item)
                self.lines.append(item.render(width=self.width))
            elif isinstance(item, tuple):
                self.lines += self.render(*item)
            elif callable(item):
                self.lines += item()
            else:
                self.lines += item
        self._items = []

    def _take_errors(self) -> None:
        self._items += self.errors[self._taken :]
        self._taken = len(self.errors)


def _counts_as_error(item: _Item) -> bool:
    """A failing statement makes the listing show every statement's names; a syntax error (a
    statement that never ran) does not."""
    return isinstance(item, RaspError) and not isinstance(item, RaspSyntaxError)
