"""How far the compiler reaches: programs written the original's way stay small and exact at large N
(counts, lengths, long addition's operand lookup, the paper's BOS programs), and what it cannot make
small it refuses quickly."""

from __future__ import annotations

import pytest
from test_compile import PROGRAM_DIR, all_inputs, check_inputs, random_inputs

from compiler import CompiledModel, compile_sop
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse
from tests.runtime_helpers import run_compiled


def _compile_text(text: str, name: str, vocab: str, n: int) -> tuple[S.SOp, CompiledModel]:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    root = interp.get(name)
    return root, compile_sop(root, list(vocab), n, name=name)


@pytest.mark.exactness
def test_library_count_stays_small_and_exact_at_large_n() -> None:
    """`count` is a selector_width: O(N) wide, where the original's `round(length * mean)` needs a
    table of every fraction k/n (21M parameters at N = 64, refused at 128)."""
    root, model = _compile_text('n_a = count(tokens, "a");', "n_a", "abc", 128)
    assert model.param_count() < 100_000
    assert check_inputs(model, root, random_inputs("abc", 128, 64, seed=5)) == 64


@pytest.mark.exactness
def test_the_originals_count_is_a_context_step_mlp(monkeypatch: pytest.MonkeyPatch) -> None:
    """`round(length * mean)`: two numerical s-ops; length becomes the context of a step MLP over the
    mean instead of a table over every (length, k/n) pair. (compiler.counts makes this program a
    selector_width, tests/compiler/test_counts.py; turned off here to keep the map planner tested.)"""
    import compiler.forms

    monkeypatch.setattr(compiler.forms, "count_means", lambda sop, vocab, max_len, **_: sop)
    text = 'n_a = round(length * aggregate(full_s, indicator(tokens == "a")));'
    root, model = _compile_text(text, "n_a", "abc", 64)
    assert "n_a_count.frac" not in model.metadata["residual"]
    assert model.param_count() < 150_000  # a joint table: 14M
    inputs = all_inputs("abc", 4) + random_inputs("abc", 64, 200, seed=9)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.exactness
def test_the_originals_length_is_exact_at_n_256() -> None:
    """`round(1 / mean(indices == 0))`: 1/255 and 1/256 are 1.5e-5 apart, more than an absolute bound
    N * 2**-24 allows; the mean of non-negative values errs relative to itself, so it compiles."""
    text = "n = round(1 / aggregate(select(1, 1, ==), indicator(indices == 0)));"
    root, model = _compile_text(text, "n", "ab", 256)
    inputs = [["a"] * k for k in range(1, 257)]
    assert check_inputs(model, root, inputs) == 256


PAIR_BALANCE = """
up_to_self = select(indices, indices, <=);
opens = aggregate(up_to_self, indicator(tokens == "("));
closes = aggregate(up_to_self, indicator(tokens == ")"));
bal = opens - closes;
"""


@pytest.mark.exactness
def test_a_difference_of_prefix_means_is_a_free_view_at_n_64() -> None:
    """tracr's pair_balance: two means of ~N^2/2 values each, but at one position they meet in
    (i+2)^2 ways, not in the product of their value sets (1.7M at N = 64, once past the affine
    view's limit: a step MLP of 14,559 units, refused). The difference is free, and decodes on
    the grid 1/(i+1)."""
    root, model = _compile_text(PAIR_BALANCE, "bal", "()", 64)
    assert model.param_count() < 500
    assert model.metadata["output"]["denominators"] == list(range(1, 65))
    inputs = [list("(" * 64), list(")" * 64), list("()" * 32)] + random_inputs("()", 64, 60, seed=2)
    assert check_inputs(model, root, inputs) == len(inputs)


LONG_ADDITION_LEFT = """
plus = aggregate(select(tokens, "+", ==), indices);
left = aggregate(select(indices, plus - length + indices, ==), tokens, "0");
"""


@pytest.mark.exactness
def test_a_select_side_with_many_values_is_read_as_the_classes_that_matter() -> None:
    """`plus - length + indices` has thousands of values (plus: a mean over every '+'); the select
    needs only which index it equals, so it is read as N + 1 classes computed from a free affine view
    (a table over its values cost 63M parameters in long addition at N = 8)."""
    root, model = _compile_text(LONG_ADDITION_LEFT, "left", "01+", 16)
    assert model.param_count() < 200_000
    labels = model.metadata["residual"]
    assert any("~" in label for label in labels)  # the class reading
    inputs = all_inputs("01+", 5) + random_inputs("01+", 16, 300, seed=3)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_maps_over_too_many_combinations_are_refused_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    import compiler.map_rows

    monkeypatch.setattr(compiler.map_rows, "MAX_ROWS", 10)
    with pytest.raises(CompileError) as err:
        _compile_text('x = indicator(tokens == "a") + indices;', "x", "abc", 8)
    assert "combine in more than 10 ways" in err.value.message
    assert err.value.diagnostics[0].span is not None and err.value.hint


@pytest.mark.exactness
def test_a_categorical_aggregate_of_bools_with_the_default_0_compiles() -> None:
    """The original prints [0, T, F]: the default 0 and the copied bools are separate columns."""
    text = 'x = aggregate(select(indices, indices - 1, ==), tokens == "a");'
    root, model = _compile_text(text, "x", "ab", 8)
    assert run_compiled(model, [list("aba")]) == [[0, True, False]]
    assert type(run_compiled(model, [list("aba")])[0][0]) is int
    assert check_inputs(model, root, all_inputs("ab", 8)) == 510
    # A map mixing such values can merge 0 and False on the way: still refused.
    with pytest.raises(CompileError, match="can be a bool or a number"):
        _compile_text(
            text + " y = x if indices > 2 else indicator(tokens == 'b');".replace("'", '"'),
            "y",
            "ab",
            8,
        )


@pytest.mark.exactness
def test_a_disjunction_reads_its_sops_when_their_sources_combine_in_many_more_ways() -> None:
    """hist2_bos's `(select(hist, hist, ==) and select(repeat, False, ==)) or select(indices, 0, ==)`:
    `hist` is a rounded mean; a joint reading over the means took 147M parameters at N = 16."""
    interp = load_file(PROGRAM_DIR / "paper_examples.rasp")
    root = interp.get("hist2_bos")
    model = compile_sop(root, list("§abc"), 16, name="hist2_bos")
    assert model.param_count() < 10_000_000
    inputs = all_inputs("§abc", 4) + random_inputs("§abc", 16, 200, seed=4)
    assert check_inputs(model, root, inputs) == len(inputs)
