"""TransformerLens export: config, files, and (when TransformerLens 2.x/3.x is installed) a real load."""

from __future__ import annotations

import itertools
import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from rasp.errors import RaspError, Source
from rasp.tools.export import export_transformer_lens, to_hooked_transformer_config
from rasp.tools.model_file import ModelFileError
from tests.export_helpers import hooked_transformer, load_export
from tests.transformer.handmade_models import identity, mean_of_a, previous_token
from transformer import interop
from transformer.fileformat import uniform_d_head


@pytest.fixture()
def prev_model(tmp_path: Path) -> Path:
    return previous_token().save(tmp_path / "prev.safetensors")


def test_config_matches_the_file(prev_model: Path) -> None:
    meta = previous_token().metadata
    cfg = to_hooked_transformer_config(meta)
    for key in (
        "n_layers",
        "d_model",
        "d_head",
        "n_heads",
        "d_mlp",
        "d_vocab",
        "d_vocab_out",
        "n_ctx",
    ):
        assert cfg[key] == meta["config"][key]
    assert cfg["act_fn"] == "relu" and cfg["normalization_type"] is None
    assert (
        cfg["attention_dir"] == "bidirectional" and cfg["positional_embedding_type"] == "standard"
    )
    assert (
        to_hooked_transformer_config(mean_of_a(causal=True).metadata)["attention_dir"] == "causal"
    )


def test_config_agrees_with_the_runtime_interop(prev_model: Path) -> None:
    interop = pytest.importorskip("transformer.interop")
    theirs, _ = interop.to_transformer_lens(prev_model)
    theirs.pop("dtype", None)  # a torch dtype; TransformerLens defaults to float32 anyway
    assert to_hooked_transformer_config(previous_token().metadata) == theirs


def test_export_writes_config_guide_and_weights(prev_model: Path, tmp_path: Path) -> None:
    paths = export_transformer_lens(prev_model, tmp_path / "tl")
    assert [p.name for p in paths] == ["config.json", "rasp_forge.json", "model.safetensors"]
    config = json.loads(paths[0].read_text())
    assert config == to_hooked_transformer_config(previous_token().metadata)
    guide = json.loads(paths[1].read_text())
    assert guide["vocab"]["bos_id"] == 3 and guide["output"]["values"] == ["a", "b", "c", "-"]
    # how to pad a batch, and the decoder that applies every rule the usage lists
    assert "padded with vocab.pad_id" in guide["usage"] and "decode_logits" in guide["usage"]
    exported, original = load_file(str(paths[2])), load_file(str(prev_model))
    assert exported.keys() == original.keys()
    assert all(np.array_equal(exported[k], original[k]) for k in original)


def test_the_guide_carries_each_residual_dims_typed_value(tmp_path: Path) -> None:
    # The export's guide named the residual dims by label only: `tokens:1` and `reverse:1` of a
    # model over [1, 2] are the int 1 and the string "1", which a label's text cannot tell
    from compiler import compile_sop
    from rasp.interpreter import load_file as load_program

    root = Path(__file__).resolve().parents[1]
    program = load_program(root / "programs" / "reverse.rasp").get("reverse")
    compile_sop(program, [1, 2], 4).save(tmp_path / "r.safetensors")
    paths = export_transformer_lens(tmp_path / "r.safetensors", tmp_path / "tl")
    guide = json.loads(paths[1].read_text())
    typed = dict(zip(guide["residual"], guide["residual_values"], strict=True))
    assert typed["tokens:1"] == [1] and typed["reverse:1"] == ["1"] and typed["indices"] is None
    assert "residual_values[d] is [value]" in guide["usage"]
    # a file compiled before the field has none to hand on, and its export says nothing of it
    old = previous_token().save(tmp_path / "prev.safetensors")  # (handmade: no residual_values)
    assert "residual_values" not in json.loads(
        export_transformer_lens(old, tmp_path / "old")[1].read_text()
    )


def test_export_refuses_bad_files_and_targets(tmp_path: Path, prev_model: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 5)
    with pytest.raises(ModelFileError):
        export_transformer_lens(bad, tmp_path / "out")
    not_dir = tmp_path / "file"
    not_dir.write_text("x")
    with pytest.raises(RaspError, match="not a directory"):
        export_transformer_lens(prev_model, not_dir)


# CI sets this after installing TransformerLens, so that a broken install fails instead of skipping.


@pytest.mark.parametrize("build", [previous_token, mean_of_a], ids=["categorical", "numerical"])
def test_loads_into_a_real_hooked_transformer(build: object, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import transformer

    model_path = build().save(tmp_path / "m.safetensors")  # type: ignore[operator]
    export_transformer_lens(model_path, tmp_path / "tl")
    tl_model = load_export(tmp_path / "tl")
    ours = transformer.load(model_path)
    ids, lengths = ours.encode([list("abab"), list("ba")])
    with torch.no_grad():
        theirs = tl_model(ids)  # type: ignore[operator]
    assert torch.allclose(theirs, ours.forward(ids), atol=1e-5)
    assert ours.decode(theirs, lengths) == ours.run([list("abab"), list("ba")])


@pytest.mark.parametrize("program", ["reverse", "dyck1", "hist"])
def test_a_compiled_program_runs_in_transformer_lens(program: str, tmp_path: Path) -> None:
    """The README's recipe, on compiled library programs: same logits, same activations, same output
    (hist reads no position: its file has no W_pos, and the export writes a zero one)."""
    torch = pytest.importorskip("torch")
    import transformer
    from compiler import compile_sop
    from rasp.interpreter import load_file

    interp = load_file(Path(__file__).resolve().parents[1] / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    vocab = list("()") if program == "dyck1" else list("abc")
    path = tmp_path / "m.safetensors"
    model = compile_sop(interp.get(name), vocab, 12, name=name, head_masks=False)
    assert ("pos_embed.W_pos" in model.weights) == (program != "hist")
    model.save(path)
    export_transformer_lens(path, tmp_path / "tl")
    tl_model = load_export(tmp_path / "tl")
    ours = transformer.load(path)
    inputs = [[vocab[(i * 7 + n) % len(vocab)] for i in range(n)] for n in range(1, 13)]
    ids, lengths = ours.encode(inputs)
    with torch.no_grad():
        theirs, their_cache = tl_model.run_with_cache(ids)  # type: ignore[attr-defined]
        mine, my_cache = ours.run_with_cache(ids)
    assert torch.allclose(theirs, mine, atol=1e-5)
    last = f"blocks.{ours.config.n_layers - 1}.hook_resid_post"
    assert torch.allclose(their_cache[last], my_cache[last], atol=1e-5)
    assert ours.decode(theirs, lengths) == ours.run(inputs)


def _masked_dyck1(path: Path) -> Path:
    from compiler import compile_sop
    from rasp.interpreter import load_file

    interp = load_file(Path(__file__).resolve().parents[1] / "programs" / "dyck1.rasp")
    compile_sop(interp.get("dyck1"), list("()"), 12, name="dyck1").save(path)
    return path


def test_a_model_with_masked_heads_is_not_exported(tmp_path: Path) -> None:
    """TransformerLens has no per-head masks: exporting would give a model that runs unmasked."""
    path = _masked_dyck1(tmp_path / "m.safetensors")
    with pytest.raises(RaspError) as info:
        export_transformer_lens(path, tmp_path / "tl")
    assert str(info.value).startswith(f"{path}: layer 0 head 0 sees only the keys whose position")
    assert "is <= the query's" in str(info.value)
    assert "--no-head-masks" in (info.value.hint or "")
    assert not (tmp_path / "tl").exists()
    with pytest.raises(ValueError, match="masks_by_hooks=True") as refused:
        interop.to_transformer_lens(path)
    # from Python the compile's option is a keyword (the command line's flag alone said only how
    # to compile with `rasp compile`)
    assert "compile_sop(..., head_masks=False)" in str(refused.value)


def test_masked_heads_run_in_transformer_lens_through_hooks(tmp_path: Path) -> None:
    """`mask_hooks` gives a HookedTransformer the per-head masks: the same logits and outputs."""
    torch = pytest.importorskip("torch")
    import transformer

    hooked, hooked_config = hooked_transformer()
    path = _masked_dyck1(tmp_path / "m.safetensors")
    cfg, state = interop.to_transformer_lens(path, masks_by_hooks=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tl_model = hooked(hooked_config(**cfg))
    tl_model.load_state_dict(state, strict=False)
    hooks = interop.mask_hooks(path)
    assert [name for name, _ in hooks] == ["blocks.0.attn.hook_attn_scores",
                                           "blocks.1.attn.hook_attn_scores"]  # fmt: skip
    for name, hook in hooks:
        tl_model.add_hook(name, hook, is_permanent=True)
    ours = transformer.load(path)
    inputs = [["()"[(i * 7 + n) % 3 % 2] for i in range(n)] for n in range(1, 13)]
    ids, lengths = ours.encode(inputs)
    with torch.no_grad():
        theirs = tl_model(ids)
    assert torch.allclose(theirs, ours.forward(ids), atol=1e-5)
    assert ours.decode(theirs, lengths) == ours.run(inputs)


def test_random_programs_decode_the_same_from_transformer_lens(tmp_path: Path) -> None:
    """Random programs compiled without per-head masks and exported: the HookedTransformer's logits
    decode to the interpreter's values on every input up to length 4."""
    torch = pytest.importorskip("torch")
    hooked_transformer()  # skips (or fails, where CI requires it) without TransformerLens
    import transformer
    from compiler import compile_sop
    from rasp import sops as S
    from rasp.errors import CompileError
    from rasp.tools.verify import same_value
    from tests.compiler.random_programs import random_program

    with_heads = 0
    for seed in range(60):
        rng = random.Random(seed)
        int_tokens = rng.random() < 0.5
        vocab = [0, 1, 2] if int_tokens else list("abc")
        root = random_program(rng, rng.randint(2, 4), int_tokens)
        try:
            model = compile_sop(root, vocab, 4, head_masks=False)
        except CompileError:
            continue
        path = tmp_path / f"{seed}.safetensors"
        model.save(path)
        export_transformer_lens(path, tmp_path / f"tl{seed}")
        tl_model = load_export(tmp_path / f"tl{seed}")
        ours = transformer.load(path)
        inputs = [list(t) for k in range(1, 5) for t in itertools.product(vocab, repeat=k)]
        ids, lengths = ours.encode(inputs)
        with torch.no_grad():
            # None where logits tie: only at inputs the program has no value for, skipped below
            outputs = ours.decode(tl_model(ids), lengths, undecided=None)  # type: ignore[operator]
        for tokens, got in zip(inputs, outputs):
            try:
                expected = S.evaluate(root, tokens).values
            except RaspError:
                continue
            assert len(got) == len(expected), (seed, tokens)
            assert all(same_value(g, e) for g, e in zip(got, expected)), (seed, tokens, got)
        with_heads += model.config["n_heads"] > 0
    assert with_heads >= 30  # 45 today


# Head widths 4, 5 and 4 at N = 4 without head masks: the middle layer's heads each select one key
# (any width), the last one's width head must score exactly (a power-of-4 width, compiler.assemble).
MIXED_WIDTHS = """v1 = aggregate(select(tokens, tokens, >) or select(indices, 3, <=), tokens, "b");
v3 = (tokens == "b") and (v1 == "b");
v4 = aggregate(select(indices, indices - 1, ==), v3);
v5 = selector_width(select(v4, v4, ==) or select(v4, v4, >));
"""


def test_layers_of_unrelated_widths_export_at_a_power_of_4(tmp_path: Path) -> None:
    """Padding widths 4, 5, 4 to 5 would scale the width head's W_Q by sqrt(5/4), and its decoding
    MLP's margin 4 would no longer hold (float32 error up to 7): the export was refused. Padded to
    16 the model keeps its certificate, and TransformerLens gives the runtime's outputs on every
    input (most of which the interpreter refuses: a mean of strings)."""
    torch = pytest.importorskip("torch")
    import transformer
    from compiler import compile_sop
    from rasp.interpreter import load_source

    root = load_source(Source("mixed.rasp", MIXED_WIDTHS)).get("v5")
    model = compile_sop(root, list("abc"), 4, head_masks=False)
    assert [layer["d_head"] for layer in model.config["layers"]] == [4, 5, 4]
    assert model.config["d_head"] == 5 and uniform_d_head(model.config) == 16
    path = tmp_path / "m.safetensors"
    model.save(path)
    export_transformer_lens(path, tmp_path / "tl")
    assert json.loads((tmp_path / "tl" / "config.json").read_text())["d_head"] == 16
    tl_model = load_export(tmp_path / "tl")
    ours = transformer.load(path)
    inputs = [list(t) for k in range(1, 5) for t in itertools.product("abc", repeat=k)]
    ids, lengths = ours.encode(inputs)
    with torch.no_grad():
        theirs = tl_model(ids)  # type: ignore[operator]
    assert torch.allclose(theirs, ours.forward(ids), atol=1e-5)
    assert ours.decode(theirs, lengths) == ours.run(inputs)


def test_a_padding_that_rounds_away_the_certificate_is_refused_with_the_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the widest layer's width (5) as TransformerLens's, the width-4 layers' W_Q would
    scale by sqrt(5/4): the export is refused, naming the padding and the decision it breaks."""
    from compiler import compile_sop
    from rasp.interpreter import load_source
    from transformer import fileformat

    root = load_source(Source("mixed.rasp", MIXED_WIDTHS)).get("v5")
    path = tmp_path / "m.safetensors"
    compile_sop(root, list("abc"), 4, head_masks=False).save(path)
    monkeypatch.setattr(fileformat, "uniform_d_head", lambda config: int(config["d_head"]))
    with pytest.raises(RaspError) as info:
        export_transformer_lens(path, tmp_path / "tl")
    message = str(info.value)
    assert "heads padded to width 5 (layer 0's from 4, layer 2's from 4)" in message
    assert (
        "then layer 2 mlp (v5.part0) has a relu decision of margin 4 but float32 error" in message
    )
    assert "transformer.load" in (info.value.hint or "")
    assert not (tmp_path / "tl").exists()  # nothing written


@pytest.mark.parametrize("held", ["none", "unproved"])
def test_a_rounding_padding_of_an_unproved_file_is_refused_as_such(
    held: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file without a certificate was exported with the rounded padding unchecked; one compiled
    with require_certificate=False was refused as "losing its certificate", which it never had.
    Both are refused, saying why: nothing shows the padded model computes the program."""
    from compiler import compile_sop
    from compiler.certify import Certificate
    from rasp.interpreter import load_source
    from transformer import fileformat

    root = load_source(Source("mixed.rasp", MIXED_WIDTHS)).get("v5")
    model = compile_sop(root, list("abc"), 4, head_masks=False, require_certificate=False)
    if held == "none":
        del model.metadata["certificate"]
    else:  # as the compile writes a model it could not prove
        model.metadata["certificate"] = Certificate((), ("a decision is not proved",)).to_json()
    path = tmp_path / "m.safetensors"
    model.save(path)
    monkeypatch.setattr(fileformat, "uniform_d_head", lambda config: int(config["d_head"]))
    with pytest.raises(RaspError) as info:
        export_transformer_lens(path, tmp_path / "tl")
    message = str(info.value)
    assert "loses its certificate" not in message
    assert "cannot be certified: heads padded to width 5 (layer 0's from 4, layer 2's from 4)" in (
        message
    )
    why = "holds no certificate" if held == "none" else "the file is not proved"
    assert why in message and "nothing shows the padded model computes the program" in message
    assert not (tmp_path / "tl").exists()  # nothing written


def test_uniform_head_width_keeps_exact_scalings_exact() -> None:
    layers = [{"d_head": d, "n_heads": 1, "d_mlp": 0} for d in (4, 5, 4)]
    assert uniform_d_head({"d_head": 5, "layers": layers}) == 16
    related = [{"d_head": d, "n_heads": 1, "d_mlp": 0} for d in (5, 20, 0)]
    assert uniform_d_head({"d_head": 20, "layers": related}) == 20  # 20 / 5 = 4: exact already
    assert uniform_d_head({"d_head": 16, "layers": layers[:1] + related[:1]}) == 16
    assert uniform_d_head({"d_head": 17, "layers": [{"d_head": 17}, {"d_head": 3}]}) == 64
    assert uniform_d_head({"d_head": 7}) == 7  # format version 1: one shape already


@pytest.mark.parametrize("layers", [True, False], ids=["per-layer", "format-1"])
def test_a_model_without_mlp_units_runs_in_transformer_lens(layers: bool, tmp_path: Path) -> None:
    """The format allows config.d_mlp 0 where no layer has hidden units (the compiler writes 1):
    exported as 0, TransformerLens built the model and its forward died ('cannot reshape tensor
    of 0 elements'). The export gives it one zero unit, which adds nothing."""
    torch = pytest.importorskip("torch")
    import transformer
    from transformer.fileformat import tensor_shapes

    made = identity(["a", "b"])
    config = made.metadata["config"]
    config.update(n_layers=1, n_heads=0, d_head=0, d_mlp=0)
    if layers:
        config["layers"] = [{"n_heads": 0, "d_head": 0, "d_mlp": 0}]
    made.metadata["layers"] = [{"attn": [], "mlp": []}]
    made.tensors.update({name: np.zeros(shape, np.float32) for name, shape in
                         tensor_shapes(config).items() if name not in made.tensors})  # fmt: skip
    path = made.save(tmp_path / "m.safetensors")
    export_transformer_lens(path, tmp_path / "tl")
    assert json.loads((tmp_path / "tl" / "config.json").read_text())["d_mlp"] == 1
    assert interop.to_transformer_lens(path)[0]["d_mlp"] == 1
    tl_model = load_export(tmp_path / "tl")
    ours = transformer.load(path)
    inputs = [list("ab"), list("b")]
    ids, lengths = ours.encode(inputs)
    with torch.no_grad():
        theirs = tl_model(ids)  # type: ignore[operator]
    assert torch.equal(theirs, ours.forward(ids))
    assert ours.decode(theirs, lengths) == ours.run(inputs) == [["a", "b"], ["b"]]


def test_a_failed_write_leaves_the_earlier_export_whole(
    prev_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config and guide were written in place before the weights: a full disk while writing
    the weights left another model's config.json beside the earlier export's weights. Now nothing
    is replaced unless every file was written."""
    import safetensors.numpy

    out = tmp_path / "tl"
    export_transformer_lens(prev_model, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    other = mean_of_a().save(tmp_path / "mean.safetensors")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors.numpy, "save_file", full_disk)
    with pytest.raises(RaspError, match="cannot write .*model.safetensors: No space left"):
        export_transformer_lens(other, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # and no temporary files


def test_a_rounding_padding_of_a_file_without_a_reach_says_it_cannot_be_rechecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proved file without the reach the re-certification walks was refused as 'loses its
    certificate', with no decision named: nothing had failed, the check could not run."""
    from compiler import compile_sop
    from rasp.interpreter import load_source
    from transformer import fileformat

    root = load_source(Source("mixed.rasp", MIXED_WIDTHS)).get("v5")
    model = compile_sop(root, list("abc"), 4, head_masks=False)
    del model.metadata["reach"]
    path = tmp_path / "m.safetensors"
    model.save(path)
    monkeypatch.setattr(fileformat, "uniform_d_head", lambda config: int(config["d_head"]))
    with pytest.raises(RaspError) as info:
        export_transformer_lens(path, tmp_path / "tl")
    message = str(info.value)
    assert "loses its certificate" not in message
    assert message.endswith(
        "cannot be certified: heads padded to width 5 (layer 0's from 4, layer 2's from 4) scale "
        "W_Q and b_Q by a factor that rounds, and the padded weights cannot be re-checked (the "
        "file holds no reach to certify against)"
    )
    assert "rasp compile" in (info.value.hint or "")
    assert not (tmp_path / "tl").exists()


def test_the_refusal_names_a_decision_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ReLU of exact input decided at 0 (margin 0, bound 0) holds; the refusal named it as the
    broken decision when it came before the one that fails (margin > bound was the test)."""
    import importlib

    from compiler import compile_sop
    from compiler.certificate import Certificate, Check
    from rasp.interpreter import load_source
    from transformer import fileformat

    root = load_source(Source("mixed.rasp", MIXED_WIDTHS)).get("v5")
    path = tmp_path / "m.safetensors"
    compile_sop(root, list("abc"), 4, head_masks=False).save(path)
    monkeypatch.setattr(fileformat, "uniform_d_head", lambda config: int(config["d_head"]))
    held = Check("layer 0 mlp", "a", "a", "relu", 0.0, 0.0, "")
    broken = Check("layer 2 mlp", "v5", "v5", "relu", 4.0, 7.0, "")
    certify = importlib.import_module(
        "compiler.certify"
    )  # the package exports a function of its name
    monkeypatch.setattr(certify, "recheck", lambda *args: Certificate((held, broken)))
    with pytest.raises(
        RaspError, match="then layer 2 mlp \\(v5\\) has a relu decision of margin 4"
    ):
        export_transformer_lens(path, tmp_path / "tl")


def _without_positions(tmp_path: Path, max_len: int) -> Path:
    """previous_token's file without W_pos (format version 3), its header saying `max_len`."""
    model = previous_token()
    model.tensors.pop("pos_embed.W_pos")
    model.metadata["config"].update(positional=False, n_ctx=max_len + 1)
    model.metadata["max_len"] = max_len
    return model.save(tmp_path / "huge.safetensors")


def test_an_export_over_the_parameter_limit_is_refused_before_padding(tmp_path: Path) -> None:
    """A file without W_pos whose header says max_len 10^8 was padded to a 6.4 GB W_pos and
    written (50 s), with no check: TransformerLens's layout is sized first, as compile sizes a
    model, and refused over the limit, with the figures, before anything is allocated or written."""
    path = _without_positions(tmp_path, 10**8)
    with pytest.raises(RaspError) as info:
        export_transformer_lens(path, tmp_path / "tl")
    message = str(info.value)
    assert message.startswith(f"{path}: padded to TransformerLens's layout the model would have ")
    assert "1,600,000," in message and "6.4 GB of float32 weights" in message
    assert (
        "1 layer of 1 head of width 7 and 1 MLP unit, and a W_pos of 100,000,001 positions x 16 "
        in message
    )
    assert "(the file has none)" in message
    hint = info.value.hint or ""
    assert hint.startswith("the limit is 200,000,000 parameters") and "max_params" in hint
    assert not (tmp_path / "tl").exists()
    with pytest.raises(RaspError, match="the limit is 1,000 parameters"):
        export_transformer_lens(
            _without_positions(tmp_path, 100), tmp_path / "tl", max_params=1_000
        )
    assert export_transformer_lens(_without_positions(tmp_path, 100), tmp_path / "tl")
