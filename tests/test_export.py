"""TransformerLens export: config, files, and (when TransformerLens 2.x/3.x is installed) a real load."""

from __future__ import annotations

import itertools
import json
import os
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from rasp.errors import RaspError, Source
from rasp.tools.export import export_transformer_lens, to_hooked_transformer_config
from rasp.tools.inspect import ModelFileError
from tests.transformer.handmade_models import mean_of_a, previous_token
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
REQUIRED = os.environ.get("RASP_REQUIRE_TRANSFORMER_LENS") == "1"


def _hooked_transformer() -> tuple[type, type]:
    try:
        import transformer_lens as tl
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("TransformerLens is not installed (pip install -e '.[tl]')")
    if not hasattr(tl, "HookedTransformer"):
        if REQUIRED:
            pytest.fail("TransformerLens >= 4 has no HookedTransformer; CI must install 2.x/3.x")
        pytest.skip("TransformerLens >= 4 has no HookedTransformer")
    return tl.HookedTransformer, tl.HookedTransformerConfig


def _load_export(directory: Path) -> object:
    hooked, hooked_config = _hooked_transformer()
    import safetensors.torch

    with warnings.catch_warnings():  # 3.x warns that HookedTransformer goes away in 4.0
        warnings.simplefilter("ignore", DeprecationWarning)
        tl_model = hooked(hooked_config(**json.loads((directory / "config.json").read_text())))
    missing, unexpected = tl_model.load_state_dict(
        safetensors.torch.load_file(str(directory / "model.safetensors")), strict=False
    )
    assert not unexpected and all(k.endswith((".mask", ".IGNORE")) for k in missing)
    return tl_model


@pytest.mark.parametrize("build", [previous_token, mean_of_a], ids=["categorical", "numerical"])
def test_loads_into_a_real_hooked_transformer(build: object, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import transformer

    model_path = build().save(tmp_path / "m.safetensors")  # type: ignore[operator]
    export_transformer_lens(model_path, tmp_path / "tl")
    tl_model = _load_export(tmp_path / "tl")
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
    tl_model = _load_export(tmp_path / "tl")
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

    hooked, hooked_config = _hooked_transformer()
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
    _hooked_transformer()  # skips (or fails, where CI requires it) without TransformerLens
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
        tl_model = _load_export(tmp_path / f"tl{seed}")
        ours = transformer.load(path)
        inputs = [list(t) for k in range(1, 5) for t in itertools.product(vocab, repeat=k)]
        ids, lengths = ours.encode(inputs)
        with torch.no_grad():
            outputs = ours.decode(tl_model(ids), lengths)  # type: ignore[operator]
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
    tl_model = _load_export(tmp_path / "tl")
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


def _readme_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokens: list
) -> tuple[list[tuple[str, object]], dict[str, object]]:
    """The README's TransformerLens recipe, run as written in `tmp_path` (where `tl_reverse` is the
    export to load) on `tokens` instead of "abcab": each example's source and what it evaluates to
    (None for a statement), and the namespace it ran in."""
    import doctest

    from tests.doc_examples import ROOT, blocks

    (recipe,) = [
        b
        for b in blocks(ROOT / "README.md")
        if b.language == "pycon" and "HookedTransformer(cfg)" in b.text
    ]
    assert recipe.text.count('"abcab"') == 1  # the input, replaced by the test's tokens
    examples = doctest.DocTestParser().get_examples(recipe.text.replace('"abcab"', repr(tokens)))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    results: list[tuple[str, object]] = []
    with warnings.catch_warnings():  # 3.x warns that HookedTransformer goes away in 4.0
        warnings.simplefilter("ignore", DeprecationWarning)
        for example in examples:
            try:
                code = compile(example.source, recipe.where, "eval")
            except SyntaxError:  # a statement
                exec(compile(example.source, recipe.where, "exec"), namespace)  # noqa: S102
                results.append((example.source, None))
            else:
                results.append((example.source, eval(code, namespace)))  # noqa: S307
    return results, namespace


def test_the_readmes_recipe_keeps_true_apart_from_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's TransformerLens recipe, as written, on a model whose vocabulary holds both `1`
    and `true`. It once looked a token up with `vocab["tokens"].index(t)`, which finds the `1` for
    `True` (Python's `True == 1`): the model was fed the wrong ids and decoded `1` for `True`."""
    pytest.importorskip("torch")
    _hooked_transformer()  # skips (or fails, where CI requires it) without TransformerLens
    import transformer
    from compiler import compile_sop
    from rasp.interpreter import load_file
    from tests.doc_examples import ROOT

    tokens = [True, 0, 1, False, True]
    path = tmp_path / "mixed.safetensors"
    reverse = load_file(ROOT / "programs" / "reverse.rasp").get("reverse")
    compile_sop(reverse, [1, True, 0, False], 6, name="reverse").save(path)
    export_transformer_lens(path, tmp_path / "tl_reverse")
    results, namespace = _readme_recipe(tmp_path, monkeypatch, tokens)
    ours = transformer.load(path)
    assert namespace["ids"].tolist() == ours.encode([tokens])[0].tolist()  # type: ignore[attr-defined]
    decoded = results[-1][1]
    assert decoded == ours.run([tokens]) == [["True", "False", "1", "0", "True"]]


def test_the_readmes_recipe_decodes_a_numerical_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's recipe on hist, whose output is one number per position: its last line gives
    the interpreter's counts. It ended with `out["values"][argmax]`, which for the one logit column
    of a numerical output is always `values[0]`: every count decoded as 0, without an error."""
    pytest.importorskip("torch")
    _hooked_transformer()
    from compiler import compile_sop
    from rasp.interpreter import load_file
    from tests.doc_examples import ROOT

    path = tmp_path / "hist.safetensors"
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    compile_sop(hist, list("abc"), 8, name="hist").save(path)
    export_transformer_lens(path, tmp_path / "tl_reverse")  # the name the recipe loads
    results, _ = _readme_recipe(tmp_path, monkeypatch, list("abcab"))
    assert results[-1][1] == [[2, 2, 1, 2, 2]]
    loaded_check = next(v for src, v in results if "missing_keys" in src)
    assert loaded_check == []


def test_the_readmes_missing_key_check_catches_the_unexported_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hist reads no position, so its compiled file has no `W_pos`: loaded into a HookedTransformer
    as it is, with `strict=False`, TransformerLens keeps its random `W_pos` and the counts come out
    wrong without an error. The recipe's missing-key check names it."""
    pytest.importorskip("torch")
    _hooked_transformer()
    from compiler import compile_sop
    from rasp.interpreter import load_file
    from tests.doc_examples import ROOT

    path = tmp_path / "hist.safetensors"
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    compile_sop(hist, list("abc"), 8, name="hist").save(path)
    export_transformer_lens(path, tmp_path / "tl_reverse")
    path.replace(tmp_path / "tl_reverse" / "model.safetensors")  # the compiled file, unexported
    results, _ = _readme_recipe(tmp_path, monkeypatch, list("abcab"))
    assert next(v for src, v in results if "missing_keys" in src) == ["pos_embed.W_pos"]


def _program_model(tmp_path: Path, text: str, vocab: list, max_len: int) -> Path:
    from compiler import compile_sop
    from rasp.interpreter import load_source

    interp = load_source(Source("p.rasp", text))
    path = tmp_path / f"m{abs(hash(text))}.safetensors"
    compile_sop(interp.get(interp.last_assigned), vocab, max_len, head_masks=False).save(path)
    return path


@pytest.mark.parametrize(
    ("text", "vocab"),
    [
        ("res = aggregate(select(indices, length - indices - 1, ==), tokens);", list("abc")),
        ("res = selector_width(select(tokens, tokens, ==));", list("abc")),  # values
        ('res = aggregate(select(indices, indices, <=), indicator(tokens == "a"));', list("ab")),
        ('res = aggregate(select(tokens, tokens, ==), indicator(tokens == "a"));', list("ab")),
        ('res = tokens == "a";', list("ab")),  # bools
        ("res = indices * 0.5;", [1, True]),  # floats
    ],
    ids=["categorical", "values", "grid", "whole-types", "bools", "floats"],
)
def test_decode_logits_from_the_export_is_the_runtimes_decoder(
    text: str, vocab: list, tmp_path: Path
) -> None:
    """`transformer.interop.decode_logits`, given only the export's `rasp_forge.json`, decodes
    logits exactly as the runtime does (value and type), for every kind of output."""
    pytest.importorskip("torch")
    import transformer

    path = _program_model(tmp_path, text, vocab, 6)
    export_transformer_lens(path, tmp_path / "tl")
    ours = transformer.load(path)
    inputs = [list(t) for k in range(1, 5) for t in itertools.product(vocab, repeat=k)]
    ids, lengths = ours.encode(inputs)
    logits = ours.forward(ids)
    guide = tmp_path / "tl" / "rasp_forge.json"
    want = ours.run(inputs)
    for got in (
        interop.decode_logits(guide, logits, lengths),
        interop.decode_logits(json.loads(guide.read_text()), logits, lengths),
    ):
        assert [[(type(v), v) for v in row] for row in got] == [
            [(type(v), v) for v in row] for row in want
        ]


def test_decode_logits_refuses_other_logits_and_bad_guides(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from transformer import ModelFormatError, ModelInputError

    path = _program_model(tmp_path, "res = selector_width(select(tokens, tokens, ==));", ["a"], 4)
    export_transformer_lens(path, tmp_path / "tl")
    guide = tmp_path / "tl" / "rasp_forge.json"
    with pytest.raises(ModelInputError, match=r"d_vocab_out = 1\], got \[1, 3, 2\]"):
        interop.decode_logits(guide, torch.zeros(1, 3, 2), [2])
    with pytest.raises(ModelInputError, match="holds 0..2 positions"):
        interop.decode_logits(guide, torch.zeros(1, 3, 1), [3])
    with pytest.raises(ModelFormatError, match="cannot read the export's guide"):
        interop.decode_logits(tmp_path / "none.json", torch.zeros(1, 3, 1), [2])
    with pytest.raises(ModelFormatError, match="metadata is missing 'output'"):
        interop.decode_logits({"max_len": 4}, torch.zeros(1, 3, 1), [2])
    # the export's other file, and a guide of no kind decode_logits takes: said as such
    with pytest.raises(ModelFormatError, match="config.json; decode_logits reads rasp_forge.json"):
        interop.decode_logits(tmp_path / "tl" / "config.json", torch.zeros(1, 3, 1), [2])
    with pytest.raises(TypeError, match="as a path or the dict json.load gives, got list"):
        interop.decode_logits([guide], torch.zeros(1, 3, 1), [2])  # type: ignore[arg-type]


def test_load_and_process_state_dict_zeroes_a_numerical_output(tmp_path: Path) -> None:
    """What README.md and docs/runtime.md say of TransformerLens's weight processing: its default
    `center_unembed` subtracts the mean logit, so hist's one logit column is 0 everywhere and every
    count decodes as 0; `load_state_dict` keeps the counts."""
    torch = pytest.importorskip("torch")
    hooked, hooked_config = _hooked_transformer()
    import logging

    import safetensors.torch

    from compiler import compile_sop
    from rasp.interpreter import load_file
    from tests.doc_examples import ROOT

    path = tmp_path / "hist.safetensors"
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    compile_sop(hist, list("abc"), 8, name="hist").save(path)
    export_transformer_lens(path, tmp_path / "tl")
    guide = tmp_path / "tl" / "rasp_forge.json"
    ids = torch.tensor([[3, 0, 1, 2, 0, 1]])  # BOS, "abcab"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        processed = hooked(
            hooked_config(**json.loads((tmp_path / "tl" / "config.json").read_text()))
        )
    state = safetensors.torch.load_file(str(tmp_path / "tl" / "model.safetensors"))
    logging.disable(logging.WARNING)  # "You are not using LayerNorm ..."
    try:
        processed.load_and_process_state_dict(dict(state))
    finally:
        logging.disable(logging.NOTSET)
    with torch.no_grad():
        assert interop.decode_logits(guide, processed(ids), [5]) == [[0, 0, 0, 0, 0]]
        plain = _load_export(tmp_path / "tl")
        assert interop.decode_logits(guide, plain(ids), [5]) == [[2, 2, 1, 2, 2]]  # type: ignore[operator]


def test_decode_logits_refuses_lengths_past_max_len(tmp_path: Path) -> None:
    """Logits with more positions than the model reads (a batch cut from a longer tensor, another
    model's) decode a grid or per-length output from tables max_len long: a length past max_len
    raised a bare IndexError from numpy (and decoded a listed-values output as if it were read)."""
    torch = pytest.importorskip("torch")
    import transformer
    from transformer import ModelInputError

    text = 'res = aggregate(select(indices, indices, <=), indicator(tokens == "a"));'  # grid
    path = _program_model(tmp_path, text, list("ab"), 4)
    export_transformer_lens(path, tmp_path / "tl")
    guide = tmp_path / "tl" / "rasp_forge.json"
    logits = torch.zeros(1, 7, 1)
    with pytest.raises(ModelInputError, match=r"lengths\[0\] is 5; the model reads at most 4"):
        interop.decode_logits(guide, logits, [5])
    ours = transformer.load(path)
    with pytest.raises(ModelInputError, match=r"lengths\[0\] is 6; the model reads at most 4"):
        ours.decode(logits, [6])
    with pytest.raises(ModelInputError, match=r"lengths\[0\] is 5; the model reads at most 4"):
        ours.to_values(torch.zeros(1, 6, dtype=torch.float64), [5])
    assert interop.decode_logits(guide, logits, [4]) == [[0, 0, 0, 0]]


def test_decode_logits_gives_a_tracr_programs_tuples_as_marked_strings(tmp_path: Path) -> None:
    """As the runtime, `decode_logits` gives a tracr output's tuples (`output.tuples`) as their
    marked strings; `rasp.tracr.boxes.unbox` (README.md, docs/inspect.md) turns each into the
    tuple the interpreter gives."""
    pytest.importorskip("torch")
    import transformer
    from rasp import tracr as rasp
    from rasp.tools.tracr_compiling import compile_rasp_to_model
    from rasp.tracr.boxes import unbox

    pairs = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices).named("pairs")
    path = tmp_path / "pairs.safetensors"
    compile_rasp_to_model(pairs, {"a", "b"}, 3, compiler_bos="BOS").save(path)
    export_transformer_lens(path, tmp_path / "tl")
    guide = tmp_path / "tl" / "rasp_forge.json"
    assert json.loads(guide.read_text())["output"]["tuples"] is True
    ours = transformer.load(path)
    ids, lengths = ours.encode([["b", "a"], ["a"]])
    got = interop.decode_logits(guide, ours.forward(ids), lengths)
    assert (
        got == [["\x00('b', 0)", "\x00('a', 1)"], ["\x00('a', 0)"]] == ours.run([["b", "a"], ["a"]])
    )
    assert [[unbox(v) for v in row] for row in got] == [[("b", 0), ("a", 1)], [("a", 0)]]
