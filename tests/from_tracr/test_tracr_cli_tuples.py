"""Tuples and lists a tracr program's model gives on the command line: tuples travel as marked
string tokens and come back as tuples (run, show, verify, the model file's `output.tuples`), lists
are labelled and named by their repr, and a marked token is refused as a token typed in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run

pytest.importorskip("transformer")


PAIRS = """\
from rasp import tracr as rasp

pairs = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices)
"""


def test_a_model_gives_tuples_as_tuples(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Tuples travel through the graph as interned string tokens ("\\x00('a', 0)"), and the model
    # gave those tokens back, NUL and all, where the program (and tracr's model) gives tuples.
    from rasp import tracr as rasp
    from rasp.tools.tracr_compiling import compile_rasp_to_model

    path = tmp_path / "pairs.py"
    path.write_text(PAIRS, encoding="utf-8")
    model = str(tmp_path / "pairs.safetensors")
    code, out, err = run(
        capsys, "compile", f"{path}:pairs", "--vocab", "ab", "--max-len", "4", "-o", model
    )
    assert code == 0, err
    assert "\\x00" not in out and "\x00" not in out  # the certificate names values by their repr
    code, out, _ = run(capsys, "run", "--model", model, "--input", "aba")
    assert (code, out) == (0, "[('a', 0), ('b', 1), ('a', 2)] (tuples)\n")
    code, out, _ = run(capsys, "run", f"{path}:pairs", "--input", "aba")
    assert (code, out) == (0, "[('a', 0), ('b', 1), ('a', 2)] (tuples)\n")
    code, out, _ = run(capsys, "run", "--model", model, "--input", "ab", "--json")
    assert json.loads(out) == [["a", 0], ["b", 1]]

    lists = rasp.Map(lambda t: [t, t], rasp.tokens)
    tracr_model = compile_rasp_to_model(lists, {"a", "b"}, 3, compiler_bos="BOS")
    assert tracr_model.apply(["BOS", "a", "b"]).decoded == ["BOS", ["a", "a"], ["b", "b"]]
    pairs = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices)
    tracr_model = compile_rasp_to_model(pairs, {"a", "b"}, 3, compiler_bos="BOS")
    assert tracr_model.metadata["output"]["tuples"] is True
    assert tracr_model.apply(["BOS", "b", "a"]).decoded == ["BOS", ("b", 0), ("a", 1)]


def _metadata(path: str) -> dict:
    from safetensors import safe_open

    with safe_open(path, "np") as f:
        return json.loads(f.metadata()["rasp_forge"])


def test_a_tracr_models_file_says_its_marked_strings_are_tuples(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `output.tuples` (docs/format.md): the compile of a tracr program whose output can hold a
    # tuple records it, under the certificate (the reach's `decoding` digest), and the reach
    # rebuilt from the program given to `verify` still equals the file's
    path = tmp_path / "pairs.py"
    path.write_text(PAIRS + "plain = rasp.Map(lambda t: t + '!', rasp.tokens)\n", encoding="utf-8")
    model = str(tmp_path / "pairs.safetensors")
    code, _, err = run(
        capsys, "compile", f"{path}:pairs", "--vocab", "ab", "--max-len", "3", "-o", model
    )
    assert code == 0, err
    assert _metadata(model)["output"]["tuples"] is True
    code, out, err = run(
        capsys, "verify", f"{path}:pairs", "--model", model, "--exhaustive-len", "3", "--json"
    )
    assert code == 0, err
    certificate = json.loads(out)["certificate"]
    assert certificate["ok"] is True
    assert any(
        "rebuilt from" in line and "equal to the file's" in line for line in certificate["lines"]
    )
    # an output that holds no tuple records nothing: such a file is what it was before
    plain = str(tmp_path / "plain.safetensors")
    code, _, err = run(
        capsys, "compile", f"{path}:plain", "--vocab", "ab", "--max-len", "3", "-o", plain
    )
    assert code == 0, err
    assert "tuples" not in _metadata(plain)["output"]


def test_a_tracr_file_written_before_output_tuples_shows_its_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file compiled before `output.tuples` (as the compiler wrote it then: no field, the
    # decoding digest of the entry without it) is read as its strings say: a tuple's marked token
    # is shown as that string, not unboxed (docs/format.md); recompiling gives the tuples back.
    from compiler import assemble

    path = tmp_path / "pairs.py"
    path.write_text(PAIRS, encoding="utf-8")
    model = str(tmp_path / "old.safetensors")
    metadata = assemble.model_metadata
    monkeypatch.setattr(
        assemble,
        "model_metadata",
        lambda *args: metadata(*args[:8]),  # without `tuples`
    )
    code, _, err = run(
        capsys, "compile", f"{path}:pairs", "--vocab", "ab", "--max-len", "3", "-o", model
    )
    assert code == 0, err
    monkeypatch.undo()
    assert "tuples" not in _metadata(model)["output"]
    code, out, _ = run(capsys, "run", "--model", model, "--input", "ab", "--json")
    assert (code, json.loads(out)) == (0, ["\x00('a', 0)", "\x00('b', 1)"])
    code, out, err = run(
        capsys, "verify", f"{path}:pairs", "--model", model, "--exhaustive-len", "3", "--json"
    )
    # the outputs still equal the program's (both the marked strings), but the reach rebuilt from
    # the program decodes tuples: not proved, with the reason and what to do
    report = json.loads(out)
    assert (code, report["failures"], report["checked"]) == (1, 0, 14), err
    line = report["certificate"]["lines"][0]
    assert line.startswith("  certificate: NOT proved: "), line
    assert "(`output.tuples`" in line and "compile the program again" in line, line


def test_a_list_output_is_labelled_lists_and_named_by_its_repr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The certificate's weakest decision is the decoder's argmax at a list value: it once read
    # `at output "\x00['a']"`, and `run` labelled the lists `(strings)`.
    path = tmp_path / "lists.py"
    path.write_text(
        "from rasp import tracr as rasp\n"
        "out = rasp.categorical(rasp.Map(lambda t: [t], rasp.tokens))\n",
        encoding="utf-8",
    )
    model = str(tmp_path / "lists.safetensors")
    code, out, err = run(
        capsys, "compile", f"{path}:out", "--vocab", "ab", "--max-len", "4", "-o", model
    )
    assert code == 0, err
    assert "argmax at output ['a']:" in out, out
    for target in (["--model", model], [f"{path}:out"]):
        code, out, _ = run(capsys, "run", *target, "--input", "ba")
        assert (code, out) == (0, "[['b'], ['a']] (lists)\n")


def test_show_labels_a_tracr_output_of_tuples_or_lists_as_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `rasp show` said "(categorical, strings)" where `run --model` says "(tuples)": the type rule
    # sees marked strings, the file's `output.tuples` says what they stand for
    path = tmp_path / "outs.py"
    path.write_text(
        PAIRS
        + "lists = rasp.categorical(rasp.Map(lambda t: [t], rasp.tokens))\n"
        + 'mixed = rasp.categorical(rasp.Map(lambda t: (t,) if t == "a" else t, rasp.tokens))\n',
        encoding="utf-8",
    )
    for name, label in (("pairs", "tuples"), ("lists", "lists"), ("mixed", "strings")):
        model = str(tmp_path / f"{name}.safetensors")
        code, _, err = run(
            capsys, "compile", f"{path}:{name}", "--vocab", "ab", "--max-len", "3", "-o", model
        )
        assert code == 0, err
        code, out, err = run(capsys, "show", model)
        assert code == 0, err
        assert f"output:      {name} (categorical, {label})\n" in out, out
        code, out, _ = run(capsys, "run", "--model", model, "--input", "ab")
        assert out.endswith(f" ({label})\n"), out  # run's label for the same values


def test_a_boxed_value_is_named_by_its_repr_in_messages() -> None:
    # the compiler's messages quote values with value_repr: a tuple a tracr map gives travels as
    # a boxed string token, which repr() showed as '\x00(1.0, 1)'
    from rasp.seqvalues import value_repr
    from rasp.tracr.boxes import box

    assert value_repr(box((1.0, 1))) == "(1.0, 1)"
    assert value_repr(box(["a"])) == "['a']"
    assert value_repr("a") == "'a'" and value_repr(1.5) == "1.5"


def test_a_marked_vocabulary_token_of_a_tracr_program_is_refused_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # compile_sop refused it for a rasp.tracr expression; `rasp compile prog.py:NAME` lowers the
    # program first, and the token "\x00(1, 2)" compiled: the map then saw the tuple (1, 2)
    path = tmp_path / "ident.py"
    path.write_text(
        "from rasp import tracr as rasp\n\nident = rasp.Map(lambda t: t, rasp.tokens)\n",
        encoding="utf-8",
    )
    vocab = json.dumps(["\x00(1, 2)", "a"])
    model = str(tmp_path / "ident.safetensors")
    code, out, err = run(
        capsys, "compile", f"{path}:ident", "--vocab", vocab, "--max-len", "3", "-o", model
    )
    assert (code, out) == (1, "") and "Traceback" not in err
    assert f"{path}:3:9: error: the vocabulary token '\\x00(1, 2)': it starts with" in err


def test_a_marked_input_token_of_a_tracr_program_is_refused_by_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `rasp run prog.py:NAME` evaluated the input token "\x00(1, 2)" as the tuple (1, 2) (the map
    # saw a tuple where tracr sees a string): refused as `rasp compile` refuses it in the vocabulary,
    # an error of --input (exit 2), located at the program
    path = tmp_path / "kind.py"
    program = "kind = rasp.Map(lambda t: type(t).__name__, rasp.tokens)\n"
    path.write_text("from rasp import tracr as rasp\n\n" + program, encoding="utf-8")
    given = json.dumps(["\x00(1, 2)", "a"])
    code, out, err = run(capsys, "run", f"{path}:kind", "--input", given)
    assert (code, out) == (2, "") and "Traceback" not in err
    assert f"{path}:3:8: error: argument --input: the input token '\\x00(1, 2)': it starts" in err
    code, out, _ = run(capsys, "run", f"{path}:kind", "--input", json.dumps(["(1, 2)", "a"]))
    assert (code, out) == (0, "[str]*2 (strings)\n")


def test_run_unboxes_only_a_tracr_programs_tuples(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a PROG.py:NAME built with rasp.sops is no tracr program: its own string "\x00(1, 2)" was
    # shown as the tuple (1, 2) by `rasp run`, where its compiled model (no `output.tuples`)
    # gives the string
    path = tmp_path / "plain.py"
    program = 'x = sops.MapSOp(fn=lambda t: "\\x00(1, 2)" if t == "a" else t, inputs=(sops.TokensSOp(),))\n'
    path.write_text("from rasp import sops\n\n" + program, encoding="utf-8")
    model = str(tmp_path / "plain.safetensors")
    code, _, err = run(
        capsys, "compile", f"{path}:x", "--vocab", "ab", "--max-len", "3", "-o", model
    )
    assert code == 0, err
    for target in ([f"{path}:x"], ["--model", model]):
        code, out, err = run(capsys, "run", *target, "--input", "ab", "--json")
        assert (code, json.loads(out)) == (0, ["\x00(1, 2)", "b"]), err
    path = tmp_path / "pairs.py"
    path.write_text(PAIRS, encoding="utf-8")
    code, out, _ = run(capsys, "run", f"{path}:pairs", "--input", "ab", "--json")
    assert (code, json.loads(out)) == (0, [["a", 0], ["b", 1]])


def test_verify_names_a_tracr_programs_tuples_by_their_repr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # verify's messages printed a tuple's token as such: a NUL character, then its repr
    path = tmp_path / "pairs.py"
    other = "first = rasp.SequenceMap(lambda a, b: (a, 0), rasp.tokens, rasp.indices)\n"
    path.write_text(PAIRS + other, encoding="utf-8")
    model = str(tmp_path / "first.safetensors")
    code, _, err = run(
        capsys, "compile", f"{path}:first", "--vocab", "ab", "--max-len", "2", "-o", model
    )
    assert code == 0, err
    code, _, err = run(
        capsys, "verify", f"{path}:pairs", "--model", model, "--exhaustive-len", "2", "--no-rebuild"
    )
    assert code == 1 and "\x00" not in err, err
    assert "    interpreter: [('a', 0), ('a', 1)]\n    model:       [('a', 0), ('a', 0)]" in err
