"""The up arrow recalls a statement typed over several lines whole: a `def` typed line by line was
recalled as its last line, `}`, alone, so retyping it meant retyping every line."""

from __future__ import annotations

import io
from pathlib import Path

from rasp.tools.repl import ReplSession
from rasp.tools.repl_terminal import run_loop

UP = "\x1b[A"


def _run(tmp_path: Path, typed: list[str]) -> tuple[str, str]:
    """Each of `typed` is sent as its prompt starts (sent at once, keys outran the history's load)."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from rasp.tools.repl_terminal import _prompt_toolkit_reader

    session = ReplSession()
    history = tmp_path / "history"
    out = io.StringIO()
    with create_pipe_input() as pipe:
        read = _prompt_toolkit_reader(
            session, history_file=history, pt_input=pipe, pt_output=DummyOutput()
        )
        assert read is not None
        keys = iter(typed)

        def typing(prompt: str) -> str:
            pipe.send_text(next(keys))
            return read(prompt)

        assert run_loop(session, typing, out) == 0
    return out.getvalue(), history.read_text(encoding="utf-8")


def test_the_up_arrow_recalls_a_def_typed_over_several_lines(tmp_path: Path) -> None:
    out, stored = _run(tmp_path, ["def f(a) {\r", "  return a + 1;\r", "}\r", f"{UP}\r", "exit\r"])
    assert out == "     console function: f(a)\n" * 2
    # one entry of three lines in the history file (prompt_toolkit marks each line with '+')
    assert "\n+def f(a) {\n+  return a + 1;\n+}\n" in stored


def test_a_one_line_statement_is_one_entry_as_before(tmp_path: Path) -> None:
    out, stored = _run(tmp_path, ["x = 1;\r", "y = 2;\r", f"{UP}{UP}\r", "exit\r"])
    assert out == "    value: x =  1\n    value: y =  2\n    value: x =  1\n"
    assert stored.count("\n+x = 1;\n") == 2
