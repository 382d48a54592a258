"""Readings that do not grow with N: a map of the position is one column of the positional embedding,
and under causal attention `select(indices, indices, <=)` is the mask itself (no columns at all)."""

from __future__ import annotations

import itertools
import random

import pytest
import sop_builders as B
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import sops as S
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tools.verify import same_value

N = 40


def _inputs(vocab: str, count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    short = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    return short + [[rng.choice(vocab) for _ in range(rng.randint(5, N))] for _ in range(count)]


def _compiled(text: str, vocab: str, n: int) -> tuple[S.SOp, object]:
    """Program `text`'s `res` and its model over `vocab` up to length n."""
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    res = interp.get("res")
    return res, compile_sop(res, list(vocab), n, name="res")


def _agree(sop: S.SOp, model, inputs: list[list[str]]) -> None:
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = list(S.evaluate(sop, tokens).values)
        # RASP values (strings, bools, numbers within 1e-6): pytest.approx refuses strings
        assert len(got) == len(want), tokens
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got, want)


@pytest.mark.exactness
def test_a_map_of_the_position_read_as_a_number_is_one_embedded_column() -> None:
    # the original's length: 1 / aggregate(select(1, 1, ==), indicator(indices == 0))
    indices = S.IndicesSOp(name="indices")
    first = B.mapped(lambda i: int(i == 0), indices, name="first", text="indicator(indices == 0)")
    every = S.Select(keys=S.ConstSOp(value=1), queries=S.ConstSOp(value=1), comparison=B.EQ)
    share = S.AggregateSOp(selector=every, sop=first, default=0, name="share")
    length = B.mapped(lambda x: round(1 / x), share, name="n", text="round(1 / share)")
    model = compile_sop(length, list("ab"), N)
    labels = model.metadata["residual"]
    assert not [lb for lb in labels if lb.startswith("indices")]  # no index one-hot at all
    assert "first" in labels
    column = model.weights["pos_embed.W_pos"][:, labels.index("first")]
    assert column.tolist() == [0.0, 1.0] + [0.0] * (N - 1)  # BOS, then positions 0..N-1
    _agree(length, model, _inputs("ab", 100, seed=3))


@pytest.mark.exactness
def test_the_prefix_select_is_a_mask() -> None:
    # the causal model's own mask, or a head's mask (format version 3); without either it is an
    # N-wide block of index one-hots on both sides
    sop = B.frac_prevs("a")
    causal = compile_sop(sop, list("ab"), N, causal=True)
    masked = compile_sop(sop, list("ab"), N)
    plain = compile_sop(sop, list("ab"), N, head_masks=False)
    assert causal.metadata["config"]["attention_dir"] == "causal"
    assert "masks" not in causal.metadata["config"]["layers"][0]  # the causal mask does it
    assert masked.metadata["config"]["layers"][0]["masks"] == ["<="]
    for model in (causal, masked):  # no position is read: no W_pos (format version 3)
        assert model.metadata["config"]["positional"] is False
        assert "pos_embed.W_pos" not in model.weights
    assert "positional" not in plain.metadata["config"]
    # the output decodes on a grid per position (k / (i+1)): format version 4 for all three
    assert {m.metadata["format_version"] for m in (causal, masked, plain)} == {4}
    for model in (causal, masked):
        assert not any(lb.startswith("indices") for lb in model.metadata["residual"])
        assert model.param_count() * 20 < plain.param_count()
    assert any(lb.startswith("indices:") for lb in plain.metadata["residual"])
    inputs = _inputs("ab", 200, seed=4)
    _agree(sop, causal, inputs)
    _agree(sop, masked, inputs)
    _agree(sop, plain, inputs[:50])


@pytest.mark.exactness
@pytest.mark.parametrize("causal", [False, True])
def test_a_strict_prefix_select_is_a_strict_mask(causal: bool) -> None:
    # key < query excludes the query itself, which the causal mask includes: the head's own mask
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    before = S.Select(keys=indices, queries=indices, comparison=B.LT)
    is_a = B.mapped(lambda x: int(x == "a"), t, name="is_a", text="indicator(tokens == 'a')")
    sop = S.AggregateSOp(selector=before, sop=is_a, default=0, name="before")
    model = compile_sop(sop, list("ab"), 12, causal=causal)
    assert model.metadata["config"]["layers"][0]["masks"] == ["<"]
    assert not any(lb.startswith("indices:") for lb in model.metadata["residual"])
    inputs = [list(t) for n in range(1, 7) for t in itertools.product("ab", repeat=n)]
    _agree(sop, model, inputs)
    plain = compile_sop(sop, list("ab"), 12, causal=causal, head_masks=False)
    assert any(lb.startswith("indices:") for lb in plain.metadata["residual"])
    _agree(sop, plain, inputs)


@pytest.mark.exactness
def test_masks_combine_within_a_conjunction_and_split_across_a_disjunction() -> None:
    # (j <= i and j >= i) is j == i; not (j < i) is j >= i; a width of a disjunction splits
    # into conjunction widths, each with its own mask
    t, indices = B.tokens(), S.IndicesSOp(name="indices")

    def atom(cmp: S.Comparison) -> S.Select:
        return S.Select(keys=indices, queries=indices, comparison=cmp)

    same = S.Select(keys=t, queries=t, comparison=B.EQ)
    is_a = B.mapped(lambda x: int(x == "a"), t, name="is_a", text="indicator(tokens == 'a')")
    itself = S.AggregateSOp(
        selector=S.SelectAnd(left=atom(B.LEQ), right=atom(S.Comparison.GEQ)), sop=is_a, default=0
    )
    later = S.AggregateSOp(selector=S.SelectNot(inner=atom(B.LT)), sop=is_a, default=0)
    never = S.SelectorWidthSOp(selector=S.SelectAnd(left=atom(B.LT), right=atom(S.Comparison.GT)))
    either = S.SelectorWidthSOp(selector=S.SelectOr(left=S.SelectAnd(left=same, right=atom(B.LT)),
                                                    right=atom(S.Comparison.GT)))  # fmt: skip
    vocab = list("ab")
    inputs = [list(t) for n in range(1, 6) for t in itertools.product(vocab, repeat=n)]
    for sop, masks in ((itself, {"=="}), (later, {">="}), (never, set()), (either, {"<", ">"})):
        model = compile_sop(sop, vocab, 8)
        layers = model.metadata["config"]["layers"]
        assert {m for layer in layers for m in layer.get("masks", []) if m} == masks
        assert not any(lb.startswith("indices:") for lb in model.metadata["residual"])
        _agree(sop, model, inputs)


@pytest.mark.exactness
def test_a_side_compared_only_with_constants_joins_as_its_classes() -> None:
    # (tokens == tokens) or (key index == 0), the paper's BOS selector, averaging a value that is
    # not the BOS trick's (whose mean is compiled as a width, compiler.bos_widths): the key side's
    # joint reading is tokens x {index 0, other}, not tokens x N indices
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    same = S.Select(keys=t, queries=t, comparison=B.EQ)
    first = S.Select(keys=indices, queries=S.ConstSOp(value=0), comparison=B.EQ)
    early = B.mapped(lambda i: int(i < 2), indices, name="early", text="indices < 2")
    share = S.AggregateSOp(
        selector=S.SelectOr(left=same, right=first), sop=early, default=0, name="share"
    )
    model = compile_sop(share, list("abc"), N)
    joint = [lb for lb in model.metadata["residual"] if lb.startswith("(tokens,")]
    assert len(joint) == 6, joint  # 3 tokens x 2 classes of indices
    assert model.param_count() < 10_000
    _agree(share, model, _inputs("abc", 200, seed=5))


@pytest.mark.exactness
def test_a_side_compared_with_a_few_valued_sop_joins_as_its_classes() -> None:
    # a mean of many values compared with `v % 2` (two values) inside a disjunction: the query
    # side's joint reading has the mean's classes (== 1, neither), not its ~60 values (was 35M
    # parameters at N = 6, a 3,906-wide joint). (With `select(length, v0, >=)`, always true, the
    # width is the length, compiler.selector_cases. The keys are chosen by tokens: the mean of
    # every key, `select(v2, tokens, !=)`, is (n + 1) / 2 at length n, one value, compiler.means.)
    text = """
    v0 = length - indices;
    m = aggregate(select(tokens, "a", !=), v0, 1);
    res = selector_width(select(v0 % 2, m, !=) or (select(length, v0, >) or select(tokens, tokens, >=)));
    """
    res, model = _compiled(text, "abc", 6)
    labels = model.metadata["residual"]
    classes = [lb for lb in labels if lb.startswith("m~")]
    assert len(classes) == 2, classes
    assert not [lb for lb in labels if lb.startswith("(m,")]  # the joint reads the classes
    assert len([lb for lb in labels if lb.startswith("(m~")]) <= 3 * 63
    assert model.param_count() < 1_000_000
    inputs = [list(t) for n in range(1, 7) for t in itertools.product("abc", repeat=n)]
    _agree(res, model, inputs)


@pytest.mark.exactness
def test_a_joint_reading_has_one_column_per_distinct_row_of_its_table() -> None:
    # `indices % 3`, `d0`, `length - indices` and `indices % 2` on the keys and (`indices % 3`, d0)
    # on the queries: the key joint's 195 (length, indices, d0) tuples select or miss the queries in
    # far fewer ways, and each way is one residual column (was d_model 389, 344K parameters at N = 8)
    text = """
    d0 = selector_width(select(length, indicator(tokens == "a"), >=));
    res = aggregate((select(indices % 3, indices % 3, >=) or ((select(d0, (length - indices) % 2, >)
        and not select(d0, indices % 2, <=)) or select(indices % 3, d0, >))), indicator(tokens == "a"));
    """
    res, model = _compiled(text, "ab", 8)
    labels = model.metadata["residual"]
    joints = [lb for lb in labels if lb.startswith("(")]
    assert joints and len(joints) <= 30, joints
    assert model.param_count() < 60_000
    inputs = [list(t) for n in range(1, 9) for t in itertools.product("ab", repeat=n)]
    _agree(res, model, inputs)


@pytest.mark.exactness
@pytest.mark.parametrize(
    "selector",
    [
        "not (select(indices, m, <) or select(w, length - indices, >))",
        "not not (select(indices, m, >=) and select(w, length - indices, <=))",
    ],
)
def test_a_negated_disjunction_is_a_conjunction_of_complements(selector: str) -> None:
    # De Morgan: `not (a or b)` is `not a and not b`, two additive atoms, where the disjunction's
    # complement was one atom over joint (m's classes, length - indices) and (indices, w) readings:
    # a layer more and 300K parameters at N = 8 (27K now); `not not s` is s itself
    text = f"""
    m = aggregate(select(tokens, "a", ==), indices);
    w = selector_width(select(tokens, tokens, ==));
    res = aggregate({selector}, indices);
    """
    res, model = _compiled(text, "abc", 8)
    labels = model.metadata["residual"]
    assert not [lb for lb in labels if lb.startswith("(")], labels  # no joint reading
    assert model.metadata["config"]["n_layers"] == 2
    assert model.param_count() < 60_000
    inputs = [list(t) for n in range(1, 7) for t in itertools.product("abc", repeat=n)]
    _agree(res, model, inputs)
