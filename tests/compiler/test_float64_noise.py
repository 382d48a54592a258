"""float64 noise: numbers the interpreter computes in two ways (1/4 - 2/4 and 4/12 - 7/12) that a
float32 model cannot tell apart. Equal results merge (verify's rule), different ones are
refused or computed from the numbers each comes from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transformer
from compiler import compile_sop
from compiler.fits import merge_noise
from rasp.errors import CompileError
from rasp.sops import evaluate
from tests.compiler.limit_checks import agrees_everywhere, program

BALANCE = """
up_to_self = select(indices, indices, <=);
opens = aggregate(up_to_self, indicator(tokens == "("));
closes = aggregate(up_to_self, indicator(tokens == ")"));
bal = 1 * opens + -1 * closes;
"""


def test_float64_twins_are_one_snap_target() -> None:
    kept = merge_noise(
        (-0.6666666666666667, -0.6666666666666666, 0, 0.0, 0.6, 0.6000000000000001, "a")
    )
    assert kept[1:] == (0, 0.0, 0.6, "a")  # equal numbers stay, the short decimal wins
    assert kept[0] in (-0.6666666666666667, -0.6666666666666666)


@pytest.mark.exactness
def test_a_numerical_output_with_float64_twins_compiles_and_agrees() -> None:
    # opens - closes reaches 1/3 as 0.3333333333333333 and 0.33333333333333337: listed twice,
    # they left the decoder no room between two snap targets (margin 0, refused). At position i
    # both means are k / (i+1), so the output decodes on that grid (compiler.grid), twins alike.
    bal = program(BALANCE, "bal")
    model = compile_sop(bal, list("()a"), 5, name="bal")
    assert model.metadata["output"]["denominators"] == [1, 2, 3, 4, 5]
    agrees_everywhere(bal, model, "()a", 5)


MEANS = """
prefix = select(indices, indices, <=);
frac_a = aggregate(prefix, indicator(tokens == "a"));
frac_b = aggregate(prefix, indicator(tokens == "b"));
"""


def test_a_result_that_follows_float64_rounding_is_refused() -> None:
    # (0.1 + 0.2) / 2 is 0.15000000000000002 in float64 (input [1, 2]), (0 + 0.2 + 0.1 + 0.3...) / 4
    # is 0.15 (input [0, 2, 1, 3]): `> 0.15` tells them apart, no float32 model can (before: a
    # certified model that silently took one side)
    text = "m = aggregate(select(indices, indices, <=), tokens_int * 0.1);\nres = m > 0.15;"
    with pytest.raises(CompileError) as err:
        compile_sop(program(text, "res"), [0, 1, 2, 3], 4)
    message = err.value.diagnostics[0].message
    assert "'m > 0.15' gives False at 0.15 and True at 0.15000000000000002" in message
    assert "differ only by float64 rounding" in message


@pytest.mark.exactness
def test_a_map_of_a_difference_that_follows_float64_rounding_steps_on_its_sources() -> None:
    # 1/4 - 2/4 is -0.25 and rounds (x 10) to -2; 4/12 - 7/12 is -0.25000000000000006 and rounds
    # to -3. Stepped on the difference, the two are one point (before: a certified model wrong on
    # one of them); stepped on frac_a with frac_b as context, each pair keeps its own value.
    sop = program(MEANS + "res = round(10 * (frac_a - frac_b));", "res")
    model = compile_sop(sop, list("abc"), 12)
    agrees_everywhere(sop, model, "abc", 7)
    runtime = transformer.from_tensors(model.weights, model.metadata)
    inputs = [list("abbc"), list("aaaabbbbbbbc")]  # last position: 1/4 - 2/4, 4/12 - 7/12
    assert [evaluate(sop, tokens).values[-1] for tokens in inputs] == [-2, -3]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(evaluate(sop, tokens).values)


@pytest.mark.exactness
def test_a_difference_with_float64_twins_and_an_index_context() -> None:
    # x - y takes float64 twins of -1/6 that round(3 * .) sends to different sides: stepped on
    # x - y with `indices` as context, the model was certified and wrong on "aab" (-1 at position
    # 0, where the interpreter gives 0); now it is computed from x and y themselves
    text = """
    x = aggregate(select(1, 1, ==), indicator(tokens == "b"));
    y = aggregate(select(tokens, tokens, ==), indicator(indices == 0));
    res = round(3 * (x - y)) + indices;
    """
    sop = program(text, "res")
    model = compile_sop(sop, list("ab"), 6)
    agrees_everywhere(sop, model, "ab", 6)


def test_results_within_float64_noise_are_one_result() -> None:
    # (x - y) * (x + y) over two prefix means gives -0.23999999999999994 and -0.24 for inputs
    # that differ only by float64 rounding: one result as the compiler promises (within 1e-6), so
    # neither is "a different result for equal numbers" (the refusal said so before); what float32
    # cannot resolve is refused by the certifier, located at its decision
    sop = program(MEANS + "res = (frac_a - frac_b) * (frac_a + frac_b);", "res")
    try:
        model = compile_sop(sop, list("abc"), 10)
    except CompileError as err:
        assert "equal numbers" not in err.diagnostics[0].message
        assert "float32 error" in err.diagnostics[0].message
    else:
        agrees_everywhere(sop, model, "abc", 6)
    small = compile_sop(sop, list("abc"), 6)
    agrees_everywhere(sop, small, "abc", 6)


def test_noise_twins_merge_by_verify_rule() -> None:
    # results are merged by the rule verify judges a model by (rasp.atoms.same_value): floats
    # within 1e-6, ints exactly; 10,000,000 and 10,000,001 are "within 1e-6" relatively, and a
    # model that gave one for both would fail verify
    from compiler.fits import NoiseError, merge_points
    from compiler.graph import build_graph

    node = build_graph(program("x = indices * 2;", "x")).output
    assert merge_points(node, [(0.1, 1.0), (0.1 + 1e-12, 1.0000000001)]) == [(0.1, 1.0)]
    with pytest.raises(NoiseError):
        merge_points(node, [(0.1, 10_000_000), (0.1 + 1e-12, 10_000_001)])


def _merged_or_error(merge, node, points):  # type: ignore[no-untyped-def]
    try:
        return merge(node, points)
    except CompileError as err:
        return type(err).__name__, err.diagnostics[0].message


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 1, 2, 0.5, 1 / 3, 2 / 3, 1e-12, 3.0, -1.0, 1e6]),
            st.sampled_from([0, 1e-13, -1e-13, 5e-10, 1e-7, 0.25]),
            st.integers(0, 1),
            st.sampled_from([0, 1, True, 1.0, "a"]),
        ),
        max_size=40,
    )
)
def test_merge_points_equals_the_plain_walk_over_sorted_points(raw: list) -> None:
    """The numpy segmentation splits only where the plain walk starts a cluster anyway: the same
    points, in the same order, or the same refusal."""
    from compiler.fits import _merge_sorted, merge_points
    from compiler.graph import build_graph

    node = build_graph(program("x = indices * 2;", "x")).output
    # ints kept as ints where the offset is 0 (1 and 1.0 are one point)
    points = [
        (base + offset if offset or as_float else base, v) for base, offset, as_float, v in raw
    ]
    want = _merged_or_error(
        lambda n, p: _merge_sorted(n, sorted(p, key=lambda q: q[0])), node, points
    )
    got = _merged_or_error(merge_points, node, points)
    assert repr(got) == repr(want)


# f is the int 1 of one key at position 0 and the float 1.0 of every key being "a" after it; the
# inner map, steps over f with the token as context, writes f's number 1.0 to one column
EQUAL_NUMBERS = """
f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
g = (f * 0.5) if indices < 3 else ((-1) if tokens == "c" else f);
"""


@pytest.mark.exactness
def test_a_step_map_writes_equal_numbers_to_the_column_its_readers_expect() -> None:
    """The steps over f write 1 (int) where f is 1.0: its readers' rows must read 1.0 as 1.
    A table over (indices < 3, f, the inner map) listed 1.0 alone and gave 0 on "aaaa" at
    position 3 (the interpreter: 1.0), a model the certifier proved: its domain missed the
    column the steps write."""
    from compiler.fits import merge_per_context
    from compiler.graph import build_graph

    sop = program(EQUAL_NUMBERS, "g")
    model = compile_sop(sop, list("abc"), 16, name="g")
    agrees_everywhere(sop, model, "abc", 5)
    node = build_graph(sop).output
    points = [("p", [(0.0, 0), (1.0, 1)]), ("q", [(1.0, 1.0), (0.5, 0.5)])]
    merged, canon = merge_per_context(node, points, (0, 0.0, 0.5, 1, 1.0))
    assert merged[1][1] == [(0.5, 0.5), (1.0, 1)]  # 1.0 stands for 1 in every context
    assert canon is not None and canon[("float", 1.0)] == 1 and canon[("float", 0.0)] == 0
    assert merge_per_context(node, points, None)[1] is None  # a number needs no columns


def test_twins_merged_in_one_context_and_written_in_another_share_one_column() -> None:
    """A value met in two columns that are float64 twins of one value is written in one (the
    twin nearest a short decimal), in every context: one column for readers to expect."""
    from compiler.fits import merge_per_context
    from compiler.graph import build_graph

    node = build_graph(program("x = indices * 2;", "x")).output
    twin = 0.1 + 0.2  # 0.30000000000000004
    merged_here = ("p", [(0.3, 0.3), (twin, twin)])  # one point, 0.3 written for both
    alone_there = ("q", [(twin, twin)])  # the twin, written as itself alone
    merged, canon = merge_per_context(node, [merged_here, alone_there], (0.3, twin))
    assert merged == [("p", [(0.3, 0.3)]), ("q", [(twin, 0.3)])]
    assert canon == {("float", 0.3): 0.3, ("float", twin): 0.3}
    _, canon = merge_per_context(node, [merged_here], (0.3, twin))
    assert canon == {("float", 0.3): 0.3, ("float", twin): 0.3}


def test_values_met_in_two_columns_that_are_not_twins_are_refused() -> None:
    """0.3 and 0.30000005 are one value as a model promises numbers (within 1e-6), but not
    float64 twins (within FLOAT64_NOISE): their columns are not merged, the map is refused."""
    from compiler.fits import merge_per_context
    from compiler.graph import build_graph

    node = build_graph(program("x = indices * 2;", "x")).output
    twin, near = 0.1 + 0.2, 0.3 + 5e-8
    merged_here = ("p", [(0.3, 0.3), (twin, near)])  # near written as 0.3 here
    alone_there = ("q", [(twin, near)])  # and as itself there
    with pytest.raises(CompileError, match="two different one-hot columns"):
        merge_per_context(node, [merged_here, alone_there], (0.3, near))
    # two different whole numbers are never one column (1e10 and 1e10 + 1 lie within noise)
    whole = ("p", [(0.3, 10**10), (twin, 10**10 + 1)])
    with pytest.raises(CompileError):
        merge_per_context(node, [whole, ("q", [(twin, 10**10 + 1)])], (10**10, 10**10 + 1))


def test_merge_points_keeps_the_first_of_a_run_of_one_value() -> None:
    """A row reached at many positions (runs of one x and one value, the fast path) merges as the
    plain walk merges it; a run whose values differ by type is still refused alike."""
    from compiler.fits import _merge_sorted, merge_points
    from compiler.graph import build_graph

    node = build_graph(program("x = indices * 2;", "x")).output
    runs = [
        [(0.5, 1)] * 5 + [(1, "a"), (1.0, "a")] * 3 + [(2 / 3, 0.25)] * 4,
        [(0.5, 1), (0.5, 1.0), (0.5, 1)],  # equal numbers of two types: one point, the first
        [(0.5, 1), (0.5, True)],  # a bool is not the number 1
        [(0.5, float("nan")), (0.5, float("nan"))],
        # float64 twins (a prefix balance's x at N = 256): one value, then two (refused)
        [(-0.9841269841269842, False), (-0.9841269841269841, False), (0.25, 1), (0.25, 1.0)],
        [(-0.9841269841269842, False), (-0.9841269841269841, True)],
    ]
    for points in runs:
        want = _merged_or_error(
            lambda n, p: _merge_sorted(n, sorted(p, key=lambda q: q[0])), node, points
        )
        assert repr(_merged_or_error(merge_points, node, points)) == repr(want)
