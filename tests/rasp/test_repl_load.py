"""The REPL's `load`: what a loaded file binds, lists, draws and reports, statement by statement
(tests/rasp/test_repl.py has the transcripts and the typed session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.tools.repl import ReplSession


def test_a_loaded_loop_keeps_what_it_bound_before_failing(tmp_path: Path) -> None:
    program = tmp_path / "prog.rasp"
    program.write_text("n = 0;\nfor i in [1, 2] { n = n + i; s = tokens_int; }\nafter = 1;\n")
    session = ReplSession()
    printed = session.load_path(program)
    assert "prog.rasp:2:" in printed and "tokens_int" in printed
    assert session.interpreter.get("n") == 1
    assert session.interpreter.get("after") == 1
    assert "s" not in session.interpreter.names()


def test_load_path_lists_the_files_names(tmp_path: Path) -> None:
    program = tmp_path / "prog.rasp"
    program.write_text("inc = indices + 1;\n", encoding="utf-8")
    session = ReplSession()
    assert session.load_path(program) == "     s-op: inc"
    assert session.feed('inc("ab");') == "\t =  [1, 2] (ints)"
    assert session.load_path(tmp_path / "missing.rasp").startswith("error: cannot read")
    # `rasp repl DIR` said "No such file"; it says what `rasp run DIR` says
    assert session.load_path(tmp_path) == f"error: cannot read {tmp_path}: it is a directory"


def test_a_loaded_files_failing_statement_is_reported_and_skipped(tmp_path: Path) -> None:
    program = tmp_path / "prog.rasp"
    program.write_text("a = missing;\na = 3;\nb = a + 1;\n", encoding="utf-8")
    out = ReplSession().load_path(program).splitlines()
    assert out[0].endswith("prog.rasp:1:5: error: Undefined variable: missing")
    assert out[1:3] == ["    a = missing;", "        ^~~~~~~"]
    assert out[-2:] == ["    value: a =  3", "    value: b =  4"]


def _load(tmp_path: Path, text: str) -> tuple[ReplSession, list[str]]:
    program = tmp_path / "saved.rasp"
    program.write_text(text, encoding="utf-8")
    session = ReplSession()
    return session, session.load_path(program).splitlines()


def test_a_loaded_files_commands_act_on_the_session(tmp_path: Path) -> None:
    # As in the original: a file saved from a session keeps its `set example` and display switches.
    session, out = _load(tmp_path, "set example [1, 2]\nx = tokens_int + 1;\nfull seq display on\n")
    assert out[-1] == "     s-op: x"
    assert session.settings.seq_example == [1, 2] and session.settings.full_seq
    assert session.feed("x;").splitlines()[-1] == " \t\toutput:  2 3 \t (ints)"
    # `exit` in a loaded file stops reading the file, as the original's REPL does, not the session
    session, _ = _load(tmp_path, "x = 1;\nexit\ny = 1;\n")
    assert not session.finished and session.interpreter.get("x") == 1
    assert "y" not in session.interpreter.names()


def test_a_syntax_error_in_a_loaded_file_costs_only_its_statement(tmp_path: Path) -> None:
    # listed in the file's order (the original printed it before line 1's names)
    session, out = _load(tmp_path, "a = 1;\nb = (2;\nc = a\n  + 2;\n")
    assert out[0] == "    value: a =  1"
    assert out[1].endswith("saved.rasp:2:7: error: expected ')' to close '('")
    assert out[-1] == "    value: c =  3"
    assert "b" not in session.interpreter.names()


@pytest.mark.parametrize(
    "block",
    [
        "def bad(x) {\n  y = x +* 1;\n  leak = 42;\n  return y;\n}\n",
        "for i in [1, 2] {\n  y = i +* 1;\n  leak = 42;\n}\n",
    ],
)
def test_a_syntax_error_in_a_loaded_block_costs_the_whole_block(tmp_path: Path, block: str) -> None:
    """As typed: one error for the block, and none of its body runs. The rest of the body ran
    at the top level (`leak` bound), with errors for the `return` and the `}`."""
    session, out = _load(tmp_path, "first = 1;\n" + block + "last = 2;\n")
    typed = ReplSession()
    typed_out = "\n".join(typed.feed(line) for line in block.splitlines())
    errors = [line for line in out if "error:" in line]
    assert len(errors) == 1 and errors[0].endswith(
        "saved.rasp:3:10: error: expected an operand after '+'"
    )
    assert out[0] == "    value: first =  1" and out[-1] == "    value: last =  2"
    assert "leak" not in session.interpreter.names()
    assert "leak" not in typed.interpreter.names() and "error:" in typed_out


def test_a_load_lists_what_its_top_level_statements_bound(tmp_path: Path, monkeypatch) -> None:
    # As the original: each name once, at the last top-level statement that binds it, with the
    # value it had there; names bound only in a loop are imported but not listed.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.rasp").write_text("x = 1;\ny = 2;\nx = 3;\nfor i in [1] { x = 4; z = 5; }\n")
    session = ReplSession()
    assert session.feed('load "lib";').splitlines() == ["    value: y =  2", "    value: x =  3"]
    assert session.interpreter.get("x") == 4 and session.interpreter.get("z") == 5


def test_a_load_with_an_error_lists_everything_in_order(tmp_path: Path, monkeypatch) -> None:
    # The original filters repeated names only when nothing failed; a nested load prints what
    # has gathered (its loader's part too) when it ends.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inner.rasp").write_text("b = 1;\n")
    (tmp_path / "outer.rasp").write_text('a = 1;\nbad = nope;\na = 2;\nload "inner";\nc = 3;\n')
    out = ReplSession().feed('load "outer";').splitlines()
    assert [line for line in out if "value:" in line or "error:" in line] == [
        "    value: a =  1",
        "outer.rasp:2:7: error: Undefined variable: nope",  # as the load names it
        "    value: a =  2",
        "    value: b =  1",
        "    value: c =  3",
    ]


def test_a_function_is_labelled_with_where_it_was_defined(tmp_path: Path, monkeypatch) -> None:
    # The original's creator: "console", a loaded file as the load named it, a ' per call.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "lib.rasp").write_text("def f(a) { return a; }\n")
    session = ReplSession()
    assert session.feed('load "sub/lib";') == "     sub/lib function: f(a)"
    session.feed("def outer(a) { def inner(b) { return b; } return inner; }")
    assert session.feed("outer(1);") == "     console' function: inner(b)"
    # a full path as the load wrote it, as there (it was cut to its stem, `lib function`)
    written = str(tmp_path / "sub" / "lib")
    assert session.feed(f'load "{written}";') == f"     {written} function: f(a)"


def test_a_loaded_statement_must_run_on_the_example(tmp_path: Path) -> None:
    # `x = tokens_int;` fails on "hello": refused as typed in the session, and tokens_int keeps
    # its name (the assignment renamed it before the check refused it).
    session, out = _load(tmp_path, "x = tokens_int;\ny = indices;\n")
    assert "saved.rasp:1:1: error: cannot read the input as tokens_int" in out[0]
    assert out[-1] == "     s-op: y"
    assert "x" not in session.interpreter.names()
    assert session.interpreter.get("tokens_int").name == "tokens_int"


def test_a_loaded_files_draw_is_drawn(tmp_path: Path) -> None:
    # the original draws it (listing no value); it was dropped without a word
    (tmp_path / "pics.rasp").write_text(
        'x = tokens == "l";\ndraw(x);\ndraw(x, "ab");\ndraw(x, 5);\ny = 1;\n', encoding="utf-8"
    )
    drawn: list[str] = []

    def hook(node: object, tokens: list[object]) -> str:
        drawn.append("".join(map(str, tokens)))
        return f"drew {''.join(map(str, tokens))}"

    session = ReplSession(search_dirs=[tmp_path], draw_hook=hook)
    out = session.feed('load "pics";').splitlines()
    assert drawn == ["hello", "ab"]
    assert out[:4] == [
        "     s-op: x",
        "drew hello",
        "drew ab",
        f"{tmp_path / 'pics.rasp'}:4:1: error: example not iterable: 5",
    ]
    assert out[-1] == "    value: y =  1"


def test_a_loaded_files_for_body_draws_in_the_files_order(tmp_path: Path) -> None:
    # its drawings came after everything the file listed, where its other draws are in place
    (tmp_path / "loop.rasp").write_text(
        'x = 1;\nfor i in ["ab", "cd"] { draw(tokens, i); }\ndraw(tokens, "ef");\ny = 2;\n',
        encoding="utf-8",
    )
    session = ReplSession(
        search_dirs=[tmp_path], draw_hook=lambda node, tokens: f"drew {''.join(tokens)}"
    )
    assert session.feed('load "loop";').splitlines() == [
        "    value: x =  1",
        "drew ab",
        "drew cd",
        "drew ef",
        "    value: y =  2",
    ]
    assert session.feed('for i in ["gh"] { draw(tokens, i); }') == "drew gh"  # (typed: as before)


def test_a_load_in_a_for_body_lists_the_files_names_at_each_iteration(tmp_path: Path) -> None:
    # listed once for the whole loop (and not at all when a later statement failed); the
    # original's loadFile lists its file's names each time it runs, in order with the draws
    (tmp_path / "lib.rasp").write_text("a = 1;\nb = tokens;\n", encoding="utf-8")
    session = ReplSession(
        search_dirs=[tmp_path], draw_hook=lambda node, tokens: f"drew {''.join(tokens)}"
    )
    names = ["    value: a =  1", "     s-op: b"]
    assert session.feed('for i in [1, 2, 3] { load "lib"; }').splitlines() == names * 3
    assert session.feed('for i in ["p", "q"] { load "lib"; draw(tokens, i); }').splitlines() == [
        *names,
        "drew p",
        *names,
        "drew q",
    ]
    out = session.feed('for i in [1, 2] { load "lib"; c = nosuch; }').splitlines()
    assert out[:3] == [*names, "<repl>:1:35: error: Undefined variable: nosuch"]
    # a loaded file's loop that loads: each load lists what has gathered, as a nested load does
    (tmp_path / "outer.rasp").write_text(
        'z = 0;\nfor i in [1, 2] { load "lib"; }\ny = 2;\n', encoding="utf-8"
    )
    assert session.feed('load "outer";').splitlines() == [
        "    value: z =  0",
        *names,
        *names,
        "    value: y =  2",
    ]


def test_a_load_in_a_def_body_lists_the_files_names_as_it_ends(tmp_path: Path) -> None:
    """The original's loadFile lists its file's names when it ends, wherever it runs: in a def's
    body, once per load and before an error that comes after it. They were listed once per
    statement here, and not at all when the call failed."""
    (tmp_path / "lib.rasp").write_text("a = 1;\nb = tokens;\n", encoding="utf-8")
    session = ReplSession(search_dirs=[tmp_path])
    names = ["    value: a =  1", "     s-op: b"]
    session.feed('def f(x) { load "lib"; load "lib"; return x; }')
    assert session.feed("f(1);").splitlines() == [*names, *names, "    value: out =  1"]
    session.feed('def g(x) { load "lib"; return tokens + x; }')
    out = session.feed("y = g(1);").splitlines()
    assert out[:2] == names and "error" in out[2]
    assert session.feed("for i in [1, 2] { z = f(i); }").splitlines() == names * 4


def test_a_loaded_file_may_bind_a_library_name_for_itself(tmp_path: Path) -> None:
    """The original's loaded file runs in a scope of its own where only the base names are
    reserved: `count = 3;` binds count there (its later statements read 3), and the statement
    fails only as the name is copied into a caller where it is reserved (the REPL's top level);
    into a def's scope it is copied. Here the file's own scope refused it, so `y = count + 1;`
    failed and `tokens[-1]` did not count back from the file's `length`."""
    (tmp_path / "lib.rasp").write_text(
        "count = 3;\ny = count + 1;\nlength = indices + 1;\nz = tokens[-1];\n", encoding="utf-8"
    )
    session = ReplSession(search_dirs=[tmp_path])
    out = session.feed('load "lib";').splitlines()
    errors = [line for line in out if ": error: " in line]
    assert [e.split(": error: ")[1] for e in errors] == [
        "Cannot set reserved name: count",
        "Cannot set reserved name: length",
    ]
    assert "    value: y =  4" in out
    assert session.feed("y;") == "    value: y =  4"
    assert session.feed('z("abc");') == "\t =  [a, b, c] (strings)"
    assert "prelude function: count" in session.feed("count;")
    # into a def's scope the names are copied: its count is 3, its length the file's
    session.feed('def f(x) { load "lib"; return [count, length]; }')
    out = session.feed("v = f(1);")
    assert ": error: " not in out
    count, length = session.interpreter.get("v")
    assert count == 3 and session.feed('v[1]("abc");') == "\t =  [1, 2, 3] (ints)"


def test_a_name_reserved_two_loads_up_fails_in_the_innermost_file(tmp_path: Path) -> None:
    """The original's file scope passes each name it binds on up the chain of loading scopes
    (its stealing_env), so a file loaded by a loaded file fails on a library name as soon as it
    binds it, at the REPL's top level two loads up: `count = 3;` is an error there, and a loop
    binding `max` stops at its first item (`m2` never bound). Here only the direct caller's
    reserved names were checked: the inner file bound both without a word, and `m2` reached the
    top level."""
    (tmp_path / "inner.rasp").write_text(
        "count = 3;\ny = count + 1;\nfor max in [1, 2] { m2 = max; }\n", encoding="utf-8"
    )
    (tmp_path / "outer.rasp").write_text(
        'load "inner";\nw = count;\nv = y + m2;\n', encoding="utf-8"
    )
    session = ReplSession(search_dirs=[tmp_path])
    out = session.feed('load "outer";').splitlines()
    errors = [line.split(": error: ")[1] for line in out if ": error: " in line]
    assert errors == [
        "Cannot set reserved name: count",
        "Cannot set reserved name: max",
        "Undefined variable: m2",
    ]
    assert session.feed("w;") == "    value: w =  3"  # bound in the outer file all the same
    assert session.feed("y;") == "    value: y =  4"
    assert "Undefined variable: m2" in session.feed("m2;")
    assert "prelude function: count" in session.feed("count;")


def test_a_def_bodys_load_lists_a_nested_load_before_a_later_loop(tmp_path: Path) -> None:
    """The original prints what has gathered as each load ends, in order. Loaded from a def's
    body, a file whose loop ran after its nested load listed the nested part last: the loop moved
    the lines listed so far aside, and they were printed after the rest (seed 2000902)."""
    (tmp_path / "inner.rasp").write_text("c = 1;\n", encoding="utf-8")
    (tmp_path / "outer.rasp").write_text(
        'a = 2;\nload "inner";\nfor i in [1] { b = i; }\nd = 3;\n', encoding="utf-8"
    )
    session = ReplSession(search_dirs=[tmp_path])
    session.feed('def f(x) { load "outer"; return x; }')
    assert session.feed("f(1);").splitlines() == [
        "    value: a =  2",
        "    value: c =  1",
        "    value: d =  3",
        "    value: out =  1",
    ]


def test_a_loaded_show_example_shows_the_example_in_force_when_listed(tmp_path: Path) -> None:
    """The original's `show example` in a loaded file prints, when the listing is printed, the
    example in force then: a later `set example` (here in a nested load) changes what it shows.
    It showed the example at the `show` (seed 2000936)."""
    (tmp_path / "inner.rasp").write_text("set example [1, 2]\n", encoding="utf-8")
    (tmp_path / "outer.rasp").write_text('show example\nload "inner";\n', encoding="utf-8")
    session = ReplSession(search_dirs=[tmp_path])
    session.feed('set example "abc"')
    assert session.feed('load "outer";').splitlines() == [
        "\ts-op example: [1, 2]",
        "\tselector example: [1, 2]",
    ]


def test_an_internal_error_in_a_loaded_statement_is_as_its_evaluation_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a bug of ours met by one statement of a loaded file (here in its running-example check)
    # undid the whole load, where a failing statement is reported and skipped
    (tmp_path / "lib.rasp").write_text("a = 1;\nb = indices + 1;\nc = 2;\n", encoding="utf-8")
    session = ReplSession(search_dirs=[tmp_path])

    def buggy(node: object, example: object) -> object:
        raise ValueError("boom")

    monkeypatch.setattr(session._example_check, "evaluate", buggy)
    out = session.feed('load "lib";').splitlines()
    monkeypatch.undo()
    assert out[0] == "    value: a =  1"
    assert out[1].endswith("lib.rasp:2:1: error: internal error: ValueError: boom"), out
    assert out[-1] == "    value: c =  2"
    assert {"a", "c"} <= set(session.interpreter.names())
    assert "b" not in session.interpreter.names()


def test_a_loaded_files_errors_show_its_path_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rasp repl sub/prog.rasp` and `load "sub/prog";` showed the file's errors under its
    absolute path, where `rasp run sub/prog.rasp` shows `sub/prog.rasp:1:5`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.rasp").write_text("a = missing;\n", encoding="utf-8")
    (tmp_path / "sub" / "outer.rasp").write_text('load "prog";\n', encoding="utf-8")
    error = "sub/prog.rasp:1:5: error: Undefined variable: missing"
    assert ReplSession().load_path("sub/prog.rasp").startswith(error)
    assert ReplSession().load_path(Path("sub/prog.rasp")).startswith(error)
    assert ReplSession().feed('load "sub/prog";').startswith(error)
    # found beside the file that loads it: named from the working directory
    assert ReplSession().load_path("sub/outer.rasp").startswith(error)


def test_a_loaded_files_examples_switches_last_as_long_as_its_load(tmp_path: Path) -> None:
    """As the original's `loadFile`: the examples are off while a file runs and back as they were
    after it; a file's `examples on` shows them in its own listing (found by a probe of REPL
    commands in loaded files against the original: here a file's `examples off` outlasted its load, its `examples
    on` was not seen in its listing)."""
    (tmp_path / "on.rasp").write_text("a = indices + 1;\nexamples on\nb = indices;\n")
    (tmp_path / "off.rasp").write_text("examples off\nc = indices;\n")
    (tmp_path / "outer.rasp").write_text(
        f's-op examples on\nd = indices;\nload "{tmp_path / "off"}";\ne = indices;\n'
    )
    session = ReplSession()
    example = ' \t Example: a("hello") = [1, 2, 3, 4, 5] (ints)'
    assert example in session.feed(f'load "{tmp_path / "on"}";').splitlines()
    assert session.feed(f'load "{tmp_path / "off"}";') == "     s-op: c"
    assert "Example:" in session.feed("indices;")  # on again after the load
    # the nested load lists what gathered so far with its own switches (off), then the outer
    # file its later names with its own (s-op examples on)
    listed = session.feed(f'load "{tmp_path / "outer"}";').splitlines()
    assert listed[:3] == ["     s-op: d", "     s-op: c", "     s-op: e"]
    assert listed[3].startswith(' \t Example: e("hello")')
    session.feed("examples off")
    assert "Example:" in session.feed(f'load "{tmp_path / "on"}";')
    assert "Example:" not in session.feed("indices;")  # off again


def test_a_loaded_library_name_bound_to_a_failing_sop_stays_the_librarys(tmp_path: Path) -> None:
    """The original tests the value before binding it: `count = tokens + "x";` failing on the
    example binds nothing, one error, and `xl = count;` then binds the library's count. Here
    the statement gave two errors (the copy's refusal, then the example's) and `xl = count;`
    bound nothing without a word."""
    (tmp_path / "mid.rasp").write_text(
        'set example [1, 2]\ntokens = tokens_asis;\ncount = tokens + "x";\nxl = count;\n'
    )
    session = ReplSession()
    printed = session.feed(f'load "{tmp_path / "mid"}";')
    assert "Cannot set reserved name" not in printed
    assert "xl" in session.interpreter.names()
