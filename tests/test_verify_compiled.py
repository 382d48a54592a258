"""`rasp verify` end to end: a real compiled model with one corrupted parameter is located at the
variable, layer and sublayer the corruption touches; a correct model raises no false alarm."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.tools.residuals import residual_variables
from rasp.tools.verify import diagnose, plan_inputs, verify
from tests.verify_helpers import compiled_reverse, corrupt


def _layer_of(meta: dict[str, Any], name: str, sublayer: str) -> int:
    return next(
        layer
        for layer, ops in enumerate(meta["layers"])
        if any(op["name"] == name for op in ops[sublayer])
    )


# `length` is the number reverse addresses by (`opp` is an affine view of it, no block): +5 on its
# MLP's output shows at length 2 first (a length-1 input reads key 6 - 0 - 1, none: the default).
@pytest.mark.parametrize(
    ("variable", "sublayer", "label", "first", "model_value", "want"),
    [
        ("length", "mlp", "length", "ab", 7.0, 2),
        # `reverse:c` at 5 beside the right column at 1: no single value, not "c"
        ("reverse", "attn", "reverse:c", "a", {"columns": {"a": 1.0, "c": 5.0}}, "a"),
    ],
)
def test_corrupted_weight_is_located(
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    sublayer: str,
    label: str,
    first: str,
    model_value: Any,
    want: Any,
) -> None:
    import json

    from rasp.tools.cli import main

    program, model, meta = compiled_reverse(tmp_path)
    layer = _layer_of(meta, variable, sublayer)
    tensor = f"blocks.{layer}.mlp.b_out" if sublayer == "mlp" else f"blocks.{layer}.attn.b_O"
    corrupt(model, tensor, meta["residual"].index(label), 5.0)
    capsys.readouterr()
    code = main(
        [
            "verify",
            str(program),
            "--vocab",
            "abc",
            "--max-len",
            "4",
            "--model",
            str(model),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and not report["ok"]
    assert report["first_failure"]["input"] == list(first)
    operation = {"length": "length", "reverse": "aggregate(flip, tokens)"}[variable]
    assert report["divergence"] == {
        "variable": variable,
        "shown": variable,  # (no def made it)
        "operation": operation,
        "layer": layer,
        "sublayer": sublayer,
        "position": 0,
        "model": model_value,
        "interpreter": want,
        "unchecked_in_parts": [],
        "verified": None,
        "held_at": None,
        "output_checked": None,
        "started_at": f"layer {layer} attn" if sublayer == "mlp" else None,  # length's head
        "padded_to": None,
        "stray": None,
    }
    code = main(["verify", str(program), "--vocab", "abc", "--max-len", "4", "--model", str(model)])
    err = capsys.readouterr().err
    assert code == 1
    named = f"`{variable}`" if operation == variable else f"`{variable}` = {operation}"
    assert f"first divergence: variable {named}, layer {layer} {sublayer}, position 0" in err
    assert f'first failing input: "{first}" (length {len(first)})' in err


@pytest.mark.parametrize(
    ("part", "tensor", "variable", "layer", "model_value", "want"),
    [
        # the decoded whole number the matching head reads, scaled: its vector reading (number
        # and square) holds none of the values
        ("target_position.int", "W_out", "target_position.int", 1, None, 1),
        # one conjunction's decoded width, +5: the sum the reach reads as `target_position`
        ("target_position.part0", "b_out", "target_position", 0, 5.0, 0),
    ],
)
def test_a_variable_held_only_in_parts_is_read_through_the_reach(
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    part: str,
    tensor: str,
    variable: str,
    layer: int,
    model_value: Any,
    want: int,
) -> None:
    """sort's `target_position` lives only in parts (`.part0`, `.part1`, `.int`, `.sq`): verify
    named it unchecked and blamed the later `sorted` head. The file's reach records the readings
    of its value the model's blocks read; a fault in a part is found there."""
    import json
    from pathlib import Path

    from rasp.tools.cli import main

    program = Path(__file__).resolve().parents[1] / "programs" / "sort.rasp"
    model = tmp_path / "sort.safetensors"
    argv = ["--vocab", "abc", "--max-len", "4"]
    assert main(["compile", str(program), *argv, "-o", str(model), "-q"]) == 0
    from safetensors import safe_open

    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    assert _layer_of(meta, part, "mlp") == layer
    from safetensors.numpy import load_file, save_file

    with safe_open(str(model), "np") as handle:
        metadata = handle.metadata()
    weights = load_file(str(model))
    dim = meta["residual"].index(part)
    if tensor == "W_out":
        weights[f"blocks.{layer}.mlp.W_out"][:, dim] *= 1.5
    else:
        weights[f"blocks.{layer}.mlp.b_out"][dim] += 5.0
    save_file(weights, str(model), metadata=metadata)
    capsys.readouterr()
    assert main(["verify", str(program), *argv, "--model", str(model), "--json"]) == 1
    divergence = json.loads(capsys.readouterr().out)["divergence"]
    assert (divergence["variable"], divergence["layer"], divergence["sublayer"]) == (
        variable,
        layer,
        "mlp",
    )
    assert (divergence["model"], divergence["interpreter"]) == (model_value, want)
    assert divergence["unchecked_in_parts"] == []
    assert main(["verify", str(program), *argv, "--model", str(model)]) == 1
    err = capsys.readouterr().err
    assert f"first divergence: variable `{variable}`" in err and "unchecked:" not in err


def test_generated_names_are_diagnosed_too(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`(indices + 1) % length` unnamed: the compiler calls it `_map_N`; verify still finds its node.
    (A rotation: `length - indices - 1` would be addressed as a number, with no block of its own.)"""
    import json

    from rasp.tools.cli import main

    program, model, meta = compiled_reverse(tmp_path)
    program.write_text(
        "flip = select(indices, (indices + 1) % length, ==);\nrotate = aggregate(flip, tokens);\n"
    )
    assert (
        main(["compile", str(program), "--vocab", "abc", "--max-len", "4", "-o", str(model)]) == 0
    )
    from safetensors import safe_open

    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    ((layer, name),) = [
        (layer, op["name"]) for layer, ops in enumerate(meta["layers"]) for op in ops["mlp"]
    ]
    assert name.startswith("_map_")
    # the query is computed as one number (the head addresses its key by it)
    corrupt(model, f"blocks.{layer}.mlp.b_out", meta["residual"].index(name), 5.0)
    capsys.readouterr()
    assert (
        main(
            [
                "verify",
                str(program),
                "--vocab",
                "abc",
                "--max-len",
                "4",
                "--model",
                str(model),
                "--json",
            ]
        )
        == 1
    )
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["operation"], div["layer"], div["sublayer"]) == (
        name,
        "(indices + 1) % length",
        layer,
        "mlp",
    )


@pytest.mark.parametrize(
    ("program", "vocab"), [("hist", "abc"), ("dyck1", "()"), ("most_freq", "abc")]
)
def test_a_correct_model_has_no_divergence(program: str, vocab: str, tmp_path: Any) -> None:
    """No false alarms: selector_width is listed under a head and an MLP (complete after the MLP), and
    one head may compute two variables (`"name": "a, b"`)."""
    compiler = pytest.importorskip("compiler")
    transformer = pytest.importorskip("transformer")
    from pathlib import Path

    from rasp.interpreter import load_file
    from rasp.tools.model_steps import nodes_by_residual_name

    interp = load_file(Path(__file__).resolve().parents[1] / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    sop = interp.get(name)
    compiler.compile_sop(sop, list(vocab), 5, name=name).save(tmp_path / "m.safetensors")
    model = transformer.load(tmp_path / "m.safetensors")
    # the graph compiled (dyck1's votes), as the tools pair them: by the model's metadata
    nodes = nodes_by_residual_name(sop, list(vocab), 5, model.meta.raw)
    for tokens in plan_inputs(vocab, 5, exhaustive_len=3, samples=20, seed=2).inputs():
        assert diagnose(sop, model, tokens, nodes) is None, tokens


@pytest.mark.parametrize(
    "text",
    [
        "res = aggregate(select(indices, 1, ==), tokens_int);",
        "res = selector_width(select(indices, tokens_int, >));",
        'res = (indices - 3) * 1 if tokens == "1" else 3;',
    ],
)
def test_indices_read_back_from_a_partial_one_hot_raise_no_alarm(text: str, tmp_path: Any) -> None:
    """Only the index columns a block reads are laid out (and maybe the number `indices`): the
    diagnosis read a missing column as no value, or the one-hot's first column as the number."""
    compiler = pytest.importorskip("compiler")
    transformer = pytest.importorskip("transformer")
    from rasp.errors import Source
    from rasp.interpreter import load_source
    from rasp.sops import evaluate
    from rasp.tools.model_steps import nodes_by_residual_name

    sop = load_source(Source("t.rasp", text)).get("res")
    vocab = ["0", "1", "2"]
    compiler.compile_sop(sop, vocab, 8).save(tmp_path / "m.safetensors")
    model = transformer.load(tmp_path / "m.safetensors")
    nodes = nodes_by_residual_name(sop, vocab, 8)
    for tokens in plan_inputs("012", 8, exhaustive_len=3, samples=10, seed=4).inputs():
        evaluate(sop, tokens)  # (these programs run everywhere)
        assert diagnose(sop, model, tokens, nodes) is None, tokens


@pytest.mark.parametrize(
    "text",
    [
        'parity = indices % 2 == 0;\nres = tokens if parity else "x";',
        # the select side's classes of indices embed the columns `indices == 0` reads
        "with_bos = select(tokens, tokens, <) or select(indices, 0, ==);\n"
        "place = round(1 / aggregate(with_bos, indicator(indices == 0))) - 1;\n"
        "res = -1 if indices == 0 else place;",
    ],
)
def test_an_embedded_map_of_the_position_reads_back_whole(text: str, tmp_path: Any) -> None:
    """A map of the position the embedding writes is laid out as its whole one-hot even where a
    block reads one column (`parity:True`): read back from the residual stream it has a value at
    every position, so no false alarm (the REPL's `:residual` reported `False` as no value)."""
    compiler = pytest.importorskip("compiler")
    transformer = pytest.importorskip("transformer")
    from rasp.errors import Source
    from rasp.interpreter import load_source
    from rasp.tools.model_steps import nodes_by_residual_name

    sop = load_source(Source("t.rasp", text)).get("res")
    n = 40
    compiled = compiler.compile_sop(sop, list("abc"), n)
    assert compiled.metadata["embedding"]
    compiled.save(tmp_path / "m.safetensors")
    model = transformer.load(tmp_path / "m.safetensors")
    nodes = nodes_by_residual_name(sop, list("abc"), n)
    for tokens in plan_inputs("abc", n, exhaustive_len=2, samples=10, seed=3).inputs():
        assert diagnose(sop, model, tokens, nodes) is None, tokens


@pytest.mark.parametrize(
    ("program", "vocab"), [("reverse", "abc"), ("hist", "abc"), ("dyck1", "()")]
)
def test_every_sublayer_corruption_is_blamed_on_that_sublayer(
    program: str, vocab: str, tmp_path: Any
) -> None:
    """Corrupt the output bias of each sublayer in turn (one entry, on a variable it completes): the
    diagnosis names exactly that variable, layer and sublayer."""
    compiler = pytest.importorskip("compiler")
    transformer = pytest.importorskip("transformer")
    import shutil
    from pathlib import Path

    from rasp.interpreter import load_file as load_program
    from rasp.tools.model_steps import nodes_by_residual_name
    from rasp.tools.residuals import checkpoints
    from transformer.digests import EditedWeightsWarning

    interp = load_program(Path(__file__).resolve().parents[1] / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    sop = interp.get(name)
    path = tmp_path / "m.safetensors"
    compiler.compile_sop(sop, list(vocab), 4, name=name).save(path)
    meta = transformer.load(path).meta.raw
    nodes = nodes_by_residual_name(sop, list(vocab), 4, meta)
    variables = residual_variables(meta["residual"])
    tried = []
    for _, layer, sublayer, names in checkpoints(meta)[1:]:
        for var in [n for n in names if n in nodes and n in variables]:
            broken = tmp_path / f"{var}.safetensors"
            shutil.copy(path, broken)
            tensor = (
                f"blocks.{layer}.attn.b_O" if sublayer == "attn" else f"blocks.{layer}.mlp.b_out"
            )
            # (a one-hot's last value: one the first inputs do not take, so the variable itself
            # reads wrong there, not only what reads its column of 3 instead of 1)
            corrupt(broken, tensor, variables[var].dims[-1], 3.0)
            with pytest.warns(EditedWeightsWarning, match=tensor):
                loaded = transformer.load(broken)
            report = verify(
                sop,
                loaded,
                plan_inputs(vocab, 4, exhaustive_len=3, samples=0),
                nodes=nodes,
            )
            div = report.divergence
            assert div is not None, (var, layer, sublayer)
            assert (div.variable, div.layer, div.sublayer) == (var, layer, sublayer)
            tried.append(var)
    assert tried  # at least one variable of the program is materialised and checked
