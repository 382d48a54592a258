"""The `rasp` command line, called in-process through `main(argv)`, plus one subprocess test."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.cli import main
from tests.cli_helpers import run

REVERSE = """\
flip = select(indices, length - indices - 1, ==);
reverse = aggregate(flip, tokens);
"""
KINDS = """\
ints = indices * 2;
floats = indices / 4;
strs = tokens;
bools = tokens == "a";
n = 3;
sel = select(indices, indices, <);
grid = select(indices, indices, <)("ab");
seq = tokens("ab");
"""


# ------------------------------------------------------------------------------------------------
# run FILE


def test_run_prints_display_form_and_type(capsys: pytest.CaptureFixture[str], program: Any) -> None:
    assert run(capsys, "run", program(REVERSE), "--input", "abc") == (
        0,
        "[c, b, a] (strings)\n",
        "",
    )


def test_run_with_json_list_input(capsys: pytest.CaptureFixture[str], program: Any) -> None:
    code, out, _ = run(capsys, "run", program(REVERSE), "--input", '["the","cat","sat"]', "--json")
    assert code == 0
    assert json.loads(out) == ["sat", "cat", "the"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ints", [0, 2, 4]),
        ("floats", [0.0, 0.25, 0.5]),
        ("strs", ["a", "b", "a"]),
        ("bools", [True, False, True]),
    ],
)
def test_json_keeps_value_types(
    capsys: pytest.CaptureFixture[str], program: Any, name: str, expected: list[Any]
) -> None:
    code, out, err = run(capsys, "run", program(KINDS), "--input", "aba", "--name", name, "--json")
    assert (code, err) == (0, "")
    assert out.count("\n") == 1  # exactly one JSON value
    parsed = json.loads(out)
    assert parsed == expected
    assert [type(v) for v in parsed] == [
        type(v) for v in expected
    ]  # 0.0 stays a float, True a bool


def test_name_defaults_to_last_assigned(capsys: pytest.CaptureFixture[str], program: Any) -> None:
    path = program(REVERSE + "shouted = tokens;\n")
    assert run(capsys, "run", path, "--input", "ab")[1] == "[a, b] (strings)\n"
    assert run(capsys, "run", path, "--input", "ab", "--name", "reverse")[1] == "[b, a] (strings)\n"


def test_unknown_name_suggests_a_close_one(
    capsys: pytest.CaptureFixture[str], program: Any
) -> None:
    code, out, err = run(capsys, "run", program(REVERSE), "--input", "ab", "--name", "revrse")
    assert (code, out) == (1, "")
    assert "error:" in err and "'revrse'" in err
    assert "hint: did you mean 'reverse'?" in err


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("sel", "is a selector"),
        ("n", "is a number (3)"),
        ("grid", "is a selector's value on one input (a matrix)"),  # not "an ndarray"
        ("seq", "is an s-op's value on one input (a list)"),  # not "a SeqValue"
    ],
)
def test_name_that_is_not_an_sop(
    capsys: pytest.CaptureFixture[str], program: Any, name: str, words: str
) -> None:
    code, _, err = run(capsys, "run", program(KINDS), "--input", "ab", "--name", name)
    assert code == 1
    assert f"'{name}' {words}, not an s-op" in err


def test_program_without_names(capsys: pytest.CaptureFixture[str], program: Any) -> None:
    code, _, err = run(capsys, "run", program("3;\n"), "--input", "ab")
    assert code == 1 and "assigns no name" in err
    # the name the hint suggests can be assigned (it suggested `out`, a reserved word)
    assert "(result = ...;)" in err
    code, out, _ = run(capsys, "run", program("result = tokens;\n"), "--input", "ab")
    assert code == 0 and out.strip() == "[a, b] (strings)"


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "is empty, so"), ("\n  \n", "is empty, so"), ("# to do\n", "is empty but for comments")],
)
def test_an_empty_program_says_it_is_empty(
    capsys: pytest.CaptureFixture[str], program: Any, text: str, said: str
) -> None:
    # an empty file was told it "assigns no name", as if it held statements
    path = program(text)
    for command in (
        ["run", path, "--input", "ab"],
        ["verify", path, "--vocab", "ab", "--max-len", "3"],
    ):
        code, _, err = run(capsys, *command)
        assert code == 1 and said in err and "assigns no name" not in err, err
        assert "hint: write the program in it" in err


def test_a_program_of_a_def_alone_is_told_to_apply_it(
    capsys: pytest.CaptureFixture[str], program: Any
) -> None:
    # a first program that writes the function and forgets to call it
    flip = "def rev(x) { return aggregate(select(indices, length - indices - 1, ==), x); }\n"
    code, _, err = run(capsys, "run", program(flip), "--input", "ab")
    assert code == 1 and "assigns no name" in err
    assert "hint: it defines rev(x): apply it and name the result, result = rev(tokens);" in err
    code, out, _ = run(capsys, "run", program(flip + "result = rev(tokens);\n"), "--input", "ab")
    assert code == 0 and out.strip() == "[b, a] (strings)"


def test_program_ending_in_an_expression_outputs_it(
    capsys: pytest.CaptureFixture[str], program: Any
) -> None:
    # The original binds every expression statement to `out`: that is the last name assigned.
    source = "flip = select(indices, length - indices - 1, ==);\naggregate(flip, tokens);\n"
    assert run(capsys, "run", program(source), "--input", "abc", "--json") == (
        0,
        '["c", "b", "a"]\n',
        "",
    )


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "run", str(tmp_path / "nope.rasp"), "--input", "ab")
    assert (code, out) == (1, "")
    assert err.startswith("error: cannot read") and "nope.rasp" in err
    assert "Traceback" not in err


def test_syntax_error_is_located_with_a_caret(
    capsys: pytest.CaptureFixture[str], program: Any
) -> None:
    path = program("x = indices;\ny = select(indices, indices, =);\n")
    code, out, err = run(capsys, "run", path, "--input", "ab")
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:2:") and ": error: " in lines[0]
    assert lines[1] == "    y = select(indices, indices, =);"
    assert lines[2].strip() == "^"


def test_evaluation_error_on_the_input(capsys: pytest.CaptureFixture[str], program: Any) -> None:
    # The program fails on this input (exit 1); an input it cannot read at all is exit 2
    # (tests/test_cli_located_errors.py).
    code, _, err = run(capsys, "run", program("t = 6 / (indices - 1);\n"), "--input", "ab")
    assert code == 1
    assert ":1:5: error: division by zero" in err


def test_empty_input_is_an_error_of_the_argument(
    capsys: pytest.CaptureFixture[str], program: Any
) -> None:
    code, _, err = run(capsys, "run", program(REVERSE), "--input", "")
    assert code == 2
    assert "rasp run: error: argument --input '': is empty" in err


@pytest.mark.parametrize(
    "bad", ["[1,", '["a", ]', "[null]", "[[1]]", "['a']", "[NaN,1]", "[1,Infinity]", "[1e999]"]
)
def test_bad_input_json_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], program: Any, bad: str
) -> None:
    code, out, err = run(capsys, "run", program(REVERSE), "--input", bad)
    assert (code, out) == (2, "")
    assert "rasp run: error: argument --input:" in err


# ------------------------------------------------------------------------------------------------
# Usage errors (exit 2, argparse's message)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-q"], "required"),  # (`rasp` alone is `rasp repl`)
        (["frobnicate"], "invalid choice"),
        (["run", "x.rasp"], "--input"),
        (["run", "--input", "ab"], "exactly one"),
        (["run", "x.rasp", "--model", "m.safetensors", "--input", "ab"], "exactly one"),
        (
            ["run", "x.rasp", "--input", "ab", "--device", "cuda"],
            "--device applies only to --model",
        ),
        (["compile", "x.rasp", "--vocab", "ab", "--max-len", "0", "-o", "m"], "at least 1"),
        (["compile", "x.rasp", "--vocab", "ab", "--max-len", "five", "-o", "m"], "not an integer"),
        (["compile", "x.rasp", "--max-len", "3", "-o", "m"], "--vocab"),
        (["export", "m.safetensors", "--to", "onnx", "-o", "x"], "invalid choice"),
        (
            ["verify", "x.rasp", "--vocab", "ab", "--max-len", "3", "--samples", "-1"],
            "must not be negative",
        ),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert "usage: rasp" in err and message in err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", "--help")
    assert code == 0
    assert "--json" in out and "[o, l, l, e, h] (strings)" in out


# ------------------------------------------------------------------------------------------------
# Model commands: arguments reach `rasp.tools.model_commands` parsed; failures never show a traceback


@pytest.fixture
def fake_model_commands(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    calls: dict[str, Any] = {}
    module = types.ModuleType("rasp.tools.model_commands")
    for handler in (
        "cmd_compile",
        "cmd_run_model",
        "cmd_verify",
        "cmd_show",
        "cmd_draw",
        "cmd_export",
    ):

        def record(args: Any, _name: str = handler) -> int:
            calls[_name] = args
            return 0

        setattr(module, handler, record)
    monkeypatch.setitem(sys.modules, "rasp.tools.model_commands", module)
    return calls


def test_model_command_arguments(fake_model_commands: dict[str, Any]) -> None:
    assert (
        main(["compile", "p.rasp", "--vocab", "abc", "--max-len", "5", "-o", "m.st", "--causal"])
        == 0
    )
    args = fake_model_commands["cmd_compile"]
    assert (args.file, args.vocab, args.max_len, args.name, args.output, args.causal) == (
        "p.rasp",
        ["a", "b", "c"],
        5,
        None,
        "m.st",
        True,
    )
    assert main(["run", "--model", "m.st", "--input", "[1,2]", "--json", "--device", "cuda"]) == 0
    args = fake_model_commands["cmd_run_model"]
    assert (args.model, args.input, args.json, args.device, args.file) == (
        "m.st",
        [1, 2],
        True,
        "cuda",
        None,
    )
    assert (
        main(
            ["verify", "p.rasp", "--vocab", '["x","y"]', "--max-len", "3", "--exhaustive-len", "2"]
        )
        == 0
    )
    args = fake_model_commands["cmd_verify"]
    assert (
        args.vocab,
        args.exhaustive_len,
        args.samples,
        args.seed,
        args.model,
        args.device,
        args.json,
    ) == (["x", "y"], 2, 1000, 0, None, "cpu", False)
    assert main(["show", "m.st", "--json"]) == 0
    assert (fake_model_commands["cmd_show"].model, fake_model_commands["cmd_show"].json) == (
        "m.st",
        True,
    )
    assert (
        main(["draw", "p.rasp", "--input", "ab", "-o", "o.png", "--dot", "o.dot", "--max-len", "4"])
        == 0
    )
    args = fake_model_commands["cmd_draw"]
    assert (
        args.target,
        args.input,
        args.output,
        args.dot,
        args.vocab,
        args.max_len,
        args.name,
    ) == ("p.rasp", ["a", "b"], "o.png", "o.dot", None, 4, None)
    assert main(["export", "m.st", "--to", "transformer-lens", "-o", "out"]) == 0
    args = fake_model_commands["cmd_export"]
    assert (args.model, args.to, args.output) == ("m.st", "transformer-lens", "out")


def test_model_commands_missing_from_the_build(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rasp.tools.model_commands", None)  # makes the import fail
    code, _, err = run(capsys, "show", "m.safetensors")
    assert (code, err) == (1, "error: show is not available in this build\n")


def test_unexpected_exception_is_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_model_commands: dict[str, Any],
) -> None:
    def boom(args: Any) -> int:
        raise ValueError("boom")

    monkeypatch.setattr(sys.modules["rasp.tools.model_commands"], "cmd_show", boom)
    monkeypatch.delenv("RASP_DEBUG", raising=False)
    code, _, err = run(capsys, "show", "m.st")
    assert code == 1
    assert err.startswith("internal error: ValueError: boom") and "Traceback" not in err
    assert err.count("\n") == 1 and "report" in err
    monkeypatch.setenv("RASP_DEBUG", "1")
    assert "Traceback" in run(capsys, "show", "m.st")[2]


def test_ctrl_c_exits_130(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_model_commands: dict[str, Any],
) -> None:
    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys.modules["rasp.tools.model_commands"], "cmd_show", interrupted)
    assert run(capsys, "show", "m.st")[0] == 130
    # under --json, an interrupted command printed nothing on stdout: a consumer read no object
    code, out, err = run(capsys, "show", "m.st", "--json")
    data = json.loads(out)
    assert code == 130 and data["ok"] is False and data["error"] == "interrupted"
    assert err == "interrupted\n"
    assert run(capsys, "show", "m.st")[1] == ""  # (without --json, nothing on stdout)


# ------------------------------------------------------------------------------------------------
# repl


def test_repl_reads_piped_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, program: Any
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('reverse("abc");\n'))
    code, out, _ = run(capsys, "repl", program(REVERSE))
    assert code == 0
    assert out.splitlines()[2:] == [
        "     selector: flip",
        "     s-op: reverse",
        "\t =  [c, b, a] (strings)",
    ]


def test_rasp_alone_is_the_repl(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as the original's launcher (rasp.sh) starts its REPL; it was a usage error (exit 2)
    monkeypatch.setattr(sys, "stdin", io.StringIO("x = 1;\n"))
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("rasp-forge ") and out.splitlines()[2:] == [
        "    value: x =  1"
    ]
    code, out, err = run(capsys, "-q")  # an option without a command is still a usage error
    assert code == 2 and "required: COMMAND" in err
    code, out, err = run(capsys, "--help")  # the usage line says the command may be left out
    assert code == 0 and out.splitlines()[0] == "usage: rasp [-h] [--version] [COMMAND ...]"


def test_repl_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "repl", str(tmp_path / "nope.rasp"))
    assert (code, out) == (1, "")
    assert err.startswith("error: cannot read")


def test_repl_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # in the words of `rasp run DIR` (it said Python's "Is a directory")
    code, out, err = run(capsys, "repl", str(tmp_path))
    assert (code, out, err) == (1, "", f"error: cannot read {tmp_path}: it is a directory\n")


# ------------------------------------------------------------------------------------------------
# The real entry point, once


@pytest.mark.parametrize("module", ["rasp", "rasp.tools.cli"])
def test_python_dash_m_rasp(program: Any, module: str) -> None:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", module, "run", program(REVERSE), "--input", '["x","y"]', "--json"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, '["y", "x"]\n', "")
