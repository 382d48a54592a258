"""compiler.order_digits: the width of `select(x, y, <)` (<=, >, >=, and sort's `< or (== and
ties)`) over many numbers becomes conjunction widths over the digits of the values' ranks; the
rewritten graph gives the interpreter's values on every input, the compiled model is exact and
smaller, and selects with few values, non-numbers, positions alone or other shapes are left alone."""

from __future__ import annotations

import itertools
import random

import pytest
from test_compile import PROGRAM_DIR, all_inputs, check_inputs, exact_outcome, random_inputs

import compiler.forms
from compiler import compile_sop
from compiler.order_digits import MIN_CLASSES, _digits, order_digits
from compiler.rank_digits import Digit
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse

VOCAB = list("01234")
MAX_LEN = 8
# 8 t + i: 40 values 0..39 at max-len 8, every one its own rank
X = "x = 8 * tokens_int + indices;\n"


def _program(text: str, name: str = "n") -> S.SOp:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    root = interp.get(name)
    assert isinstance(root, S.SOp)
    return root


def _most_freq() -> S.SOp:
    root = load_file(PROGRAM_DIR / "most_freq.rasp").get("most_freq")
    assert isinstance(root, S.SOp)
    return root


def _digit_maps(root: S.Node) -> list[S.MapSOp]:
    return [n for n in S.walk(root) if isinstance(n, S.MapSOp) and isinstance(n.fn, Digit)]


def _order_selects(root: S.Node) -> list[S.Select]:
    """Selects comparing with <, <=, > or >= that are neither between positions nor digits."""
    return [
        n
        for n in S.walk(root)
        if isinstance(n, S.Select)
        and n.comparison not in (S.Comparison.EQ, S.Comparison.NEQ)
        and not isinstance(n.keys, S.IndicesSOp)
        and not (isinstance(n.keys, S.MapSOp) and isinstance(n.keys.fn, Digit))
    ]


def _same_everywhere(original: S.Node, rewritten: S.Node, vocab: list, exhaustive: int) -> int:
    """Identical values (or both fail) on every input up to length `exhaustive` and on random ones
    up to MAX_LEN; returns how many gave a value."""
    rng = random.Random(3)
    inputs = [list(t) for n in range(1, exhaustive + 1) for t in itertools.product(vocab, repeat=n)]
    inputs += [[rng.choice(vocab) for _ in range(rng.randint(1, MAX_LEN))] for _ in range(300)]
    valued = 0
    for tokens in inputs:
        want = exact_outcome(original, tokens)
        assert exact_outcome(rewritten, tokens) == want, tokens
        valued += want != "error"
    return valued


# programs the rewrite applies to: text, and how many conjunction widths the width becomes
# (digits D, plus 1 for <= and >= or sort's ties)
ORDERED = {
    "lt": X + "n = selector_width(select(x, x, <));",
    "leq": X + "n = selector_width(select(x, x, <=));",
    "gt": X + "n = selector_width(select(x, x, >));",
    "geq": X + "n = selector_width(select(x, x, >=));",
    # two sides, each with its own digit maps
    "two_sides": X + "y = 9 * tokens_int + indices - 3;\nn = selector_width(select(x, y, <=));",
    # the prelude's sort: select(x, x, <) or (select(x, x, ==) and select(indices, indices, <))
    "sort": X + "n = sort(tokens_int, x);",
    "ties_first": X
    + "n = selector_width((select(x, x, ==) and select(indices, indices, >)) or select(x, x, >));",
    # ranks order any numbers: halves, and whole floats
    "halves": "x = (8 * tokens_int + indices) / 2;\nn = selector_width(select(x, x, <));",
    "floats": "x = 1.0 * (8 * tokens_int + indices);\nn = selector_width(select(x, x, >=));",
    # negative numbers, ints against floats
    "mixed": X + "y = x - 19.5;\nn = selector_width(select(x - 20, y, <));",
    # a conjunction every term keeps (compiler.bos_widths' `and not select(indices, 0, ==)`)
    "and_extra": X + "s = select(x, x, <) or (select(x, x, ==) and select(indices, indices, <));\n"
    "n = selector_width(s and not select(indices, 0, ==));",
    "extra_first": X + "n = selector_width(select(tokens, tokens, !=) and select(x, x, >=));",
}

# programs it must leave alone, and why
LEFT = {
    # 5 values: a small one-hot
    "few": "n = selector_width(select(tokens_int, tokens_int, <));",
    # a mask between positions, free already (40 values at max-len 40)
    "positional": "n = selector_width(select(indices, length - indices, <));",
    # bools are not numbers here
    "bools": X + "b = x > 20;\nn = selector_width(select(b, b, <));",
    # beyond 2^53 numpy (the interpreter) and Python compare ints and floats differently
    "huge": X + "h = 10000000000000000 * x;\nn = selector_width(select(h, h, <));",
    # a mean, not a width: one head, which a sum of widths is not
    "aggregate": X + "n = aggregate(select(x, x, <), tokens_int);",
    # <= and == overlap: not a sum of widths
    "overlapping": X
    + "n = selector_width(select(x, x, <=) or (select(x, x, ==) and select(indices, indices, <)));",
    # the tie's == compares another s-op (equal values, but not seen to be)
    "other_equal": X
    + "z = x + 0;\n"
    + "n = selector_width(select(x, x, <) or (select(z, z, ==) and select(indices, indices, <)));",
    # the ties are a disjunction: more conjunction widths than compiler.widths sums
    "disjunctive_ties": X + "n = selector_width(select(x, x, <) or (select(x, x, ==) and "
    "(select(indices, indices, <) or select(tokens_int, 0, ==))));",
    "not_equal": X + "n = selector_width(select(x, x, !=));",
    # float64 twins (k / 10 and 0.1 * k: 0.3 and 0.30000000000000004) would get different ranks,
    # which a model reading x cannot tell apart
    "twins": X + "z = x / 10 if length > 4 else 0.1 * x;\nn = selector_width(select(z, z, <));",
    # an extra side that is not a conjunction
    "or_extra": X + "n = selector_width(select(x, x, <) and "
    "(select(indices, 0, ==) or select(tokens, tokens, ==)));",
}


@pytest.mark.parametrize("case", sorted(ORDERED))
def test_order_widths_are_rewritten_and_evaluate_the_same(case: str) -> None:
    root = _program(ORDERED[case])
    rewritten = order_digits(root, VOCAB, MAX_LEN)
    assert rewritten is not root
    assert _digit_maps(rewritten)
    assert not _order_selects(rewritten)
    assert _same_everywhere(root, rewritten, VOCAB, 4) > 0


@pytest.mark.parametrize("case", sorted(LEFT))
def test_other_selects_are_left_alone(case: str) -> None:
    root = _program(LEFT[case])
    max_len = 40 if case == "positional" else MAX_LEN
    assert order_digits(root, VOCAB, max_len) is root


def test_few_values_at_a_short_length_are_left_alone() -> None:
    """8 t + i takes 20 values at max-len 4, 40 at max-len 8 (MIN_CLASSES is 32)."""
    root = _program(ORDERED["lt"])
    assert MIN_CLASSES == 32
    assert order_digits(root, VOCAB, 4) is root
    assert order_digits(root, VOCAB, 8) is not root


def test_strings_are_left_alone() -> None:
    """40 distinct string tokens: ordered, but not numbers."""
    t = S.TokensSOp(name="tokens")
    root = S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=S.Comparison.LT))
    vocab = [f"t{k:02d}" for k in range(40)]
    assert order_digits(root, vocab, 8) is root
    numbers = S.TokensSOp(kind=S.TokenKind.INT, name="tokens")
    root = S.SelectorWidthSOp(
        selector=S.Select(keys=numbers, queries=numbers, comparison=S.Comparison.LT)
    )
    assert order_digits(root, [str(k) for k in range(40)], 8) is not root


def test_most_freqs_sort_is_rewritten_with_its_names() -> None:
    root = _most_freq()
    rewritten = order_digits(root, list("abc"), 16)
    assert rewritten is not root
    (old,) = [n for n in S.walk(root) if n.name == "target_position"]
    (new,) = [n for n in S.walk(rewritten) if n.name == "target_position"]
    assert isinstance(new, S.SelectorWidthSOp) and new.span is old.span
    assert not _order_selects(rewritten)
    maps = _digit_maps(rewritten)
    # -filtered_freq takes the 33 values -16..16: two digits in base 6
    assert sorted(m.text for m in maps) == ["digit 0 (base 6) of rank", "digit 1 (base 6) of rank"]
    (key,) = {m.inputs[0].id: m.inputs[0] for m in maps}.values()
    assert key is old.selector.left.keys  # the very key s-op, read by both sides
    # the original's tie-break is kept: select(indices, indices, <), the very node
    assert any(n is old.selector.right.right for n in S.walk(new))
    assert _same_everywhere(root, rewritten, list("abc"), 5) > 0


def test_ranks_digits_and_bases() -> None:
    values = (-3, -1.5, 0, 2.0, 7)
    digit = Digit(values, 1, 3)  # digit 0 in base 3 of the rank
    assert [digit(v) for v in values] == [0, 1, 2, 0, 1]
    assert [Digit(values, 3, 3)(v) for v in values] == [0, 0, 0, 1, 1]
    assert digit(2) == digit(2.0)  # equal numbers, one rank
    for count in (32, 65, 129, 257, 513, 1000):
        d, b = _digits(count)
        assert d in (2, 3) and b**d >= count > (b - 1) ** d


@pytest.mark.exactness
@pytest.mark.parametrize("case", ["lt", "leq", "gt", "geq", "two_sides", "sort", "ties_first"])
def test_compiled_order_widths_are_exact(case: str) -> None:
    root = _program(ORDERED[case])
    model = compile_sop(root, VOCAB, MAX_LEN, name="n")
    parts = {label.split(".")[-1] for label in model.metadata["residual"] if ".part" in label}
    assert len(parts) >= 2  # a sum of conjunction widths
    inputs = all_inputs(VOCAB, 3) + random_inputs(VOCAB, MAX_LEN, 80, seed=5)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_float64_twins_keep_their_select() -> None:
    """A fuzz program: v4 takes 0.8333333333333333 and 0.8333333333333334; over digits of their
    ranks the model read v4 and was refused ('digit 2 (base 5) of rank(v4)' gives 2 and 3). The
    select itself is not rewritten. It compares twins (0.22916666666666663 < 0.22916666666666666
    holds, 0.22916666666666663 < 0.22916666666666663 does not) that the value analysis lets meet
    at one length, so its table cannot be proved and it is refused, located
    (compiler/select_twins.py); it compiled before, its table written from one twin of each
    run, and that was right only where the twins never met."""
    text = (
        'v0 = {"a": "b", "b": "a"}[tokens];\n'
        'v1 = (v0 if v0 in ["a", "a"] else "b");\n'
        "v2 = aggregate(select(v0, tokens, <) or select(tokens, tokens, >=), "
        'indicator(v1 == "a"));\n'
        "v3 = (v2 if v2 < v2 else v2);\n"
        "v4 = aggregate(select(v1, tokens, >=), v3);\n"
        "v6 = selector_width(select(v4, v4, <));\n"
    )
    root = _program(text, "v6")
    assert order_digits(root, list("ab"), 4) is root
    with pytest.raises(CompileError) as caught:
        compile_sop(root, list("ab"), 4, name="v6")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message.startswith("'select(v4, v4, <)' holds for 0.2291666666666666")
    assert "differ only by float64 rounding" in diagnostic.message and diagnostic.span is not None


@pytest.mark.exactness
def test_most_freq_is_exact_and_smaller(monkeypatch: pytest.MonkeyPatch) -> None:
    """At N = 32: 92,303 parameters (326,495 with select(key, key, <) over one-hots of the key's
    65 values, d_head 256)."""
    root = _most_freq()
    model = compile_sop(root, list("abc"), 32, name="most_freq")
    assert model.param_count() < 120_000
    one_hots: dict[str, int] = {}  # no one-hot of the key's 65 values: the digits' 5 at most
    for label in model.metadata["residual"]:
        if ":" in label:
            one_hots[label.split(":")[0]] = one_hots.get(label.split(":")[0], 0) + 1
    assert max(one_hots.values()) <= 5
    rng = random.Random(11)
    inputs = all_inputs("abc", 4) + [
        [rng.choice("abc") for _ in range(rng.randint(5, 32))] for _ in range(120)
    ]
    assert check_inputs(model, root, inputs) == len(inputs)
    monkeypatch.setattr(compiler.forms, "order_digits", lambda sop, vocab, max_len, **_: sop)
    without = compile_sop(root, list("abc"), 32, name="most_freq")
    assert without.param_count() > 3 * model.param_count()


@pytest.mark.slow
def test_most_freq_grows_about_linearly() -> None:
    """193,857 parameters at N = 64, 743,413 at N = 256 (3.8x; 713,343 and 9,247,657 before)."""
    root = _most_freq()
    small, large = (compile_sop(root, list("abc"), n).param_count() for n in (64, 256))
    assert large < 1_000_000 and large < 5 * small


@pytest.mark.parametrize(
    ("name", "order"),
    [
        ("lt", S.Comparison.LT),
        ("leq", S.Comparison.LEQ),
        ("gt", S.Comparison.GT),
        ("geq", S.Comparison.GEQ),
        ("halves", S.Comparison.LT),
        ("floats", S.Comparison.GEQ),
        ("two_sides", None),
        ("sort", None),
        ("ties_first", None),
        ("mixed", None),
        ("and_extra", None),
        ("extra_first", None),
    ],
)
def test_the_order_a_rewritten_rank_counts_is_read_back(name: str, order: S.Comparison) -> None:
    """count_keys reads `selector_width(select(x, x, <))` as x's rank, whose keys of one rank
    hold one x; rewritten over digits it was no rank to it (rank_digits.digit_order), so a sort of
    x by itself took every mean of x's values. Only the rewrite of an order of x by itself alone
    is read as one: ties, a conjunct or two sides are not."""
    from compiler.graph import Op, build_graph
    from compiler.rank_digits import digit_order

    graph = build_graph(order_digits(_program(ORDERED[name]), VOCAB, MAX_LEN))
    (width,) = [n for n in graph.nodes if n.op is Op.SELECTOR_WIDTH]  # (sort's: its position)
    found = digit_order(graph, width.inputs[0])
    if order is None:
        assert found is None
    else:
        assert found is not None and found[1] is order and graph[found[0]].name == "x"
