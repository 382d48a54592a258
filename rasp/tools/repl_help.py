"""The REPL's words: the help text (`:help`) and the keywords the terminal completes
(`rasp.tools.repl_terminal`)."""

from __future__ import annotations

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


HELP_TEXT = """\
RASP statements end with ';' (a def or for ends with '}'); a statement may span several lines.
  x = select(indices, indices, <);   bind a name (its value on the running example is shown)
  f("abc");                          apply an s-op or selector to an input
  load "file";                       run file.rasp and import its names
  draw(sop[, input]);                draw the computation (needs the compiler)
REPL commands (no ';'):
  set [s-op|selector] example E      change the running example (string, list or dict)
  show [s-op|selector] example       print the running example
  [s-op|selector] examples on|off    show or hide examples under new names
  full seq display on|off            print s-op examples as aligned input/output rows
  exit | quit | Ctrl-D               leave (Ctrl-C drops a partial statement)
  :names   names you defined        :type NAME   the kind of NAME        :help   this text
  (a ':' command takes no ';', and ignores one at its end)
The compiled view (needs the compiler and torch):
  :compile NAME [VOCAB] [MAX_LEN] [MAX_PARAMS]
                                     compile an s-op; VOCAB abc, "abc" or ["a", 1] (default: the
                                     running example's tokens), MAX_LEN default max(8, its length),
                                     MAX_PARAMS the parameter limit (default 200,000,000);
                                     or as rasp compile: NAME --vocab abc --max-len 5
  :layers                            which head or MLP computes which variable
  :residual [INPUT]                  every variable after every sublayer, model | interpreter
  :verify [K]                        model == interpreter on every input up to length K, and more
  :draw [INPUT] [-o FILE.png]        picture (default comp_flows/NAME_INPUT.png and .dot)"""


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
