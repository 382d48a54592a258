"""Errors of the command line that have a place in the program are located there (file:line:col,
the line, a caret), with a hint that fits; errors of an argument name the argument and exit 2."""

from __future__ import annotations

import decimal
from pathlib import Path

import pytest

from tests.cli_helpers import run


def write(tmp_path: Path, text: str, name: str = "prog.rasp") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_output_that_is_a_number_is_located_at_its_assignment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "y = tokens;\nx = 3;\n")
    code, out, err = run(capsys, "run", path, "--input", "abc")
    assert (code, out) == (1, "")
    assert err.splitlines()[:3] == [
        f"{path}:2:1: error: 'x' is a number (3), not an s-op",
        "    x = 3;",
        "    ^",
    ]


def test_an_input_the_program_cannot_read_is_an_error_of_the_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "tokens = tokens_int; y = tokens;\n")
    code, out, err = run(capsys, "run", path, "--input", "abc")
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == (
        f"{path}:1:10: error: argument --input: cannot read the input as tokens_int: int() "
        "cannot read the token 'a' at position 0"
    )
    assert lines[2] == "             ^~~~~~~~~~"  # under tokens_int, where the program reads it
    assert lines[3].startswith("hint: tokens_int reads every token with int()")
    assert run(capsys, "run", path, "--input", "123")[:2] == (0, "[1, 2, 3] (ints)\n")


def test_an_input_of_mixed_types_is_an_error_of_the_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "y = tokens_asis;\n")
    code, _, err = run(capsys, "run", path, "--input", '[1,"a"]')
    assert code == 2
    assert err.startswith(f"{path}:1:5: error: argument --input: attempted to create sequence")


def test_a_failure_of_the_program_on_the_input_is_not_an_error_of_the_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "y = tokens_int / (indices - 1);\n")
    code, _, err = run(capsys, "run", path, "--input", "123")
    assert code == 1 and "argument --input" not in err and ":1:5: error: division by zero" in err


def test_a_vocabulary_tokens_int_cannot_read_is_one_located_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "y = tokens_int + 1;\n")
    out_path = str(tmp_path / "m.safetensors")
    argv = ["compile", path, "--vocab", "ab1", "--max-len", "4", "-o", out_path]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"{path}:1:5: error: the vocabulary tokens 'a', 'b' cannot be read as tokens_int",
        "    y = tokens_int + 1;",
        "        ^~~~~~~~~~",
        "hint: tokens_int reads every token with int(): compile with a vocabulary of numbers "
        "(--vocab 0123456789 or --vocab '[1,2,3]'), or read them as strings with tokens",
    ]
    assert not Path(out_path).exists()


def test_an_output_of_bools_and_numbers_from_the_vocabulary_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "x = tokens_asis;\n")
    out_path = str(tmp_path / "m.safetensors")
    argv = ["compile", path, "--vocab", "[true,1,1.0]", "--max-len", "4", "-o", out_path]
    code, _, err = run(capsys, *argv)
    lines = err.splitlines()
    assert code == 1 and lines[0].startswith(f"{path}:1:5: error: 'tokens_asis' can be a bool")
    assert lines[3].startswith(
        "hint: a compiled model reads False as 0 and True as 1; the vocabulary"
    )
    assert "aggregate" not in err


def test_an_output_of_bools_and_numbers_from_a_map_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, 'x = indices if indices > 0 else tokens == "a";\n')
    out_path = str(tmp_path / "m.safetensors")
    code, _, err = run(capsys, "compile", path, "--vocab", "ab", "--max-len", "4", "-o", out_path)
    assert code == 1 and f"{path}:1:5: error:" in err
    assert (
        "hint: a compiled model reads False as 0 and True as 1; make it give values of one type"
        in err
    )
    assert "aggregate" not in err


def test_a_python_program_names_the_type_with_its_article(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "x = 3\n", "prog.py")
    code, _, err = run(capsys, "run", f"{path}:x", "--input", "abc")
    assert code == 1 and f"'x' in {path} is an int, not an s-op" in err


def test_length_in_a_causal_model_is_located_where_it_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "z = indices + length;\n")
    out_path = str(tmp_path / "m.safetensors")
    argv = ["compile", path, "--vocab", "ab", "--max-len", "4", "--causal", "-o", out_path]
    code, _, err = run(capsys, *argv)
    assert code == 1 and err.startswith(f"{path}:1:5: error: 'length' reads every position")


def test_a_causal_refusal_inside_a_def_is_also_shown_where_the_program_called_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The head that looks ahead is the prelude's (load_from_location's select): located there
    alone, the refusal named no line of the program compiled, and its hint (add a conjunct to
    the selector) could not be followed where it pointed."""
    text = "x = 1;\ndef ahead(s) {\n\treturn load_from_location(s, indices + 1);\n}\ny = ahead(tokens);\n"
    path = write(tmp_path, text)
    out_path = str(tmp_path / "m.safetensors")
    argv = ["compile", path, "--vocab", "ab", "--max-len", "4", "--causal", "-o", out_path]
    code, _, err = run(capsys, *argv)
    assert code == 1 and err.startswith("rasp/prelude.rasp:46:9: error: "), err
    notes = [line for line in err.splitlines() if ": note: " in line]
    # innermost call first, then the program's own
    assert notes == [
        f"{path}:3:9: note: in this call of load_from_location",
        f"{path}:5:5: note: in this call of ahead",
    ], err
    # returned inside a list
    path = write(
        tmp_path,
        "def f(x) {\n\treturn [load_from_location(x, indices + 1)];\n}\ny = f(tokens)[0];\n",
    )
    code, _, err = run(capsys, "compile", path, *argv[2:])
    assert code == 1 and f"{path}:4:5: note: in this call of f" in err, err
    # `length`, located at the s-op that reads it, inside a def
    path = write(tmp_path, "def f(x) {\n\treturn x + length;\n}\ny = f(indices);\n")
    code, _, err = run(capsys, "compile", path, *argv[2:])
    assert code == 1 and err.startswith(f"{path}:2:9: error: 'length' reads every position"), err
    assert f"{path}:4:5: note: in this call of f" in err


@pytest.mark.parametrize(
    ("body", "call", "message"),
    [
        # a mean's default that is no number (compiler/aggregates)
        ('aggregate(select(indices, indices, <), s, "c")', "f(indices)", "is not a number"),
        # a value that can be a bool or a number (compiler/values)
        ('s if indices > 2 else indicator(tokens == "b")', 'f(tokens == "a")', "a bool or a"),
        # a select comparing values of two kinds, which fails on every input
        ("select(s, indices, <)", "selector_width(f(tokens))", "fails on every input"),
    ],
)
def test_a_compile_refusal_inside_a_def_is_also_shown_where_the_program_called_it(
    body: str, call: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every located refusal, not only the causal ones (2b092ec): located in the def's body
    alone, it named no line of the program compiled. Through two defs, one note per call."""
    text = f"def f(s) {{\n\treturn {body};\n}}\ndef g(s) {{\n\treturn {call};\n}}\ny = g(tokens);\n"
    path = write(tmp_path, text)
    out_path = str(tmp_path / "m.safetensors")
    argv = ["compile", path, "--vocab", "abc", "--max-len", "5", "-o", out_path]
    code, _, err = run(capsys, *argv)
    assert code == 1 and err.startswith(f"{path}:2:9: error: "), err
    assert message in err.splitlines()[0]
    notes = [line for line in err.splitlines() if ": note: " in line]
    assert notes[-2:] == [
        f"{path}:5:{9 + call.index('f(')}: note: in this call of f",
        f"{path}:7:5: note: in this call of g",
    ], err


def test_a_refusal_in_the_prelude_is_shown_at_each_call_down_to_the_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """shift's aggregate with a list default: the prelude's line, then the calls."""
    path = write(tmp_path, "def later(s) {\n\treturn shift(s, 1, [0]);\n}\ny = later(tokens);\n")
    out_path = str(tmp_path / "m.safetensors")
    code, _, err = run(capsys, "compile", path, "--vocab", "ab", "--max-len", "4", "-o", out_path)
    assert code == 1 and err.startswith("rasp/prelude.rasp:51:9: error: this aggregate's default")
    notes = [line for line in err.splitlines() if ": note: " in line]
    assert notes == [
        f"{path}:2:9: note: in this call of shift",
        f"{path}:4:5: note: in this call of later",
    ], err


def test_length_as_the_causal_output_itself_is_located_where_the_output_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`z = length;`: the output is the built-in, which has no place of its own; the refusal points
    at the name the program gives it (through another name too)."""
    out_path = str(tmp_path / "m.safetensors")
    for text, where, line in (
        ("z = length;\n", "1:1", "z = length;"),
        ("y = length;\nz = y;\n", "2:1", "z = y;"),
    ):
        path = write(tmp_path, text)
        argv = ["compile", path, "--vocab", "ab", "--max-len", "4", "--causal", "-o", out_path]
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.splitlines() == [
            f"{path}:{where}: error: 'length' reads every position",
            f"    {line}",
            "    ^",
            "hint: compile without causal attention, or avoid length",
        ]
    path = write(tmp_path, "z = length;\n")  # without --causal it compiles, and verifies
    assert run(capsys, "compile", path, "--vocab", "ab", "--max-len", "3", "-o", out_path)[0] == 0
    assert run(capsys, "verify", path, "--model", out_path)[0] == 0


def test_ints_past_pythons_digit_limit_print_and_are_never_an_internal_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Python refuses to convert an int of more than 4,300 digits to text (and back); `2 ^ 20000`
    (6,021 digits) is well inside the `^` guard of 100,000 bits. Printing such a value, in text or
    JSON, and a missing dict key of that size, ended in `internal error: ValueError`; a literal or
    an input number that long is a located or usage error."""
    big, next_one = (str(decimal.Decimal(2**20000 + i)) for i in (0, 1))  # str() refuses them
    path = write(tmp_path, "x = indices + 2 ^ 20000;\n")
    assert run(capsys, "run", path, "--input", "ab")[:2] == (0, f"[{big}, {next_one}] (ints)\n")
    assert run(capsys, "run", path, "--input", "ab", "--json")[:2] == (0, f"[{big}, {next_one}]\n")
    path = write(tmp_path, "x = {1: 2}[indices + 2 ^ 20000];\n")
    code, _, err = run(capsys, "run", path, "--input", "a")
    assert code == 1 and err.startswith(f"{path}:1:5: error: index [ {big} ] not in dict.\n")
    path = write(tmp_path, "x = " + "1" * 5000 + ";\n")
    code, _, err = run(capsys, "run", path, "--input", "a")
    assert code == 1
    assert err.startswith(f"{path}:1:5: error: an integer literal of 5,000 digits, more than")
    path = write(tmp_path, "y = tokens_int;\n")
    code, _, err = run(capsys, "run", path, "--input", "[" + "1" * 5000 + "]")
    assert code == 2 and "argument --input: a number in this JSON list has more than" in err
    assert "internal error" not in err
