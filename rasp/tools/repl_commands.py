"""The REPL's commands: the original's (`set example`, `show example`, `examples on|off`,
`full seq display on|off`, `exit`: `repl_command`) and ours (`:help`, `:names`, `:type NAME`, and
the compiled view's, passed to `rasp.tools.repl_compiled`: `colon_command`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from rasp import ast
from rasp.display import example_lines
from rasp.errors import RaspNameError
from rasp.tools.repl_arguments import name_hint
from rasp.tools.repl_compiled import COMMANDS as COMPILED_COMMANDS
from rasp.tools.repl_compiled import CompiledView, ReplSession
from rasp.tools.repl_help import help_text, unknown_command
from rasp.tools.repl_values import tokens_of
from rasp.tools.repl_wrap import wrap_report
from rasp.values import FORM_USAGE, kind_name


class CommandSession(ReplSession, Protocol):
    """What the commands read and change of the session (`rasp.tools.repl.ReplSession`, which
    imports this module: a protocol here keeps the import one-way)."""

    finished: bool
    compiled: CompiledView

    def error(self, message: str) -> str: ...


def repl_command(
    session: CommandSession, cmd: ast.ReplCommand, evaluated: tuple[Any, ...]
) -> list[str]:
    """Run one of the original's REPL commands on `session`; what it prints."""
    subset = cmd.subset.value
    if cmd.command is ast.CommandKind.EXIT:
        session.finished = True
        return []
    if cmd.command is ast.CommandKind.SHOW_EXAMPLE:
        return example_lines(subset, session.settings.seq_example, session.settings.sel_example)
    if cmd.command is ast.CommandKind.SET_EXAMPLE:
        (example,) = evaluated
        tokens_of(example, cmd.example.span if cmd.example is not None else cmd.span)
        if subset in ("both", "s-op"):
            session.settings = dataclasses.replace(session.settings, seq_example=example)
        if subset in ("both", "selector"):
            session.settings = dataclasses.replace(session.settings, sel_example=example)
        return []
    on = bool(cmd.switch)
    if cmd.command is ast.CommandKind.TOGGLE_EXAMPLES:
        if subset in ("both", "s-op"):
            session.settings = dataclasses.replace(session.settings, show_seq=on)
        if subset in ("both", "selector"):
            session.settings = dataclasses.replace(session.settings, show_sel=on)
    elif cmd.command is ast.CommandKind.FULL_SEQ_DISPLAY:
        session.settings = dataclasses.replace(session.settings, full_seq=on)
    return []


def colon_command(session: CommandSession, text: str) -> str:
    """Run `:command` `text`; what it prints."""
    # A ';' out of RASP habit ends the command (`:compile r;`), as `set example "ab";` may end
    # with one; INPUT and VOCAB text with a ';' of its own is quoted or a JSON list.
    word, _, rest = text.removesuffix(";").rstrip().partition(" ")
    rest = rest.strip()
    if word == ":help":  # (to the terminal's width, as every message: one form in a pipe)
        return help_text(session.width)
    if word == ":names" and rest:
        return session.error(f":names takes no arguments, got {rest!r}")
    if word == ":type" and len(rest.split()) > 1:
        return session.error(f":type takes one NAME, got {rest!r}")
    if word == ":names":
        user = session.interpreter.user_names()
        names = "\t" + ", ".join(user) if user else "\tno names defined yet"
        return wrap_report(names, session.width)  # (many names: lines under the first)
    if word == ":type" and not rest:
        return session.error(":type NAME: which name? (:names lists them)")
    if word == ":type":
        if rest in FORM_USAGE:  # (`select` is a form of the grammar, no name)
            return f"\t{rest}: built-in form, {FORM_USAGE[rest]}"
        try:  # an unknown name as every statement reports it (`Undefined variable`, its hint)
            value = session.interpreter.get(rest)
        except RaspNameError as err:
            explained = session.failed_names.explain(err)  # (its statement failed: say so)
            return name_hint(explained, rest, session.interpreter.search_dirs).render(
                width=session.width
            )
        return f"\t{rest}: {kind_name(value)}"
    if word in COMPILED_COMMANDS:
        return session.compiled.command(word, rest, session)
    return session.error(unknown_command(word, text))
