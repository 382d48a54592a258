"""A name whose statement failed in the REPL: its later uses say which statement failed and why,
not a bare "Undefined variable" with a hint about the built-in `length` (rasp.tools.repl_unbound;
the transcript is tests/golden/repl/failed_names.out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.errors import ErrorKind
from rasp.parser import parse
from rasp.tools.repl import ReplSession
from rasp.tools.repl_unbound import FailedNames
from rasp.values import UndefinedName


def _first_line(text: str) -> str:
    return text.splitlines()[0]


def _hint(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("hint: "))


def test_a_use_of_a_name_whose_statement_failed_names_that_statement() -> None:
    session = ReplSession()
    assert "error:" in session.feed("n = tokens_int + 1;")
    used = session.feed("m = n + 1;")
    # located at the use, as before; the message says why n is unbound
    assert _first_line(used) == (
        "<repl>:1:5: error: `n` is not defined: its statement `n = tokens_int + 1;` failed "
        "(cannot read the input as tokens_int: int() cannot read the token 'h' at position 0), "
        "so it was not bound"
    )
    assert "length" not in used  # (the built-in's hint was the newcomer's red herring)
    assert _hint(used) == (
        "hint: fix that statement and enter it again "
        "(or first `set example ...` to an input it works on)"
    )
    assert "m" not in session.interpreter.names()


@pytest.mark.parametrize("command", [":compile n", ":type n"])
def test_the_colon_commands_say_it_too(command: str) -> None:
    session = ReplSession()
    session.feed("n = tokens_int + 1;")
    shown = session.feed(command)
    assert _first_line(shown).startswith("error: `n` is not defined: its statement `n = ")
    assert _hint(shown).startswith("hint: fix that statement and enter it again")


def test_a_name_never_assigned_keeps_its_own_hint() -> None:
    # only a failed statement's names are explained: `n` alone still points at `length`
    shown = ReplSession().feed("m = n + 1;")
    assert "Undefined variable: n" in _first_line(shown)
    assert "length" in _hint(shown)


def test_an_error_that_is_not_about_the_running_example_hints_no_example() -> None:
    session = ReplSession()
    session.feed("z = 1 / 0;")
    shown = session.feed("z;")
    assert "its statement `z = 1 / 0;` failed (" in _first_line(shown)
    assert _hint(shown) == "hint: fix that statement and enter it again"


def test_entered_again_it_is_bound_and_no_longer_explained() -> None:
    session = ReplSession()
    session.feed("n = tokens_int + 1;")
    session.feed('set example "123"')
    assert "s-op: n" in session.feed("n = tokens_int + 1;")
    assert "error" not in session.feed("m = n + 1;")


def test_a_failed_reassignment_keeps_the_old_value_without_a_word() -> None:
    session = ReplSession()
    session.feed("n = 1;")
    session.feed("n = tokens_int + 1;")
    assert session.feed("n;") == "    value: n =  1"


def test_the_statements_after_a_failing_one_on_its_line_did_not_run() -> None:
    session = ReplSession()
    session.feed("a = 2; b = a + tokens_int; c = 3;")
    assert _first_line(session.feed("c;")) == (
        "<repl>:1:1: error: `c` is not defined: `c = 3;` did not run, because "
        "`b = a + tokens_int;` before it on its line failed"
    )
    assert "its statement `b = a + tokens_int;` failed" in session.feed("b;")
    assert session.feed("a;") == "    value: a =  2"


def test_a_loop_names_only_what_its_earlier_iterations_did_not_bind() -> None:
    session = ReplSession()
    session.feed("for i in range(2) { x = i; y = tokens_int + i; }")
    assert session.feed("x;") == "    value: x =  0"
    assert "`y` is not defined: its statement `for i in range(2)" in session.feed("y;")


def test_a_failed_def_is_explained_at_its_call() -> None:
    session = ReplSession()
    session.feed("def f(x) { return x +; }")
    shown = session.feed("y = f(1);")
    # a syntax error ran nothing: its leading `def f(` names f
    assert _first_line(shown) == (
        "<repl>:1:5: error: `f` is not defined: the entry defining it, "
        "`def f(x) { return x +; }`, did not parse (expected an operand after '+'), "
        "so none of it ran"
    )
    session.feed("def g(x) { return x; } g(1, 2); def h(x) { return x; }")
    assert "`h` is not defined: `def h(x) { return x; }` did not run" in session.feed("h(1);")


def test_a_loaded_files_failed_name_is_explained_in_the_file_and_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib.rasp").write_text("p = tokens_int + 1;\nq = p * 2;\nok = length;\n")
    monkeypatch.chdir(tmp_path)
    session = ReplSession()
    loaded = session.feed('load "lib";')
    assert (
        "lib.rasp:2:5: error: `p` is not defined: its statement `p = tokens_int + 1;` (lib.rasp:1) "
        "failed (" in loaded
    )
    assert "hint: fix that statement in lib.rasp and load it again" in loaded
    assert "s-op: ok" in loaded
    # q's own failure was p's: said in a word, p's use says the rest
    assert _first_line(session.feed("q;")) == (
        "<repl>:1:1: error: `q` is not defined: its statement `q = p * 2;` (lib.rasp:2) failed "
        "(`p` is not defined), so it was not bound"
    )


def test_a_long_statement_is_quoted_shortened_on_one_line() -> None:
    session = ReplSession()
    session.feed("long = tokens_int\n  + " + " + ".join(["indices"] * 20) + ";")
    shown = _first_line(session.feed("long;"))
    quoted = shown.split("its statement ")[1].split(" failed")[0]
    assert quoted.startswith("`long = tokens_int + indices + ") and quoted.endswith("…`")
    assert len(quoted) == 62  # 60 columns and its quotes


def test_explain_leaves_other_errors_alone() -> None:
    failed = FailedNames()
    program = parse("n = tokens_int + 1;")
    failed.load_failed(program.statements[0], UndefinedName("zz", None, None))
    other = UndefinedName("other", None, "its own hint")
    assert failed.explain(other) is other and other.message == "Undefined variable: other"
    assert other.hint == "its own hint"
    explained = failed.explain(UndefinedName("n", None, None))
    assert explained.message.startswith("`n` is not defined") and explained.kind is ErrorKind.NAME


def test_a_name_whose_entry_did_not_parse_is_explained() -> None:
    session = ReplSession()
    assert "expected ')' to close '('" in session.feed("broken = (indices;")
    shown = session.feed("broken;")
    assert _first_line(shown) == (
        "<repl>:1:1: error: `broken` is not defined: the entry assigning it, "
        "`broken = (indices;`, did not parse (expected ')' to close '('), so none of it ran"
    )
    assert _hint(shown) == "hint: fix its syntax and enter it again"
    assert _first_line(session.feed(":compile broken")).startswith(
        "error: `broken` is not defined: the entry assigning it"
    )
    assert "s-op: broken" in session.feed("broken = (indices);")
    assert "error" not in session.feed("m = broken + 1;")


def test_only_a_leading_assignment_of_an_unparsed_entry_is_named() -> None:
    session = ReplSession()
    session.feed("a = 1; b = (;")
    # the entry ran nothing, a's statement included; b cannot be read soundly from the text
    assert "`a` is not defined: the entry assigning it, `a = 1; b = (;`, did not parse" in (
        session.feed("a;")
    )
    assert "Undefined variable: b" in session.feed("b;")
    session.feed("# a comment\nc, d =\n  indices +;")
    shown = _first_line(session.feed("d;"))
    assert "the entry assigning it, `c, d = indices +;`, did not parse (line 3: " in shown
    session.feed("e == (;")  # (a comparison, not an assignment)
    assert "Undefined variable: e" in session.feed("e;")


def test_an_unparsed_reassignment_keeps_the_old_value_without_a_word() -> None:
    session = ReplSession()
    session.feed("n = 1;")
    session.feed("n = (;")
    assert session.feed("n;") == "    value: n =  1"


def test_a_name_whose_statement_in_a_loaded_file_did_not_parse_names_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.rasp").write_text(
        "a = length;\n\n# b's bracket is never closed\nb = (indices;\nc = a + 1;\n",
        encoding="utf-8",
    )
    session = ReplSession()
    loaded = session.feed('load "lib";')
    assert "lib.rasp:4:13: error: expected ')' to close '('" in loaded
    used = session.feed("b;")
    # (was "<repl>:1:1: error: Undefined variable: b", with no word of the file)
    assert _first_line(used) == (
        "<repl>:1:1: error: `b` is not defined: the statement assigning it, `b = (indices;` "
        "(lib.rasp:4), did not parse (expected ')' to close '('), so it did not run"
    )
    assert _hint(used) == "hint: fix its syntax at lib.rasp:4 and load lib.rasp again"
    # a name the session holds stays what it was, and says nothing of the file
    session.feed("b = indices;")
    session.feed('load "lib";')
    assert "error" not in session.feed("b;")
