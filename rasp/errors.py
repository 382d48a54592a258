"""Source spans and the one error hierarchy of the project.

Every error a user can cause carries a `Span` and renders as

    file:line:col: error: message
        source line
        ^~~~~~
    hint: ...

`CompileError` may carry several diagnostics at once (the compiler reports every reason it refuses a
program, not only the first).

A hint may name a setting of the compile (`option("max_params")`): each front end spells it in its
own syntax when it renders the diagnostic (`render(options=...)`), so the compiler, which every
front end calls, names none of them. Rendered without `options`, a setting reads as the command
line and the Python API write it (`--max-params / max_params=`).
"""

from __future__ import annotations

import re
import shlex
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from itertools import accumulate

from rasp.text_width import char_widths, line_columns
from rasp.text_wrap import keep_code_spans, wrap_kept
from rasp.wording import atom_text

# Longest source line shown in full under an error; a longer one is cut around the caret.
MAX_SHOWN_COLUMNS = 100
_SOURCE_INDENT = "    "  # the source line and its caret line start 4 columns in

# How a front end spells a setting a hint names: (name, example value or None) -> text.
OptionSpelling = Callable[[str, str | None], str]
_OPTION = re.compile(r"\{option:(\w+)(?:=([^{}]*))?\}")


def option(name: str, value: str | None = None) -> str:
    """A setting of the compile named in a hint, by its Python keyword (`max_params`, `vocab`),
    with an example value if any; the front end that renders the hint spells it."""
    return f"{{option:{name}}}" if value is None else f"{{option:{name}={value}}}"


def command_line_option(name: str, value: str | None) -> str:
    """The default spelling: the command line's option (and the Python keyword for a limit, which
    both take the same way): `--max-params / max_params=`, `--vocab '[1,2,3]'`."""
    flag = "--" + name.replace("_", "-")
    if value is None:
        return f"{flag} / {name}="
    return f"{flag} {shlex.quote(value)}"


def spell_options(text: str, options: OptionSpelling | None = None) -> str:
    """`text` with every setting `option(...)` wrote spelled by `options` (default: the command
    line's)."""
    spell = options or command_line_option
    return _OPTION.sub(lambda m: spell(m.group(1), m.group(2)), text)


@dataclass(frozen=True, eq=False)
class Source:
    """A program text and the name it is reported under (a path, `<input>` or `<repl>`).
    `loads_from`: the directory its `load`s look in first, where that is not the directory of
    the file `name` names (the program a model records is named after the model too)."""

    name: str
    text: str
    loads_from: str | None = None

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The text's lines, split once (errors on a large program would otherwise re-split it per
        span). Lines end at `\n`, as the parser counts them; a `\r` before it is dropped."""
        return tuple(line.removesuffix("\r") for line in self.text.split("\n"))

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 1 <= lineno <= len(self.lines) else ""


@dataclass(frozen=True)
class Written:
    """A value a label shows as this text (an s-op's label), where an atom would be quoted."""

    text: str


@dataclass(frozen=True)
class Span:
    """A 1-based, end-exclusive region of a `Source` (`end_col` is the column after the last char)."""

    source: Source = field(compare=False, repr=False)
    line: int
    col: int
    end_line: int
    end_col: int
    # What names inside the span held where it was evaluated (an atom, or an s-op's label as
    # `Written`), by the names' spans: a label shows them (`shown_text`). Not part of the
    # location: equal spans (a `def`'s body, called twice) may hold different values.
    values: tuple[tuple[Span, object], ...] = field(default=(), compare=False, repr=False)
    # The calls of `def`s that made the node this span locates, innermost first (Node.calls):
    # a compile refusal located here is also shown at each call (`CompileError`). Not part of
    # the location either: a body's node made by two calls has two.
    calls: tuple[tuple[str, Span], ...] = field(default=(), compare=False, repr=False)

    @property
    def file(self) -> str:
        return self.source.name

    def text(self) -> str:
        """The source text the span covers."""
        lines = self.source.lines[self.line - 1 : self.end_line]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0][self.col - 1 : self.end_col - 1]
        return "\n".join([lines[0][self.col - 1 :], *lines[1:-1], lines[-1][: self.end_col - 1]])

    def shown_text(self) -> str:
        """The text on one line (each run of whitespace one space), every name in `values` written
        as what it held, as the original labels an s-op: `x * indices` where x is 1 reads
        `1 * indices`, a string in quotes (`tokens == "a"`), an s-op by its label."""
        if not self.values:
            return " ".join(self.text().split())
        parts, line, col = [], self.line, self.col
        end = (self.end_line, self.end_col)
        for span, value in sorted(self.values, key=lambda item: (item[0].line, item[0].col)):
            inside = (line, col) <= (span.line, span.col) and (span.end_line, span.end_col) <= end
            if span.source is self.source and inside:
                shown = value.text if isinstance(value, Written) else atom_text(value)
                parts += [Span(self.source, line, col, span.line, span.col).text(), shown]
                line, col = span.end_line, span.end_col
        parts.append(Span(self.source, line, col, self.end_line, self.end_col).text())
        return " ".join("".join(parts).split())

    def to(self, other: Span) -> Span:
        """The span from the start of `self` to the end of `other`."""
        return Span(self.source, self.line, self.col, other.end_line, other.end_col)

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class ErrorKind(Enum):
    SYNTAX = "syntax"
    NAME = "name"
    TYPE = "type"
    ARITY = "arity"
    EVALUATION = "evaluation"
    COMPILE = "compile"
    VERIFY = "verify"
    IO = "io"
    # what stopped a command other than its program or files (the CLI's, said in its `--json`)
    INTERRUPTED = "interrupted"
    MEMORY = "memory"
    INTERNAL = "internal"


@dataclass(frozen=True)
class Diagnostic:
    """One located message."""

    message: str
    span: Span | None = None
    hint: str | None = None
    severity: str = "error"  # or "note": what else was tried, said after the errors
    # what failed, where it is not what its error's class says: a compile refusal of a program
    # the interpreter fails on at every input is an evaluation failure (`--json`'s `kind`)
    kind: ErrorKind | None = None

    def render(
        self,
        severity: str | None = None,
        *,
        options: OptionSpelling | None = None,
        width: int | None = None,
    ) -> str:
        """The diagnostic as text: `options` spells the settings its hint names (default: as the
        command line writes them); `width` wraps the message and the hint to that many columns
        (the REPL's: a refusal's message may be hundreds of characters), else one line each."""
        severity = severity or self.severity
        where = "" if self.span is None else f"{self.span.location()}: "
        out = [_wrapped(f"{where}{severity}: {self.message}", width, "  ")]
        if self.span is not None:
            out.extend(_caret_lines(self.span))
        if self.hint:
            out.append(_wrapped(f"hint: {spell_options(self.hint, options)}", width, " " * 6))
        return "\n".join(out)


def _wrapped(text: str, width: int | None, indent: str) -> str:
    """`text` (lines of its own kept) wrapped to `width` columns, later lines indented by `indent`
    so that they read as the same message and not as the source line under it."""
    if width is None:
        return text
    # a `code span` (a command to type) stays on one line
    return "\n".join(
        "\n".join(wrap_kept(line, width, subsequent=indent))
        for line in keep_code_spans(text).split("\n")
    )


def _caret_lines(span: Span) -> list[str]:
    text = span.source.line(span.line)
    if not text and span.line > len(span.source.lines):
        return []
    start = max(span.col - 1, 0)
    end = span.end_col - 1 if span.end_line == span.line else len(text)
    text, start, end = _window(text, start, end)
    # Columns as a terminal shows them (`"日本" + 1` puts `+` 7 columns in, not 5); the line's
    # tabs stay in the indent so the caret lines up under tab-indented source, and a tab inside
    # the span is underlined to its stop (counted after the four columns the line is shown in).
    shown = _SOURCE_INDENT + text
    width = line_columns(shown[: len(_SOURCE_INDENT) + end])
    width = max(width - line_columns(shown[: len(_SOURCE_INDENT) + start]), 1)
    before = text[:start]
    indent = "".join(
        "\t" if c == "\t" else " " * w for c, w in zip(before, char_widths(before), strict=True)
    )
    past_end = " " * (start - len(text[:start]))  # a caret after the line's last character
    underline = indent + past_end + "^" + "~" * (width - 1)
    return [shown, _SOURCE_INDENT + underline]


def _window(text: str, start: int, end: int) -> tuple[str, int, int]:
    """A long line cut to about `MAX_SHOWN_COLUMNS` around the caret (`...` marks each cut), with
    the caret's start and end moved to match; a short line is returned unchanged."""
    # columns as a terminal shows them, but an ASCII character's one (a tab's too): a line of
    # 100 `日` is 200 columns, cut as 200 ASCII characters are
    widths = (1 if c.isascii() else w for c, w in zip(text, char_widths(text), strict=True))
    at = list(accumulate(widths, initial=0))
    if at[-1] <= MAX_SHOWN_COLUMNS:
        return text, start, end
    start_column = at[min(start, len(text))] + max(start - len(text), 0)
    from_column = max(0, min(start_column - MAX_SHOWN_COLUMNS // 3, at[-1] - MAX_SHOWN_COLUMNS))
    first = bisect_left(at, from_column)
    last = bisect_right(at, at[first] + MAX_SHOWN_COLUMNS) - 1
    prefix = "..." if first > 0 else ""
    suffix = "..." if last < len(text) else ""
    shift = len(prefix) - first
    return prefix + text[first:last] + suffix, start + shift, max(min(end, last), start + 1) + shift


# call notes shown under an error raised inside nested `def` calls (the rest are counted)
MAX_CALL_NOTES = 4


class RaspError(Exception):
    """Base of every error caused by a user's program, input or file."""

    kind: ErrorKind = ErrorKind.EVALUATION

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        hint: str | None = None,
        *,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        if kind is not None:
            self.kind = kind
        # the calls of `def`s the error passed through, innermost first: (function, call's span)
        self.calls: list[tuple[str, Span]] = []

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return (Diagnostic(self.message, self.span, self.hint), *self._call_notes())

    def called_from(self, function: str, span: Span | None) -> RaspError:
        """Record that the error happened inside a call of `function` at `span`: an error in a
        function's body (the prelude's too) is then also shown where the program called it."""
        if span is not None:
            self.calls.append((function, span))
        return self

    def _call_notes(self) -> tuple[Diagnostic, ...]:
        # raised after the calls returned (an s-op a def made, evaluated on an example later):
        # the calls its span's node was made by
        return call_notes(self.calls or (self.span.calls if self.span is not None else ()))

    def with_span(self, span: Span | None) -> RaspError:
        """This error, located at `span` if it has no location yet."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def render(self, *, options: OptionSpelling | None = None, width: int | None = None) -> str:
        """Every diagnostic as text (`Diagnostic.render`: `options` and `width` as there)."""
        return "\n".join(d.render(options=options, width=width) for d in self.diagnostics)

    def __str__(self) -> str:
        return self.message

    # A traceback prints an exception's `__notes__` under its one-line message: a Python caller (a
    # notebook cell) then sees what the command line prints, the location, source line, caret,
    # hint and every other reason, while str(err) stays the message. Rendered when first read (a
    # span may be given after the error is made, `with_span`); `add_note` appends to the same list.
    @property
    def __notes__(self) -> list[str]:
        notes = self.__dict__.get("_notes")
        if notes is None:
            rendered = self.render()
            notes = [] if rendered == f"error: {self.message}" else [rendered]
            self.__dict__["_notes"] = notes
        return notes

    @__notes__.setter
    def __notes__(self, notes: list[str]) -> None:
        self.__dict__["_notes"] = notes


class RaspSyntaxError(RaspError):
    kind = ErrorKind.SYNTAX

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        hint: str | None = None,
        *,
        incomplete: bool = False,
    ) -> None:
        super().__init__(message, span, hint)
        # True when the text ended before the statement did (the REPL then asks for more lines).
        self.incomplete = incomplete
        # (its first line, its text): the statement it is in, where a recovering parse read the
        # file statement by statement (`continuation.parse_recovering`: a file the REPL loads)
        self.statement: tuple[int, str] | None = None


class RaspNameError(RaspError):
    kind = ErrorKind.NAME


class RaspTypeError(RaspError):
    kind = ErrorKind.TYPE


class RaspArityError(RaspError):
    kind = ErrorKind.ARITY


class RaspRuntimeError(RaspError):
    """An error while evaluating a program on an input (division by zero, averaging strings, ...)."""

    kind = ErrorKind.EVALUATION


class RaspInputError(RaspRuntimeError):
    """An input the program cannot read (`tokens_int` of "abc"): the input is wrong, not the
    program, so the CLI reports it as an error of `--input`."""


def call_notes(calls: Sequence[tuple[str, Span]]) -> tuple[Diagnostic, ...]:
    """A note at each call of a `def` in `calls` (innermost first), down to the program's line:
    an error in a function's body (the prelude's too) is also shown where the program called it."""
    groups: list[tuple[str, Span, int]] = []  # recursion repeats one call: said once, counted
    for function, span in calls:
        if groups and groups[-1][:2] == (function, span):
            groups[-1] = (function, span, groups[-1][2] + 1)
        else:
            groups.append((function, span, 1))
    skipped = max(0, len(groups) - MAX_CALL_NOTES)
    if skipped:  # the innermost calls and the program's own call
        groups = [*groups[: MAX_CALL_NOTES - 1], groups[-1]]
    notes = []
    for k, (function, span, count) in enumerate(groups):
        if skipped and k == len(groups) - 1:
            notes.append(Diagnostic(f"... {skipped:,} more calls ...", severity="note"))
        times = f" ({count:,} nested calls here)" if count > 1 else ""
        notes.append(Diagnostic(f"in this call of {function}{times}", span, severity="note"))
    return tuple(notes)


def _with_call_notes(diagnostics: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
    """Each diagnostic located in a `def`'s body (its span has `calls`) followed by the notes at
    those calls: every compile refusal of a node gets them here, whichever check made it. Notes
    already there (a refusal raised again with more notes) are not added twice."""
    out: list[Diagnostic] = []
    for k, diagnostic in enumerate(diagnostics):
        out.append(diagnostic)
        if diagnostic.span is None or not diagnostic.span.calls:
            continue
        notes = call_notes(diagnostic.span.calls)
        if diagnostics[k + 1 : k + 1 + len(notes)] != notes:
            out.extend(notes)
    return tuple(out)


class CompileError(RaspError):
    """The compiler refuses a program; holds every reason at once."""

    kind = ErrorKind.COMPILE

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        diags = _with_call_notes(tuple(diagnostics))
        first = diags[0] if diags else Diagnostic("cannot compile the program")
        # (`hint` is for reading in Python: its settings spelled; `render` spells them per front end)
        hint = None if first.hint is None else spell_options(first.hint)
        super().__init__(first.message, first.span, hint, kind=first.kind)
        self._diagnostics = diags or (first,)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self._diagnostics


class VerificationError(RaspError):
    kind = ErrorKind.VERIFY
