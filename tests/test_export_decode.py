"""Decoding an exported model's TransformerLens logits: the README's recipe as written, and
`transformer.interop.decode_logits`, against the runtime and the interpreter."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import pytest

from rasp.errors import Source
from rasp.tools.export import export_transformer_lens
from tests.export_helpers import hooked_transformer, load_export
from transformer import interop


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
    hooked_transformer()  # skips (or fails, where CI requires it) without TransformerLens
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
    hooked_transformer()
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
    hooked_transformer()
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
    # a hand-edited max_len: not "the model reads at most -1 tokens" on a logit check
    edited = json.loads(guide.read_text())
    for bad in (0, -1):
        edited["max_len"] = bad
        with pytest.raises(ModelFormatError, match=f"'max_len' must be at least 1, got {bad}"):
            interop.decode_logits(edited, torch.zeros(1, 3, 1), [2])


def test_load_and_process_state_dict_zeroes_a_numerical_output(tmp_path: Path) -> None:
    """What README.md and docs/runtime.md say of TransformerLens's weight processing: its default
    `center_unembed` subtracts the mean logit, so hist's one logit column is 0 everywhere and every
    count decodes as the value nearest 0 (1: every token counts itself); `load_state_dict` keeps
    the counts."""
    torch = pytest.importorskip("torch")
    hooked, hooked_config = hooked_transformer()
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
        assert interop.decode_logits(guide, processed(ids), [5]) == [[1, 1, 1, 1, 1]]
        plain = load_export(tmp_path / "tl")
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
