"""compiler.counts: a map that only counts a positional mean of 0/1 values becomes a map of a
selector_width, with the interpreter's values exactly (ints stay ints), names and spans kept; maps
that read the mean itself, and means used as values, are left alone."""

from __future__ import annotations

import itertools
import random

import pytest
from test_compile import PROGRAM_DIR, all_inputs, check_inputs, exact_outcome, random_inputs

import compiler.forms
from compiler import compile_sop, counts
from compiler.counts import count_means
from rasp import sops as S
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse


def _program(text: str, name: str) -> S.SOp:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    root = interp.get(name)
    assert isinstance(root, S.SOp)
    return root


def _shipped(name: str) -> S.SOp:
    root = load_file(PROGRAM_DIR / f"{name}.rasp").get(name)
    assert isinstance(root, S.SOp)
    return root


def _counted(root: S.Node) -> list[S.MapSOp]:
    """The maps the rewrite made (a table over a selector_width)."""
    return [
        n for n in S.walk(root) if isinstance(n, S.MapSOp) and type(n.fn).__name__ == "_CountTable"
    ]


def _same_everywhere(original: S.Node, rewritten: S.Node, vocab: str, up_to: int) -> int:
    """Both graphs give identical values (or both fail) on every input up to `up_to`; returns how
    many inputs gave a value."""
    valued = 0
    for n in range(1, up_to + 1):
        for tokens in itertools.product(vocab, repeat=n):
            want = exact_outcome(original, list(tokens))
            assert exact_outcome(rewritten, list(tokens)) == want, tokens
            valued += want != "error"
    return valued


PREFIX = 'prefix = select(indices, indices, <=);\nx = indicator(tokens == "a");\n'

# programs the rewrite applies to: (text, output name)
COUNTED = {
    "prefix": (PREFIX + "n = round((indices + 1) * aggregate(prefix, x));", "n"),
    "everything": (
        'n = round(length * aggregate(select(1, 1, ==), indicator(tokens == "a")));',
        "n",
    ),
    # keys strictly before: w = 0 at index 0 gives the default, 0 like no key counted
    "earlier": (
        'n = round(indices * aggregate(select(indices, indices, <), indicator(tokens == "a")));',
        "n",
    ),
    # floats 0.0 / 1.0: one selected key gives 1.0 itself, round makes it an int as the rest
    "floats": (PREFIX + "n = round((indices + 1) * aggregate(prefix, 1.0 * x));", "n"),
    # a chain that reads length and indices
    "length_too": (
        PREFIX
        + "c = round((indices + 1) * aggregate(prefix, x));\n"
        + "many = (c > 1) + length - length;\nn = c + 10 * many;",
        "n",
    ),
    # two exits of one chain (c and 10 * indicator(c > 2) are read with tokens), one count
    "two_exits": (
        PREFIX
        + "c = round((indices + 1) * aggregate(prefix, x));\n"
        + 'n = 10 * indicator(c > 2) + c * indicator(tokens == "b");',
        "n",
    ),
    # the program fails wherever a "b" is (c / 0): the rewritten graph fails there too
    "fails_elsewhere": (
        PREFIX + "c = round((indices + 1) * aggregate(prefix, x));\nn = c / x;",
        "n",
    ),
    "compare": (
        PREFIX + 'n = "some" if (indices + 1) * aggregate(prefix, x) > 0.5 else "none";',
        "n",
    ),
    # the exit reads the position too: the count is cut at `round(...)`, the rest kept over it
    "cut": (PREFIX + "n = round((indices + 1) * aggregate(prefix, x)) * 2 + indices;", "n"),
    "cut_named": (
        PREFIX + "c = round((indices + 1) * aggregate(prefix, x));\nn = c == indices + 1;",
        "n",
    ),
    # whole numbers other than 0 and 1: their sum as widths per bit (compiler.weighted_counts)
    "twos": (PREFIX + "n = round((indices + 1) * aggregate(prefix, 2 * x));", "n"),
    "balance": (
        "prefix = select(indices, indices, <=);\n"
        + 'x = indicator(tokens == "a") - indicator(tokens == "b");\n'
        + "n = round((indices + 1) * aggregate(prefix, x));",
        "n",
    ),
    "weights": (
        'prefix = select(indices, indices, <=);\nx = 5 if tokens == "a" else -3;\n'
        + "n = round((indices + 1) * aggregate(prefix, x)) > 2;",
        "n",
    ),
    # 3.0 and 0.0: one selected key gives 3.0 itself, float; rounding makes every sum an int
    "whole_floats": (PREFIX + "n = round((indices + 1) * aggregate(prefix, 3.0 * x));", "n"),
}

# programs it must leave alone, and why
LEFT = {
    # the mean itself is the value (frac_prevs)
    "mean_used": (PREFIX + "n = aggregate(prefix, x);", "n"),
    # a map of the mean alone: nothing positional to save
    "mean_alone": (PREFIX + "n = aggregate(prefix, x) > 0;", "n"),
    # (i + 1) * mean is 1 (int) for one selected key, 1.0 (float) for two: not the count alone
    "unrounded": (PREFIX + "n = (indices + 1) * aggregate(prefix, x);", "n"),
    # c > i/2 depends on the position too
    "half": (PREFIX + "n = (indices + 1) * aggregate(prefix, x) > 0.5 * indices;", "n"),
    # the mean is also read by a select: it stays a mean, so its chain stays too
    "also_selected": (
        PREFIX
        + "m = aggregate(prefix, x);\nc = round((indices + 1) * m);\n"
        + "n = aggregate(select(m, m, ==), c);",
        "n",
    ),
    # values 0 and 0.5: the sum is no whole number
    "halves": (PREFIX + "n = round(2 * (indices + 1) * aggregate(prefix, 0.5 * x));", "n"),
    # values up to 127: seven widths, more than weighted_counts.MAX_BITS
    "many_bits": (PREFIX + "n = round((indices + 1) * aggregate(prefix, 127 * x));", "n"),
    # the sum's sign, but also the count of non-zero keys: not a function of the sum alone
    "not_the_sum": (
        'prefix = select(indices, indices, <=);\nx = indicator(tokens == "a") - 1;\n'
        + "n = (indices + 1) * aggregate(prefix, x) > -0.5 * (indices + 1);",
        "n",
    ),
    # 1 / c fails where no key holds a 1: the chain raises where the program can be
    "raises": (PREFIX + "n = round(1 / ((indices + 1) * aggregate(prefix, x)));", "n"),
    # a default 5 where no key is selected: 0 * 5 + 5 = 5, not what a count of 0 gives elsewhere
    "default": (
        'm = aggregate(select(indices, indices, <), indicator(tokens == "a"), 5);\n'
        + "n = round(indices * m + m);",
        "n",
    ),
    # m is "a" or 1 along one input, which the interpreter refuses; n alone would never fail
    "mixed_types": (
        PREFIX + 'm = "a" if (indices + 1) * aggregate(prefix, x) > 1.5 else 1;\nn = m == 1;',
        "n",
    ),
    # positional values: the mean is positional already
    "positional": (
        "n = round((indices + 1) * aggregate(select(indices, indices, <=), indicator(indices == 0)));",
        "n",
    ),
}


@pytest.mark.parametrize("case", sorted(COUNTED))
def test_counted_means_are_rewritten_and_evaluate_the_same(case: str) -> None:
    text, name = COUNTED[case]
    root = _program(text, name)
    rewritten = count_means(root, list("ab"), 6)
    assert rewritten is not root
    assert _counted(rewritten)
    assert not any(isinstance(n, S.AggregateSOp) for n in S.walk(rewritten))
    assert _same_everywhere(root, rewritten, "ab", 6) > 0


def test_a_chain_whose_exit_reads_the_position_is_cut_at_the_count() -> None:
    root = _program(COUNTED["cut_named"][0], "n")
    rewritten = count_means(root, list("ab"), 8)
    (counted,) = _counted(rewritten)
    assert counted.name == "c" and counted.inputs[0].name == "c_count"
    assert rewritten.name == "n" and counted in rewritten.inputs  # n = c == indices + 1, kept


@pytest.mark.exactness
def test_a_cut_count_compiles_linearly(monkeypatch: pytest.MonkeyPatch) -> None:
    text, name = COUNTED["cut"]
    root = _program(text, name)
    model = compile_sop(root, list("ab"), 64, name=name)
    inputs = all_inputs("ab", 6) + random_inputs("ab", 64, 60, seed=8)
    assert check_inputs(model, root, inputs) == len(inputs)
    monkeypatch.setattr(compiler.forms, "count_means", lambda sop, vocab, max_len, **_: sop)
    assert compile_sop(root, list("ab"), 64, name=name).param_count() > 5 * model.param_count()


def test_exits_of_one_chain_share_one_count() -> None:
    root = _program(COUNTED["two_exits"][0], "n")
    first, second = _counted(count_means(root, list("ab"), 6))
    assert first.inputs[0] is second.inputs[0]
    assert {first.name, second.name} == {"c", None}
    assert first.inputs[0].name == "c_count"


@pytest.mark.parametrize("case", sorted(LEFT))
def test_means_that_do_not_only_count_are_left_alone(case: str) -> None:
    text, name = LEFT[case]
    root = _program(text, name)
    assert count_means(root, list("ab"), 6) is root


@pytest.mark.parametrize(("program", "vocab"), [("dyck1", "()x"), ("dyck2", "(){}")])
def test_the_dycks_prefix_counts_become_widths(program: str, vocab: str) -> None:
    root = _shipped(program)
    originals = {n.name: n for n in S.walk(root) if n.name in ("n_opens", "n_closes")}
    rewritten = count_means(root, list(vocab), 5)
    counted = {n.name: n for n in _counted(rewritten)}
    assert set(counted) == {"n_opens", "n_closes"}
    for name, node in counted.items():
        original = originals[name]
        assert (node.text, node.span) == (original.text, original.span)  # labels, errors
        (count,) = node.inputs
        assert isinstance(count, S.SelectorWidthSOp) and count.name == f"{name}_count"
        mean = original.inputs[0].inputs[1]  # round((indices + 1) * mean)
        assert isinstance(mean, S.AggregateSOp) and count.span is mean.span
        assert isinstance(count.selector, S.SelectAnd)
        assert count.selector.left is mean.selector  # up_to_self, the very node
        ones = count.selector.right
        assert isinstance(ones, S.Select) and ones.keys is mean.sop
        assert isinstance(ones.queries, S.ConstSOp) and ones.queries.value == 1
        assert all(type(v) is int for _, v in node.fn.table)
    # the other means (prev_imbalances, had_problem) are only compared with 0: left as means
    assert (
        sum(isinstance(n, S.AggregateSOp) for n in S.walk(rewritten))
        == sum(isinstance(n, S.AggregateSOp) for n in S.walk(root)) - 2
    )
    assert _same_everywhere(root, rewritten, vocab, 5 if program == "dyck1" else 4) > 0


def test_nothing_to_rewrite_returns_the_same_graph() -> None:
    for program in ("reverse", "frac_prevs", "hist_bos", "length", "most_freq"):
        root = _shipped(program)
        assert count_means(root, list("abx"), 8) is root


def test_tables_hold_every_count_up_to_n() -> None:
    root = _program(COUNTED["prefix"][0], "n")
    (counted,) = _counted(count_means(root, list("ab"), 9))
    assert counted.fn.table == tuple((c, c) for c in range(10))
    with pytest.raises(ValueError):
        counted.fn(10)  # never reached: the interpreter would report it at the map


@pytest.mark.exactness
@pytest.mark.parametrize(
    "case", ["prefix", "everything", "earlier", "length_too", "two_exits", "compare"]
)
def test_compiled_counts_are_exact(case: str) -> None:
    text, name = COUNTED[case]
    root = _program(text, name)
    model = compile_sop(root, list("ab"), 12, name=name)
    assert any(label.endswith(".frac") for label in model.metadata["residual"])
    inputs = all_inputs("ab", 6) + random_inputs("ab", 12, 60, seed=4)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.exactness
@pytest.mark.parametrize(("program", "vocab"), [("dyck1", "()x"), ("dyck2", "(){}")])
def test_compiled_dycks_are_exact(program: str, vocab: str) -> None:
    root = _shipped(program)
    model = compile_sop(root, list(vocab), 16, name=program)
    labels = model.metadata["residual"]
    if program == "dyck1":
        # its counts are read only through which is larger: one mean of the brackets' votes
        # (compiler.count_signs), where dyck2's depth also pairs each closer with its opener
        assert model.metadata.get("fractions_as_means") and "n_opens" not in labels
    else:
        assert "n_opens" in labels and "n_opens_count.frac" in labels
    rng = random.Random(7)
    inputs = all_inputs(vocab, 4) + [
        [rng.choice(vocab) for _ in range(rng.randint(5, 16))] for _ in range(150)
    ]
    assert check_inputs(model, root, inputs) > 0


def test_dyck1_at_n_32_is_as_small_as_only_counts_make_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prefix counts' MLP is O(N) (4N + 2 units) instead of a step MLP over every mean k/(i+1)
    with the index one-hot as context (286 units at N = 32, 10,753 non-zero parameters). Without
    the counts, `round((indices + 1) * mean)` is affine in the mean at each index: gated units
    (compiler.gates), 11,337 parameters (539 non-zero: the index one-hot is their context) where
    the counts take 5,701."""
    import compiler.map_steps

    root = _shipped("dyck1")
    model = compile_sop(root, list("()"), 32, name="dyck1")
    assert model.config["layers"][0]["d_mlp"] <= 4 * 32 + 2
    assert model.nonzero_params() < 4_000
    monkeypatch.setattr(compiler.forms, "count_means", lambda sop, vocab, max_len, **_: sop)
    gated = compile_sop(root, list("()"), 32, name="dyck1")
    assert gated.param_count() > model.param_count()
    monkeypatch.setattr(compiler.map_steps, "gated_affine", lambda *args, **kwargs: None)
    without = compile_sop(root, list("()"), 32, name="dyck1")
    assert without.nonzero_params() > 2 * model.nonzero_params()


def test_the_originals_count_over_every_position_is_linear() -> None:
    """`round(length * mean over all positions)`: one width head and a step MLP over its fraction
    (2,918 parameters at N = 64; 76,632 as a step MLP over the mean with length as context)."""
    text, name = COUNTED["everything"]
    model = compile_sop(_program(text, name), list("abc"), 64, name=name)
    assert model.param_count() < 5_000 and model.config["d_model"] <= 10


def _tables(root: S.Node) -> list[tuple[str | None, tuple[tuple[int, object], ...]]]:
    """Each rewritten map's name and table, with every value's type (1 and 1.0 apart)."""
    return [(n.name, tuple((c, (type(v), repr(v))) for c, v in n.fn.table)) for n in _counted(root)]


@pytest.mark.parametrize(
    "case", [*(f"counted:{c}" for c in sorted(COUNTED)), *(f"left:{c}" for c in sorted(LEFT))]
)
def test_tables_on_columns_are_the_loops(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain computed on columns (compiler.vector_maps) at every count gives the loop's
    decision and tables: the same rewrite or none, the same values of the same types."""
    kind, name = case.split(":")
    text, output = (COUNTED if kind == "counted" else LEFT)[name]
    for max_len in (1, 2, 6):
        root = _program(text, output)
        on_columns = count_means(root, list("ab"), max_len)
        with monkeypatch.context() as m:
            m.setattr(counts, "_column_tables", lambda *args: counts._LOOP)
            one_by_one = count_means(root, list("ab"), max_len)
        assert (on_columns is root) == (one_by_one is root)
        assert _tables(on_columns) == _tables(one_by_one)


@pytest.mark.parametrize(("program", "vocab"), [("dyck1", "()"), ("dyck2", "(){}")])
def test_the_dycks_tables_are_computed_on_columns(
    program: str, vocab: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dycks' counts take the column path (the loop took 0.6 s of dyck1 at N = 256), with
    the loop's tables."""
    root = _shipped(program)
    used = []
    column_tables = counts._column_tables

    def spy(*args: object) -> object:
        got = column_tables(*args)  # type: ignore[arg-type]
        used.append(got is not counts._LOOP)
        return got

    monkeypatch.setattr(counts, "_column_tables", spy)
    on_columns = _tables(count_means(root, list(vocab), 40))
    assert used and all(used)
    monkeypatch.setattr(counts, "_column_tables", lambda *args: counts._LOOP)
    assert on_columns == _tables(count_means(root, list(vocab), 40))
