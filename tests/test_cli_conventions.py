"""The command line follows the conventions of command-line tools (issue 11): `-` is standard
input, a bad flag shows its subcommand's usage, files written with the user's umask, tokens read the
same way everywhere and shown unambiguously (test_cli_output_modes.py has `--quiet`/`--verbose` and
`--json`, test_cli_help.py the examples in `--help`)."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.cli import main
from tests.cli_helpers import has_matplotlib, run

ROOT = Path(__file__).resolve().parents[1]
REVERSE = (ROOT / "programs" / "reverse.rasp").read_text()


def stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


# ------------------------------------------------------------------------------------------------
# `-` reads standard input


def test_dash_runs_the_program_on_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin(monkeypatch, REVERSE.encode())
    assert run(capsys, "run", "-", "--input", "abc") == (0, "[c, b, a] (strings)\n", "")


def test_dash_says_it_reads_a_typed_program_and_how_it_ends(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rasp run -` at a terminal waited without a word, as if it hung; piped, nothing is added."""

    class Typed(io.TextIOWrapper):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(sys, "stdin", Typed(io.BytesIO(REVERSE.encode()), encoding="utf-8"))
    assert run(capsys, "run", "-", "--input", "abc") == (
        0,
        "[c, b, a] (strings)\n",
        "reading the program from standard input (Ctrl-D ends it)\n",
    )
    monkeypatch.setattr(sys, "stdin", Typed(io.BytesIO(REVERSE.encode()), encoding="utf-8"))
    assert run(capsys, "run", "-", "--input", "abc", "--quiet")[2] == ""


def test_errors_in_standard_input_are_located_there(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin(monkeypatch, b"x = select(indices, indices, ==;\n")
    code, _, err = run(capsys, "run", "-", "--input", "abc")
    assert code == 1 and err.startswith("<stdin>:1:32: error: expected ')' to close 'select('")
    stdin(monkeypatch, b"x = \xff;\n")
    code, _, err = run(capsys, "run", "-", "--input", "abc")
    assert code == 1 and err.startswith("<stdin>:1:5: error: the program is not UTF-8 text")


def test_dash_compiles_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stdin(monkeypatch, REVERSE.encode())
    out_path = tmp_path / "r.safetensors"
    code, out, _ = run(
        capsys, "compile", "-", "--vocab", "ab", "--max-len", "3", "-o", str(out_path)
    )
    assert code == 0 and out.startswith(f"wrote {out_path}")
    code, out, _ = run(capsys, "show", str(out_path), "--json")
    assert json.loads(out)["program"]["file"] == "<stdin>"


def test_the_repl_refuses_dash(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "repl", "-")
    assert (code, out) == (2, "")
    assert "rasp repl: error: argument FILE.rasp '-'" in err


@pytest.mark.parametrize(("target", "command"), [("p.py", "p.py:NAME"), ("p.py:rev", "p.py:rev")])
def test_the_repl_refuses_a_python_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    target: str, command: str,
) -> None:  # fmt: skip
    # it read the Python as RASP (a screen of syntax errors), or said `cannot read p.py:rev`
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.py").write_text("from rasp import tracr as rasp\nrev = rasp.tokens\n")
    code, out, err = run(capsys, "repl", target)
    assert (code, out) == (2, "")
    assert (
        f"the REPL loads RASP programs, and p.py is Python; run its s-op with `rasp run {command}"
        in err
    )


def test_a_python_program_with_an_empty_name_asks_for_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `p.py:` was read as the file `p.py:` (cannot read p.py:: No such file or directory)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.py").write_text("from rasp import tracr as rasp\nrev = rasp.tokens\n")
    code, out, err = run(capsys, "run", "p.py:", "--input", "ab")
    assert (code, out) == (1, "")
    assert err.startswith("error: say which s-op of p.py to use: p.py:NAME")


# ------------------------------------------------------------------------------------------------
# Usage errors: the subcommand's usage, the argument and its value


def test_an_unknown_flag_shows_the_subcommands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", "x.rasp", "--input", "abc", "--bogus")
    assert (code, out) == (2, "")
    assert err.startswith("usage: rasp run ")
    assert err.rstrip().endswith("rasp run: error: unrecognized arguments: --bogus")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # a misspelt required option said only `the following arguments are required: --max-len`
        (
            ["compile", "p.rasp", "--vocab", "abc", "--maxlen", "5", "-o", "m.safetensors"],
            "rasp compile: error: unrecognized arguments: --maxlen (did you mean --max-len?)",
        ),
        (
            ["compile", "p.rasp", "--vocab", "abc", "--max_len", "5", "-o", "m.safetensors"],
            "rasp compile: error: unrecognized arguments: --max_len (did you mean --max-len?)",
        ),
        (
            ["verify", "p.rasp", "--vocabs=abc", "--max-len", "5"],
            "rasp verify: error: unrecognized arguments: --vocabs (did you mean --vocab?)",
        ),
        # another command's option says whose it is
        (
            ["run", "p.rasp", "--input", "abc", "--vocab", "abc"],
            "rasp run: error: unrecognized arguments: --vocab (--vocab is an option of rasp "
            "compile, verify, draw, not of rasp run)",
        ),
        (
            ["verify", "p.rasp", "--vocab", "abc", "--max-len", "4", "--causal"],
            "rasp verify: error: unrecognized arguments: --causal (--causal is an option of rasp "
            "compile: compile with it, then give the model, `rasp verify --model M.safetensors`)",
        ),
        (
            ["verify", "p.rasp", "--vocab", "abc", "--max-len", "4", "--input", "abc"],
            "rasp verify: error: unrecognized arguments: --input (--input is an option of rasp "
            "run, draw, not of rasp verify)",
        ),
    ],
)
def test_a_misspelt_or_misplaced_option_is_named_with_the_right_one(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.rstrip().endswith(message)


def test_an_abbreviated_option_and_a_value_after_double_dash_are_left_to_argparse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("p.rasp").write_text("x = tokens;\n")
    assert run(capsys, "run", "p.rasp", "--inp", "ab")[:2] == (0, "[a, b] (strings)\n")
    code, _, err = run(capsys, "compile", "p.rasp", "--vocab", "ab", "--max", "3", "-o", "m")
    assert code == 2 and "ambiguous option: --max could match --max-len, --max-params" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--vocab", ""], "argument --vocab '': is empty"),
        (["--vocab", "aba"], "argument --vocab 'aba': lists the token a twice"),
        (
            ["--vocab", '["x","y","x"]'],
            'argument --vocab \'["x","y","x"]\': lists the token x twice',
        ),
        (["--vocab", '[1,"1",1]'], "argument --vocab '[1,\"1\",1]': lists the token 1 twice"),
        (["--vocab", '["1","1"]'], 'argument --vocab \'["1","1"]\': lists the token "1" twice'),
        (["--vocab", "[NaN,1]"], "argument --vocab: the token NaN in '[NaN,1]' is not a finite"),
        (
            ["--vocab", "[-Infinity]"],
            "argument --vocab: the token -Infinity in '[-Infinity]' is not",
        ),
    ],
)
def test_vocabulary_errors_are_reported_at_the_argument(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    code, out, err = run(capsys, "compile", str(program), "--max-len", "3", "-o", "m", *argv)
    assert (code, out) == (2, "")
    assert f"rasp compile: error: {message}" in err
    assert str(program) not in err  # not located in the program: the argument is wrong


@pytest.mark.parametrize(
    ("vocab", "words", "chars"),
    [
        ("ab,c", '["ab","c"]', '["a","b",",","c"]'),
        ("a,b,c", '["a","b","c"]', '["a",",","b","c"]'),  # (was: the token , twice)
        ("1, 2", '["1","2"]', '["1",","," ","2"]'),
    ],
)
def test_a_comma_between_vocabulary_words_is_refused_with_the_lists_to_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, vocab: str, words: str, chars: str
) -> None:
    """Text is split into characters, so --vocab 'ab,c' compiled the tokens a, b, "," and c
    without a word: a model without the token `ab` that was likely meant. Refused, with the JSON
    list of the words and the one of the characters."""
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    out_file = tmp_path / "m.safetensors"
    code, _, err = run(
        capsys, "compile", str(program), "--vocab", vocab, "--max-len", "3", "-o", str(out_file)
    )
    assert code == 2 and not out_file.exists()
    assert "a comma separates no tokens" in err
    assert f"--vocab '{words}'" in err and f"--vocab '{chars}'" in err


@pytest.mark.parametrize("vocab", ["(,)", '["a",",","b"]'])
def test_a_comma_of_punctuation_or_in_a_json_list_is_a_token(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, vocab: str
) -> None:
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    out_file = tmp_path / "m.safetensors"
    argv = ["--vocab", vocab, "--max-len", "2", "-o", str(out_file), "-q"]
    assert run(capsys, "compile", str(program), *argv) == (0, "", "")


def test_tokens_of_different_json_types_stay_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    model_path = tmp_path / "m.safetensors"
    vocab = '[1,"1",true,1.0]'
    assert run(
        capsys,
        "compile",
        str(program),
        "--vocab",
        vocab,
        "--max-len",
        "3",
        "-o",
        str(model_path),
        "-q",
    ) == (0, "", "")
    code, out, _ = run(capsys, "show", str(model_path))
    assert code == 0 and 'vocab:       1 "1" true 1.0  (bos id 4, pad id 5)' in out
    # `tokens` is tokens_str: every token reaches the program as its str(), as --help says.
    code, out, _ = run(
        capsys, "run", "--model", str(model_path), "--input", '[1,"1",true]', "--json"
    )
    assert (code, out) == (0, '["True", "1", "1"]\n')
    code, out, _ = run(capsys, "run", str(program), "--input", '[1,"1",true]', "--json")
    assert (code, out) == (0, '["True", "1", "1"]\n')


def test_draw_keeps_tokens_of_different_types_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    png = tmp_path / "d.png"
    code, out, err = run(capsys, "draw", str(program), "--input", "[1,true,1.0]", "-o", str(png))
    assert (code, err) == (0, "") and out.startswith(f"wrote {png}")


def test_a_wrong_name_is_an_error_of_the_name_argument(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "r.rasp"
    program.write_text(REVERSE)
    code, _, err = run(capsys, "run", str(program), "--input", "ab", "--name", "revrse")
    assert code == 1 and err.startswith(
        f"error: argument --name 'revrse': {program} defines no name"
    )


def test_a_wrong_name_lists_the_programs_sops(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the hint said only "pass --name with a name the program assigns"; a close match is looked
    # for among the program's s-ops first (`sortd` -> sorted, not the prelude's sort)
    program = tmp_path / "s.rasp"
    program.write_text("up = indices + 1;\nsorted = aggregate(select(indices, indices, ==), up);\n")
    code, _, err = run(capsys, "run", str(program), "--input", "ab", "--name", "xyz")
    assert code == 1
    assert "hint: pass --name with a name the program assigns (its s-ops: sorted, up)" in err
    code, _, err = run(capsys, "run", str(program), "--input", "ab", "--name", "sortd")
    assert code == 1 and "hint: did you mean 'sorted'?" in err


# ------------------------------------------------------------------------------------------------
# Files and pipes


def test_written_files_follow_the_umask(tmp_path: Path, reverse_model: Path) -> None:
    program = str(ROOT / "programs" / "reverse.rasp")
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        old = os.umask(mask)
        try:
            out_path = tmp_path / f"m{mask:o}.safetensors"
            assert (
                main(
                    [
                        "compile",
                        program,
                        "--vocab",
                        "ab",
                        "--max-len",
                        "3",
                        "-o",
                        str(out_path),
                        "-q",
                    ]
                )
                == 0
            )
            assert stat.S_IMODE(out_path.stat().st_mode) == mode, oct(mask)
            folder = tmp_path / f"tl{mask:o}"
            assert (
                main(
                    [
                        "export",
                        str(reverse_model),
                        "--to",
                        "transformer-lens",
                        "-o",
                        str(folder),
                        "-q",
                    ]
                )
                == 0
            )
            for written in folder.iterdir():
                assert stat.S_IMODE(written.stat().st_mode) == mode, (written, oct(mask))
        finally:
            os.umask(old)
    existing = tmp_path / "m22.safetensors"
    existing.chmod(0o640)  # rewriting a file keeps its mode, as `open(path, "w")` would
    assert (
        main(["compile", program, "--vocab", "ab", "--max-len", "3", "-o", str(existing), "-q"])
        == 0
    )
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640


def test_a_closed_pipe_ends_the_command_quietly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rasp.tools import cli

    def broken(args: Any) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_cmd_run_program", broken)
    monkeypatch.setattr(cli, "silence_stdout", lambda: None)
    assert run(capsys, "run", "x.rasp", "--input", "a") == (141, "", "")


def test_the_repl_and_its_draw_keep_tokens_of_different_types_apart(tmp_path: Path) -> None:
    """One rule everywhere: 1, true and 1.0 are three tokens (Python's 1 == True == 1.0 is not)."""
    from rasp.interpreter import load_file
    from rasp.tools.draw import draw_for_repl
    from rasp.tools.repl import ReplSession

    session = ReplSession()
    session.feed(REVERSE)
    printed = session.feed(":compile reverse [1, true, 1.0] 3")
    assert printed.endswith("vocab [1, true, 1.0], max_len 3"), printed
    # only the second 1 repeats a token (a repeat is refused, as rasp compile --vocab refuses it)
    assert session.feed(":compile reverse [1, true, 1.0, 1] 3") == (
        "error: VOCAB: lists the token 1 twice; list each token once"
    )
    if has_matplotlib():
        sop = load_file(ROOT / "programs" / "reverse.rasp").get("reverse")
        assert draw_for_repl(sop, [1, True, 1.0], tmp_path / "d.png").startswith("wrote")


# ------------------------------------------------------------------------------------------------
# Idle OpenMP threads sleep


def test_the_command_line_lets_idle_openmp_threads_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    # spinning threads made 2-thread runs (verify's) 100x slower on a busy machine; a user's
    # own setting wins
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert main(["--version"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert main(["--version"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["compile", "programs/reverse.rasp", "--vocab", "ab", "--max-len", "3", "-o", ""], "-o"),
        (["export", "M.safetensors", "--to", "transformer-lens", "-o", ""], "-o"),
        (["draw", "M.safetensors", "--input", "ab", "-o", "d.png", "--dot", ""], "--dot"),
    ],
)
def test_an_empty_output_path_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], option: str
) -> None:
    """`-o ''` (an unset shell variable): export wrote into the current directory."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err.rstrip().endswith(
        f"error: argument {option}{'/--output' if option == '-o' else ''}: an empty path names "
        "no file"
    )


def test_a_draw_statement_that_a_command_ignores_is_warned_about(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `rasp run` of a file with `draw(rev, "abc");` printed the result alone: no picture, no word
    monkeypatch.chdir(tmp_path)
    Path("d.rasp").write_text(
        "rev = aggregate(select(indices, length - indices - 1, ==), tokens);\n"
        'draw(rev, "abc");\ndraw(rev);\n'
    )
    code, out, err = run(capsys, "run", "d.rasp", "--input", "abc")
    assert (code, out) == (0, "[c, b, a] (strings)\n")
    assert err == (
        "warning: draw(...) at d.rasp:2:1 draws only in the REPL (`rasp repl d.rasp`); this "
        "command ignores all 2. `rasp draw` pictures a compiled model\n"
    )
    assert run(capsys, "run", "d.rasp", "--input", "abc", "-q") == (0, "[c, b, a] (strings)\n", "")


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "programs/reverse.rasp", "--input", "abc", "--input", "ab"],
        ["compile", "programs/reverse.rasp", "--vocab", "abc", "--max-len", "4", "-o", "a",
         "--output", "b"],
    ],
)  # fmt: skip
def test_an_option_given_twice_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    # argparse kept the last value: `-o a.safetensors -o b.safetensors` wrote b alone, silently
    root = Path(__file__).resolve().parents[1]
    argv = [str(root / a) if a.startswith("programs/") else a for a in argv]
    argv = [str(tmp_path / a) if a in ("a", "b") else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", err
    assert err.rstrip().endswith("given twice; give it once")
    assert not (tmp_path / "b").exists()
