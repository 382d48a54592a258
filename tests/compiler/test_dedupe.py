"""A computation written twice is compiled once (`compiler.dedupe`), and only what is equal on
every input is merged."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compile import all_inputs, check_inputs, exact_outcome, random_inputs

from compiler import compile_sop
from compiler.dedupe import merge_duplicates
from rasp import sops as S
from rasp import tracr
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.tracr.lower import to_sops

VOCAB = ["a", "b", "c"]
MEANS = """
prefix = select(indices, indices, <=);
frac_a = aggregate(prefix, indicator(tokens == "a"));
frac_b = aggregate(prefix, indicator(tokens == "b"));
"""


def _load(text: str, name: str = "res") -> S.SOp:
    sop = load_source(Source("<test>", text)).get(name)
    assert isinstance(sop, S.SOp)
    return sop


def _nodes(root: S.Node) -> list[S.Node]:
    return list(S.walk(root))


def _heads(model) -> int:
    return sum(len(layer["attn"]) for layer in model.metadata["layers"])


def _layers(model) -> int:
    return len(model.metadata["layers"])


@pytest.mark.exactness
def test_a_function_called_twice_is_one_head() -> None:
    text = """
def frac(t) { return aggregate(select(indices, indices, <=), indicator(tokens == t)); }
res = frac("a") + frac("a");
"""
    sop = _load(text)
    merged = merge_duplicates(sop)
    assert len(_nodes(merged)) < len(_nodes(sop))
    model = compile_sop(sop, VOCAB, 8)
    assert _heads(model) == 1  # two before
    inputs = all_inputs(VOCAB, 5) + random_inputs(VOCAB, 8, 100, 1)
    assert check_inputs(model, sop, inputs) == len(inputs)


@pytest.mark.exactness
def test_a_square_written_out_is_a_map_of_one_number() -> None:
    # The two copies of frac_a - frac_b were independent to the value analysis: a table over
    # every pair of differences, refused at N = 16 for two float64 twins of one product
    # (0.16000000000000003 and 0.15999999999999998, "equal numbers" that disagree).
    sop = _load(MEANS + "res = (frac_a - frac_b) * (frac_a - frac_b);")
    model = compile_sop(sop, VOCAB, 16)
    assert _layers(model) == 1
    inputs = all_inputs(VOCAB, 5) + random_inputs(VOCAB, 16, 150, 2)
    assert check_inputs(model, sop, inputs) == len(inputs)


@pytest.mark.exactness
def test_a_width_squared_is_one_head() -> None:
    sop = _load(
        "def h(t) { return selector_width(select(t, t, ==)); }\nres = h(tokens) * h(tokens);"
    )
    model = compile_sop(sop, VOCAB, 8)
    assert _heads(model) == 1 and _layers(model) == 1  # 2 heads, 2 layers before
    inputs = all_inputs(VOCAB, 5)
    assert check_inputs(model, sop, inputs) == len(inputs)


def test_names_and_the_output_are_kept() -> None:
    sop = _load('a = tokens == "x";\nb = tokens == "x";\nres = a and b;')
    merged = merge_duplicates(sop)
    assert merged.name == "res"
    maps = [n for n in _nodes(merged) if isinstance(n, S.MapSOp) and n is not merged]
    assert [n.name for n in maps] == ["a"]  # the first named one
    # the output itself is kept where it equals an earlier node
    twice = _load('x = tokens == "a";\nres = tokens == "a";')
    assert merge_duplicates(twice) is twice


def _pair(left: str, right: str) -> S.MapSOp:
    interp = load_source(Source("<test>", f"l = {left};\nr = {right};"))
    return S.MapSOp(fn=lambda x, y: (x, y), inputs=(interp.get("l"), interp.get("r")), text="pair")


@pytest.mark.parametrize(
    "left, right",
    [
        ("tokens_int + 1", "tokens_int + 1.0"),  # 1 and 1.0: ints against floats
        ("tokens_int == 1", "tokens_int == True"),
        ("tokens_int + 1", "tokens_int - 1"),
        ("tokens_int + 1", "1 + tokens_int"),  # the same on numbers, but not one operation
        ('{"1": 1}[tokens]', '{"1": 1.0}[tokens]'),
        ("tokens_int * 0.0", "tokens_int * -0.0"),
        ("tokens_int in [1, 2]", "tokens_int in [1, 2.0]"),
        (
            "aggregate(select(indices, 0, ==), tokens_int, 0)",
            "aggregate(select(indices, 0, ==), tokens_int, 0.0)",
        ),
        ("selector_width(select(indices, 0, ==))", "selector_width(select(indices, 0, >=))"),
        ("selector_width(select(indices, 1, ==))", "selector_width(select(1, indices, ==))"),
    ],
)
def test_only_equal_computations_merge(left: str, right: str) -> None:
    merged = merge_duplicates(_pair(left, right))
    assert merged.inputs[0] is not merged.inputs[1]
    for same in (left, right):  # each against itself: one node
        merged = merge_duplicates(_pair(same, same))
        assert merged.inputs[0] is merged.inputs[1]


def test_selectors_merge_in_either_order() -> None:
    a = S.Select(keys=S.TokensSOp(), queries=S.TokensSOp(), comparison=S.Comparison.EQ)
    b = S.Select(keys=S.IndicesSOp(), queries=S.IndicesSOp(), comparison=S.Comparison.LT)
    both = S.MapSOp(
        fn=lambda x, y: x + y,
        inputs=(
            S.SelectorWidthSOp(selector=S.SelectAnd(left=a, right=b)),
            S.SelectorWidthSOp(selector=S.SelectAnd(left=b, right=a)),
        ),
        text="sum",
    )
    merged = merge_duplicates(both)
    assert merged.inputs[0] is merged.inputs[1]  # type: ignore[attr-defined]
    for tokens in (list("abab"), list("aab")):
        assert exact_outcome(merged, tokens) == exact_outcome(both, tokens)


def test_tracr_maps_merge_only_for_one_function_object() -> None:
    def succ(x):
        return x + 1

    same = tracr.SequenceMap(
        lambda x, y: x * y, tracr.Map(succ, tracr.tokens), tracr.Map(succ, tracr.tokens)
    )
    other = tracr.SequenceMap(
        lambda x, y: x * y,
        tracr.Map(lambda x: x + 1, tracr.tokens),
        tracr.Map(lambda x: x + 1, tracr.tokens),
    )
    merged_same = merge_duplicates(to_sops(same))
    merged_other = merge_duplicates(to_sops(other))
    assert merged_same.inputs[0] is merged_same.inputs[1]  # type: ignore[attr-defined]
    assert merged_other.inputs[0] is not merged_other.inputs[1]  # type: ignore[attr-defined]


TEMPLATES = [
    "tokens_int + {k}",
    "tokens_int * {k}",
    "tokens_int > {k}",
    "indices - {k}",
    "aggregate(select(indices, indices, <=), tokens_int * {k})",
    "selector_width(select(tokens_int, {k}, <))",
    "round(aggregate(select(tokens_int, tokens_int, ==), indices) + {k})",
]
CONSTANTS = ["1", "1.0", "True", "0", "-1", "0.5"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(CONSTANTS)), min_size=2, max_size=5
    ),
    st.integers(0, 2**16),
)
def test_merging_never_changes_a_value(parts: list[tuple[str, str]], seed: int) -> None:
    """Programs summing several (often equal) terms: the merged graph gives exactly the
    interpreter's values (types and float bits) on every input, and the compiled model agrees."""
    names = [f"t{i}" for i in range(len(parts))]
    lines = [f"{n} = {t.format(k=k)};" for n, (t, k) in zip(names, parts)]
    lines.append("res = " + " + ".join(names) + ";")
    sop = _load("\n".join(lines))
    merged = merge_duplicates(sop)
    rng = random.Random(seed)
    vocab = [0, 1, 2]
    inputs = all_inputs(vocab, 3) + [
        [rng.choice(vocab) for _ in range(rng.randint(1, 6))] for _ in range(20)
    ]
    for tokens in inputs:
        assert exact_outcome(merged, tokens) == exact_outcome(sop, tokens)
    try:
        model = compile_sop(sop, vocab, 6)
    except CompileError:
        return  # a refusal is allowed (e.g. a float sum too fine to snap); a wrong model is not
    assert check_inputs(model, sop, inputs) == sum(exact_outcome(sop, t) != "error" for t in inputs)


def test_a_map_whose_structure_cannot_be_keyed_stays_its_own() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, x):
            return x

        def structure(self):
            return ("mine", [1])  # a list: no key

    tokens = S.TokensSOp()
    left = S.MapSOp(fn=Unhashable(), inputs=(tokens,), text="f")
    right = S.MapSOp(fn=Unhashable(), inputs=(tokens,), text="f")
    both = S.MapSOp(fn=lambda a, b: a + b, inputs=(left, right), text="sum")
    merged = merge_duplicates(both)
    assert merged.inputs[0] is not merged.inputs[1]  # type: ignore[attr-defined]
