"""Matching (compiler.addressing.plan_match): `select(keys, indices, ==)` with whole-number keys and no
proof that exactly one key matches is one head scoring -c (q - k)^2 with BOS at -c/2: zero matches
give the default, several a mean, and the head is a few columns wide instead of a one-hot block."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
import sop_builders as B
from runtime_helpers import run_compiled

import compiler.build_stages
from compiler import addressing, compile_sop, squares
from rasp import sops as S
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse
from rasp.tools.verify import same_value

N = 40
EQ, LT = S.Comparison.EQ, S.Comparison.LT


def _agree(model, program: S.SOp, inputs: list[list[str]]) -> None:
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = list(S.evaluate(program, tokens).values)
        # RASP values (strings, bools, numbers within 1e-6): pytest.approx refuses strings
        assert len(got) == len(want), tokens
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got, want)


def _matching_layer(model, name: str) -> int:
    """The layer of the head `name`, checked to score with 3 columns (+ assembly's BOS and PAD
    ones): one-hot readings of the indices would take about N."""
    layer = next(
        k
        for k, layer in enumerate(model.metadata["layers"])
        if any(h["name"] == name for h in layer["attn"])
    )
    assert "indices^2" in model.metadata["residual"]
    (head,) = [h for h in model.metadata["layers"][layer]["attn"] if h["name"] == name]
    w_q = model.weights[f"blocks.{layer}.attn.W_Q"][head["head"]]
    assert np.count_nonzero(np.abs(w_q).sum(axis=0)) <= 5
    return layer


def test_doubled_ranks_leave_odd_positions_to_the_default() -> None:
    # keys 2 * (tokens before mine): even, so every odd index (and every index past 2(n-1)) matches
    # no key and takes the default; distinct tokens give each even index at most one key
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    rank = S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=LT), name="rank")
    doubled = B.mapped(lambda r: 2 * r, rank, name="doubled", text="2 * rank")
    spread = S.AggregateSOp(
        selector=S.Select(keys=doubled, queries=indices, comparison=EQ),
        sop=t,
        default="-",
        name="spread",
    )
    vocab = [f"t{k:02d}" for k in range(N)]
    model = compile_sop(spread, vocab, N)
    _matching_layer(model, "spread")
    rng = random.Random(3)
    inputs = [rng.sample(vocab, rng.randint(1, N)) for _ in range(150)]
    inputs += [rng.sample(vocab, N) for _ in range(10)]
    _agree(model, spread, inputs)


def test_several_matches_average_and_none_give_the_default() -> None:
    # key hist (1..n): index 0 matches nothing (default 0); index j matches every position whose
    # token occurs j times, averaging their indicator
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    hist = S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=EQ), name="hist")
    is_a = B.mapped(lambda x: 1 if x == "a" else 0, t, name="is_a", text='indicator(tokens == "a")')
    share = S.AggregateSOp(
        selector=S.Select(keys=hist, queries=indices, comparison=EQ),
        sop=is_a,
        default=0,
        name="share",
    )
    model = compile_sop(share, list("abc"), N)
    _matching_layer(model, "share")
    rng = random.Random(4)
    inputs = [list(p) for n in range(1, 5) for p in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(5, N))] for _ in range(200)]
    inputs += [[rng.choice("ab") for _ in range(N)] for _ in range(10)]
    _agree(model, share, inputs)
    # several matches: in 'aabb' index 2 averages all four positions (hist 2), half of them a's
    assert run_compiled(model, [list("aabb")]) == [[0, 0, 0.5, 0]]


def test_two_aggregates_of_one_matched_select_share_a_head_with_exact_scores() -> None:
    # One head copies both (schedule merges heads of one selector). The merged head once lost
    # `exact_scores`, so its d_head was its own width (68), not a power of 4; the fold of
    # sqrt(68) into W_K rounded matching's scores of 2^18 (margin -110 at index 63), and the
    # certifier's refusal sent the program to one-hot readings (an N-wide head and index one-hot:
    # 25,992 parameters for `before + where`, 1,996 now).
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    after = B.mapped(lambda i: i + 1, indices, name="after", text="indices + 1")
    select = S.Select(keys=after, queries=indices, comparison=EQ)
    before = S.AggregateSOp(selector=select, sop=t, default="-", name="before")
    where = S.AggregateSOp(selector=select, sop=indices, default=-1, name="where")
    both = B.mapped(
        lambda x, i: i if x == "a" else -2, before, where, name="both", text='where if x == "a"'
    )
    model = compile_sop(both, list("abc"), 64)
    assert model.param_count() < 8_000
    assert not any(label.startswith("indices:") for label in model.metadata["residual"])
    assert len(model.metadata["layers"][0]["attn"]) == 1
    assert model.config["layers"][0]["d_head"] in (4, 16, 64, 256)
    rng = random.Random(5)
    inputs = [list(p) for n in range(1, 4) for p in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(4, 64))] for _ in range(60)]
    _agree(model, both, inputs)


# a matched view with a constant (below); test_certify_select reintroduces the bug it caught
VIEW_WITH_A_CONSTANT = """
a = selector_width(select(tokens, tokens, ==));
b = selector_width(select(tokens, "a", ==));
res = aggregate(select(indices, (a + 3) if b <= (2 * b) else (2 * b), ==), tokens, "-");
"""


@pytest.mark.parametrize("folded", [True, False])
def test_a_matched_view_with_a_constant_reads_the_constant(
    folded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The query `a + 3` (the conditional always takes it: b <= 2 * b) is a view of the width a,
    # its 3 on `one`. Its square was stepped on that view, and its number was read as the view's
    # dimension alone: the parabola peaked at k = a instead of a + 3, so "ab" read its tokens
    # where the interpreter gives the default (certified, and wrong). (The condition is now
    # folded to a constant, compiler.constants, and the query computed by its own MLP: the view
    # is built with the folding off.)
    if not folded:
        monkeypatch.setattr(compiler.build_stages, "fold_constants", lambda graph, values: graph)
    interp = Interpreter()
    interp.exec_program(parse(VIEW_WITH_A_CONSTANT, "<test>"))
    program = interp.get("res")
    model = compile_sop(program, list("abc"), N)
    assert any(label.endswith(".sq") for label in model.metadata["residual"])  # matched
    rng = random.Random(6)
    inputs = [list(p) for n in range(1, 7) for p in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(7, N))] for _ in range(100)]
    _agree(model, program, inputs)
    # q = 4 + 3 at every position of a 12-token cycle: position 7's token; "ab" has no key 4
    assert run_compiled(model, [list("ab"), list("abc" * 4)]) == [["-", "-"], ["b"] * 12]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('middle = aggregate(select(indices, length / 2, ==), tokens, "-");', "middle"),
        ('quarter = aggregate(select(indices + 0.5, length / 4, ==), tokens, "-");', "quarter"),
        ('halves = aggregate(select(indices / 2, indices, ==), tokens, "-");', "halves"),
    ],
)
def test_halves_and_quarters_are_matched_scaled_by_a_power_of_two(text: str, name: str) -> None:
    # `length / 2` takes halves: once matched only between whole numbers, it was read as a one-hot
    # of N values on both sides (52,033 parameters at N = 64, 722,977 at 256). Both sides times 2
    # (or 4) are whole, and equal exactly where the halves are.
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    program = interp.get(name)
    model = compile_sop(program, list("abc"), N)
    _matching_layer(model, name)
    assert model.param_count() < 10_000
    rng = random.Random(7)
    inputs = [list(p) for n in range(1, 6) for p in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(6, N))] for _ in range(80)]
    _agree(model, program, inputs)


@pytest.mark.parametrize(
    ("text", "most", "before"),
    [
        # the second half's token: the query 2i + n, stepped from i and the decoded length (156,831
        # parameters read as two one-hots at N = 64, 2,297,439 at 256; now 31,664 and 326,834)
        (
            'res = aggregate(select(indices, indices + length / 2, ==), tokens, "-");',
            35_000,
            150_000,
        ),
        # the halves swapped: a banded map of halves (501,830 at N = 64, 4,926,570 at 256; now
        # 15,361 and 80,633, in 4 layers instead of 2 and 3)
        (
            "half = length / 2;\n"
            "src = indices + half if indices < half else indices - half;\n"
            'res = aggregate(select(indices, src, ==), tokens, "-");',
            20_000,
            500_000,
        ),
    ],
)
def test_a_side_of_halves_of_two_sources_is_stepped_doubled(
    text: str, most: int, before: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    program = interp.get("res")
    model = compile_sop(program, list("abc"), 64)
    _matching_layer(model, "res")
    assert any(".x2." in label for label in model.metadata["residual"])
    assert model.param_count() < most
    rng = random.Random(3)
    inputs = [list(p) for n in range(1, 6) for p in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(6, 64))] for _ in range(60)]
    _agree(model, program, inputs)
    whole_only = addressing._squared_side

    def unscaled(ctx, squared, source, a, b, scale=1):  # noqa: ANN001, ANN202 (as before)
        return None if scale != 1 else whole_only(ctx, squared, source, a, b)

    monkeypatch.setattr(addressing, "_squared_side", unscaled)
    assert compile_sop(program, list("abc"), 64).param_count() > before


def test_thirds_are_not_matched_and_stay_exact() -> None:
    # 1/3 is no float64 multiple of a power of 2: the one-hot readings stay (and agree)
    text = 'third = aggregate(select(indices, length / 3, ==), tokens, "-");'
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    program = interp.get("third")
    model = compile_sop(program, list("abc"), 16)
    assert not any(label.endswith(".sq") for label in model.metadata["residual"])
    inputs = [list(p) for n in range(1, 5) for p in itertools.product("abc", repeat=n)]
    inputs += [list("abc" * 5)[:n] for n in range(5, 17)]
    _agree(model, program, inputs)


def test_the_library_sort_is_matched_and_agrees_with_the_interpreter() -> None:
    program = B.sort_stable()
    model = compile_sop(program, list("abcd"), N)
    layer = _matching_layer(model, "sort")
    # the query reads (indices, indices^2, one): no index one-hot row feeds this head's W_Q
    ix = {lb: i for i, lb in enumerate(model.metadata["residual"])}
    w_q = model.weights[f"blocks.{layer}.attn.W_Q"][0]
    assert not any(w_q[i].any() for lb, i in ix.items() if lb.startswith("indices:"))
    rng = random.Random(5)
    inputs = [list(p) for n in range(1, 5) for p in itertools.product("abcd", repeat=n)]
    inputs += [[rng.choice("abcd") for _ in range(rng.randint(5, N))] for _ in range(200)]
    inputs += [[rng.choice("abcd") for _ in range(N)] for _ in range(10)]
    _agree(model, program, inputs)


@pytest.mark.exactness
def test_the_square_of_an_inexact_number_is_stepped_beside_it_where_that_costs_no_more() -> None:
    # double_hist matches `hist` (a width, read as 1/(w+1)): its whole number is decoded by a
    # step MLP, and its square is stepped on the same inexact reading in the same MLP layer
    # (one part either way at N = 40); stepped on the decoded number it took a layer more
    t = B.tokens()
    hist = S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=EQ), name="hist")
    same = S.Select(keys=hist, queries=hist, comparison=EQ)
    program = S.SelectorWidthSOp(selector=same, name="double_hist")
    model = compile_sop(program, list("abc"), N)
    mlps = [[op["name"] for op in layer["mlp"]] for layer in model.metadata["layers"]]
    (beside,) = [names for names in mlps if "hist.sq" in names]
    assert "hist.int" in beside
    assert model.metadata["config"]["n_layers"] == 2
    rng = random.Random(7)
    inputs = [[rng.choice("abc") for _ in range(rng.randint(1, N))] for _ in range(150)]
    _agree(model, program, inputs)


@pytest.mark.exactness
@pytest.mark.parametrize("constant", [0, 1, 3])
def test_a_constant_against_the_position_reads_the_positions_classes(constant: int) -> None:
    # `select(indices, 1, ==)`: the embedding writes one column (index 1 or not), where matching
    # scored the index's number and square against the constant's (a 5-wide score, a 16-wide
    # head: 1,444 parameters for the first token at N = 40, now 764)
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    at = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=S.ConstSOp(value=constant), comparison=EQ),
        sop=t,
        default="-",
        name="at",
    )
    model = compile_sop(at, list("abc"), N)
    labels = model.metadata["residual"]
    assert "indices^2" not in labels
    assert [lb for lb in labels if lb.startswith("indices")] == [f"indices~_select_1:{constant}"]
    inputs = [list("a"), list("ab"), list("abca")]
    inputs += [[random.Random(k).choice("abc") for _ in range(n)] for k, n in enumerate((N, 7))]
    _agree(model, at, inputs)


def test_sides_of_few_values_are_matched_where_that_is_smaller(monkeypatch) -> None:
    # The first build matches sides of MATCH_MIN_VALUES values or more; below that length the
    # driver builds again matching sides of fewer values too, and keeps the build with fewer
    # layers, then fewer parameters. sort's target position has N + 1 values.
    short = addressing.MATCH_MIN_VALUES - 6
    matched = compile_sop(B.sort_stable(), list("abcd"), short)
    assert "indices^2" in matched.metadata["residual"]
    monkeypatch.setattr(addressing, "EAGER_MATCH_MIN_VALUES", addressing.MATCH_MIN_VALUES)
    plain = compile_sop(B.sort_stable(), list("abcd"), short)
    assert "indices^2" not in plain.metadata["residual"]
    assert matched.param_count() < plain.param_count()
    assert len(matched.metadata["layers"]) == len(plain.metadata["layers"])
    inputs = [
        [random.Random(k).choice("abcd") for _ in range(n)] for k, n in enumerate(range(1, 11))
    ]
    _agree(matched, B.sort_stable(), inputs)


def test_a_match_that_costs_a_layer_at_short_lengths_is_not_kept(monkeypatch) -> None:
    # double_hist at N = 8 matched, the square of a width stepped a layer after its number (as
    # where stepping it beside the number costs more units): 3 layers, against 2 with one-hot
    # sides; the driver keeps the one-hot build
    monkeypatch.setattr(squares, "_no_larger", lambda parts, than: False)
    interp = load_file(Path(__file__).resolve().parents[2] / "programs" / "double_hist.rasp")
    name = interp.last_assigned
    sop = interp.get(name)
    model = compile_sop(sop, list("abc"), 8, name=name)
    monkeypatch.setattr(addressing, "MATCH_MIN_VALUES", addressing.EAGER_MATCH_MIN_VALUES)
    eager = compile_sop(sop, list("abc"), 8, name=name)
    assert len(model.metadata["layers"]) == 2 < len(eager.metadata["layers"])
    assert "hist.int" not in model.metadata["residual"]


def test_a_width_squared_beside_its_number_for_one_more_unit() -> None:
    # double_hist at N = 10: hist is 1..10 (never 0), the square stepped on 1/(w+1) takes 19
    # units against 18 a layer after the decoded number (21 against 20 while hist was 0..10):
    # one unit more is taken, so matching costs no layer (2 layers, 4,771 parameters; the one-hot
    # build has 6,524)
    interp = load_file(Path(__file__).resolve().parents[2] / "programs" / "double_hist.rasp")
    name = interp.last_assigned
    model = compile_sop(interp.get(name), list("abc"), 10, name=name)
    assert len(model.metadata["layers"]) == 2
    assert "hist.int" in model.metadata["residual"]
    assert model.param_count() < 5_000


def test_a_match_the_certifier_refuses_falls_back_to_one_hot_readings(monkeypatch) -> None:
    # a scale too small for softmax's gap: the certifier refuses the matched head, and the driver
    # builds the model again with one-hot readings, which it proves
    monkeypatch.setattr(addressing, "MATCH_SCALE", 64.0)
    monkeypatch.setattr(addressing, "NEEDED_GAP", 4.0)
    model = compile_sop(B.sort_unique(), list("abcd"), N)
    assert "indices^2" not in model.metadata["residual"]
    assert model.metadata["certificate"]["errors"] == []


@pytest.mark.slow
@pytest.mark.exactness
def test_matching_is_exact_past_256() -> None:
    # The query's c q and c q^2 are whole multiples of c = 2^8, so scores stay exact past
    # c q^2 = 2^24 (q = 256): matching holds up to MATCH_MAX_LEN, here N = 512 (the one-hot
    # form was 14x larger).
    n = 512
    program = B.sort_stable()
    model = compile_sop(program, list("abcd"), n)
    layer = _matching_layer(model, "sort")
    (check,) = [
        c
        for c in model.metadata["certificate"]["checks"]
        if c["sublayer"] == f"layer {layer} attn"
        and c["block"] == "sort"
        and c["kind"] == "softmax"
    ]
    assert check["bound"] == 0.0
    rng = random.Random(6)
    inputs = [
        [rng.choice("abcd") for _ in range(rng.choice([n, rng.randint(1, n)]))] for _ in range(12)
    ]
    _agree(model, program, inputs)
