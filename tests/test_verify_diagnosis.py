"""`rasp verify`'s diagnosis of faults that are not one sublayer's output: a one-hot holding no
single value, writes where the model holds a fixed value (a variable's dims before it is written,
`one`/`bos`/`pad`, at BOS too), failures seen only in padded batches, and a variable broken after
it is complete."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.tools.residuals import residual_variables
from rasp.tools.verify import plan_inputs, verify
from tests.verify_helpers import REVERSE, compiled_reverse, corrupt


def _set_weight(model: Any, tensor: str, index: tuple[int, ...], value: float) -> None:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    with safe_open(str(model), "np") as handle:
        metadata = handle.metadata()
    weights = load_file(str(model))
    weights[tensor][index] = value
    save_file(weights, str(model), metadata=metadata)


@pytest.mark.parametrize("stray", [0.6, 0.3, -1.0])
def test_a_blurred_one_hot_is_blamed_where_it_is_written(
    stray: float, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedding writes `tokens:b` = 0.6 beside `tokens:a` = 1 for an "a": the argmax still
    reads "a", and the diagnosis blamed `hist`'s MLP, the first reader that counts it as a "b"."""
    compiler = pytest.importorskip("compiler")
    import json
    from pathlib import Path

    from rasp.tools.cli import main

    program = Path(__file__).resolve().parents[1] / "programs" / "hist.rasp"
    path = tmp_path / "hist.safetensors"
    assert main(["compile", str(program), "--vocab", "abc", "--max-len", "4", "-o", str(path)]) == 0
    assert compiler  # (compiled through the CLI)
    meta = _metadata(path)
    _set_weight(path, "embed.W_E", (0, meta["residual"].index("tokens:b")), stray)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"]) == ("tokens", None, "embedding")
    assert div["interpreter"] == "a"
    assert div["model"] == {"columns": {"a": 1.0, "b": pytest.approx(stray)}}
    assert main(["verify", str(program), "--model", str(path)]) == 1
    err = capsys.readouterr().err
    assert "first divergence: variable `tokens`, after the embedding, position 0" in err
    assert f"model:       no single value: {{a: 1, b: {stray:g}}}" in err
    # the certificate's re-check says what the dims hold (it said "every dimension 0")
    assert (
        f"the embedding writes tokens = no value (tokens:a = 1, tokens:b = {stray:g}) for "
        "token 'a' (id 0), where the program has tokens = 'a'"
    ) in err


def _metadata(path: Any) -> dict[str, Any]:
    import json

    from safetensors import safe_open

    with safe_open(str(path), "np") as handle:
        return json.loads(handle.metadata()["rasp_forge"])


def _compile_library(tmp_path: Any, name: str, vocab: str, max_len: int) -> tuple[Any, Any]:
    from pathlib import Path

    from rasp.tools.cli import main

    program = Path(__file__).resolve().parents[1] / "programs" / f"{name}.rasp"
    path = tmp_path / f"{name}.safetensors"
    args = ["compile", str(program), "--vocab", vocab, "--max-len", str(max_len), "-o", str(path)]
    assert main(args) == 0
    return program, path


def test_a_variable_written_before_its_block_is_blamed_where_it_is_written(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedding adds 0.3 to `frac_prevs`'s dim for an "x": the head that computes it later
    adds its mean to that, and the diagnosis blamed the head (frac_prevs 1.3 after layer 0 attn)."""
    pytest.importorskip("compiler")
    import json

    from rasp.tools.cli import main

    program, path = _compile_library(tmp_path, "frac_prevs", "xa", 4)
    meta = _metadata(path)
    _set_weight(path, "embed.W_E", (0, meta["residual"].index("frac_prevs")), 0.3)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"], div["position"]) == (
        "frac_prevs",
        None,
        "embedding",
        0,
    )
    assert div["stray"] == {
        "dim": "frac_prevs",
        "value": pytest.approx(0.3),
        "expected": 0.0,
        "written_at": "layer 0 attn",
    }
    assert main(["verify", str(program), "--model", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        "  first divergence: variable `frac_prevs` = aggregate(select(indices, indices, <=), "
        "is_x) before it is written, after the embedding, position 0\n"
        "    expected:    `frac_prevs` = 0 until layer 0 attn writes it\n"
        "    model:       `frac_prevs` = 0.3\n"
    ) in err


def test_a_head_writing_into_the_pad_dim_is_blamed(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """dyck1's first head writes -0.5 into `pad` at every position: the MLP after it, which reads
    `pad`, was blamed (its variable decoded wrong), though every variable the head wrote was right."""
    pytest.importorskip("compiler")
    import json

    from rasp.tools.cli import main

    program, path = _compile_library(tmp_path, "dyck1", "()", 4)
    meta = _metadata(path)
    _set_weight(path, "blocks.0.attn.b_O", (meta["residual"].index("pad"),), -0.5)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"]) == ("pad", 0, "attn")
    assert div["stray"] == {"dim": "pad", "value": -0.5, "expected": 0.0, "written_at": None}
    assert main(["verify", str(program), "--model", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        "  first divergence: the `pad` dim, layer 0 attn, at BOS\n"  # (b_O writes BOS too)
        "    expected:    `pad` = 0 at BOS\n"
        "    model:       `pad` = -0.5\n"
    ) in err


def test_a_broken_bos_row_is_blamed_on_the_embedding_at_bos(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """BOS's `bos` dim at 0.3 instead of 1: every real position decodes right after the
    embedding, and the diagnosis blamed `hist`'s MLP, which counts BOS as a selected key."""
    pytest.importorskip("compiler")
    import json

    from rasp.tools.cli import main

    program, path = _compile_library(tmp_path, "hist", "abc", 4)
    meta = _metadata(path)
    _set_weight(path, "embed.W_E", (meta["vocab"]["bos_id"], meta["residual"].index("bos")), 0.3)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"], div["position"]) == (
        "bos",
        None,
        "embedding",
        None,
    )
    assert div["stray"] == {
        "dim": "bos",
        "value": pytest.approx(0.3),
        "expected": 1.0,
        "written_at": None,
    }
    assert main(["verify", str(program), "--model", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        "  first divergence: the `bos` dim, after the embedding, at BOS\n"
        "    expected:    `bos` = 1 at BOS\n"
        "    model:       `bos` = 0.3\n"
    ) in err


def test_a_fault_seen_only_in_padded_batches_is_located_padded(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """hist's head with its query negated scores PAD keys above BOS: "a" fails only in a batch
    beside longer inputs, and run alone for the diagnosis it decoded right, so the report said
    the residual stream could not be decoded. Padded, it is located at `hist`, which the head
    begins (`hist.frac`, not decoded) and the MLP completes: both are named."""
    pytest.importorskip("compiler")
    import json

    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    from rasp.tools.cli import main

    program, path = _compile_library(tmp_path, "hist", "abc", 4)
    with safe_open(str(path), "np") as handle:
        metadata = handle.metadata()
    weights = load_file(str(path))
    weights["blocks.0.attn.W_Q"] *= -1  # the head selects the other tokens
    save_file(weights, str(path), metadata=metadata)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"]) == ("hist", 0, "mlp")
    assert div["started_at"] == "layer 0 attn" and div["padded_to"] == 4
    assert main(["verify", str(program), "--model", str(path)]) == 1
    assert (
        "    begun:       in layer 0 attn, whose output for it (helper dims) is not decoded: "
        "the fault may lie there\n"
        "    padded:      alone the input decodes right; this was found with it padded to 4 "
        "positions, as in a batch beside longer inputs (PAD keys reach it)\n"
    ) in capsys.readouterr().err


def test_a_variable_broken_after_it_is_complete_names_no_earlier_writer(tmp_path: Any) -> None:
    """`reverse` is written wholly by layer 1's head and reads right there; layer 1's MLP (which
    writes nothing) then subtracts 1 from `reverse:c`. The divergence is at layer 1 mlp, and the
    report added `begun: in layer 1 attn ... the fault may lie there`, blaming the head that the
    previous checkpoint had just found right: `begun` is for a variable completed at the point of
    divergence, after a sublayer that began it."""
    _, model, meta = compiled_reverse(tmp_path)
    variables = residual_variables(meta["residual"])
    corrupt(model, "blocks.1.mlp.b_out", variables["reverse"].dims[-1], -1.0)
    import transformer
    from rasp.interpreter import load_source
    from rasp.sources import Source
    from transformer.digests import EditedWeightsWarning

    interp = load_source(Source("reverse.rasp", REVERSE))
    sop = interp.get("reverse")
    with pytest.warns(EditedWeightsWarning, match="blocks.1.mlp.b_out"):
        loaded = transformer.load(model)
    report = verify(sop, loaded, plan_inputs("abc", 4, exhaustive_len=2))
    div = report.divergence
    assert div is not None
    assert (div.variable, div.layer, div.sublayer) == ("reverse", 1, "mlp")
    assert div.started_at is None


def test_a_tracr_label_with_a_colon_is_still_one_variable_of_the_residual(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Residual labels are `name:value`: a head's fault in `.named("sh:ift")` was read as variable
    `sh` holding `ift:a`, matched no s-op, and was blamed on the unembedding."""
    pytest.importorskip("compiler")
    import json

    from rasp.tools.cli import main

    program = tmp_path / "shift.py"
    program.write_text(
        "from rasp import tracr as rasp\n"
        "sel = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)\n"
        "shift = rasp.Aggregate(sel, rasp.tokens).named('sh:ift')\n"
        "out = rasp.SequenceMap(lambda a, b: (a or '') + b, shift, rasp.tokens).named('out')\n"
    )
    path = tmp_path / "shift.safetensors"
    target = f"{program}:out"
    assert main(["compile", target, "--vocab", "ab", "--max-len", "4", "-o", str(path)]) == 0
    residual = _metadata(path)["residual"]
    assert "sh_ift:a" in residual and not [r for r in residual if r.count(":") > 1]
    a, b = residual.index("sh_ift:a"), residual.index("sh_ift:b")
    _set_weight(path, "blocks.0.attn.W_O", (0, slice(None), [a, b]), 0.0)
    capsys.readouterr()
    assert main(["verify", target, "--model", str(path), "--json", "--no-rebuild"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert (div["variable"], div["layer"], div["sublayer"]) == ("sh_ift", 0, "attn")
