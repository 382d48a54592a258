"""The REPL's terminal loop with its line reader faked (no terminal needed): prompts, Ctrl-C and
Ctrl-D, piped input, prompt_toolkit through a pipe, history."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.repl import ReplSession
from rasp.tools.repl_terminal import run_loop, run_terminal


def _reader(items: list[str | type[BaseException]]) -> Callable[[str], str]:
    feed: Iterator[str | type[BaseException]] = iter(items)
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        item = next(feed, EOFError)
        if isinstance(item, type):
            raise item
        return item

    read.prompts = prompts  # type: ignore[attr-defined]
    return read


def test_loop_ctrl_c_drops_partial_statement_and_ctrl_d_exits() -> None:
    session = ReplSession()
    out = io.StringIO()
    read = _reader(["x = (1 +", KeyboardInterrupt, "y = 2;"])
    assert run_loop(session, read, out) == 0
    assert read.prompts == [">> ", ".. ", ">> ", ">> "]  # type: ignore[attr-defined]
    assert "x" not in session.interpreter.names()
    # said as the CLI says it: "KeyboardInterrupt", the exception's name, read as a crash
    assert out.getvalue() == "interrupted\n    value: y =  2\n"


def test_an_unfinished_statement_at_the_end_of_input_is_reported() -> None:
    session = ReplSession()
    out = io.StringIO()
    assert run_loop(session, _reader(["x = select(indices,", " indices"]), out) == 0
    assert out.getvalue().splitlines()[0] == (
        "<repl>:2:9: error: expected ',' and another argument: 'select(' takes 3 arguments"
    )
    assert not session.is_continuing


def test_a_closer_on_the_next_line_names_the_missing_operand() -> None:
    # `x = 1 +` then `)`: it said "unmatched ')'", and `);` the missing operand
    for closer in (")", ");"):
        out = io.StringIO()
        assert run_loop(ReplSession(), _reader(["x = 1 +", closer]), out) == 0
        assert out.getvalue().splitlines()[0] == "<repl>:2:1: error: expected an operand after '+'"


def test_piped_stdin_runs_a_script() -> None:
    stdin = io.StringIO('x = indices;\nx("ab");\nexit\nnever = 1;\n')
    stdout = io.StringIO()
    assert run_terminal(stdin=stdin, stdout=stdout) == 0
    assert stdout.getvalue().splitlines()[2:] == [
        "     s-op: x",
        ' \t Example: x("hello") = [0, 1, 2, 3, 4] (ints)',
        "\t =  [0, 1] (ints)",
    ]


def test_typed_input_with_piped_output_shows_the_prompts() -> None:
    # `rasp repl | tee log`: someone types at a terminal but saw no prompt at all
    class Typed(io.StringIO):
        def isatty(self) -> bool:
            return True

    stdout = io.StringIO()
    assert run_terminal(stdin=Typed("def f(x) {\nreturn x;\n}\n"), stdout=stdout) == 0
    text = stdout.getvalue()
    # the prompts, then the next one, and Ctrl-D's newline: the shell's prompt starts on a line
    # of its own (it came after ">> ", as an unfinished statement's error after ".. " did)
    assert text.endswith("console function: f(x)\n>> \n"), text
    assert ">> .. " in text
    stdout = io.StringIO()
    assert run_terminal(stdin=Typed("x = (1 +\n"), stdout=stdout) == 0
    assert stdout.getvalue().splitlines()[2:4] == [
        ">> .. ",
        "<repl>:1:9: error: expected an operand after '+'",
    ]


def test_ctrl_c_at_a_plain_prompt_starts_a_fresh_line() -> None:
    # input() leaves the cursor after the prompt (and the terminal's ^C): "interrupted"
    # was written on the prompt's line
    out = io.StringIO()
    read = _reader(["x = (1 +", KeyboardInterrupt])
    assert run_loop(ReplSession(), read, out, newline_on_interrupt=True) == 0
    assert out.getvalue() == "\ninterrupted\n"


def test_piped_stdin_starting_with_a_bom_reads_as_without_it() -> None:
    # it was "<repl>:1:1: error: unexpected character '\\ufeff'" (rasp run drops it)
    stdin = io.StringIO('\ufeffx = 1;\ny = "\ufeff";\n')
    stdout = io.StringIO()
    assert run_terminal(stdin=stdin, stdout=stdout) == 0
    assert stdout.getvalue().splitlines()[2:] == ["    value: x =  1", '    value: y =  "\ufeff"']


def test_prompt_toolkit_front_end_through_a_pipe(tmp_path: Path) -> None:
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
        pipe.send_text("x = (1 +\r2);\rexit\r")
        assert run_loop(session, read, out) == 0
    assert out.getvalue() == "    value: x =  3\n"
    assert "x = (1 +" in history.read_text(encoding="utf-8")  # persistent history


def test_history_falls_back_to_memory_when_unwritable(tmp_path: Path) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from rasp.tools.repl_terminal import _prompt_toolkit_reader

    unwritable = tmp_path / "missing-dir" / "history"
    with create_pipe_input() as pipe:
        read = _prompt_toolkit_reader(
            ReplSession(), history_file=unwritable, pt_input=pipe, pt_output=DummyOutput()
        )
        assert read is not None
        pipe.send_text("exit\r")
        assert read(">> ") == "exit"
    assert not unwritable.exists()


def test_history_falls_back_to_memory_when_its_path_is_a_directory(tmp_path: Path) -> None:
    # prompt_toolkit's FileHistory failed on it at the first prompt ("Exception [Errno 21] Is a
    # directory ... Press ENTER to continue..."), which ate the Enter typed
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from rasp.tools.repl_terminal import _prompt_toolkit_reader

    folder = tmp_path / "history"
    folder.mkdir()
    with create_pipe_input() as pipe:
        read = _prompt_toolkit_reader(
            ReplSession(), history_file=folder, pt_input=pipe, pt_output=DummyOutput()
        )
        assert read is not None
        pipe.send_text("\rx = 1;\r")
        assert read(">> ") == ""
        assert read(">> ") == "x = 1;"


def test_ctrl_c_during_evaluation_keeps_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    session = ReplSession()
    real_feed = session.feed

    def slow_feed(line: str) -> str:
        if line == "slow;":
            raise KeyboardInterrupt
        return real_feed(line)

    monkeypatch.setattr(session, "feed", slow_feed)
    out = io.StringIO()
    assert run_loop(session, _reader(["slow;", "x = 1;"]), out, newline_on_eof=True) == 0
    assert out.getvalue() == "interrupted\n    value: x =  1\n\n"


@pytest.mark.parametrize(
    ("raised", "said"),
    [(KeyboardInterrupt, "interrupted"), (KeyError, "internal error: KeyError")],
)
def test_a_line_stopped_in_its_second_statement_shows_what_its_first_bound(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException], said: str
) -> None:
    # `a = 1; b = indices;` stopped in b's check (Ctrl-C, or a bug of ours): a was bound, but
    # only "KeyboardInterrupt" was shown
    session = ReplSession()

    def stopped(node: object, example: object) -> None:
        raise raised

    monkeypatch.setattr(session._example_check, "evaluate", stopped)
    out = io.StringIO()
    assert run_loop(session, _reader(["a = 1; b = indices;"]), out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "    value: a =  1" and lines[1].startswith(said), lines
    assert session.interpreter.get("a") == 1 and "b" not in session.interpreter.names()


def test_a_paste_of_several_lines_is_fed_line_by_line(tmp_path: Path) -> None:
    # prompt_toolkit returns a bracketed paste as one line holding newlines: a `:command` in it
    # was an unknown command ':names\nw = 3;', and `exit` in it did not end the session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from rasp.tools.repl_terminal import _prompt_toolkit_reader

    session = ReplSession()
    out = io.StringIO()
    with create_pipe_input() as pipe:
        read = _prompt_toolkit_reader(
            session, history_file=tmp_path / "history", pt_input=pipe, pt_output=DummyOutput()
        )
        assert read is not None
        paste = "x = 1;\n:names\ny = (2 +\n3);\nexit\nz = 4;\n"
        pipe.send_text(f"\x1b[200~{paste}\x1b[201~\r\x04")  # (Ctrl-D: ends it in any case)
        assert run_loop(session, read, out) == 0
    assert out.getvalue() == "    value: x =  1\n\tx\n    value: y =  5\n"
    assert "z" not in session.interpreter.names()


def test_an_internal_error_is_reported_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a bug of ours (`:compile t` on a list-token example was one) ended the session and every
    # name in it, through the CLI's last line of defence
    session = ReplSession()
    real_feed = session.feed

    def buggy_feed(line: str) -> str:
        if line == "bug;":
            raise ValueError("boom")
        return real_feed(line)

    monkeypatch.setattr(session, "feed", buggy_feed)
    monkeypatch.delenv("RASP_DEBUG", raising=False)
    out = io.StringIO()
    read = _reader(["x = 1;", "y = (1 +", "bug;", "x;"])
    assert run_loop(session, read, out) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert run_loop(session, _reader(["bug;"]), io.StringIO(), verbose=True) == 0  # rasp repl -v
    assert "Traceback" in capsys.readouterr().err
    assert out.getvalue().splitlines() == [
        "    value: x =  1",
        "internal error: ValueError: boom (a bug in rasp-forge: please report it with the line "
        "you typed; RASP_DEBUG=1 shows the traceback)",
        "    value: x =  1",
    ]


def test_an_os_error_is_one_error_line_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as the CLI says it (it ended the session there)
    session = ReplSession()
    real_feed = session.feed

    def failing_feed(line: str) -> str:
        if line == "write;":
            raise PermissionError(13, "Permission denied", "out.png")
        return real_feed(line)

    monkeypatch.setattr(session, "feed", failing_feed)
    out = io.StringIO()
    assert run_loop(session, _reader(["write;", "1;"]), out) == 0
    assert out.getvalue() == "error: out.png: Permission denied\n    value: out =  1\n"


def test_an_internal_error_in_a_statement_binds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # the session goes on after a bug of ours, so the statement that met it must not leave its
    # name bound to a value the running-example check never passed (x was tokens after this)
    session = ReplSession()
    session.feed("x = 1;")

    def buggy_named(*args: object, **kwargs: object) -> list[str]:
        raise ValueError("boom")

    monkeypatch.setattr(session, "_named", buggy_named)
    out = io.StringIO()
    assert run_loop(session, _reader(["x = tokens;"]), out) == 0
    assert out.getvalue().startswith("internal error: ValueError: boom")
    monkeypatch.undo()
    assert session.feed("x;") == "    value: x =  1"


def test_an_internal_error_while_a_statement_runs_binds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (as above, when the bug is met after the interpreter bound the name)
    session = ReplSession()
    session.feed("x = 1;")
    real_exec = session.interpreter.exec_statement

    def buggy_exec(*args: object, **kwargs: object) -> object:
        real_exec(*args, **kwargs)  # type: ignore[arg-type]
        raise ValueError("boom")

    monkeypatch.setattr(session.interpreter, "exec_statement", buggy_exec)
    assert run_loop(session, _reader(["x = tokens;"]), io.StringIO()) == 0
    monkeypatch.undo()
    assert session.feed("x;") == "    value: x =  1"


def test_a_paste_goes_on_after_an_error_line_as_typed_lines_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a paste runs "as if typed", and a typed line after an OSError or an internal error runs:
    # the rest of the paste was dropped without a word
    session = ReplSession()
    real_feed = session.feed

    def failing_feed(line: str) -> str:
        if line == "write;":
            raise PermissionError(13, "Permission denied", "out.png")
        if line == "bug;":
            raise ValueError("boom")
        return real_feed(line)

    monkeypatch.setattr(session, "feed", failing_feed)
    out = io.StringIO()
    assert run_loop(session, _reader(["write;\nx = 1;\nbug;\ny = 2;"]), out) == 0
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["error: out.png: Permission denied", "    value: x =  1"]
    assert lines[2].startswith("internal error: ValueError: boom")
    assert lines[3:] == ["    value: y =  2"]


def test_an_internal_error_in_the_files_load_keeps_the_session(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # `rasp repl FILE`: a bug of ours met by the file went up to the CLI's last line of defence,
    # which ended the session (exit status 1), where `load "FILE";` typed reports it and goes on
    (tmp_path / "lib.rasp").write_text("a = 1;\n", encoding="utf-8")

    def buggy_load(self: ReplSession, path: object) -> str:
        raise ValueError("boom")

    monkeypatch.setattr(ReplSession, "load_path", buggy_load)
    out = io.StringIO()
    assert run_terminal(tmp_path / "lib.rasp", stdin=io.StringIO("w = 2;\n"), stdout=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[2].startswith("internal error: ValueError: boom"), lines
    assert "with the file you loaded" in lines[2]
    assert lines[3:] == ["    value: w =  2"]


def test_an_internal_error_at_the_end_of_input_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the unfinished statement run at Ctrl-D (or the end of piped input): a bug there went up to
    # the CLI's last line of defence, with exit status 1
    session = ReplSession()

    def buggy_end() -> str:
        raise ValueError("boom")

    monkeypatch.setattr(session, "end_of_input", buggy_end)
    out = io.StringIO()
    assert run_loop(session, _reader(["x = (1 +"]), out) == 0
    assert out.getvalue().startswith("internal error: ValueError: boom")


def test_an_internal_error_in_a_loads_listing_binds_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the listing is printed after the file ran: a bug there left the load's names bound
    from rasp.tools import repl_listing

    (tmp_path / "lib.rasp").write_text("a = 1;\n", encoding="utf-8")
    session = ReplSession(search_dirs=[tmp_path])

    def buggy_dump(self: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(repl_listing.LoadListing, "dump", buggy_dump)
    out = io.StringIO()
    assert run_loop(session, _reader(['load "lib";']), out) == 0
    assert out.getvalue().startswith("internal error: ValueError: boom")
    assert "a" not in session.interpreter.names()


def test_ctrl_c_at_a_terminals_plain_prompt_starts_a_fresh_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # without prompt_toolkit (an optional extra), a terminal is read with input() too: Ctrl-C
    # there wrote "interrupted" after the prompt, on its line, as for a pipe before
    from rasp.tools import repl_terminal

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(repl_terminal, "_prompt_toolkit_reader", lambda session: None)
    out = Terminal()
    read_calls = iter([KeyboardInterrupt, EOFError])

    def read(prompt: str) -> str:
        out.write(prompt)
        raise next(read_calls)

    monkeypatch.setattr(repl_terminal, "_plain_reader", lambda *args, **kwargs: read)
    assert run_terminal(stdin=Terminal(), stdout=out) == 0  # (Ctrl-C, then Ctrl-D)
    assert out.getvalue().splitlines()[2:] == [">> ", "interrupted", ">> "]


@pytest.mark.parametrize("where", ["check", "statement"])
def test_an_internal_error_in_a_for_body_is_as_an_evaluation_error(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # A failing statement of a loop binds nothing and the loop keeps what ran before it. A bug
    # of ours met in the running-example check of the third iteration left that statement's
    # unchecked value bound, and both kinds of bug were located at the loop, not the statement.
    loop = "for i in [1, 2, 3] { n = n + i; t = indices + n; }"
    refused = ReplSession()
    refused.feed("n = 0;")
    out = refused.feed(loop.replace("indices + n", "indices + (n if i < 3 else tokens)"))
    assert out.startswith("<repl>:1:37: error: unsupported operand"), out
    session = ReplSession()
    session.feed("n = 0;")
    if where == "check":
        real = session._example_check.evaluate
        calls: list[object] = []

        def buggy(node: Any, example: Any) -> Any:
            calls.append(node)
            if len(calls) == 3:
                raise ValueError("boom")
            return real(node, example)

        monkeypatch.setattr(session._example_check, "evaluate", buggy)
    else:
        from rasp import builtins

        real_bind = builtins.bind_targets

        def buggy_bind(scope: Any, targets: Any, item: Any, span: Any) -> None:
            real_bind(scope, targets, item, span)
            if item == 3:  # (the loop variable is bound: met in the third iteration's `n = n + i`)
                monkeypatch.setattr(session.interpreter._expressions, "eval", _boom)

        monkeypatch.setattr(builtins, "bind_targets", buggy_bind)
    out = session.feed(loop)
    monkeypatch.undo()
    located = "<repl>:1:33" if where == "check" else "<repl>:1:22"
    assert out.startswith(f"{located}: error: internal error: ValueError: boom"), out
    if where == "check":  # as the refused loop: the third n stays, the third t is not bound
        assert [session.feed(x) for x in ("n;", "t;")] == [refused.feed(x) for x in ("n;", "t;")]
    else:  # the third `n = n + i` bound nothing; the second t stays
        assert session.feed("n;") == "    value: n =  3"
        assert session.feed("t;") == refused.feed("t;")


def _boom(*args: object) -> object:
    raise ValueError("boom")


def test_piped_bytes_that_are_not_utf8_are_an_error_of_their_line() -> None:
    # Under a strict UTF-8 reader (a UTF-8 locale, PYTHONIOENCODING=utf-8) a Latin-1 byte ended
    # the session as an internal UnicodeDecodeError; read with surrogateescape, it showed as
    # "unexpected character '\udcff'", or became part of a string token
    raw = b'x = 1;\n\xff\n(1 +\n"a\xe9");\ny = 2;\n'
    stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="strict")
    stdout = io.StringIO()
    assert run_terminal(stdin=stdin, stdout=stdout) == 0
    assert stdout.getvalue().splitlines()[2:] == [
        "    value: x =  1",
        "<repl>:1:1: error: the line is not UTF-8 text: byte 0xff cannot be read here",
        "    \ufffd",
        "    ^",
        "hint: type or pipe UTF-8 text",
        "<repl>:1:3: error: the line is not UTF-8 text: byte 0xe9 cannot be read here",
        '    "a\ufffd");',
        "      ^",
        "hint: type or pipe UTF-8 text",  # (the statement it ended went with it)
        "    value: y =  2",
    ]
