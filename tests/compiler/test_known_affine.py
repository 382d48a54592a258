"""Maps whose function states its affine form are read as free numerical views without evaluating
them on every combination of their inputs' values: the paper's pair balance, the difference of two
prefix means, has ~N^3/3 of them (past the planner's guard at N = 183) and was refused."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop, map_rows
from compiler.known_affine import known_affine
from rasp import sops as S
from rasp import tracr
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib
from rasp.tracr.lower import to_sops
from tests.runtime_helpers import run_compiled

PAIR_BALANCE = """
prevs = select(indices, indices, <=);
opens = aggregate(prevs, indicator(tokens == "("));
closes = aggregate(prevs, indicator(tokens == ")"));
balance = opens - closes;
"""
FRACTIONS = [k / 7 for k in range(8)] + [0, 1]


def _map(expression: str) -> S.MapSOp:
    interp = Interpreter()
    interp.exec_program(
        parse(f"x = aggregate(select(indices, 0, ==), indices);\nm = {expression};", "<test>")
    )
    node = interp.get("m")
    assert isinstance(node, S.MapSOp)
    return node


@pytest.mark.parametrize(
    "expression, form",
    [
        ("x - indices", [1.0, -1.0, 0.0]),
        ("x + indices", [1.0, 1.0, 0.0]),
        ("-x", [-1.0, 0.0]),
        ("+x", [1.0, 0.0]),
        ("x + 3", [1.0, 3.0]),
        ("2.5 + x", [1.0, 2.5]),
        ("x - 1", [1.0, -1.0]),
        ("1 - x", [-1.0, 1.0]),
        ("x * 4", [4.0, 0.0]),
        ("0.5 * x", [0.5, 0.0]),
        ("x / 4", [0.25, 0.0]),
        ("x / -0.5", [-2.0, 0.0]),
    ],
)
def test_rasp_operators_state_their_form(expression: str, form: list[float]) -> None:
    node = _map(expression)
    values = [FRACTIONS] * len(node.inputs)
    assert known_affine(node.fn, values) == form
    for row in ([3 / 7, 2], [1, 0]):  # the form is what the function computes
        args = row[: len(node.inputs)]
        want = sum(a * v for a, v in zip(form, args)) + form[-1]
        assert node.fn(*args) == pytest.approx(want)


@pytest.mark.parametrize(
    "expression, values",
    [
        ("x + 0.1", [FRACTIONS]),  # off the fit's 2^-20 grid: the fit finds no form either
        ("x * x", [FRACTIONS, FRACTIONS]),
        ("x / 3", [FRACTIONS]),
        ("2 / (x + 1)", [FRACTIONS]),
        ("x / 0", [FRACTIONS]),
        ("x % 2", [FRACTIONS]),
        ("x + indices", [["a", "b"], [1, 2]]),  # strings concatenate
        ("x - indices", [[None, 1], [1, 2]]),
        ("x - indices", [[float("inf")], [1]]),
    ],
)
def test_other_maps_and_inputs_state_no_form(expression: str, values: list) -> None:
    assert known_affine(_map(expression).fn, values) is None


def test_tracr_linear_sequence_map_states_its_factors() -> None:
    x, y = tracr.numerical(tracr.Map(lambda v: v, tracr.tokens)), tracr.indices
    fn = to_sops(tracr.LinearSequenceMap(x, y, 2, -0.5)).fn  # type: ignore[union-attr]
    assert known_affine(fn, [FRACTIONS, FRACTIONS]) == [2.0, -0.5, 0.0]
    # a factor changed after construction is not what the function computes: no form
    changed = tracr.LinearSequenceMap(x, y, 1, 1)
    changed.fst_fac = 3
    assert known_affine(to_sops(changed).fn, [FRACTIONS, FRACTIONS]) is None  # type: ignore[union-attr]
    # a plain SequenceMap states nothing, whatever it computes; the operators `+` and `-` of
    # two s-ops (tracr builds a SequenceMap of a lambda) state theirs
    plain = to_sops(tracr.SequenceMap(lambda a, b: a - b, x, y)).fn  # type: ignore[union-attr]
    assert known_affine(plain, [FRACTIONS, FRACTIONS]) is None
    for expr, form in ((x - y, [1.0, -1.0, 0.0]), (x + y, [1.0, 1.0, 0.0]), (x * y, None)):
        assert known_affine(to_sops(expr).fn, [FRACTIONS, FRACTIONS]) == form  # type: ignore[union-attr]


@pytest.mark.exactness
def test_the_pair_balance_is_a_free_view_past_the_row_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At N = 32 its inputs meet in ~12K ways: with the guard at 5,000 (past it from N = 183 at the
    # real guard) the difference was refused as too many combinations; its form needs no rows.
    monkeypatch.setattr(map_rows, "MAX_ROWS", 5_000)
    interp = Interpreter()
    interp.exec_program(parse(PAIR_BALANCE, "<test>"))
    root = interp.get("balance")
    model = compile_sop(root, list("()"), 32, name="balance")
    assert model.metadata["config"]["n_layers"] == 1  # the two means' head, and a free view
    inputs = all_inputs("()", 6) + random_inputs("()", 32, 100, seed=3)
    assert check_inputs(model, root, inputs) == len(inputs)
    # a chain of such maps over the same two means: a view of views
    interp.exec_program(parse("mid = (opens + closes) / 2 - 1;", "<test>"))
    mid = interp.get("mid")
    model = compile_sop(mid, list("()"), 32, name="mid")
    assert model.metadata["config"]["n_layers"] == 1
    assert check_inputs(model, mid, inputs) == len(inputs)
    # a product states no form: it still tabulates its inputs' combinations, refused, located
    interp.exec_program(parse("odd = (opens * closes) + 1;", "<test>"))
    with pytest.raises(CompileError, match="combine in more than 5,000 ways"):
        compile_sop(interp.get("odd"), list("()"), 32, name="odd")


@pytest.mark.exactness
@pytest.mark.parametrize("written", ["LinearSequenceMap", "operator"])
def test_tracrs_pair_balance_past_the_row_guard(
    monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    monkeypatch.setattr(map_rows, "MAX_ROWS", 5_000)
    if written == "LinearSequenceMap":
        program = lib.make_pair_balance(tracr.tokens, "(", ")")
    else:  # the same difference written with `-`
        opens = tracr.numerical(lib.make_frac_prevs(tracr.tokens == "("))
        closes = tracr.numerical(lib.make_frac_prevs(tracr.tokens == ")"))
        program = tracr.numerical(opens - closes)
    model = compile_sop(program, list("()"), 32, name="pair_balance")
    assert model.metadata["config"]["n_layers"] == 1
    inputs = random_inputs("()", 32, 60, seed=4)
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(tokens)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
