"""`prog.py:NAME` on the command line, `--tracr-compat`, and tracr's compile_rasp_to_model: loading
runs the program, NAME is an s-op or a function returning one, an unmodified tracr program loads
with the option (and only for that load), and every mistake is one located error, no traceback
(test_tracr_cli_tuples.py has the tuples and lists such a model gives)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rasp.tools.cli import main
from tests.cli_helpers import run

pytest.importorskip("transformer")

TRACR_PROGRAM = """\
from tracr.rasp import rasp
from tracr.compiler import lib
from tracr.compiler import compiling
import tracr.compiler.validating as validating


def make_shift():
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1)
    return rasp.Aggregate(back, rasp.tokens, default=None).named("shift")


hist = lib.make_hist()
frac = lib.make_frac_prevs(rasp.tokens == "x")
assert validating.validate(hist, ["a"]) == []
"""

OWN_PROGRAM = """\
from rasp import tracr as rasp

pairs = rasp.SequenceMap(lambda a, b: a + b, rasp.tokens, rasp.tokens).named("pairs")
select = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)


def needs_an_argument(x):
    return x


def broken():
    return 1 / 0


def dict_values():
    return rasp.Map(lambda t: {t: 1}, rasp.tokens)
"""


@pytest.fixture
def tracr_file(tmp_path: Path) -> str:
    path = tmp_path / "tracr_prog.py"
    path.write_text(TRACR_PROGRAM, encoding="utf-8")
    return str(path)


@pytest.fixture
def own_file(tmp_path: Path) -> str:
    path = tmp_path / "own_prog.py"
    path.write_text(OWN_PROGRAM, encoding="utf-8")
    return str(path)


def test_an_unmodified_tracr_program_loads_with_the_option(
    capsys: pytest.CaptureFixture[str], tracr_file: str
) -> None:
    code, out, err = run(
        capsys, "run", f"{tracr_file}:make_shift", "--tracr-compat", "--input", "abc"
    )
    assert (code, out, err) == (0, "[None, a, b] (strings)\n", "")
    code, out, _ = run(
        capsys, "run", f"{tracr_file}:frac", "--tracr-compat", "--input", "xax", "--json"
    )
    assert json.loads(out) == [True, 0.5, 2 / 3]
    assert not any(name == "tracr" or name.startswith("tracr.") for name in sys.modules)


def test_without_the_option_a_tracr_import_is_explained(
    capsys: pytest.CaptureFixture[str], tracr_file: str
) -> None:
    code, out, err = run(capsys, "run", f"{tracr_file}:hist", "--input", "abc")
    assert code == 1 and out == ""
    assert f"{tracr_file}:1:1: error: {tracr_file} imports 'tracr'" in err
    assert "pass --tracr-compat" in err and "Traceback" not in err


def test_compile_run_and_verify_a_python_program(
    capsys: pytest.CaptureFixture[str], tracr_file: str, tmp_path: Path
) -> None:
    model = str(tmp_path / "shift.safetensors")
    target = f"{tracr_file}:make_shift"
    code, out, err = run(
        capsys, "compile", target, "--tracr-compat", "--vocab", "abc", "--max-len", "6", "-o", model
    )
    assert code == 0, err
    assert out.startswith(f"wrote {model}: 1 layer,")
    code, out, _ = run(capsys, "run", "--model", model, "--input", "cab", "--json")
    assert json.loads(out) == [None, "c", "a"]
    code, out, err = run(
        capsys, "verify", f"{tracr_file}:frac", "--tracr-compat", "--vocab", "xa", "--max-len", "5"
    )
    assert code == 0, err
    assert "model == interpreter on 62 inputs" in out


def test_name_may_also_come_from_the_name_option(
    capsys: pytest.CaptureFixture[str], own_file: str
) -> None:
    code, out, _ = run(capsys, "run", own_file, "--name", "pairs", "--input", "ab")
    assert (code, out) == (0, "[aa, bb] (strings)\n")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("", "say which s-op of {file} to use: {file}:NAME"),
        (":pair", "{file} defines no name 'pair'"),
        (":select", "'select' in {file} is a selector, not an s-op"),
        (":needs_an_argument", "'needs_an_argument' in {file} cannot be called without arguments"),
        (":broken", "{file}:12:5: error: {file} raised ZeroDivisionError while calling broken()"),
    ],
)
def test_mistakes_are_one_located_error(
    capsys: pytest.CaptureFixture[str], own_file: str, target: str, message: str
) -> None:
    code, out, err = run(capsys, "run", own_file + target, "--input", "ab")
    assert code == 1 and out == ""
    assert message.format(file=own_file) in err
    assert "Traceback" not in err


def test_a_value_no_model_holds_is_refused_at_the_map(
    capsys: pytest.CaptureFixture[str], own_file: str, tmp_path: Path
) -> None:
    out_file = str(tmp_path / "m.safetensors")
    code, _, err = run(
        capsys,
        "compile",
        f"{own_file}:dict_values",
        "--vocab",
        "ab",
        "--max-len",
        "3",
        "-o",
        out_file,
    )
    assert code == 1
    assert f"{own_file}:16:12: error: 'rasp.Map(lambda t: {{t: 1}}, rasp.tokens)' gives" in err


def test_a_python_syntax_error_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.py"
    path.write_text("from rasp import tracr as rasp\nx = rasp.Map(lambda t: t,\n", encoding="utf-8")
    code, _, err = run(capsys, "run", f"{path}:x", "--input", "a")
    assert code == 1 and f"{path}:2:" in err and "Python syntax error" in err


def test_compile_rasp_to_model_gives_tracr_s_apply(tmp_path: Path) -> None:
    from rasp import tracr as rasp
    from rasp.tools.tracr_compiling import compile_rasp_to_model
    from rasp.tracr import lib

    model = compile_rasp_to_model(
        lib.make_sort_unique(rasp.tokens, rasp.tokens), {3, 1, 2}, 4, compiler_bos="BOS"
    )
    assert model.apply(["BOS", 3, 1, 2]).decoded == ["BOS", 1, 2, 3]
    assert model.apply(["BOS", 3, 1, "compiler_pad"]).decoded == ["BOS", 1, 3, "compiler_pad"]
    for missing in ([3, 1, 2], []):  # a BOS was added silently: 4 values for 3 tokens
        with pytest.raises(ValueError, match="apply takes the BOS token first"):
            model.apply(missing)
    model.save(tmp_path / "sort.safetensors")
    assert main(["run", "--model", str(tmp_path / "sort.safetensors"), "--input", "[2,3,1]"]) == 0


def test_apply_names_positions_in_the_tokens_it_was_given() -> None:
    """An error's position counts the BOS token (position 0), as the list given to apply does;
    the runtime alone counts from the token after it."""
    from rasp.tools.tracr_compiling import compile_rasp_to_model
    from rasp.tracr import lib

    model = compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 4, compiler_bos="BOS")
    with pytest.raises(ValueError, match='token "z" at position 2 of apply\'s tokens'):
        model.apply(["BOS", "a", "z"])
    with pytest.raises(ValueError, match='BOS token "BOS" at position 3'):
        model.apply(["BOS", "a", "b", "BOS"])
    with pytest.raises(ValueError, match="position 1 .*PAD tokens may only end the input"):
        model.apply(["BOS", "compiler_pad", "a"])
    with pytest.raises(ValueError, match="given 5 tokens after the BOS token; .* at most 4"):
        model.apply(["BOS", *"ababa"])
    assert model.apply(["BOS", "a", "b", "a", "compiler_pad"]).decoded == [
        "BOS",
        2,
        1,
        2,
        "compiler_pad",
    ]


@pytest.mark.parametrize("special", ["compiler_bos", "compiler_pad"])
def test_compile_rasp_to_model_refuses_its_bos_or_pad_in_the_vocab(special: str) -> None:
    # As tracr does: apply strips a leading BOS and trailing PADs, so a token spelled like one
    # was dropped from the input (hist of ["a", "p"] with compiler_pad "p" gave [1, "p"]).
    from rasp.tools.tracr_compiling import compile_rasp_to_model
    from rasp.tracr import lib

    with pytest.raises(ValueError, match="must not be present in the vocab. Found 'p'"):
        compile_rasp_to_model(lib.make_hist(), {"a", "p"}, 4, **{special: "p"})


def test_draw_a_python_program(
    capsys: pytest.CaptureFixture[str], tracr_file: str, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    picture = tmp_path / "shift.png"
    code, out, err = run(
        capsys,
        "draw",
        f"{tracr_file}:make_shift",
        "--tracr-compat",
        "--input",
        "abca",
        "-o",
        str(picture),
    )
    assert code == 0, err
    assert out.startswith(f"wrote {picture}") and picture.stat().st_size > 0


ALWAYS_FAILS = """
from rasp import tracr as rasp

prev = rasp.Aggregate(
    rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1), rasp.tokens, default=None
)
same = rasp.numerical(rasp.SequenceMap(lambda x, y: 1 if x == y else 0, rasp.tokens, prev))
everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
share = rasp.numerical(rasp.Aggregate(everything, same, default=0)).named("share")
"""


def test_verify_checks_against_the_program_not_the_graph_compiled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A mean over a None (position 0 has no previous token) fails in the interpreter on every
    # input of length >= 2; the graph the compiler compiles gives values there (its stand-in
    # numbers). verify counted those inputs as checked against that graph ("skipped: none");
    # they are skipped and reported, and the sweep says where the interpreter gives no value.
    path = tmp_path / "share.py"
    path.write_text(ALWAYS_FAILS, encoding="utf-8")
    code, out, err = run(capsys, "verify", f"{path}:share", "--vocab", "ab", "--max-len", "4")
    assert code == 0, err
    assert "model == interpreter on 2 inputs" in out  # "a" and "b"
    assert "skipped:    28 inputs where the interpreter fails" in out
    assert "(and with the interpreter on the 2 it gives a value for) on every one of the 30" in out


MIXED_MEAN = """\
from rasp import tracr as rasp

upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
mixed = rasp.Aggregate(upto, rasp.Map(lambda t: 1 if t == "a" else "b", rasp.tokens))
"""


def test_a_mean_of_numbers_and_strings_is_refused_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Several keys may be selected and the values mix ints with strings: the refusal read the
    # aggregate's `text`, which aggregates do not have (an AttributeError traceback).
    path = tmp_path / "mixed.py"
    path.write_text(MIXED_MEAN, encoding="utf-8")
    model = str(tmp_path / "m.safetensors")
    code, out, err = run(
        capsys, "compile", f"{path}:mixed", "--vocab", "ab", "--max-len", "5", "-o", model
    )
    assert code == 1 and out == "" and "Traceback" not in err
    assert f"{path}:4:9: error: 'rasp.Aggregate(upto, rasp.Map(" in err
    assert "may average numbers and copy 'b'" in err


def test_a_name_from_a_tracr_module_compat_lacks_is_explained(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `from tracr.compiler import rasp_to_graph` was "an error in the Python program itself"
    program = tmp_path / "graph.py"
    program.write_text(
        "from tracr.rasp import rasp\nfrom tracr.compiler import rasp_to_graph\nw = rasp.tokens\n"
    )
    code, _, err = run(capsys, "run", f"{program}:w", "--tracr-compat", "--input", "ab")
    assert code == 1, err
    assert "imports 'tracr.compiler.rasp_to_graph', a part of tracr that --tracr-compat" in err
    assert "graph.py:2:1" in err and "Traceback" not in err


def test_an_unknown_name_lists_the_files_sops(capsys: pytest.CaptureFixture[str]) -> None:
    # `library.py:make_hist` said only "NAME is a top-level name of the file"
    library = Path(__file__).resolve().parents[2] / "programs" / "tracr" / "library.py"
    code, out, err = run(capsys, "run", f"{library}:make_hist", "--input", "ab")
    assert (code, out) == (1, "")
    assert f"{library} defines no name 'make_hist'" in err
    assert "hint: NAME is an s-op or a function returning one (in this file: length, " in err


@pytest.mark.parametrize("command", ["run", "compile", "verify", "draw"])
def test_the_option_on_a_rasp_program_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """A .rasp program (or one on standard input) loads no Python: the option was ignored without a
    word there, while `run --model` refused it."""
    program = tmp_path / "p.rasp"
    program.write_text("x = tokens;\n")
    sizes = ["--vocab", "ab", "--max-len", "2"]
    options = {
        "run": ["--input", "ab"],
        "compile": [*sizes, "-o", str(tmp_path / "m.safetensors")],
        "verify": sizes,
        "draw": [*sizes, "--input", "ab", "-o", str(tmp_path / "d.png")],
    }
    for target in (str(program), "-"):
        code, out, err = run(capsys, command, target, *options[command], "--tracr-compat")
        assert code == 2 and not out, (command, target, err)
        assert err.endswith(
            f"rasp {command}: error: --tracr-compat applies only to PROG.py:NAME; {target} is a "
            "RASP program\n"
        ), err
