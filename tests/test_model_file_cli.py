"""Model files every command must judge alike: what `rasp run --model` refuses, `show`, `verify
--model`, `draw` and `export` refuse in the same words (docs/inspect.md, "Bad model files"), and
an input the model cannot take is an error of `--input` (exit 2) wherever a command takes one.

The files are the runtime's hand-made previous-token model (tests/transformer/handmade_models.py),
edited and saved again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run
from tests.transformer.handmade_models import previous_token

REVERSE = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


def edited_model(path: Path, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]) -> Path:
    """The previous-token model after `edit(metadata, tensors)`, saved at `path`."""
    made = previous_token()
    edit(made.metadata, made.tensors)
    return made.save(path)


def model_commands(model: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Every command that reads a model file, with arguments that are otherwise fine."""
    program = tmp_path / "reverse.rasp"
    program.write_text(REVERSE)
    return {
        "run": ["run", "--model", str(model), "--input", "ab"],
        "show": ["show", str(model)],
        "verify": ["verify", str(program), "--model", str(model)],
        "draw": ["draw", str(model), "--input", "ab", "-o", str(tmp_path / "d.png")],
        "export": ["export", str(model), "--to", "transformer-lens", "-o", str(tmp_path / "tl")],
    }


def assert_all_refuse(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, *fragments: str
) -> str:
    """Every model command exits 1 with the same one line, `error: MODEL: ...`, naming each
    fragment; returns that line."""
    lines = {}
    for command, argv in model_commands(model, tmp_path).items():
        code, out, err = run(capsys, *argv)
        assert code == 1 and not out, (command, err)
        assert err.startswith(f"error: {model}: ") and err.count("\n") == 1, (command, err)
        lines[command] = err
    assert len(set(lines.values())) == 1, lines
    line = lines["run"]
    for fragment in fragments:
        assert fragment in line, line
    return line


# --- the certificate and the other fields the tools read -----------------------------------------


@pytest.mark.parametrize(
    ("certificate", "fragment"),
    [
        ("x", "metadata field 'certificate' must be an object, got \"x\""),
        (7, "metadata field 'certificate' must be an object, got 7"),
        ({"checks": "x"}, "metadata field 'certificate.checks' must be a list"),
        ({"checks": [1]}, "metadata field 'certificate.checks[0]' must be an object"),
        ({"errors": 3}, "metadata field 'certificate.errors' must be a list"),
    ],
)
def test_a_misshapen_certificate_is_refused_by_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, certificate: Any, fragment: str
) -> None:
    model = edited_model(
        tmp_path / "cert.safetensors", lambda m, t: m.update(certificate=certificate)
    )
    assert_all_refuse(capsys, model, tmp_path, fragment)


def test_a_misshapen_embedding_list_is_refused_by_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model = edited_model(tmp_path / "emb.safetensors", lambda m, t: m.update(embedding=[1]))
    assert_all_refuse(capsys, model, tmp_path, "metadata field 'embedding[0]' must be an object")


@pytest.mark.parametrize("key", ["embedding", "certificate", "sums_as_means"])
def test_an_optional_field_written_as_null_reads_as_absent_in_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str
) -> None:
    # docs/format.md: absent or null is fine; `"embedding": null` crashed show, draw and verify
    model = edited_model(tmp_path / "null.safetensors", lambda m, t: m.update({key: None}))
    for command, argv in model_commands(model, tmp_path).items():
        code, out, err = run(capsys, *argv)
        assert "internal error" not in err and "Traceback" not in err, (command, err)
        assert code == (1 if command == "verify" else 0), (command, err)  # verify: another program
    code, out, _ = run(capsys, "show", str(model), "--json")
    assert code == 0 and json.loads(out)["embedding"] == []


@pytest.mark.parametrize("token", [[1], {}], ids=["list", "object"])
def test_a_vocabulary_token_that_is_no_json_atom_is_refused_by_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, token: Any
) -> None:
    # verify --model planned its inputs from the header's unchecked vocabulary first: an
    # internal error (TypeError: unhashable type: 'list'), not the runtime's line
    def edit(meta: dict[str, Any], tensors: dict[str, np.ndarray]) -> None:
        meta["vocab"]["tokens"][0] = token

    model = edited_model(tmp_path / "vocab.safetensors", edit)
    line = assert_all_refuse(capsys, model, tmp_path, "metadata field 'vocab.tokens' holds")
    code, out, err = run(capsys, "verify", "--model", str(model))  # the recorded program
    assert (code, out, err) == (1, "", line)


# --- config maxima that no layer attains ---------------------------------------------------------


def with_layers(meta: dict[str, Any], **maxima: int) -> None:
    """The previous-token model's one layer as `config.layers` (format version 2), and `maxima`
    over the config's n_heads, d_head or d_mlp."""
    config = meta["config"]
    config["layers"] = [{key: config[key] for key in ("n_heads", "d_head", "d_mlp")}]
    config.update(maxima)


@pytest.mark.parametrize("key", ["n_heads", "d_head", "d_mlp"])
def test_config_maxima_no_layer_has_are_refused_before_export_pads_to_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str
) -> None:
    model = edited_model(
        tmp_path / f"{key}.safetensors", lambda m, t: with_layers(m, **{key: 10**12})
    )
    line = assert_all_refuse(capsys, model, tmp_path, f"'config.{key}' is 1000000000000")
    assert "must be the layers' maxima" in line
    assert not (tmp_path / "tl").exists()  # refused before anything was written


def test_the_compilers_maxima_are_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model = edited_model(tmp_path / "v2.safetensors", lambda m, t: with_layers(m))
    out_dir = tmp_path / "tl"
    assert run(capsys, "export", str(model), "--to", "transformer-lens", "-o", str(out_dir))[0] == 0
    assert run(capsys, "run", "--model", str(model), "--input", "abc")[1] == "[-, a, b] (strings)\n"


# --- an input the model cannot take ----------------------------------------------------------------


@pytest.mark.parametrize("text", ["abz", "abcabcab"])
def test_draw_refuses_an_input_its_model_cannot_take_as_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    model = previous_token().save(tmp_path / "prev.safetensors")  # tokens abc, max_len 6
    png = tmp_path / "d.png"
    run_code, _, run_err = run(capsys, "run", "--model", str(model), "--input", text)
    code, out, err = run(capsys, "draw", str(model), "--input", text, "-o", str(png))
    assert code == run_code == 2 and not out and not png.exists()
    assert err == run_err.replace("rasp run", "rasp draw"), (err, run_err)
    assert "rasp draw: error: argument --input: " in err and f"({model})" in err


def test_draw_of_a_program_refuses_an_input_outside_its_vocab(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("compiler")
    program = tmp_path / "inc.rasp"
    program.write_text("s = tokens_int + 1;\n")
    png = str(tmp_path / "d.png")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled for an input it then refused")

    monkeypatch.setattr("rasp.tools.model_steps.compile_sop", never)
    code, _, err = run(
        capsys, "draw", str(program), "--input", "312", "--vocab", "[1,2,3]", "-o", png
    )
    assert code == 2 and err.startswith(
        "usage: rasp draw ...\nrasp draw: error: argument --input: "
    )
    assert f"(the model compiled from {program})" in err
    assert err.endswith("write the input as a JSON list, --input '[3,1,2]'\n"), err


# --- a program where a model was expected ---------------------------------------------------------


def test_a_program_given_as_a_model_gets_a_hint_to_compile_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "reverse.rasp"
    program.write_text(REVERSE)
    compile_it = f"`rasp compile {program} --vocab VOCAB --max-len N -o reverse.safetensors`"
    for command, argv in model_commands(program, tmp_path).items():
        if command == "draw":
            continue  # draw takes a program too: it compiles it for the input
        code, out, err = run(capsys, *argv)
        error, hint = err.splitlines()
        assert code == 1 and not out, (command, err)
        assert error == f"error: {program}: a RASP program, not a compiled model", (command, err)
        shown = command + (" --model" if command in ("run", "verify") else "")
        assert hint.startswith(f"hint: `rasp {shown}` takes a compiled model"), hint
        assert compile_it in hint, hint
    code, _, err = run(capsys, "run", "--model", str(program), "--input", "ab")
    assert err.endswith(f", or run the program itself: `rasp run {program} --input INPUT`\n")


def test_no_program_hint_for_other_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = tmp_path / "notes.safetensors"
    text.write_text("opp = length - indices - 1;\n")
    code, _, err = run(capsys, "show", str(text))
    assert code == 1 and err.count("\n") == 1  # no hint line: its name says model
    code, _, err = run(capsys, "show", str(tmp_path / "missing.rasp"))
    assert code == 1 and err == f"error: {tmp_path / 'missing.rasp'}: no such file\n"


def test_an_exports_files_given_as_a_model_name_the_model_they_came_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`rasp run --model tl/model.safetensors` (the export's weights, which carry no rasp-forge
    metadata) said only 'not a rasp-forge model'; the export's rasp_forge.json records the model."""
    model = previous_token().save(tmp_path / "prev.safetensors")
    code, _, _ = run(capsys, "export", str(model), "--to", "transformer-lens", "-o", str(tmp_path))
    assert code == 0
    for name in ("model.safetensors", "config.json", "rasp_forge.json"):
        given = tmp_path / name
        for command, argv in model_commands(given, tmp_path).items():
            if command == "draw":
                continue  # draw takes a program too
            code, out, err = run(capsys, *argv)
            error, hint = err.splitlines()
            assert code == 1 and not out and error.startswith(f"error: {given}: "), err
            shown = command + (" --model" if command in ("run", "verify") else "")
            assert hint == (
                f"hint: {given} belongs to a TransformerLens export, which holds no rasp-forge "
                f"model; `rasp {shown}` takes the compiled model it was exported from, {model} "
                "(its rasp_forge.json says)"
            ), (command, err)


def test_an_exports_directory_given_as_a_model_names_the_model_it_came_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `rasp show tl_reverse` (the directory rasp export wrote) said only "is a directory"
    model = previous_token().save(tmp_path / "prev.safetensors")
    out_dir = tmp_path / "tl"
    code, _, _ = run(capsys, "export", str(model), "--to", "transformer-lens", "-o", str(out_dir))
    assert code == 0
    code, out, err = run(capsys, "show", str(out_dir))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"error: {out_dir}: is a directory, not a model file",
        f"hint: {out_dir} is a TransformerLens export, which holds no rasp-forge model; `rasp "
        f"show` takes the compiled model it was exported from, {model} (its rasp_forge.json says)",
    ]
