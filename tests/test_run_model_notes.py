"""`rasp run --model` warns where the output it prints is not certified: an input the program the
file records fails on, or positions the logits leave undecided (rasp/tools/run_model_notes.py).
The printed output is the model's, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from tests.cli_helpers import run  # noqa: E402

DIVIDE = "d = 12 / (indices - 2);\n"  # division by zero at position 2
FIRSTS = "firsts = aggregate(select(indices, indices, <=), tokens);\n"  # averages strings


def _compiled(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> Path:
    source, model = tmp_path / f"{name}.rasp", tmp_path / f"{name}.safetensors"
    source.write_text(text)
    code, _, _ = run(
        capsys, "compile", str(source), "--vocab", "abc", "--max-len", "4", "-o", str(model), "-q"
    )
    assert code == 0
    return model


def test_an_input_the_program_fails_on_is_named_with_its_undecided_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _compiled(tmp_path, capsys, "divide", DIVIDE)
    # before: the same output, and nothing on stderr: -6.0 at position 2 read like a value
    code, out, err = run(capsys, "run", "--model", str(model), "--input", "abcc")
    assert (code, out) == (0, "[-6.0, -12.0, -6.0, 12.0] (floats)\n")
    assert err == (
        f"warning: the program {model} records fails on this input ({tmp_path}/divide.rasp:1:5: "
        "division by zero): the model's certificate covers only the inputs its program has a "
        "value for, so the output printed is not certified; the model's output is undecided at "
        "position 2 (its logit, 0, is 6 from the nearest value it can take, -6, beyond the "
        "certified float32 error bound 0)\n"
    )
    code, out, err = run(capsys, "run", "--model", str(model), "--input", "ab", "--json")
    assert (code, out, err) == (0, "[-6.0, -12.0]\n", "")  # the program has a value: no note


def test_a_failing_input_whose_logits_look_decided_is_named_by_the_recorded_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _compiled(tmp_path, capsys, "firsts", FIRSTS)
    # "aa" averages two "a"s: the interpreter refuses, the model's logits say "a" at once
    code, out, err = run(capsys, "run", "--model", str(model), "--input", "aa")
    assert (code, out) == (0, "[a]*2 (strings)\n")
    assert err.startswith(f"warning: the program {model} records fails on this input (")
    assert "1:10: asked to average multiple values, but they are non-numbers)" in err
    assert "undecided" not in err and err.count("\n") == 1
    code, _, err = run(capsys, "run", "--model", str(model), "--input", "ab")
    assert (
        "; the model's output is undecided at position 1 (its largest logit, 0.5, is shared by 'a', 'b')"
        in err
    )
    assert run(capsys, "run", "--model", str(model), "--input", "ab", "-q")[2] == ""


def test_undecided_positions_are_named_where_the_file_records_no_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_weight_digests import edit_metadata

    model = _compiled(tmp_path, capsys, "divide", DIVIDE)
    bare = edit_metadata(model, tmp_path / "bare.safetensors", lambda meta: meta.pop("program"))
    code, out, err = run(capsys, "run", "--model", str(bare), "--input", "abcc")
    assert (code, out) == (0, "[-6.0, -12.0, -6.0, 12.0] (floats)\n")
    assert err == (
        "warning: the model's output `d` is undecided at position 2 (its logit, 0, is 6 from the "
        "nearest value it can take, -6, beyond the certified float32 error bound 0): a compiled "
        "model leaves a position undecided only where its program has no value, or after an "
        "edit, and its certificate does not cover what is printed there\n"
    )
