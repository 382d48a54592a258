"""What the CLI and the REPL read from their arguments: token lists, and the s-op a program names.

Shared by `cli` (which parses the command line), `model_commands` and `repl_compiled`; it imports
none of them, so the tools import each other in one direction only.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from rasp.errors import ErrorKind, RaspError


class UsageError(Exception):
    """A bad argument value found after argparse (reported like argparse, exit 2)."""


def parse_tokens(text: str) -> list[Any]:
    """INPUT or VOCAB: a JSON list gives its elements; any other text is split into characters.

    Text that starts with `[` and has a letter, a digit, a quote or a comma is taken as meant to
    be JSON, so a typo in it is an error rather than a silent character split. Other text (only
    brackets and punctuation) is split into characters, so Dyck inputs such as `[()]`, `[]` and
    `[[]]` are their characters.
    """
    stripped = text.strip()
    if not stripped.startswith("["):
        return list(text)
    if not any(char.isalnum() or char in "\"'," for char in stripped):
        return list(text)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{text!r} looks like a JSON list but is not valid JSON "
            f"({exc.msg} at column {exc.colno}); "
            'write strings in double quotes, e.g. \'["a","b"]\''
        ) from None
    if not isinstance(value, list):
        raise UsageError(f"{text!r} is not a JSON list")
    for item in value:
        if item is None or not isinstance(item, (str, int, float, bool)):
            raise UsageError(
                f"tokens must be strings, numbers or booleans, got {json.dumps(item)} in {text!r}"
            )
    return value


def select_output(interp: Any, name: str | None, filename: str) -> Any:
    """The s-op a command works on: `name`, or the last name the program assigns."""
    from rasp.sops import Selector, SOp

    if name is None:
        name = interp.last_assigned
        if name is None:
            raise RaspError(
                f"{filename} assigns no name, so there is nothing to run",
                hint="assign the result to a name (out = ...;) or pass --name",
                kind=ErrorKind.NAME,
            )
    if name not in set(interp.names()):
        close = difflib.get_close_matches(name, list(interp.names()), n=1)
        hint = (
            f"did you mean '{close[0]}'?"
            if close
            else "pass --name with a name the program assigns"
        )
        raise RaspError(f"{filename} defines no name '{name}'", hint=hint, kind=ErrorKind.NAME)
    value = interp.get(name)
    if isinstance(value, SOp):
        return value
    if isinstance(value, Selector):
        raise RaspError(
            f"'{name}' is a selector, not an s-op",
            getattr(value, "span", None),
            hint="a program's output is an s-op: aggregate the selector, or count it "
            "with selector_width(...)",
            kind=ErrorKind.TYPE,
        )
    raise RaspError(
        f"'{name}' is {_kind_text(value)}, not an s-op",
        hint="pass --name with an s-op (a value computed from tokens or indices)",
        kind=ErrorKind.TYPE,
    )


def _kind_text(value: Any) -> str:
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    if callable(value) or hasattr(value, "params"):
        return "a function"
    return f"a {type(value).__name__}"
