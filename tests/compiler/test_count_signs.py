"""Maps of two counts that depend on which is larger alone, compiled as maps of the sign of one
mean of votes (compiler.count_signs, through compiler.fraction_means)."""

from __future__ import annotations

import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from compiler.blocks import exact_key
from compiler.count_signs import SignTable, _apply, _evaluate, _Plan, count_signs
from compiler.dedupe import merge_duplicates
from compiler.fraction_means import fraction_means
from rasp import sops as S
from rasp.arithmetic import PYTHON_BINARY
from rasp.ast import BinaryOp
from rasp.operators import PYTHON_UNARY, Lifted, _choose
from tests.compiler.test_compile import check_inputs, random_inputs
from tests.compiler.test_fraction_means import assert_same_typed_values
from tests.compiler.test_total_orders import _program  # the program's `res`

COUNTS = """
c1 = selector_width(select({keys1}, {value1}, {op1}) {scope});
c2 = selector_width(select({keys2}, {value2}, {op2}) {scope});
"""
SCOPES = {
    "every key": "",
    "so far": "and select(indices, indices, <=)",
    "before": "and select(indices, indices, <)",
    "from here": "and select(indices, indices, >=)",
}


def _counts(scope: str = "every key", second: str = '"b"') -> str:
    return COUNTS.format(
        keys1="tokens",
        value1='"a"',
        op1="==",
        keys2="tokens",
        value2=second,
        op2="==",
        scope=SCOPES[scope],
    )


def _signs(root: S.Node, max_len: int) -> dict[str, tuple[object, object, object]]:
    """The maps count_signs rewrites: their text -> the table's (below, equal, above)."""
    order = list(S.walk(root))
    found = count_signs(order, max_len, lambda node: False)
    by_id = {node.id: node for node in order}
    return {by_id[k].text: (s.table.below, s.table.equal, s.table.above) for k, s in found.items()}


@pytest.mark.parametrize(
    ("written", "table"),
    [
        ("c1 == c2", (False, True, False)),
        ("c1 > c2", (False, False, True)),
        ("not (c1 <= c2)", (False, False, True)),
        ("c2 - c1 >= 0", (True, True, False)),
        ('"tie" if c1 == c2 else ("a" if c1 > c2 else "b")', ("b", "tie", "a")),
        ("(c1 < c2) * 2", (2, 0, 0)),
        # not of the sign alone, or not of the two counts alone
        ("c1 - c2 == 1", None),
        ("c1 + c2 > 2", None),
        ("c1 > length / 2", None),
    ],
)
def test_a_map_of_the_sign_of_the_difference_is_a_table_of_three_values(
    written: str, table: tuple[object, object, object] | None
) -> None:
    root = _program(_counts() + f"res = {written};")
    found = _signs(root, 8)
    assert found == ({} if table is None else {root.text: table})


def test_a_map_that_raises_at_any_pair_is_not_rewritten() -> None:
    # at N = 4 the disjoint counts never reach c1 + c2 = 8, where the division raises
    root = _program(_counts() + "res = (1 / (c1 + c2 - 8) < 1) and c1 == c2;")
    assert _signs(root, 4) == {}
    assert _signs(_program(_counts() + "res = c1 == c2;"), 4)


def test_only_the_map_read_by_something_else_is_rewritten() -> None:
    root = _program(_counts() + "balanced = c1 == c2;\nres = not balanced;")
    assert list(_signs(root, 8)) == ["not balanced"]
    # read by a map of the index too: that map is no candidate, the comparison is
    root = _program(_counts() + "res = c1 == c2 and indices > 0;")
    assert list(_signs(root, 8)) == ["c1 == c2"]


def test_counts_within_different_scopes_are_not_compared() -> None:
    text = COUNTS.format(
        keys1="tokens", value1='"a"', op1="==", keys2="tokens", value2='"b"', op2="==", scope=""
    )
    text = text.replace('"b", ==)', '"b", ==) and select(indices, indices, <=)')
    assert _signs(_program(text + "res = c1 == c2;"), 8) == {}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    scope=st.sampled_from(list(SCOPES)),
    first=st.sampled_from(
        [("tokens", '"a"', "=="), ('tokens == "c"', "True", "=="), ("tokens", '"b"', "<")]
    ),
    second=st.sampled_from(
        [
            ("tokens", '"b"', "=="),
            ("tokens", '"a"', "!="),
            ("indices", "2", ">="),
            ("tokens", '"a"', "=="),
        ]
    ),
    written=st.sampled_from(
        [
            "c1 == c2",
            "c1 < c2",
            "c1 >= c2",
            "c2 != c1",
            '"x" if c1 > c2 else "y"',
            "(c1 - c2) > 0 or c1 == c2",
        ]
    ),
)
def test_the_rewrite_gives_the_same_values_of_the_same_types(
    scope: str, first: tuple[str, str, str], second: tuple[str, str, str], written: str
) -> None:
    """Every input up to length 6: the rewritten program gives the original's values and types
    (overlapping predicates, an index predicate, empty scopes at the first or last position)."""
    text = COUNTS.format(
        keys1=first[0],
        value1=first[1],
        op1=first[2],
        keys2=second[0],
        value2=second[1],
        op2=second[2],
        scope=SCOPES[scope],
    )
    root = merge_duplicates(_program(text + f"res = {written};"))  # one scope, as `prepare`
    rewritten = fraction_means(root, list("abc"), 6)
    # one count (merged) is not compared; an index predicate within a positional scope is no
    # count of the tokens (compiler.ratio_maps.count_parts)
    positional = second[0] == "indices" and scope != "every key"
    assert bool(_signs(root, 6)) is (first != second and not positional)
    assert_same_typed_values(root, rewritten)


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("scope", "max_params"),
    [("every key", 1_000), ("so far", 2_000)],
)
def test_a_balance_of_two_counts_is_one_head_and_one_step_at_n_256(
    scope: str, max_params: int
) -> None:
    # every key: 26,317 parameters in two layers at N = 256 before (each count decoded by an
    # MLP of 2N units); so far: as many brackets closed as opened
    root = _program(_counts(scope) + "res = c1 == c2;")
    model = compile_sop(root, list("abc"), 256, name="res")
    assert model.config["n_layers"] == 1
    assert model.param_count() < max_params
    inputs = random_inputs(list("abc"), 256, 60, seed=11)
    inputs += [["a", "b"] * 128, ["a"] * 128 + ["b"] * 128, ["c"] * 256, ["a"]]
    assert check_inputs(model, root, inputs) == len(inputs)


class _Unhashable:
    """A map function that defines equality and so is not hashable (a tracr map may be)."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable)

    def __call__(self, a: int, b: int) -> bool:
        return a < b


def test_a_map_whose_function_is_not_hashable_is_tabled_without_the_cache() -> None:
    counts = _program(_counts() + "res = c1 == c2;").inputs
    root = S.MapSOp(fn=_Unhashable(), inputs=counts, text="c1 < c2")
    assert _signs(root, 8) == {"c1 < c2": (True, False, False)}


def test_the_forms_of_one_compile_share_their_rewrites(monkeypatch: pytest.MonkeyPatch) -> None:
    """dyck1 is compiled in its default form and with counts as means: the prefix means are
    counted once for both at the compile's N (compiler.forms.Forms), besides the size probes'."""
    from pathlib import Path

    import compiler.forms
    from rasp.interpreter import load_file

    counted: list[int] = []
    count_means = compiler.forms.count_means

    def recorded(sop, vocab, max_len, **kwargs):  # type: ignore[no-untyped-def]
        counted.append(max_len)
        return count_means(sop, vocab, max_len, **kwargs)

    monkeypatch.setattr(compiler.forms, "count_means", recorded)
    program = Path(__file__).resolve().parents[2] / "programs" / "dyck1.rasp"
    model = compile_sop(load_file(program).get("dyck1"), list("()"), 24, name="dyck1")
    assert model.metadata.get("fractions_as_means")  # the second form was prepared and kept
    assert counted.count(24) == 1


def _pairwise_table(plan: _Plan, max_len: int) -> SignTable | None:
    """`_Plan.table` as it was first written (each argument read through `_Plan._read` at each
    pair): the reference for the readers it makes once."""
    counts = range(max_len + 1)
    one = plan._per_count(counts)
    if one is None:
        return None
    classes: dict[tuple[object, ...], tuple[tuple[int, int], set[int]]] = {}
    for c1 in counts:
        for c2 in counts:
            pair = (c1, c2)
            done: dict[int, object] = {}
            for k in plan.lowest:
                fn, args = plan.shape[k]
                found = _apply(fn, [plan._read(a, pair, one, done) for a in args])
                if found is None:
                    return None
                done[k] = found[0]
            values = [plan._read(a, pair, one, done) for a in plan.frontier]
            key = tuple(map(exact_key, values))
            classes.setdefault(key, (pair, set()))[1].add((c1 > c2) - (c1 < c2))
    known: dict[int, tuple[tuple[str, str], object]] = {}
    for pair, signs in classes.values():
        value = _evaluate(plan.shape, pair)
        if value is None:
            return None
        typed = exact_key(value[0])
        for sign in signs:
            if known.setdefault(sign, (typed, value[0]))[0] != typed:
                return None
    return SignTable(known[-1][1], known[0][1], known[1][1])


_FUNCTIONS = [
    lambda a, b: a - b,
    lambda a, b: a + b,
    lambda a, b: a < b,
    lambda a, b: a == b,
    lambda a, b: a / b,  # raises at b = 0
    lambda a, b: a * b,
    lambda a: a * 0.5,
    lambda a: a > 2,
    lambda a: "x" if a else "y",
    lambda a: [a],  # no sequence holds a list
    lambda: 3,
]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_pair_loop_reads_each_argument_as_before(data: st.DataObject) -> None:
    """Random shapes of up to six steps over two counts and constants: the readers made once give
    the very table of the loop that read each argument at each pair."""
    shape: list[tuple[object, tuple[tuple[object, ...], ...]]] = []
    for k in range(data.draw(st.integers(1, 6))):
        fn = data.draw(st.sampled_from(_FUNCTIONS))
        sources = [("count", 0), ("count", 1), ("const", 1), ("const", 0.0)]
        sources += [("step", j) for j in range(k)]
        args = tuple(data.draw(st.sampled_from(sources)) for _ in range(fn.__code__.co_argcount))
        shape.append((fn, args))
    plan = _Plan.of(tuple(shape))  # type: ignore[arg-type]
    max_len = data.draw(st.integers(1, 6))  # (every sign: the compile's N >= 1)
    assert plan.table(max_len) == _pairwise_table(plan, max_len)


def _lifted(fn: object, template: tuple[object, ...]) -> Lifted:
    """An operator's map (as `rasp.operators` makes them): None marks an s-op's place."""
    return Lifted(fn, template, tuple(k for k, v in enumerate(template) if v is None))  # type: ignore[arg-type]


_BINARY = sorted(PYTHON_BINARY.items(), key=lambda item: item[0].value)
_LIFTED = [
    *(_lifted(fn, (None, None)) for _, fn in _BINARY),
    *(_lifted(fn, (None, 1)) for _, fn in _BINARY),
    *(_lifted(fn, (2.5, None)) for _, fn in _BINARY),
    _lifted(PYTHON_BINARY[BinaryOp.MUL], (None, -0.0)),  # -0.0 results: the loop decides
    *(_lifted(fn, (None,)) for fn in PYTHON_UNARY.values()),
    _lifted(_choose, (None, "x", None)),
]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_pairs_on_columns_give_the_loops_table(data: st.DataObject) -> None:
    """Random shapes of operators' maps (compiler.vector_maps computes them) over two counts and
    constants: the lowest steps computed on columns at every pair give the very table of the loop
    that applies each at each pair (None where the loop's is)."""
    shape: list[tuple[object, tuple[tuple[object, ...], ...]]] = []
    # often a balance first and maps of it above (tables of the sign), else any reads
    balance = data.draw(st.booleans())
    if balance:
        shape.append((_lifted(operator.sub, (None, None)), (("count", 0), ("count", 1))))
    for k in range(len(shape), data.draw(st.integers(1, 5)) + len(shape)):
        fn = data.draw(st.sampled_from(_LIFTED))
        # (True, -0.0 and numbers past 2^53 too: kinds and keys the columns must tell apart)
        sources = [("const", c) for c in (1, 0.5, "b", True, -0.0, 2**60, 1e308)]
        sources += [] if balance else [("count", 0), ("count", 1)]
        sources += [("step", j) for j in range(k)]
        args = tuple(data.draw(st.sampled_from(sources)) for _ in fn.positions)
        shape.append((fn, args))
    plan = _Plan.of(tuple(shape))  # type: ignore[arg-type]
    max_len = data.draw(st.integers(1, 6))
    assert _typed(plan.table(max_len)) == _typed(_pairwise_table(plan, max_len))


def _typed(table: SignTable | None) -> tuple[tuple[str, str], ...] | None:
    """A table's values with their types (SignTable(True, ...) == SignTable(1, ...) in Python)."""
    return None if table is None else tuple(map(exact_key, vars(table).values()))


def test_a_balance_is_classed_on_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """`indicator(c1 - c2 < 0)`: its pairs are classed on columns, not one by one."""
    sub, less = _lifted(operator.sub, (None, None)), _lifted(operator.lt, (None, 0))
    plan = _Plan.of(((sub, (("count", 0), ("count", 1))), (less, (("step", 0),))))
    monkeypatch.setattr(_Plan, "_loop_classes", None)  # (called: a TypeError)
    assert plan.table(40) == SignTable(True, False, False)
