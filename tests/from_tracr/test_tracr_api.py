"""rasp.tracr's API behaves as tracr's: names and labels, annotations and encodings, operators,
Map's simplification, selector simplifications, Aggregate's mean and None default, the constant
helpers, errors, and creation spans for located compile errors."""

from __future__ import annotations

import pytest

from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr.expr import explicit_name

# tracr.rasp.rasp's public names (tracr at github.com/google-deepmind/tracr, 2024).
TRACR_NAMES = """Aggregate Annotator Comparison ConstantSOp ConstantSelector DEFAULT_ANNOTATORS
DefaultRASPEvaluator Encoding Full IndicesType LengthType LinearSequenceMap Map NumericValue Predicate
RASPEvaluator RASPExpr RASPExprT SOp SOpT Select Selector SelectorAnd SelectorNot SelectorOr
SelectorValue SelectorWidth SequenceMap TokensType VT Value annotate categorical default_encoding
default_name evaluate get_encoding indices is_categorical is_numerical length numerical selector_and
selector_not selector_or sop_not tokens""".split()


def test_every_public_name_of_tracr_is_here() -> None:
    assert [name for name in TRACR_NAMES if not hasattr(rasp, name)] == []


def test_names_labels_and_copies() -> None:
    m = rasp.Map(lambda x: x + 1, rasp.indices)
    assert m.name == "map" and explicit_name(m) is None
    named = m.named("plus_one")
    assert named is not m and named.name == "plus_one" and m.name == "map"
    assert explicit_name(named) == "plus_one"
    assert named.label == f"plus_one_{named.unique_id}" and named.unique_id != m.unique_id
    assert rasp.tokens.label == "tokens" and rasp.indices.label == "indices"
    assert rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).name == "select"
    assert rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)).name == (
        "selector_width"
    )


def test_annotations_and_encodings() -> None:
    x = rasp.Map(lambda v: v, rasp.tokens)
    assert rasp.get_encoding(x) is rasp.Encoding.CATEGORICAL and rasp.is_categorical(x)
    n = rasp.numerical(x.named("n"))
    assert rasp.is_numerical(n) and n.name == "n"  # annotations are kept by copies
    assert rasp.is_categorical(rasp.categorical(n))
    assert n.annotated(foo=1).annotations["foo"] == 1
    with pytest.raises(KeyError, match="No annotation exists for key 'bar'"):
        n.annotations["bar"]
    with pytest.raises(TypeError, match="is not a SOp"):
        rasp.get_encoding(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))


def test_operators_build_maps_as_tracr_does() -> None:
    xs = [1, 2, 3]
    assert (rasp.tokens == 2)(xs) == [False, True, False]
    assert (rasp.tokens + rasp.indices)(xs) == [1, 3, 5]
    assert (10 - rasp.tokens)(xs) == [9, 8, 7]
    assert (rasp.tokens / 2)(xs) == [0.5, 1.0, 1.5]
    assert (~(rasp.tokens > 1))(xs) == [True, False, False]
    assert ((rasp.tokens > 1) & (rasp.tokens < 3))(xs) == [False, True, False]
    assert isinstance(rasp.tokens + rasp.indices, rasp.SequenceMap)
    assert isinstance(rasp.tokens + 1, rasp.Map)
    assert (0 | rasp.indices)(xs) == [0, 1, 2]  # tracr's `other | sop` is `x or other`


def test_map_of_a_map_is_one_map_unless_asked() -> None:
    inner = rasp.Map(lambda x: x + 1, rasp.tokens)
    outer = rasp.Map(lambda x: x * 2, inner)
    assert outer.inner is rasp.tokens and outer([1, 2]) == [4, 6]
    kept = rasp.Map(lambda x: x * 2, inner, simplify=False)
    assert kept.inner is inner and kept([1, 2]) == [4, 6]


def test_none_passes_through_maps_and_comparisons_refuse_it() -> None:
    shifted = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1), rasp.tokens
    )
    assert shifted([1, 2, 3]) == [None, 1, 2]
    assert (shifted + 1)([1, 2, 3]) == [None, 2, 3]
    assert (shifted + rasp.tokens)([1, 2, 3]) == [None, 3, 5]
    eq = rasp.Select(shifted, rasp.tokens, rasp.Comparison.EQ)
    with pytest.raises(ValueError, match="key is None"):
        eq([1, 2, 3])


def test_selector_combinations_simplify_like_tracr() -> None:
    a = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)
    b = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    both = a | b
    assert isinstance(both, rasp.Select)  # same keys and queries: one Select
    assert both([2, 1]) == [[True, True], [False, True]]
    assert isinstance(~a, rasp.Select) and (~a)([2, 1]) == [[True, False], [True, True]]
    c = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    assert isinstance(a & c, rasp.SelectorAnd)
    assert isinstance(rasp.SelectorNot(a), rasp.SelectorNot)
    full = rasp.Select(rasp.Full(1), rasp.tokens, rasp.Comparison.EQ) & b
    assert isinstance(full, rasp.Select) and full([1, 2]) == [[True, False], [False, False]]


def test_aggregate_mean_single_value_and_default(compensated_sum: None) -> None:
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    assert rasp.Aggregate(upto, rasp.tokens == "x")(list("xax")) == [True, 0.5, 2 / 3]
    assert rasp.Aggregate(everything, rasp.tokens)([1, 2]) == [1.5, 1.5]
    # added in key order on every Python (3.12's `sum` would give 0.1)
    assert rasp.Aggregate(everything, rasp.tokens)([0.1] * 10) == [0.9999999999999999 / 10] * 10
    never = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.FALSE)
    assert rasp.Aggregate(never, rasp.tokens)("ab") == [None, None]
    assert rasp.Aggregate(never, rasp.tokens, default=0)("ab") == [0, 0]
    with pytest.raises(ValueError, match="Only types int, bool, and float"):
        rasp.Aggregate(everything, rasp.tokens)("ab")


def test_constants_linear_maps_and_widths() -> None:
    assert rasp.Full(7)("abc") == [7, 7, 7]
    assert rasp.ConstantSOp([1, 2])("ab") == [1, 2]
    with pytest.raises(ValueError, match="doesn't match input len"):
        rasp.ConstantSOp([1, 2])("abc")
    assert rasp.ConstantSelector([[True, False], [True, True]])("ab") == [
        [True, False],
        [True, True],
    ]
    assert rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, -1)([3, 3]) == [6, 5]
    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))
    assert width("abca") == [2, 1, 1, 2]
    assert rasp.evaluate(width, "ab") == rasp.DefaultRASPEvaluator().evaluate(width, "ab")


def test_wrong_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError, match="Map's function must be a Python function"):
        rasp.Map(rasp.tokens, rasp.tokens)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Select's keys must be an s-op"):
        rasp.Select("abc", rasp.tokens, rasp.Comparison.EQ)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a selector"):
        rasp.Aggregate(rasp.tokens, rasp.tokens)  # type: ignore[arg-type]


def test_expressions_know_where_they_were_created() -> None:
    shifted = rasp.Map(lambda x: {x: 1}, rasp.tokens)  # a dict: no model can hold it
    assert shifted.span is not None and shifted.span.file == __file__
    assert shifted.span.text() == "rasp.Map(lambda x: {x: 1}, rasp.tokens)"
    from compiler import compile_sop

    with pytest.raises(CompileError) as info:
        compile_sop(shifted, list("ab"), 3)
    rendered = info.value.render()
    assert f"{__file__}:{shifted.span.line}:" in rendered and "gives {'a': 1}" in rendered


def test_a_chain_of_maps_past_the_recursion_limit_lowers_each_node_once() -> None:
    # (to_sops walks with the evaluator's postorder: children first, each once, no recursion)
    import sys

    from rasp.sops import walk
    from rasp.tracr.lower import to_sops

    x = rasp.numerical(rasp.Map(lambda v: v, rasp.indices))
    for _ in range(2 * sys.getrecursionlimit()):
        x = rasp.numerical(rasp.SequenceMap(lambda a, b: a + b, x, x))
    lowered = to_sops(x)
    assert len(list(walk(lowered))) == 2 * sys.getrecursionlimit() + 2  # and indices
