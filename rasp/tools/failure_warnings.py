"""The lint's warnings of a statement that fails, and the error naming one inside what failed as
its likely cause (the REPL's statements, and `rasp run FILE`).

Printed before the error, as a file's are, a warning of a REPL statement that then failed read as
the statement's outcome, above the error that is: `y = 10 / (indices < 3 < 1);` fails on the
running example because `(indices < 3) < 1` is False at position 0, which is what the warning
says. So a failing REPL statement prints its error first, with a hint that points at the warning
below where the warned expression lies inside the failing one; a warning elsewhere in the
statement (`1 < indices < 3 + foo` with `foo` undefined) follows the error without that hint.
`rasp run` prints a file's warnings before it runs, and its error names the one above alike; so
does the REPL for a failing statement of a file it loads (`load "f.rasp";`, `rasp repl FILE`),
whose warnings are printed above the file's listing.
"""

from __future__ import annotations

from collections.abc import Sequence

from rasp.errors import Diagnostic, RaspError, Span


def error_then_warnings(
    err: RaspError,
    warnings: Sequence[Diagnostic],
    *,
    width: int | None = None,
    hidden: Sequence[Diagnostic] = (),
) -> list[str]:
    """The error, rendered with a hint naming a warning inside it as the likely cause, then the
    warnings (each once, as typed); `hidden`: those not shown (the REPL's `-q`), which the hint
    names by what they warn of; `width` as `Diagnostic.render`'s."""
    name_likely_cause(err, warnings, "below")
    name_likely_cause(err, [w for w in hidden if w not in warnings], None)
    return [err.render(width=width), *(w.render(width=width) for w in warnings)]


def name_likely_cause(err: RaspError, warnings: Sequence[Diagnostic], placed: str | None) -> None:
    """Add to `err` a hint naming the first of `warnings` located inside the failing expression;
    `placed`: where the reader sees that warning ("below", "above"), None where it is not shown
    (`--quiet`: the hint then says what it warns of)."""
    cause = next(
        (w for w in warnings if w.severity == "warning" and _inside(w.span, err.span)), None
    )
    if cause is None or cause.span is None:
        return
    where = cause.span.location()
    why = (
        f"likely because of the warning {placed}, at {where}"
        if placed
        else f"likely because of the warning at {where} ({cause.message})"
    )
    err.hint = why if err.hint is None else f"{err.hint}\nhint: {why}"


def name_loaded_cause(
    err: RaspError, shown: Sequence[Diagnostic], linted: Sequence[Diagnostic]
) -> None:
    """As `name_likely_cause`, for a failing statement of a file the REPL loads, whose warnings
    are printed above its listing (`shown`) the first time the file is loaded; at a later load
    of the same text they are not printed again (`linted`: every loaded file's), and the hint
    says what the warning warns of."""
    before = err.hint
    name_likely_cause(err, shown, "above")
    if err.hint == before:
        name_likely_cause(err, linted, None)


def _inside(inner: Span | None, outer: Span | None) -> bool:
    """Whether `inner` lies within `outer`, in the same text (one file's, read again by a
    later load: its warnings are those of its first)."""
    if inner is None or outer is None:
        return False
    one, other = inner.source, outer.source
    if one is not other and (one.name, one.text) != (other.name, other.text):
        return False
    return (outer.line, outer.col) <= (inner.line, inner.col) and (
        inner.end_line,
        inner.end_col,
    ) <= (outer.end_line, outer.end_col)
