"""`load` and running files: public names copied, a caller's names unseen, errors located in the
loaded file, a load that goes on past failing statements (the original REPL's), and the shipped
programs found by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.continuation import parse_recovering
from rasp.errors import RaspError, RaspNameError, RaspRuntimeError, Source
from rasp.interpreter import Interpreter, load_file, run_file
from rasp.parser import parse
from rasp.results import ReplLoading
from rasp.sops import SOp, evaluate
from rasp.values import RaspFunction


def run(text: str, interp: Interpreter | None = None) -> Interpreter:
    interp = interp or Interpreter()
    interp.exec_program(parse(text, "t.rasp"))
    return interp


def test_load_copies_public_names(tmp_path: Path) -> None:
    (tmp_path / "lib.rasp").write_text(
        "_hidden = 1; shown = tokens; def g(x) { return x; }", encoding="utf-8"
    )
    main = tmp_path / "main.rasp"
    main.write_text('load "lib";\nout_name = g(shown);', encoding="utf-8")
    i = load_file(main)
    assert isinstance(i.get("shown"), SOp) and isinstance(i.get("g"), RaspFunction)
    with pytest.raises(RaspNameError):
        i.get("_hidden")
    assert i.last_assigned == "out_name"


def test_loaded_files_cannot_see_the_callers_names(tmp_path: Path) -> None:
    (tmp_path / "lib.rasp").write_text("y = secret;", encoding="utf-8")
    i = Interpreter(search_dirs=[tmp_path])
    with pytest.raises(RaspNameError) as info:
        run('secret = 1; load "lib";', i)
    assert info.value.span is not None and info.value.span.file.endswith("lib.rasp")


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(RaspError, match="cannot find 'nowhere.rasp'"):
        run('load "nowhere";')
    for empty in ('""', '" "'):  # said "cannot find '.rasp'"
        with pytest.raises(RaspError, match="load needs a file name, got an empty one"):
            run(f"load {empty};")
    (tmp_path / "a.rasp").write_text('load "b";', encoding="utf-8")
    (tmp_path / "b.rasp").write_text('load "a";', encoding="utf-8")
    with pytest.raises(RaspRuntimeError, match="loads itself"):
        run('load "a";', Interpreter(search_dirs=[tmp_path]))
    (tmp_path / "c.rasp").write_text("count = 1;", encoding="utf-8")
    with pytest.raises(RaspNameError, match="reserved"):
        run('load "c";', Interpreter(search_dirs=[tmp_path]))


def test_a_link_loop_is_not_found_not_an_internal_error(tmp_path: Path) -> None:
    # Path.resolve raised RuntimeError ("Symlink loop") on loop.rasp -> loop.rasp: the load said
    # "internal error: RuntimeError: ..."
    (tmp_path / "loop.rasp").symlink_to(tmp_path / "loop.rasp")
    with pytest.raises(
        RaspError, match="cannot load 'loop': .*loop.rasp is a link to no file"
    ) as info:
        run('load "loop";', Interpreter(search_dirs=[tmp_path]))
    assert "internal error" not in info.value.render()


def test_a_missing_file_lists_each_directory_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file loading from its own directory, which is also the working directory, listed it twice
    # ("looked in /d, /d, ...").
    monkeypatch.chdir(tmp_path)
    main = tmp_path / "main.rasp"
    main.write_text('load "nowhere";', encoding="utf-8")
    with pytest.raises(RaspError, match="cannot find 'nowhere.rasp'") as info:
        load_file(main, search_dirs=[tmp_path])
    hint = info.value.hint or ""
    assert hint.startswith("looked in ")
    listed = hint.removeprefix("looked in ").split(", ")
    assert listed.count(str(tmp_path.resolve())) == 1, hint


@pytest.mark.parametrize(
    ("typed", "meant"), [("revers", "reverse"), ("sub/prgo", "sub/prog"), ("sotr", "sort")]
)
def test_a_missing_file_names_a_program_one_typo_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str, meant: str
) -> None:
    # `load "revers";` said only where it looked; the shipped library's `sort` is found too
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reverse.rasp").write_text("r = tokens;\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "prog.rasp").write_text("p = tokens;\n", encoding="utf-8")
    with pytest.raises(RaspError, match=f"cannot find '{typed}.rasp'") as info:
        run(f'load "{typed}";', Interpreter())
    assert (info.value.hint or "").startswith(f'did you mean "{meant}"? looked in ')


def test_a_load_may_go_on_past_failing_statements(tmp_path: Path) -> None:
    # The original's REPL reports a loaded file's failing statement and runs the next one; a
    # program run from the command line stops at the first error instead.
    (tmp_path / "outer.rasp").write_text(
        'first = caller_name;\nfirst = 3;\nload "inner";\nfrom_inner = shared;\n'
        "hidden = _private;\n_mine = 4;\nlast = _mine;\n",
        encoding="utf-8",
    )
    (tmp_path / "inner.rasp").write_text(
        "shared = 7;\n_private = 8;\nnope = first;\n", encoding="utf-8"
    )
    i = Interpreter(search_dirs=[tmp_path])
    run("caller_name = 10;", i)
    errors: list[RaspError] = []
    (stmt,) = parse('load "outer";').statements
    loading = ReplLoading(watch=lambda result: None, errors=errors)
    result = i.exec_statement(stmt, repl_loading=loading)
    located = [(e.span.file.rsplit("/", 1)[-1], e.span.line, e.message) for e in errors]
    assert located == [
        ("outer.rasp", 1, "Undefined variable: caller_name"),
        ("inner.rasp", 3, "Undefined variable: first"),
        ("outer.rasp", 5, "Undefined variable: _private"),
    ]
    assert dict(zip(result.names, result.values)) == {
        "first": 3,
        "shared": 7,
        "from_inner": 7,
        "last": 4,
    }
    with pytest.raises(RaspNameError, match="caller_name"):
        i.exec_statement(stmt)  # no list: the first failure ends the load


def test_loaded_names_are_listed_in_the_order_of_their_last_assignment(tmp_path: Path) -> None:
    (tmp_path / "lib.rasp").write_text(
        "a = 4;\nb = 3;\na = a + b;\nc, d = 5, 6;\nb = 8;\n", encoding="utf-8"
    )
    i = run('load "lib";', Interpreter(search_dirs=[tmp_path]))
    (stmt,) = parse('load "lib";').statements
    assert i.exec_statement(stmt).names == ("a", "c", "d", "b")


def test_loading_a_directory_named_like_the_file_says_it_is_one(tmp_path: Path) -> None:
    # `load "lib";` where lib.rasp is a directory said "cannot find 'lib.rasp'"
    (tmp_path / "lib.rasp").mkdir()
    (tmp_path / "lib.rasp" / "a.rasp").write_text("x = 1;", encoding="utf-8")
    with pytest.raises(RaspError) as caught:
        run('load "lib";', Interpreter(search_dirs=[tmp_path]))
    assert (
        caught.value.message
        == f"cannot load 'lib': {(tmp_path / 'lib.rasp').resolve()} is a directory"
    )
    # the program it suggests is in lib.rasp/ (it said load "lib/a";, which is not there)
    assert caught.value.hint is not None and 'load "lib.rasp/a";' in caught.value.hint
    run('load "lib.rasp/a";', Interpreter(search_dirs=[tmp_path]))


def test_loading_a_directory_says_it_is_one(tmp_path: Path) -> None:
    # `load "lib";` of a directory said "cannot find 'lib.rasp'", as if nothing were there.
    lib = tmp_path / "lib"
    lib.mkdir()
    interp = Interpreter(search_dirs=[tmp_path])
    for name in ("lib", "lib/"):
        with pytest.raises(RaspError) as caught:
            run(f'load "{name}";', interp)
        assert caught.value.message == f"cannot load '{name}': {lib.resolve()} is a directory"
        assert caught.value.hint == 'load takes a file: load "NAME"; runs NAME.rasp'
    for stem in ("rev", "a", "b", "c", "d"):
        (lib / f"{stem}.rasp").write_text("x = tokens;", encoding="utf-8")
    with pytest.raises(RaspError) as caught:
        run('load "lib";', interp)
    assert caught.value.hint == (
        'load a file in it by its path, e.g. load "lib/a"; (it holds a.rasp, b.rasp, c.rasp, '
        "d.rasp, ...)"
    )
    assert isinstance(run('load "lib/rev";', interp).get("x"), SOp)
    (tmp_path / "lib.rasp").write_text("y = tokens;", encoding="utf-8")  # a file wins
    assert isinstance(run('load "lib";', interp).get("y"), SOp)


def test_load_finds_the_shipped_programs() -> None:
    i = run('load "reverse";')
    assert list(evaluate(i.get("reverse"), "abc").values) == ["c", "b", "a"]


def test_run_file_defaults_to_the_last_assigned_name(tmp_path: Path) -> None:
    path = tmp_path / "p.rasp"
    path.write_text("a = indices + 1;\nb = a * 2;\n", encoding="utf-8")
    assert list(run_file(path, "xyz").values) == [2, 4, 6]
    assert list(run_file(path, ["x"], name="a").values) == [1]
    with pytest.raises(RaspError):
        run_file(tmp_path / "missing.rasp", "a")


def test_a_program_stops_at_a_loaded_files_syntax_error_and_ignores_its_commands(
    tmp_path: Path,
) -> None:
    # Outside the REPL a loaded file is a program: its first error ends the load, and its REPL
    # commands have no session to act on.
    (tmp_path / "lib.rasp").write_text("a = 1;\nb = (2;\nc = 3;\n", encoding="utf-8")
    with pytest.raises(RaspError, match=r"expected '\)'"):
        run('load "lib";', Interpreter(search_dirs=[tmp_path]))
    (tmp_path / "cmd.rasp").write_text("set example [1]\nd = 4;\n", encoding="utf-8")
    assert run('load "cmd";', Interpreter(search_dirs=[tmp_path])).get("d") == 4


def test_parse_recovering_keeps_the_files_order_and_lines() -> None:
    source = Source("f.rasp", "a = 1;\nb = (2;\n\nc = [1,\n 2];\nd = ;\n")
    items = parse_recovering(source)
    kinds = [type(item).__name__ for item in items]
    assert kinds == ["Assign", "RaspSyntaxError", "Assign", "RaspSyntaxError"]
    assert [item.span.line for item in items] == [1, 2, 4, 6]  # type: ignore[union-attr]


def test_parse_recovering_skips_a_block_with_a_syntax_error_whole() -> None:
    # the error waits for the block's '}', as typed in the REPL: its body's later lines are not
    # statements of their own (they ran at the top level, and `return` and `}` were errors)
    text = "a = 1;\ndef f(x) {\n  y = x +* 1;\n  leak = 2;\n  return y;\n}\nb = 3;\n"
    items = parse_recovering(Source("f.rasp", text))
    kinds = [type(item).__name__ for item in items]
    assert kinds == ["Assign", "RaspSyntaxError", "Assign"]
    assert [item.span.line for item in items] == [1, 3, 7]  # type: ignore[union-attr]
    # a block never closed is one error too, at the end of the file
    items = parse_recovering(Source("f.rasp", "for i in [1] {\n  y = i +* 1;\n  z = 2;\n"))
    assert [type(item).__name__ for item in items] == ["RaspSyntaxError"]


def test_parse_recovering_reads_a_long_bracketed_statement_once(
    parsed_lengths: list[int],
) -> None:
    # each line of a statement was parsed with all before it: a 600-line list in a file with a
    # syntax error took ~16 s to load. Inside an open bracket it reads on, as the REPL does; an
    # error there is found when the bracket closes, and costs that statement only
    rows = [f"  {i}," for i in range(300)]
    text = "\n".join(["bad = ;", "x = [", *rows, "  300];", "y = [1 2,", "  3];", "z = 1;", ""])
    items = parse_recovering(Source("f.rasp", text))
    assert [type(item).__name__ for item in items] == [
        "RaspSyntaxError",
        "Assign",
        "RaspSyntaxError",
        "Assign",
    ]
    assert [item.span.line for item in items] == [1, 2, 304, 306]  # type: ignore[union-attr]
    assert sum(parsed_lengths) < 3 * len(text), parsed_lengths


def test_a_name_with_another_suffix_loads_that_very_file(tmp_path: Path) -> None:
    """`rasp repl prog.txt` loads through `load "/abs/prog.txt";`, which looked only for
    prog.txt.rasp."""
    (tmp_path / "prog.txt").write_text("shown = tokens;", encoding="utf-8")
    i = Interpreter(search_dirs=[tmp_path])
    run('load "prog.txt";', i)
    assert isinstance(i.get("shown"), SOp)
    run(f'load "{tmp_path / "prog.txt"}";', Interpreter())
    with pytest.raises(RaspError, match="cannot find 'prog.rasp'"):
        run('load "prog";', i)  # no suffix: only prog.rasp


def test_parse_recovering_reports_a_comprehension_missing_its_brace_in_place() -> None:
    # its `for` was taken for an open block's: the lines after it were swallowed into its error
    text = "a = {x: 1 for x in [1];\nb = 2;\nc = 3;\n"
    items = parse_recovering(Source("f.rasp", text))
    assert [type(item).__name__ for item in items] == ["RaspSyntaxError", "Assign", "Assign"]
    assert [item.span.line for item in items] == [1, 2, 3]  # type: ignore[union-attr]


def test_parse_recovering_reads_a_long_statement_without_brackets_once(
    parsed_lengths: list[int],
) -> None:
    # `x = 1 +` continued over 600 lines in a file with a syntax error was parsed again at each
    # line (~20 s to load); its lines now go through the parser's automaton once
    text = "\n".join(["bad = ;", "x = 1 +", *["  1 +"] * 600, "  1;", "y = 1 2", "  + 3;", ""])
    items = parse_recovering(Source("f.rasp", text))
    assert [type(item).__name__ for item in items] == [
        "RaspSyntaxError",
        "Assign",
        "RaspSyntaxError",
        "ExprStmt",
    ]
    assert [item.span.line for item in items] == [1, 2, 604, 605]  # type: ignore[union-attr]
    assert sum(parsed_lengths) < 3 * len(text), parsed_lengths


def test_loading_a_compiled_model_says_it_is_one(tmp_path: Path) -> None:
    # `load "m.safetensors";` reported the file's binary header as text that is not UTF-8
    header = b'{"__metadata__":{"rasp_forge":"{}"}}'
    (tmp_path / "m.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(RaspError) as caught:
        run(f'load "{tmp_path / "m.safetensors"}";')
    assert str(caught.value) == (
        f"{tmp_path / 'm.safetensors'} is a compiled model (a safetensors file), not a RASP program"
    )
    assert caught.value.span is not None  # located at the load statement
    # text that merely starts like a length does not: an 8-byte prefix of a program
    (tmp_path / "p.rasp").write_text("x = 1;  {y = 2;", encoding="utf-8")
    with pytest.raises(RaspError) as caught:
        run(f'load "{tmp_path / "p"}";')
    assert "compiled model" not in str(caught.value) and caught.value.span.line == 1
