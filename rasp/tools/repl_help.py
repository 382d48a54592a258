"""The REPL's words: the help text (`:help`) and the keywords the terminal completes
(`rasp.tools.repl_terminal`)."""

from __future__ import annotations

from dataclasses import dataclass

from rasp.text_wrap import UNBROKEN, wrap_kept
from rasp.tools.repl_compiled import COMMANDS as COMPILED_COMMANDS
from rasp.wording import close_name

COLON_COMMANDS = (":help", ":names", ":type", *COMPILED_COMMANDS)

KEYWORDS = (
    "aggregate",
    "and",
    "def",
    "display",
    "draw",
    "else",
    "example",
    "examples",
    "exit",
    "for",
    "full",
    "if",
    "in",
    "indicator",
    "len",
    "load",
    "not",
    "off",
    "on",
    "or",
    "quit",
    "range",
    "return",
    "round",
    "select",
    "selector",
    "seq",
    "set",
    "show",
    "zip",
)


@dataclass(frozen=True)
class _Entry:
    """A command and what it does; a "\n" in `text` is where the wide help breaks it, a "\xa0"
    a space the narrow help does not break at (`["a", 1]`, a command line to type)."""

    usage: str
    text: str


_Line = str | _Entry | tuple[_Entry, ...]  # a heading or note; a command; commands on one line

_HELP: tuple[_Line, ...] = (
    "RASP statements end with ';' (a def or for ends with '}'); a statement may span several lines.",
    _Entry(
        "x = select(indices, indices, <);",
        "bind a name (its value on the running example is shown)",
    ),
    _Entry('f("abc");', "apply an s-op or selector to an input"),
    _Entry('load "file";', "run file.rasp and import its names"),
    _Entry("draw(sop[, input]);", "draw the computation (needs the compiler)"),
    "REPL commands (no ';'):",
    _Entry(
        "set [s-op|selector] example E",
        "change the running example (string, list or dict)",
    ),
    _Entry("show [s-op|selector] example", "print the running example"),
    _Entry("[s-op|selector] examples on|off", "show or hide examples under new names"),
    _Entry("full seq display on|off", "print s-op examples as aligned input/output rows"),
    _Entry("exit | quit | Ctrl-D", "leave (Ctrl-C drops a partial statement)"),
    (
        _Entry(":names", "names you defined"),
        _Entry(":type NAME", "the kind of NAME"),
        _Entry(":help", "this text"),
    ),
    "  (a ':' command takes no ';', and ignores one at its end)",
    "The compiled view (needs the compiler and torch):",
    _Entry(
        ":compile NAME [VOCAB] [MAX_LEN] [MAX_PARAMS]",
        'compile an s-op; VOCAB abc, "abc" or ["a",\xa01] (default: the\n'
        "running example's tokens), MAX_LEN default max(8,\xa0its\xa0length),\n"
        "MAX_PARAMS the parameter limit (default 200,000,000);\n"
        "or as rasp compile: NAME\xa0--vocab\xa0abc\xa0--max-len\xa05",
    ),
    _Entry(":layers", "which head or MLP computes which variable"),
    _Entry(":residual [INPUT]", "every variable after every sublayer, model\xa0|\xa0interpreter"),
    _Entry(":verify [K]", "model == interpreter on every input up to length K, and more"),
    _Entry(":draw [INPUT] [-o FILE.png]", "picture (default comp_flows/NAME_INPUT.png and .dot)"),
)
_COLUMN = 37  # where a command's text starts in the two-column help
_MIN_TEXT = 30  # narrower than this beside the commands, each text goes under its command


def _wide(line: _Line) -> list[str]:
    if isinstance(line, str):
        return [line]
    if isinstance(line, tuple):  # (three short commands share one line)
        return ["  " + "        ".join(f"{e.usage}   {e.text}" for e in line)]
    first, *more = line.text.replace(UNBROKEN, " ").split("\n")
    pad = " " * _COLUMN
    lines = (
        [f"  {line.usage}", pad + first]
        if len(line.usage) > _COLUMN - 4
        else [f"  {line.usage.ljust(_COLUMN - 2)}{first}"]
    )
    return lines + [pad + text for text in more]


def _narrow(line: _Line, width: int) -> list[str]:
    """`line` wrapped to `width` columns: a heading's later lines indented two, a command's text
    beside it (under its start) where there is room, else under the command, indented four."""
    if isinstance(line, str):
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        return _fill(line, width, indent).split("\n")
    if isinstance(line, tuple):
        return [text for entry in line for text in _narrow(entry, width)]
    text = line.text.replace("\n", " ")
    if width - _COLUMN < _MIN_TEXT:
        usage = _fill("  " + line.usage, width, "      ")
        return [usage, _fill("    " + text, width, "    ")]
    if len(line.usage) > _COLUMN - 4:
        return [f"  {line.usage}", _fill(" " * _COLUMN + text, width, " " * _COLUMN)]
    return [_fill(f"  {line.usage.ljust(_COLUMN - 2)}{text}", width, " " * _COLUMN)]


def _fill(text: str, width: int, indent: str) -> str:
    return "\n".join(wrap_kept(text, width, subsequent=indent))


HELP_TEXT = "\n".join(text for line in _HELP for text in _wide(line))


def help_text(width: int | None) -> str:
    """`:help`'s text for a session whose messages are wrapped to `width` (`ReplSession.width`):
    as it is where that is None (a pipe, the goldens) or the text fits, else wrapped to it, each
    command's text beside it or, on a narrow terminal, under it."""
    if width is None or all(len(text) <= width for text in HELP_TEXT.split("\n")):
        return HELP_TEXT
    return "\n".join(text for line in _HELP for text in _narrow(line, width))


def unknown_command(word: str, text: str) -> str:
    """The error's message for `text`, a `:command` line whose first word `word` is none of
    ours."""
    if word in (":exit", ":quit", ":q"):  # other REPLs' spelling: say this one's
        return f"unknown command {word!r}; to leave, type exit or quit (no ':') or Ctrl-D"
    # a prefix of one command (`:comp`), else a close spelling (`:compiel`)
    starts = [c for c in COLON_COMMANDS if c.startswith(word)] if len(word) > 2 else []
    close = starts[0] if len(starts) == 1 else close_name(word, COLON_COMMANDS)
    if close is not None:
        return f"unknown command {word!r}; did you mean {close!r}?"
    return f"unknown command {text!r}; type :help for the commands"
