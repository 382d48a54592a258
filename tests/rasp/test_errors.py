"""Golden files of rendered errors: each `tests/golden/errors/NAME.rasp` fails as `NAME.txt` shows.

A program whose first line is `# input: JSON` is also evaluated (its last assigned name) on that
input, for errors that only an input reveals. Rewrite the goldens with `UPDATE_GOLDEN=1`. Also how
a diagnostic renders (carets, wrapping, notes, settings in hints); test_syntax_hints.py has the
syntax errors that name a mistake.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.errors import (
    MAX_SHOWN_COLUMNS,
    CompileError,
    Diagnostic,
    RaspError,
    RaspSyntaxError,
    Source,
    Span,
    _window,
    option,
    spell_options,
)
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate
from rasp.text_width import line_columns

ERRORS = Path(__file__).parent.parent / "golden" / "errors"
CASES = sorted(ERRORS.glob("*.rasp"))


def run_until_error(path: Path) -> RaspError:
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    try:
        interpreter = Interpreter()
        interpreter.exec_program(parse(text, path.name))
        if first.startswith("# input:"):
            name = interpreter.last_assigned
            assert name is not None, f"{path.name} assigns nothing to evaluate"
            evaluate(interpreter.get(name), json.loads(first.removeprefix("# input:")))
    except RaspError as exc:
        return exc
    pytest.fail(f"{path.name} ran without an error")


def test_there_is_a_golden_for_every_kind() -> None:
    names = {p.stem for p in CASES}
    assert {
        "unknown_name",
        "arity",
        "average_strings",
        "missing_dict_key",
        "division_by_zero",
    } <= names
    assert {"mixed_types", "wrong_kind_selector", "reserved_name"} <= names
    assert sum(n.startswith("syntax_") for n in names) >= 6


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rendered_error(path: Path, golden: Callable[[Path, str], None]) -> None:
    error = run_until_error(path)
    rendered = error.render()
    assert rendered.startswith(f"{path.name}:"), "every error is located in the file"
    assert "Traceback" not in rendered and "$END" not in rendered
    golden(path.with_suffix(".txt"), rendered + "\n")


def test_incomplete_only_at_the_end() -> None:
    unclosed = run_until_error(ERRORS / "syntax_unclosed_def.rasp")
    assert isinstance(unclosed, RaspSyntaxError) and unclosed.incomplete
    missing = run_until_error(ERRORS / "syntax_missing_semicolon.rasp")
    assert isinstance(missing, RaspSyntaxError) and not missing.incomplete


def test_caret_lines_up_under_tab_indented_source() -> None:
    text = "def f(x) {\n\treturn x + nope;\n}\ny = f(1);\n"
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse(text, "tabs.rasp"))
    lines = info.value.render().splitlines()
    assert lines[1] == "    \treturn x + nope;"
    assert lines[2] == "    \t           ^~~~"


def test_caret_lines_up_under_wide_characters() -> None:
    # `日本語` takes 6 terminal columns: the caret counted 3 and sat 3 columns left of `nope`,
    # and an underline under it was 3 columns short
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse('x = "日本語" + nope;\n', "w.rasp"))
    assert info.value.render().splitlines()[1:3] == [
        '    x = "日本語" + nope;',
        "                   ^~~~",
    ]
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse('y = "日本語" - 1;\n', "w.rasp"))
    assert info.value.render().splitlines()[2] == "        ^~~~~~~~~~~~"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet=st.sampled_from("a +日\u0301\t👍ｱ"), min_size=1, max_size=160),
    data=st.data(),
)
def test_the_caret_sits_under_its_column_and_the_underline_ends_at_its_end(
    text: str, data: st.DataObject
) -> None:
    """Wide characters, combining accents and tabs (before and inside the span), and lines cut
    around the caret (`...`) alike: the caret line reaches the terminal columns of the span's
    first character and of the end of its last, in the line shown above it."""
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    span = Span(Source("f.rasp", text), 1, start + 1, 1, end + 1)
    shown, underline = Diagnostic("m", span).render().splitlines()[1:3]
    cut, at, to = _window(text, start, end)
    assert shown == "    " + cut and cut[at] == text[start]
    assert line_columns(underline[: underline.index("^")]) == line_columns("    " + cut[:at])
    assert line_columns(underline) == max(
        line_columns("    " + cut[:to]), line_columns("    " + cut[:at]) + 1
    )
    # about MAX_SHOWN_COLUMNS: a wide character or a tab at the cut, and the two `...`
    assert line_columns(cut.replace("\t", " ")) <= MAX_SHOWN_COLUMNS + 6


def test_a_message_with_wide_characters_is_wrapped_by_columns() -> None:
    # textwrap counted `日` as one column: wrapped to 40, this message ran to 70
    message = "cannot read " + " ".join(["'日本語の文字'"] * 8) + " as ints"
    span = Span(Source("w.rasp", 'x = "日本語";'), 1, 5, 1, 10)
    lines = Diagnostic(message, span, hint="関数 " * 12).render(width=40).splitlines()
    assert all(line_columns(line) <= 40 for line in lines), lines
    assert lines[:2] == ["w.rasp:1:5: error: cannot read", "  '日本語の文字' '日本語の文字'"]
    assert lines[-1].startswith(" " * 6) and len(lines) > 6


def test_a_setting_a_hint_names_is_spelled_by_the_front_end() -> None:
    # The compiler names a setting by its Python keyword; the CLI (the default) and the REPL each
    # spell it in their own syntax, so a REPL user is never told about a `--max-params` it lacks.
    hint = f"raise the limit ({option('max_params')}) or use {option('vocab', '[1,2,3]')}"
    diagnostic = Diagnostic("too large", hint=hint)
    assert diagnostic.render().splitlines()[1] == (
        "hint: raise the limit (--max-params / max_params=) or use --vocab '[1,2,3]'"
    )
    repl = diagnostic.render(options=lambda name, value: f"`:compile r {value or name.upper()}`")
    assert repl.splitlines()[1] == (
        "hint: raise the limit (`:compile r MAX_PARAMS`) or use `:compile r [1,2,3]`"
    )
    # read in Python, a refusal's hint has its settings spelled too
    assert CompileError([diagnostic]).hint == spell_options(hint)


def test_render_wraps_message_and_hint_only_when_asked() -> None:
    source = Source("<repl>", "r = aggregate(flip, tokens);")
    long = "at max-len 100,000 the model would be too large: " + "about 7.74M parameters; " * 12
    diagnostic = Diagnostic(
        long, Span(source, 1, 5, 1, 28), "use `:compile r abc 16 MAX_PARAMS` " * 6
    )
    one_line = diagnostic.render().splitlines()
    assert len(one_line) == 4 and one_line[0].startswith("<repl>:1:5: error: at max-len")
    wrapped = diagnostic.render(width=100).splitlines()
    assert all(len(line) <= 100 for line in wrapped)
    caret = wrapped.index("    r = aggregate(flip, tokens);")
    assert caret > 1 and all(line.startswith("  ") for line in wrapped[1:caret])
    hint = wrapped[caret + 2 :]
    assert hint[0].startswith("hint: use") and all(line.startswith(" " * 6) for line in hint[1:])
    # a command to type is never cut in two
    assert "".join(hint).count("`:compile r abc 16 MAX_PARAMS`") == 6


def test_an_error_inside_the_prelude_is_shown_where_the_program_calls_it() -> None:
    # contains("b", "c") compares two atoms, so indicator() gets False inside the prelude: the
    # error's own location is a line of rasp/prelude.rasp, which says nothing of the program
    text = 'x = 1;\nfound = contains("b", "c");\n'
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse(text, "prog.rasp"))
    lines = info.value.render().splitlines()
    assert lines[0].startswith("rasp/prelude.rasp:") and "indicator" in lines[0]
    assert lines[3].startswith("hint: indicator(x) turns an s-op of bools into 1 and 0")
    assert lines[4:] == [
        "prog.rasp:2:9: note: in this call of contains",
        '    found = contains("b", "c");',
        "            ^~~~~~~~~~~~~~~~~~",
    ]


def test_a_traceback_shows_the_located_diagnostics_under_the_message() -> None:
    # A Python caller sees what the command line prints (location, source line, caret, hint,
    # every reason) as the exception's notes; str() stays the one-line message.
    import traceback

    source = Source("<cell>", "x = 1;\ny = x + ;\n")
    span = Span(source, 2, 5, 2, 10)
    refused = CompileError(
        [Diagnostic("first reason", span, f"raise {option('max_params')}"), Diagnostic("second")]
    )
    assert str(refused) == "first reason"
    shown = "".join(traceback.format_exception(refused))
    assert shown.endswith(
        "CompileError: first reason\n"
        "<cell>:2:5: error: first reason\n"
        "    y = x + ;\n"
        "        ^~~~~\n"
        "hint: raise --max-params / max_params=\n"
        "error: second\n"
    )
    refused.add_note("kept")  # add_note appends to the same notes
    assert refused.__notes__[-1] == "kept" and len(refused.__notes__) == 2
    plain = RaspError("no location, no hint")  # nothing to add to the message
    assert plain.__notes__ == [] and traceback.format_exception_only(plain) == [
        "rasp.errors.RaspError: no location, no hint\n"
    ]
    late = RaspError("located later")  # rendered when first read: a span given after counts
    late.with_span(span)
    assert late.__notes__[0].startswith("<cell>:2:5: error: located later\n")


def test_a_compile_refusal_located_in_a_def_gets_a_note_at_each_call_once() -> None:
    """The notes come from the span (a node made by a call of a def carries its calls), so every
    refusal gets them, whichever check built it; raised again with more notes (the compiler's
    'also tried' path), they are not repeated."""
    source = Source("prog.rasp", "def f(s) { return aggregate(full_s, s); }\ny = f(tokens);\n")
    call = Span(source, 2, 5, 2, 14)
    span = Span(source, 1, 19, 1, 39, calls=(("f", call),))
    err = CompileError([Diagnostic("a snap decision has margin 0", span)])
    rendered = [d.render() for d in err.diagnostics]
    assert rendered[1].splitlines()[0] == "prog.rasp:2:5: note: in this call of f"
    assert len(rendered) == 2
    again = CompileError([*err.diagnostics, Diagnostic("also tried", severity="note")])
    assert [d.message for d in again.diagnostics] == [
        "a snap decision has margin 0",
        "in this call of f",
        "also tried",
    ]
    assert Span(source, 1, 19, 1, 39) == span  # the calls are not part of the location
