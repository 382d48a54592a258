"""Maps of the position alone (`indices % 3 == 0`, `indices * indices`) are written by the positional
embedding: a class of the position as its own one-hot, a float32-exact number as one column; no
MLP computes them and no index one-hot is laid out for them."""

from __future__ import annotations

import random

import numpy as np
import pytest
from runtime_helpers import run_compiled
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.positional_maps import square_words
from rasp import tracr as rasp_tracr
from rasp.errors import CompileError, RaspError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp, evaluate
from rasp.tools.inspect import layer_operations, operations_table, summarize, summary_json
from rasp.tools.model_file import read_model_file
from rasp.tracr import lib, tokens

VOCAB = ["a", "b", "c"]


def _load(text: str, name: str = "res") -> SOp:
    sop = load_source(Source("<test>", text)).get(name)
    assert isinstance(sop, SOp)
    return sop


def _check(sop: SOp, model, max_len: int, seed: int = 0) -> None:
    inputs = all_inputs(VOCAB, 4) + random_inputs(VOCAB, max_len, 60, seed)
    assert check_inputs(model, sop, inputs) == len(inputs)


def _column(model, label: str) -> list[float]:
    labels = model.metadata["residual"]
    return model.weights["pos_embed.W_pos"][1:, labels.index(label)].tolist()  # positions 0..N-1


@pytest.mark.exactness
def test_a_class_of_the_position_is_its_own_one_hot() -> None:
    n = 40
    sop = _load(
        """
        third = indices % 3 == 0;
        flip = aggregate(select(indices, length - indices - 1, ==), tokens);
        res = tokens if third else flip;
        """
    )
    model = compile_sop(sop, VOCAB, n)
    labels = model.metadata["residual"]
    assert "third:True" in labels and "third:False" in labels
    assert _column(model, "third:True") == [float(i % 3 == 0) for i in range(n)]
    assert _column(model, "third:False") == [float(i % 3 != 0) for i in range(n)]
    assert not [lb for lb in labels if lb.startswith("indices:")]  # no N-wide index one-hot
    assert model.metadata["embedding"] == [{"name": "third", "op": "indices % 3 == 0"}]
    ops = [op["name"] for layer in model.metadata["layers"] for op in layer["mlp"]]
    assert "third" not in ops  # no MLP computes it
    _check(sop, model, n)


@pytest.mark.exactness
def test_a_map_of_the_position_read_as_a_number_is_one_exact_column() -> None:
    n = 16
    sop = _load(
        """
        sq = indices * indices;
        res = sq + length;
        """
    )
    model = compile_sop(sop, VOCAB, n)
    assert _column(model, "sq") == [float(i * i) for i in range(n)]
    assert not [lb for lb in model.metadata["residual"] if lb.startswith("indices")]
    _check(sop, model, n)


@pytest.mark.exactness
def test_a_number_float32_cannot_hold_is_not_embedded() -> None:
    # 1/3 is no float32 number: the map is embedded as its one-hot, and read as a number through
    # it (weights 0 and 1/3, whose rounding the certifier bounds), not stored rounded in W_pos
    n = 12
    sop = _load("res = aggregate(select(tokens, tokens, ==), indicator(indices == 0) / 3);")
    model = compile_sop(sop, VOCAB, n)
    (embedded,) = model.metadata["embedding"]
    columns = [lb for lb in model.metadata["residual"] if lb.startswith(embedded["name"])]
    assert columns and all(":" in lb for lb in columns)  # one-hot columns only
    _check(sop, model, n)


@pytest.mark.exactness
def test_classes_that_raise_somewhere_still_compile_where_the_program_runs() -> None:
    # at position 3 the map fails: every input that long fails in the interpreter too
    n = 8
    sop = _load(
        """
        w = 12 / (indices - 3);
        res = aggregate(select(tokens, tokens, ==), w);
        """
    )
    model = compile_sop(sop, VOCAB, n)
    assert _column(model, "w")[:3] == [-4.0, -6.0, -12.0]
    inputs = all_inputs(VOCAB, 3)
    assert check_inputs(model, sop, inputs) == len(inputs)


@pytest.mark.exactness
def test_a_map_with_the_position_class_as_context_reads_the_class() -> None:
    # `-1 if indices == 0 else place`: stepped on place with the 2-valued class as context, no
    # MLP sorts indices into classes first (tracr's sort_freq has this shape)
    n = 40
    sop = _load(
        """
        place = selector_width(select(tokens, tokens, <));
        res = -1 if indices == 0 else place;
        """
    )
    model = compile_sop(sop, VOCAB, n)
    names = [op["name"] for layer in model.metadata["layers"] for op in layer["mlp"]]
    assert not any("~" in name for name in names)  # no classes MLP
    assert model.metadata["config"]["n_layers"] == 1
    _check(sop, model, n)


def test_the_embedding_is_listed_by_show(tmp_path) -> None:
    sop = _load('res = tokens if indices % 2 == 0 else "x";')
    model = compile_sop(sop, VOCAB, 8)
    model.save(tmp_path / "m.safetensors")
    summary = summarize(read_model_file(tmp_path / "m.safetensors"))
    assert summary_json(summary)["embedding"] == [{"name": "_map_2", "op": "indices % 2 == 0"}]
    table = operations_table(layer_operations(model.metadata))
    assert table[1].split() == ["-", "pos_embed", "_map_2", "indices", "%", "2", "==", "0"]
    # the MLP reads one of the two columns (the other is `one` minus it), but a program s-op is
    # laid out whole, to be read back: one 1 per real position
    assert np.count_nonzero(model.weights["pos_embed.W_pos"]) == 8


@pytest.mark.exactness
def test_the_same_map_written_twice_is_embedded_once() -> None:
    # the parser makes two s-ops of the two `indices % 2`: equal at every position, one column pair
    n = 8
    sop = _load("res = selector_width(select(indices % 2, indices % 2, ==));")
    model = compile_sop(sop, VOCAB, n)
    assert model.metadata["embedding"] == [{"name": "_map_1", "op": "indices % 2"}]
    assert [lb for lb in model.metadata["residual"] if lb.startswith("_map")] == [
        "_map_1:0",
        "_map_1:1",
    ]
    _check(sop, model, n)


@pytest.mark.exactness
def test_a_matched_map_of_the_position_has_its_square_embedded() -> None:
    # tracr's shift_by compares a key's index with the query's `q - offset`, matched as
    # -c (q - k)^2: the number and its square are both columns of W_pos, so both shifts and the
    # test over them fit one layer (two before: an MLP wrote the square)
    n = 40
    program = lib.detect_pattern(tokens, "abc")
    model = compile_sop(program, VOCAB, n)
    embedded = [op["op"] for op in model.metadata["embedding"]]
    assert any(op.startswith("the square of") for op in embedded)
    assert model.metadata["config"]["n_layers"] == 1
    rng = random.Random(5)
    inputs = [[rng.choice(VOCAB) for _ in range(rng.randint(1, n))] for _ in range(100)]
    for got, tokens_in in zip(run_compiled(model, inputs), inputs, strict=True):
        assert got == list(program(tokens_in)), tokens_in


@pytest.mark.exactness
def test_none_is_a_value_of_the_position() -> None:
    # tracr's maps may give None: the position where `None if x == 1 else x` is None holds the
    # None column (a regression: None once meant "no value here")
    parity = rasp_tracr.Map(lambda x: x % 2, rasp_tracr.indices)
    program = rasp_tracr.Map(
        lambda x: None if x == 1 else x, rasp_tracr.Map(lambda x: x + 1, parity)
    )
    n = 8
    model = compile_sop(program, VOCAB, n)
    inputs = all_inputs(VOCAB, 3) + random_inputs(VOCAB, n, 20, 1)
    for got, tokens_in in zip(run_compiled(model, inputs), inputs, strict=True):
        assert got == [None if i % 2 == 0 else 2 for i in range(len(tokens_in))], tokens_in


@pytest.mark.exactness
def test_a_select_sides_classes_of_the_position_are_embedded_and_shared() -> None:
    # the paper's BOS sort: `select(indices, 0, ==)` reads indices as two classes (0 and the
    # rest), which split the positions as `indices == 0` does: two columns of W_pos serve both,
    # and no MLP (no layer) sorts the index into classes
    n = 40
    sop = _load(
        """
        def bos_width(sel) {
            with_bos = sel or select(indices, 0, ==);
            return round(1 / aggregate(with_bos, indicator(indices == 0))) - 1;
        }
        goes_before = select(tokens, tokens, <) or (select(tokens, tokens, ==) and
                                                    select(indices, indices, <));
        place = -1 if indices == 0 else bos_width(goes_before);
        take = select(place, indices - 1, ==) or
               (select(indices, 0, ==) and select(indices, indices, ==));
        res = aggregate(take, tokens);
        """
    )
    model = compile_sop(sop, VOCAB, n)
    labels = model.metadata["residual"]
    first = [lb for lb in labels if lb.startswith("indices~")]
    assert len(first) == 2 and not [lb for lb in labels if lb.startswith("_map_")]
    mlps = [op["name"] for layer in model.metadata["layers"] for op in layer["mlp"]]
    assert not [name for name in mlps if name.startswith("indices~")]
    # both are listed, `indices == 0` on the columns the classes embedded first
    ops = [op["op"] for op in model.metadata["embedding"]]
    assert "indices == 0" in ops and any(op.startswith("classes of indices") for op in ops)
    inputs = [["a", *t] for t in all_inputs(VOCAB, 3)]  # a BOS token first, as the paper's
    inputs += [["a", *t] for t in random_inputs(VOCAB, n - 1, 40, 2)]
    assert check_inputs(model, sop, inputs) == len(inputs)


@pytest.mark.exactness
@pytest.mark.parametrize("n", [4, 10])
def test_embedded_classes_of_a_select_side_are_read_at_small_lengths_too(n: int) -> None:
    # They cost no block, so they are read however few values the side has: the paper's BOS
    # histogram at N = 10 reads one class column where the index one-hot took 10 (1,195
    # parameters, 2,195 with the one-hot)
    sop = _load(
        """
        with_bos = select(tokens, tokens, ==) or select(indices, 0, ==);
        res = round(1 / aggregate(with_bos, indicator(indices == 0))) - 1;
        """
    )
    model = compile_sop(sop, VOCAB, n)
    labels = model.metadata["residual"]
    assert [lb for lb in labels if lb.startswith("indices")] == ["indices~_select_2:1"]
    inputs = [["a", *t] for t in all_inputs(VOCAB, n - 1)]  # a BOS token first
    assert check_inputs(model, sop, inputs) == len(inputs)


@pytest.mark.exactness
def test_a_class_is_no_source_beside_the_index_it_is_computed_from() -> None:
    # `indices` is a source of this map already: the class `indices % 2 == 0` is evaluated from
    # it (the step over the index number with the token as context), not read as two more columns
    n = 32
    sop = _load("res = tokens_int + indices if indices % 2 == 0 else indices - tokens_int;")
    model = compile_sop(sop, ["0", "1", "2"], n)
    assert "embedding" not in model.metadata
    inputs = all_inputs(["0", "1", "2"], 4) + random_inputs(["0", "1", "2"], n, 60, 3)
    assert check_inputs(model, sop, inputs) == len(inputs)


def _position_expr(rng: random.Random, depth: int) -> str:
    """A random s-op of the position alone: indices, constants, arithmetic, tests, choices."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["indices", "indices", str(rng.randint(0, 5))])
    a, b = _position_expr(rng, depth - 1), _position_expr(rng, depth - 1)
    r = rng.random()
    if r < 0.5:
        return f"({a} {rng.choice(['+', '-', '*', '%'])} {b})"
    if r < 0.7:
        return f"indicator({a} {rng.choice(['==', '<', '>', '<=', '>='])} {b})"
    if r < 0.85:
        return f"({a} if {_position_expr(rng, depth - 1)} > {rng.randint(0, 4)} else {b})"
    return f"({a} % {rng.randint(2, 5)})"


def _position_program(rng: random.Random) -> str:
    p, q = _position_expr(rng, rng.randint(1, 3)), _position_expr(rng, rng.randint(1, 3))
    compare = rng.choice(["==", "<", ">", "<=", ">=", "!="])
    return rng.choice(
        [
            f"res = aggregate(select({p}, {q}, {compare}), tokens_int);",
            f'res = aggregate(select({p}, {q}, ==), tokens, "_");',
            f"res = selector_width(select({p}, tokens_int, {compare}));",
            f"res = selector_width(select(tokens_int + {p}, {q}, ==));",
            f"res = tokens_int + {p};",
            f'res = {p} * 1 if tokens == "1" else {q};',
            f"res = aggregate(select(tokens, tokens, ==), {p});",
        ]
    )


@pytest.mark.exactness
@pytest.mark.parametrize("seed", range(30))
def test_random_s_ops_of_the_position_compile_exactly(seed: int) -> None:
    # (a seeded sample of the fuzz that ran 1,200 such programs at N = 4..48 with no difference)
    rng = random.Random(seed)
    text = _position_program(rng)
    vocab = ["0", "1", "2"]
    try:
        sop = _load(text)
        evaluate(sop, ["0", "1"])
    except RaspError:
        return  # (division by zero and the like: the interpreter refuses it too)
    n = rng.choice([4, 8, 16, 33])
    try:
        model = compile_sop(sop, vocab, n, causal=rng.random() < 0.2)
    except CompileError:
        return
    inputs = all_inputs(vocab, 4) + random_inputs(vocab, n, 30, seed)
    assert check_inputs(model, sop, inputs) > 0, text


def test_most_random_position_programs_run() -> None:
    # (so that the test above, which passes over the others, tests something)
    def runs(seed: int) -> bool:
        try:
            evaluate(_load(_position_program(random.Random(seed))), ["0", "1"])
        except RaspError:
            return False
        return True

    assert sum(runs(seed) for seed in range(30)) >= 15


def test_a_squares_words_say_what_it_holds() -> None:
    # the column holds (v - centre)^2, the distance from the values' middle; it said "the square
    # of v" (sort's target_position.sq at N = 6 holds (width - 3)^2)
    assert square_words("w", 0) == "the square of w (matched)"
    assert square_words("w", 3) == "the square of (w - 3) (matched)"
    assert square_words("w", -2.5) == "the square of (w + 2.5) (matched)"
