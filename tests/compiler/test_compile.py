"""End to end: compiled models, run by the torch runtime, agree with `rasp.sops.evaluate` on every input."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import sop_builders as B
from safetensors.numpy import load_file

from compiler import CompiledModel, compile_sop
from compiler.attention import SOFTMAX_GAP
from rasp import sops as S
from rasp.errors import CompileError, RaspError, Source
from tests.runtime_helpers import as_runtime, residuals, run_compiled
from transformer import ModelInputError


def agrees(got: Sequence, expected: Sequence) -> bool:
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        if isinstance(e, float) and not isinstance(e, bool):
            if not math.isclose(float(g), e, rel_tol=1e-6, abs_tol=1e-9):
                return False
        elif g != e or (type(g) is bool) != (type(e) is bool):
            return False
    return True


def check_inputs(model: CompiledModel, root: S.SOp, inputs: list[list], batch: int = 64) -> int:
    """Runs `inputs` in padded batches; returns how many were compared (interpreter errors skipped)."""
    compared = 0
    runtime = as_runtime(model)
    for start in range(0, len(inputs), batch):
        chunk = inputs[start : start + batch]
        outputs = run_compiled(runtime, chunk)
        for tokens, got in zip(chunk, outputs):
            try:
                expected = S.evaluate(root, tokens).values
            except RaspError:
                continue
            assert agrees(got, expected), (tokens, got, expected)
            compared += 1
    return compared


def exact_outcome(root: S.Node, tokens: list) -> object:
    """The interpreter's result with every value exact (1, 1.0 and True apart, -0.0 too), or
    'error': what a rewrite of the program must keep on every input."""
    try:
        value = S.evaluate(root, tokens)
    except RaspError:
        return "error"
    assert isinstance(value, S.SeqValue)
    return value.type, tuple((type(v).__name__, repr(v)) for v in value.values)


def all_inputs(vocab: Sequence, up_to: int) -> list[list]:
    return [list(t) for n in range(1, up_to + 1) for t in itertools.product(vocab, repeat=n)]


def random_inputs(vocab: Sequence, max_len: int, count: int, seed: int) -> list[list]:
    rng = random.Random(seed)
    return [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(count)]


def compound_selectors() -> S.SOp:
    """or / not / and over different s-ops on each side (joint readings)."""
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    near = S.SelectOr(
        left=S.Select(keys=indices, queries=indices, comparison=S.Comparison.EQ),
        right=S.SelectAnd(
            left=S.Select(keys=t, queries=t, comparison=S.Comparison.EQ),
            right=S.SelectNot(
                inner=S.Select(keys=indices, queries=indices, comparison=S.Comparison.GT)
            ),
        ),
    )
    return S.SelectorWidthSOp(selector=near, name="near")


def int_mean() -> S.SOp:
    """A numerical mean of ints, decoded through a map (steps at midpoints)."""
    t = S.TokensSOp(kind=S.TokenKind.INT, name="n")
    indices = S.IndicesSOp(name="indices")
    mean = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=indices, comparison=S.Comparison.LT),
        sop=t,
        default=0,
        name="mean_before",
    )
    return B.mapped(lambda m: round(m), mean, name="rounded")


def shift_right() -> S.SOp:
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    plus1 = B.mapped(lambda i: i + 1, indices)
    return S.AggregateSOp(
        selector=S.Select(keys=plus1, queries=indices, comparison=S.Comparison.EQ),
        sop=t,
        default="_",
        name="shifted",
    )


def length_parity() -> S.SOp:
    length = S.LengthSOp(name="length")
    return B.mapped(lambda n: n % 2 == 0, length, name="even")


PROGRAMS: dict[str, tuple[Callable[[], S.SOp], Sequence]] = {
    "reverse": (B.reverse, "abc"),
    "hist": (B.hist, "abc"),
    "sort_unique": (B.sort_unique, "abc"),
    "sort_stable": (B.sort_stable, "abc"),
    "frac_prevs": (B.frac_prevs, "abc"),
    "dyck1": (B.dyck1, "()a"),
    "compound_selectors": (compound_selectors, "abc"),
    "int_mean": (int_mean, [0, 1, 5]),
    "shift_right": (shift_right, "abc"),
    "length_parity": (length_parity, "ab"),
    "widths_of_one_key": (B.widths_of_one_key, "abc"),
}


@pytest.mark.exactness
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_exact_on_every_short_input_and_random_long_ones(name: str) -> None:
    make, vocab = PROGRAMS[name]
    root = make()
    model = compile_sop(root, list(vocab), 12)
    assert check_inputs(model, root, all_inputs(list(vocab), 5)) > 0
    assert check_inputs(model, root, random_inputs(list(vocab), 12, 150, seed=len(name))) > 0


@pytest.mark.exactness
@pytest.mark.parametrize("name", ["reverse", "hist", "sort_stable", "dyck1"])
def test_exact_at_n_40_on_random_padded_batches(name: str) -> None:
    make, vocab = PROGRAMS[name]
    root = make()
    model = compile_sop(root, list(vocab), 40)
    inputs = random_inputs(list(vocab), 40, 120, seed=7) + [
        [vocab[0]] * 40,
        [vocab[-1]],
    ]
    assert check_inputs(model, root, inputs, batch=16) > 0


@pytest.mark.exactness
def test_padding_never_changes_a_real_position() -> None:
    root = B.sort_stable()
    model = compile_sop(root, list("abc"), 10)
    inputs = random_inputs(list("abc"), 10, 30, seed=3)
    runtime = as_runtime(model)
    alone = [run_compiled(runtime, [x])[0] for x in inputs]
    together = run_compiled(runtime, inputs)
    assert alone == together
    full = residuals(runtime, inputs)
    short = min(range(len(inputs)), key=lambda b: len(inputs[b]))
    n = len(inputs[short])
    solo = residuals(runtime, [inputs[short]])
    np.testing.assert_array_equal(full[-1][short, : n + 1], solo[-1][0, : n + 1])


@pytest.mark.exactness
def test_causal_compilation_runs_the_same_prefix_programs() -> None:
    root = B.frac_prevs()
    model = compile_sop(root, list("ab"), 8, causal=True)
    assert model.config["attention_dir"] == "causal"
    check_inputs(model, root, all_inputs(list("ab"), 5))


def test_residuals_are_returned_per_stage_and_bos_is_input_independent() -> None:
    model = compile_sop(B.reverse(), list("abc"), 6)
    stages = residuals(model, [list("abc"), list("cab")])
    assert len(stages) == 1 + 2 * model.config["n_layers"]
    for stage in stages:
        assert stage.shape == (2, 4, model.config["d_model"])
        np.testing.assert_array_equal(stage[0, 0], stage[1, 0])  # the BOS position


def test_softmax_gap_underflows_to_zero_in_float32() -> None:
    assert np.exp(np.float32(-SOFTMAX_GAP), dtype=np.float32) == 0.0
    scores = np.array([0.0, -SOFTMAX_GAP], dtype=np.float32)
    weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    assert weights[1] == 0.0 and weights[0] == 1.0


def test_metadata_follows_the_format_and_saves(tmp_path) -> None:
    text = "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n"
    model = compile_sop(B.reverse(), list("abc"), 10, source=Source("programs/reverse.rasp", text))
    meta = model.metadata
    assert meta["format"] == "rasp-forge-model" and meta["format_version"] == 2
    cfg = meta["config"]
    assert cfg == model.config
    assert cfg["n_ctx"] == 11 and cfg["d_vocab"] == 5 and cfg["act_fn"] == "relu"
    assert meta["vocab"] == {"tokens": ["a", "b", "c"], "bos_id": 3, "pad_id": 4}
    assert meta["output"]["name"] == "reverse" and meta["output"]["type"] == "strings"
    assert len(meta["residual"]) == cfg["d_model"]
    assert meta["residual"][:3] == ["one", "bos", "pad"]
    assert "indices^2" in meta["residual"] and "length.frac" in meta["residual"]  # addressed
    assert [len(layer["attn"]) for layer in meta["layers"]] == [1, 1]
    assert (
        meta["program"]["file"] == "programs/reverse.rasp" and len(meta["program"]["sha256"]) == 64
    )
    path = tmp_path / "reverse.safetensors"
    model.save(path)
    tensors = load_file(str(path))
    assert set(tensors) == set(model.weights)
    for layer, shape in enumerate(cfg["layers"]):  # each layer stores its own shape
        assert tensors[f"blocks.{layer}.attn.W_Q"].shape == (
            shape["n_heads"],
            cfg["d_model"],
            shape["d_head"],
        )
        assert tensors[f"blocks.{layer}.mlp.W_in"].shape == (cfg["d_model"], shape["d_mlp"])
    # reverse's second layer is the flip alone: no MLP units are stored for it
    assert cfg["layers"][1]["d_mlp"] == 0 and cfg["d_mlp"] == cfg["layers"][0]["d_mlp"]
    from safetensors import safe_open

    with safe_open(str(path), "np") as f:
        assert json.loads(f.metadata()["rasp_forge"]) == meta


def test_models_are_deterministic() -> None:
    a = compile_sop(B.sort_stable(), list("abc"), 8)
    b = compile_sop(B.sort_stable(), list("abc"), 8)
    assert a.metadata == b.metadata
    for key in a.weights:
        np.testing.assert_array_equal(a.weights[key], b.weights[key])


def test_sizes_beat_tracr_at_n_40() -> None:
    sizes = {
        name: compile_sop(PROGRAMS[name][0](), list("abc"), 40).param_count()
        for name in ("reverse", "hist", "sort_stable")
    }
    assert sizes["reverse"] < 3_640_000 / 10
    assert sizes["hist"] < 20_500 / 5
    assert sizes["sort_stable"] < 473_000


def test_bad_arguments_are_reported_together() -> None:
    with pytest.raises(CompileError) as err:
        compile_sop(B.hist(), [], 0)
    messages = [d.message for d in err.value.diagnostics]
    assert any("vocabulary is empty" in m for m in messages)
    assert any("max_len" in m for m in messages)
    with pytest.raises(CompileError):
        compile_sop("tokens", list("ab"), 3)  # type: ignore[arg-type]


def test_tokens_and_names_a_model_file_cannot_hold_are_refused() -> None:
    """NaN and infinite tokens compiled and then failed in `save` (JSON has no NaN: a bare
    ValueError), an unhashable token raised TypeError, and `name=5` wrote a file that `load`
    refuses ('output.name' must be a string)."""
    for vocab, message in (
        ([float("nan"), "a"], "vocabulary tokens must be finite numbers, got nan"),
        (["a", float("-inf")], "vocabulary tokens must be finite numbers, got -inf"),
        ([["a"], "b"], "vocabulary tokens must be atoms, got ['a']"),
    ):
        with pytest.raises(CompileError) as err:
            compile_sop(B.hist(), vocab, 3)
        assert message in [d.message for d in err.value.diagnostics]
    with pytest.raises(CompileError, match="name must be a string, got 5"):
        compile_sop(B.hist(), list("ab"), 3, name=5)  # type: ignore[arg-type]


def test_a_mean_with_a_string_default_names_the_default() -> None:
    # The averaged values are numbers; only the default is not (it said "non-numeric values").
    sel = S.Select(keys=S.TokensSOp(), queries=S.ConstSOp(value="a"), comparison=S.Comparison.EQ)
    mean = S.AggregateSOp(selector=sel, sop=S.IndicesSOp(), default="none")
    with pytest.raises(CompileError, match='its default "none" is not a number'):
        compile_sop(mean, list("ab"), 4)
    strings = S.AggregateSOp(selector=sel, sop=S.TokensSOp(), default="none")
    assert compile_sop(strings, list("ab"), 4).param_count() > 0  # one key's string, no mean


def test_a_default_that_is_not_an_atom_is_refused() -> None:
    # The interpreter accepts `aggregate(sel, s, [1])`, as the original does (the list fails only
    # where it is used); the compiler refuses it at once, located, instead of failing inside.
    full = S.Select(
        keys=S.ConstSOp(value=1), queries=S.ConstSOp(value=1), comparison=S.Comparison.EQ
    )
    listed = S.AggregateSOp(selector=full, sop=S.IndicesSOp(), default=[1])  # type: ignore[arg-type]
    with pytest.raises(CompileError, match="this aggregate's default is a list, not an atom"):
        compile_sop(listed, list("ab"), 4)


def test_every_failing_expression_is_reported_at_once() -> None:
    t = S.TokensSOp(kind=S.TokenKind.INT, name="n")
    src = Source("<t>", "a = n // 0;\nb = n % 0;\n")
    from rasp.errors import Span

    a = B.mapped(lambda x: x // 0, t, name="a")
    a.span = Span(src, 1, 5, 1, 11)
    b = B.mapped(lambda x: x % 0, t, name="b")
    b.span = Span(src, 2, 5, 2, 10)
    root = B.mapped(lambda x, y: x + y, a, b, name="c")
    with pytest.raises(CompileError) as err:
        compile_sop(root, [1, 2], 4)
    lines = [d.span.line for d in err.value.diagnostics if d.span is not None]
    assert lines == [1, 2]
    assert "<t>:1:5: error:" in err.value.render()


def test_unknown_tokens_and_lengths_are_input_errors() -> None:
    model = compile_sop(B.hist(), list("ab"), 4)
    with pytest.raises(ModelInputError, match="not in the model's vocabulary"):
        run_compiled(model, [list("abz")])
    with pytest.raises(ModelInputError, match="compiled for at most 4"):
        run_compiled(model, [list("ababa")])


# -- the shipped .rasp programs ---------------------------------------------------------------------

PROGRAM_DIR = Path(__file__).resolve().parents[2] / "programs"
PROGRAM_VOCAB = {"dyck1": "()", "dyck2": "(){}", "frac_prevs": "abx", "hist_bos": "§ab"}


def load_program(name: str) -> tuple[S.SOp, Source]:
    from rasp.interpreter import load_file

    path = PROGRAM_DIR / f"{name}.rasp"
    interpreter = load_file(path)
    sop = interpreter.get(interpreter.last_assigned)
    assert isinstance(sop, S.SOp)
    return sop, Source(str(path), path.read_text(encoding="utf-8"))


@pytest.mark.exactness
@pytest.mark.parametrize("name", sorted(p.stem for p in PROGRAM_DIR.glob("*.rasp")))
def test_every_shipped_program_compiles_exactly(name: str) -> None:
    sop, source = load_program(name)
    vocab = list(PROGRAM_VOCAB.get(name, "abc"))
    model = compile_sop(sop, vocab, 8, source=source)
    assert model.metadata["program"]["file"].endswith(f"{name}.rasp")
    inputs = all_inputs(vocab, 4) + random_inputs(vocab, 8, 40, seed=11)
    assert check_inputs(model, sop, inputs) > 0


PAPER_ATTENTION_LAYERS = {
    "reverse": 2,
    "hist": 1,
    "double_hist": 2,
    "sort": 2,
    "most_freq": 3,
    "dyck1": 2,
    "dyck2": 4,
}


@pytest.mark.parametrize("name", sorted(PAPER_ATTENTION_LAYERS))
def test_attention_layers_within_the_papers_counts(name: str) -> None:
    if not (PROGRAM_DIR / f"{name}.rasp").exists():
        pytest.skip(f"programs/{name}.rasp not shipped")
    sop, _ = load_program(name)
    model = compile_sop(sop, list(PROGRAM_VOCAB.get(name, "abc")), 10)
    attention_layers = sum(1 for layer in model.metadata["layers"] if layer["attn"])
    assert attention_layers <= PAPER_ATTENTION_LAYERS[name]


@pytest.mark.exactness
@pytest.mark.slow
@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("name", ["reverse", "hist", "sort", "double_hist", "dyck1"])
def test_exact_at_large_n(name: str, n: int) -> None:
    sop, _ = load_program(name)
    vocab = list(PROGRAM_VOCAB.get(name, "abc"))
    model = compile_sop(sop, vocab, n)
    inputs = random_inputs(vocab, n, 24, seed=n) + [[vocab[0]] * n, [vocab[-1]] * n]
    assert check_inputs(model, sop, inputs, batch=8) > 0


@pytest.mark.exactness
def test_causal_compilation_refuses_heads_that_look_ahead() -> None:
    with pytest.raises(CompileError) as err:
        compile_sop(B.reverse(), list("ab"), 5, causal=True)
    messages = " ".join(d.message for d in err.value.diagnostics)
    assert "length" in messages and "later positions" in messages
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    earlier_same = S.SelectAnd(
        left=S.Select(keys=t, queries=t, comparison=S.Comparison.EQ),
        right=S.Select(keys=indices, queries=indices, comparison=S.Comparison.LEQ),
    )
    root = S.SelectorWidthSOp(selector=earlier_same, name="seen")
    model = compile_sop(root, list("ab"), 6, causal=True)
    check_inputs(model, root, all_inputs(list("ab"), 6))


@pytest.mark.exactness
def test_causal_compilation_checks_only_what_the_model_still_computes() -> None:
    """An s-op the value analysis folds to a constant builds no head, so it may look ahead: here
    `indices < length` read at the last position (True everywhere), and the `length` only it
    reads. A width of every key folds to the length but is named as written."""
    t, indices, length = B.tokens(), S.IndicesSOp(name="indices"), S.LengthSOp(name="length")
    last = B.mapped(lambda n: n - 1, length, text="length - 1")
    at_last = S.Select(keys=indices, queries=last, comparison=S.Comparison.EQ)
    everywhere = B.mapped(lambda a, n: a < n, indices, length, text="indices < length")
    always = S.AggregateSOp(selector=at_last, sop=everywhere, default=None, name="always")
    root = B.mapped(lambda a, b: a == "a" and b, t, always, name="first_a", text="t and always")
    model = compile_sop(root, list("ab"), 6, causal=True)
    assert check_inputs(model, root, all_inputs(list("ab"), 6)) == 126

    every = S.SelectOr(
        left=S.Select(keys=indices, queries=indices, comparison=S.Comparison.LT),
        right=S.Select(keys=indices, queries=indices, comparison=S.Comparison.GEQ),
    )
    with pytest.raises(CompileError) as err:
        compile_sop(S.SelectorWidthSOp(selector=every, name="n"), list("ab"), 5, causal=True)
    (problem,) = err.value.diagnostics
    assert "may select later positions" in problem.message and "length" not in problem.message


def test_a_program_that_never_reads_the_tokens_has_no_token_one_hot(tmp_path: Path) -> None:
    """`length.rasp` reads only positions: its residual holds no `tokens:*` dims, so d_model is
    the same over 3 tokens and over 2,000 (it was |V| + 6), the model equals the interpreter on
    every short input, and `rasp verify --model` passes from the file."""
    import contextlib
    import io

    from rasp.interpreter import load_file as load_program
    from rasp.tools.cli import main

    program = Path(__file__).parents[2] / "programs" / "length.rasp"
    root = load_program(program).get("seq_length")
    small = compile_sop(root, list("abc"), 10)
    many = [f"t{i}" for i in range(2_000)]
    large = compile_sop(root, many, 10)
    d_model = large.config["d_model"]
    assert small.config["d_model"] == d_model == 6
    assert not any(label.startswith("tokens:") for label in large.metadata["residual"])
    assert large.param_count() < 40 * len(many)  # W_E's 2,002 rows of 6: no |V|^2 term
    assert check_inputs(small, root, all_inputs(list("abc"), 5)) > 0
    assert check_inputs(large, root, random_inputs(many, 10, 100, seed=3)) > 0
    path = tmp_path / "length.safetensors"
    large.save(path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", str(program), "--model", str(path)])
    assert code == 0, out.getvalue() + err.getvalue()
