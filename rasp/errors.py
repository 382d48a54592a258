"""Source spans and the one error hierarchy of the project.

Every error a user can cause carries a `Span` and renders as

    file:line:col: error: message
        source line
        ^~~~~~
    hint: ...

`CompileError` may carry several diagnostics at once (the compiler reports every reason it refuses a
program, not only the first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property

# Longest source line shown in full under an error; a longer one is cut around the caret.
MAX_SHOWN_COLUMNS = 100


@dataclass(frozen=True, eq=False)
class Source:
    """A program text and the name it is reported under (a path, `<input>` or `<repl>`)."""

    name: str
    text: str

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The text's lines, split once (errors on a large program would otherwise re-split it per
        span). Lines end at `\n`, as the parser counts them; a `\r` before it is dropped."""
        return tuple(line.removesuffix("\r") for line in self.text.split("\n"))

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 1 <= lineno <= len(self.lines) else ""


@dataclass(frozen=True)
class Span:
    """A 1-based, end-exclusive region of a `Source` (`end_col` is the column after the last char)."""

    source: Source = field(compare=False, repr=False)
    line: int
    col: int
    end_line: int
    end_col: int

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


@dataclass(frozen=True)
class Diagnostic:
    """One located message."""

    message: str
    span: Span | None = None
    hint: str | None = None
    severity: str = "error"  # or "note": what else was tried, said after the errors

    def render(self, severity: str | None = None) -> str:
        severity = severity or self.severity
        if self.span is None:
            out = [f"{severity}: {self.message}"]
        else:
            out = [f"{self.span.location()}: {severity}: {self.message}"]
            out.extend(_caret_lines(self.span))
        if self.hint:
            out.append(f"hint: {self.hint}")
        return "\n".join(out)


def _caret_lines(span: Span) -> list[str]:
    text = span.source.line(span.line)
    if not text and span.line > len(span.source.lines):
        return []
    start = max(span.col - 1, 0)
    end = span.end_col - 1 if span.end_line == span.line else len(text)
    text, start, end = _window(text, start, end)
    width = max(end - start, 1)
    # Keep the line's tabs in the indent so the caret lines up under tab-indented source.
    indent = "".join("\t" if c == "\t" else " " for c in text[:start])
    underline = indent + " " * (start - len(indent)) + "^" + "~" * (width - 1)
    return ["    " + text, "    " + underline]


def _window(text: str, start: int, end: int) -> tuple[str, int, int]:
    """A long line cut to about `MAX_SHOWN_COLUMNS` around the caret (`...` marks each cut), with
    the caret's start and end moved to match; a short line is returned unchanged."""
    if len(text) <= MAX_SHOWN_COLUMNS:
        return text, start, end
    first = max(0, min(start - MAX_SHOWN_COLUMNS // 3, len(text) - MAX_SHOWN_COLUMNS))
    last = min(len(text), first + MAX_SHOWN_COLUMNS)
    prefix = "..." if first > 0 else ""
    suffix = "..." if last < len(text) else ""
    shift = len(prefix) - first
    return prefix + text[first:last] + suffix, start + shift, max(min(end, last), start + 1) + shift


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

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return (Diagnostic(self.message, self.span, self.hint),)

    def with_span(self, span: Span | None) -> RaspError:
        """This error, located at `span` if it has no location yet."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)

    def __str__(self) -> str:
        return self.message


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


class CompileError(RaspError):
    """The compiler refuses a program; holds every reason at once."""

    kind = ErrorKind.COMPILE

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        diags = tuple(diagnostics)
        first = diags[0] if diags else Diagnostic("cannot compile the program")
        super().__init__(first.message, first.span, first.hint)
        self._diagnostics = diags or (first,)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self._diagnostics


class VerificationError(RaspError):
    kind = ErrorKind.VERIFY
