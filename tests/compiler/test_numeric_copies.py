"""An aggregate that selects one key copies many numbers as one number where that is smaller and
proved (compiler.alternatives, `BuildOptions.numeric_copies`), else as their one-hot."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from compiler import alternatives, build_facts, compile_sop, default_builds
from compiler.model import CompiledModel, build_cost
from compiler.refusals import also_tried
from rasp import sops as S
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

LONG_ADDITION = Path(__file__).resolve().parents[1] / "compat" / "programs" / "long_addition.rasp"
FIRST_POSITION = """
seen = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));
first_pos = aggregate(select(tokens, tokens, ==) and select(seen, 0, ==), indices);
"""


def _first_position() -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(FIRST_POSITION, "<test>"))
    return interp.get("first_pos")


def _agrees(
    model: CompiledModel,
    root: S.Node,
    n: int,
    *,
    seed: int,
    samples: int = 100,
    every_up_to: int = 4,
    extra: list[list[str]] | None = None,
) -> None:
    """The model gives the interpreter's values on every input over "abc" up to `every_up_to`
    tokens, `samples` seeded random ones up to n tokens, and `extra`, in one padded batch."""
    rng = random.Random(seed)
    inputs = [
        list(t) for k in range(1, every_up_to + 1) for t in itertools.product("abc", repeat=k)
    ]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(1, n))] for _ in range(samples)]
    inputs += extra or []
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


def _copy_labels(model: CompiledModel, name: str) -> list[str]:
    return [label for label in model.metadata["residual"] if label.split(":")[0] == name]


@pytest.mark.exactness
@pytest.mark.parametrize("n", [5, 16, 40])
def test_the_first_positions_index_is_copied_as_one_number(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index of each token's first occurrence: one key (compiler.count_keys), n values. As a
    # one-hot copy it is n columns written and read (62,258 parameters at N = 40); as one number,
    # 5,792.
    root = _first_position()
    model = compile_sop(root, list("abc"), n, name="first_pos")
    assert _copy_labels(model, "first_pos") == ["first_pos"]
    assert model.metadata["certificate"]["errors"] == []
    with monkeypatch.context() as patch:
        patch.setattr(build_facts, "copies_many", lambda residual, graph, single_key: False)
        one_hot = compile_sop(root, list("abc"), n, name="first_pos")
    assert len(_copy_labels(one_hot, "first_pos")) == n
    assert model.param_count() < one_hot.param_count()
    assert len(model.metadata["layers"]) <= len(one_hot.metadata["layers"])
    _agrees(model, root, n, seed=n, samples=80)


FIRST_C_NEXT = """
isc = tokens == "c";
before = selector_width(select(isc, True, ==) and select(indices, indices, <));
firstc = aggregate(select(isc and before == 0, True, ==), indices);
after_c = aggregate(select(indices, firstc + 1, ==), tokens);
"""


def test_build_cost_takes_a_layer_more_only_for_under_a_quarter_of_the_parameters() -> None:
    assert build_cost(3, 1_000) < build_cost(4, 1_000)
    assert build_cost(3, 1_000) < build_cost(4, 250)  # a quarter: the layer still wins
    assert build_cost(4, 249) < build_cost(3, 1_000)
    assert build_cost(2, 7_000) < build_cost(2, 7_001)
    assert min([(4, 49_418), (3, 1_821_063)], key=lambda s: build_cost(*s)) == (4, 49_418)


@pytest.mark.exactness
def test_a_copy_with_a_layer_more_is_kept_where_it_is_much_smaller() -> None:
    # The token after the first "c" at N = 256: copied as one number, the first c's position
    # needs its square stepped on its decoded whole number, a layer later (4 layers, 49,418
    # parameters); copied as its one-hot, 3 layers but 1,821,063 parameters. Layers first, but
    # not at 37 times the size (compiler.model.LAYER_WORTH).
    interp = Interpreter()
    interp.exec_program(parse(FIRST_C_NEXT, "<test>"))
    root = interp.get("after_c")
    model = compile_sop(root, list("abcd"), 256, name="after_c")
    assert len(model.metadata["layers"]) == 4
    assert model.param_count() < 60_000
    assert _copy_labels(model, "firstc") == ["firstc"]
    rng = random.Random(256)
    inputs = [
        [rng.choice("abd") for _ in range(n)] + ["c"] + [rng.choice("abcd") for _ in range(m)]
        for n, m in [(0, 0), (0, 5), (254, 1), (200, 55), (7, 3), (120, 0)]
    ]
    inputs += [[rng.choice("abcd") for _ in range(rng.randint(1, 256))] for _ in range(20)]
    inputs += [["a"] * 256, ["c"] * 256]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


def test_a_numeric_copy_that_is_not_proved_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long addition's digit copies as numbers (75,823 parameters against 82,400) feed a matched
    # width whose decode then carries a float32 error of 730 against a margin of 3: the certifier
    # refuses that build, and the one-hot copies stay, the same model as without the alternative.
    root = load_file(LONG_ADDITION).get("longsum")
    vocab = list("0123456789+")
    stages: list[str] = []
    model = compile_sop(root, vocab, 16, name="longsum", progress=lambda s, *_: stages.append(s))
    assert "compiling: certify with numbers copied as numbers" in stages  # built, and different
    assert model.metadata["certificate"]["errors"] == []
    monkeypatch.setattr(build_facts, "copies_many", lambda residual, graph, single_key: False)
    without = compile_sop(root, vocab, 16, name="longsum")
    assert model.metadata["residual"] == without.metadata["residual"]
    assert model.param_count() == without.param_count()


REVERSED_PREFIX = """
f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
flip = select(indices, length - indices - 1, ==);
r = aggregate(flip, f);
"""


@pytest.mark.exactness
@pytest.mark.parametrize("n", [16, 32, 128])
def test_the_reverse_of_a_prefix_mean_is_copied_as_one_number(n: int) -> None:
    """The copied mean takes ~n^2/3 values. Copied as their one-hot and summed back into one
    number, its output snap is not proved from N = 32, and the one-hot output built instead was
    3.9M parameters at N = 32 (58.4M at N = 64); at N = 128 the default build is over the
    parameter limit. Copied as one number through the flip's exact addressing, with the
    planner's own numerical output: 2,704 parameters at N = 32, 8,656 at N = 128, 2 layers."""
    interp = Interpreter()
    interp.exec_program(parse(REVERSED_PREFIX, "<test>"))
    root = interp.get("r")
    model = compile_sop(root, list("abc"), n, name="r")
    assert model.param_count() < 70 * n + 600  # 1,712, 2,704 and 8,656
    assert len(model.metadata["layers"]) == 2
    assert not any(label.startswith("f:") for label in model.metadata["residual"])
    extremes = [["a"] * n, ["b"] + ["a"] * (n - 1), ["a"] * (n - 1) + ["c"]]
    _agrees(model, root, n, seed=n, every_up_to=5, extra=extremes)


@pytest.mark.exactness
def test_a_copy_by_the_index_itself_keeps_its_matched_atoms() -> None:
    """`select(indices, indices, ==)` matches on the index number and square the positional
    embedding already holds: a number copied so costs fewer parameters than exact addressing
    (476 against 1,397 at N = 64, both 2 layers), and both forms are tried."""
    root = _res(
        'f = aggregate(select(indices, indices, >=), indicator(tokens == "b"));\n'
        "c = aggregate(select(indices, indices, ==), f);\nres = c > 0.5;",
    )
    model = compile_sop(root, list("abc"), 64, name="res")
    assert model.param_count() < 1_000 and len(model.metadata["layers"]) == 2  # 476
    _agrees(model, root, 64, seed=64)


@pytest.mark.exactness
def test_an_unproved_copy_of_many_numbers_is_copied_as_a_number_before_a_one_hot_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The copy of a gated fraction: its one-hot copy (4.4M parameters at N = 24, 147M at 64)
    is not snapped, and a one-hot output of as many values would be as large; the copy as one
    number is tried first (853 parameters) and the one-hot output is never built."""
    root = _gated_fraction_copy()

    def no_one_hot_output(*args: object, **kwargs: object) -> None:
        raise AssertionError("a one-hot output was built")

    monkeypatch.setattr(alternatives, "_one_hot_output", no_one_hot_output)
    model = compile_sop(root, list("abc"), 24, name="res")
    assert model.param_count() < 2_000  # 853
    assert model.metadata["output"]["encoding"] == "numerical"
    _agrees(model, root, 24, seed=24)


def test_a_default_that_copies_many_numbers_is_only_sketched_where_a_copy_is_smaller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The copy builds come first where the default's sketch copies many numbers as a one-hot:
    the default of this copy of a gated prefix mean (4.4M parameters at N = 24, 147M at 64) is
    neither assembled nor certified, and the model kept is the one the full route keeps."""
    import numpy as np

    from compiler import driver

    root = _res(
        'f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'
        'g = (0) if indices < 3 else ((f * 0.5) if tokens == "c" else f);\n'
        "res = aggregate(select(indices, indices, ==), g);",
    )
    assembled: list[int] = []
    assemble = driver.assemble_build

    def recorded(planned, *args, **kwargs):  # type: ignore[no-untyped-def]
        built = assemble(planned, *args, **kwargs)  # (a build over a limit raises first)
        assembled.append(built[0].param_count())
        return built

    with monkeypatch.context() as patch:
        patch.setattr(driver, "assemble_build", recorded)
        fast = compile_sop(root, list("abc"), 24, name="res")
    assert assembled and max(assembled) < 2_000  # the two copy builds: 1,058 and 853
    monkeypatch.setattr(default_builds, "copies_first", lambda *args: None)
    full = compile_sop(root, list("abc"), 24, name="res")
    assert fast.metadata == full.metadata
    assert all(np.array_equal(fast.weights[k], full.weights[k]) for k in full.weights)


def test_a_mean_that_reads_many_numbers_plans_no_copy_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mean of the tokens reads their one-hot of many numbers but selects several keys: it
    copies nothing, so no build copies numbers as numbers (each would be the default's, planned
    again: 20 s of 36 at N = 256). A copy of such numbers (one key) still tries them."""
    from compiler import driver, size_check

    planned: list[bool] = []
    plan = driver.plan_build

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(kwargs["options"].numeric_copies)
        return plan(*args, **kwargs)

    for module in (driver, size_check):  # (the builds, and the size prediction's probes)
        monkeypatch.setattr(module, "plan_build", recorded)
    vocab = list(range(10))
    mean = _res("tokens = tokens_int;\nres = tokens > aggregate(full_s, tokens);")
    compile_sop(mean, vocab, 24, name="res")
    assert planned and not any(planned)
    planned.clear()
    copy = _res(
        "tokens = tokens_int;\nres = aggregate(select(indices, length - indices - 1, ==), tokens);"
    )
    compile_sop(copy, vocab, 24, name="res")
    assert any(planned)


def _res(text: str) -> S.Node:
    """The s-op `res` of a program."""
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp.get("res")


def _gated_fraction_copy() -> S.Node:
    return _res(
        'f = selector_width(select(tokens, "a", ==)) / length;\n'
        'g = (0) if indices < 3 else ((f * 0.5) if tokens == "c" else f);\n'
        "res = aggregate(select(indices, indices, ==), g);",
    )


@pytest.mark.exactness
def test_a_copied_difference_of_the_length_and_the_index_is_a_free_view() -> None:
    """`length - indices` copied as one number is the view `length - indices` of the decoded
    length and the index the embedding holds: no MLP of its own, so the copy takes 2 layers
    (3,719 parameters at N = 64), as the one-hot copy (446,331) does; the copy was 3 layers
    before and the one-hot kept."""
    root = _res("res = aggregate(select(indices, indices, ==), length - indices, 0);")
    model = compile_sop(root, list("abc"), 64, name="res")
    assert model.param_count() < 5_000 and len(model.metadata["layers"]) == 2
    assert not any(":" in label for label in model.metadata["residual"][6:])  # no one-hot
    _agrees(model, root, 64, seed=64, extra=[["a"] * 64])


def test_a_copy_by_a_shift_takes_only_the_values_it_copies() -> None:
    """The previous position's prefix mean at N = 256, copied as one number: the copy at i
    takes the mean's values at i - 1 (k / i), never k / 256, so every output value lies on its
    position's grid and the snap is proved (it took any of the mean's values before, and was
    refused: a snap margin of 0)."""
    root = _res(
        'f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'
        "res = aggregate(select(indices, indices - 1, ==), f, 0);",
    )
    model = compile_sop(root, list("abc"), 256, name="res")
    assert model.param_count() < 5_000  # 3,531
    assert model.metadata["certificate"]["errors"] == []
    _agrees(model, root, 256, seed=256, samples=40, every_up_to=3)


def test_a_refusal_says_which_other_builds_were_tried_and_why() -> None:
    """The reverse of a mean over a select of the tokens plus the mean at N = 24: the output's
    values lie closer together than its float32 error (no grid per position and length holds
    them, as it holds the same sum of a prefix mean); the copy as one number is built and not
    proved either, and the steps instead of gated units are built and not proved."""
    from rasp.errors import CompileError

    root = _res(
        'f = aggregate(select(tokens, tokens, <=), indicator(tokens == "a"));\n'
        "c = aggregate(select(indices, length - indices - 1, ==), f, 0);\n"
        "res = c + f;"
    )
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("abc"), 24, name="res")
    first, *notes = refused.value.diagnostics
    assert first.severity == "error" and "a snap decision has margin" in first.message
    assert all(n.severity == "note" for n in notes)
    hows = [n.message.split(":")[0] for n in notes]
    assert "also tried with steps instead of gated units" in hows
    copies = [n.message for n in notes if n.message.startswith("also tried with numbers copied")]
    assert copies and all(
        "parameters, not proved: the output has a snap margin" in c for c in copies
    )
    assert (
        "parameters, not proved: the output has a snap margin"
        in notes[hows.index("also tried with steps instead of gated units")].message
    )
    assert refused.value.render().splitlines()[-1].startswith("note: also tried with")


def test_the_other_builds_are_noted_once_each() -> None:
    tried = [("with a", "x"), ("with b", "refused: y"), ("with a", "x"), ("with c", "z")]
    notes = also_tried(tried, refused="refused: y")
    # (b, refused for the refusal's own reason, is named last without repeating it)
    assert [n.message for n in notes] == [
        "also tried with a: x",
        "also tried with c: z",
        "also tried with b: refused for the same reason",
    ]
    assert {n.severity for n in notes} == {"note"}
