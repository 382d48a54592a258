"""`sop_hook`'s refusals name what to write instead: a width or length given to its `NAME.frac`
(1/(NAME + 1)), a non-number for a numerical s-op, a label given as an s-op's name; a width or
length held only as its `NAME.frac` is patched by its own name."""

from __future__ import annotations

from pathlib import Path

import pytest

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer import ModelInputError
from transformer.patching import UncheckedPatchWarning

ROOT = Path(__file__).resolve().parents[2]


def _model(
    file: str, name: str, max_len: int, vocab: list[object] | None = None
) -> transformer.CompiledTransformer:
    program = load_file(str(ROOT / "programs" / f"{file}.rasp")).get(name)
    compiled = compile_sop(program, vocab or ["a", "b", "c"], max_len)
    return transformer.from_tensors(compiled.weights, compiled.metadata)


@pytest.fixture(scope="module")
def reverse() -> transformer.CompiledTransformer:
    return _model("reverse", "reverse", 5)


def _refusal(model: transformer.CompiledTransformer, sop: str, value: object) -> ModelInputError:
    with pytest.raises(ModelInputError) as err:
        model.sop_hook(sop, value)
    return err.value


def test_a_frac_given_the_width_says_which_number_to_write(
    reverse: transformer.CompiledTransformer,
) -> None:
    err = _refusal(reverse, "length.frac", 2)  # before: only the five fractions, no word why
    assert err.reason == (
        "length.frac has no value 2 in the model: its 5 values are 0.166667, 0.2, 0.25, "
        "0.333333, 0.5"
    )
    assert (
        err.hint
        == "length.frac holds 1/(length + 1), not length: for length = 2 write 1 / 3 (0.333333)"
    )
    assert reverse.sop_hook("length.frac", 1 / 3)[1].numbers == (1 / 3,)  # as the hint says
    err = _refusal(reverse, "length.frac", 9)
    assert err.hint == "length.frac holds 1/(length + 1), not length (length is 1..5 here)"


def test_a_non_number_for_a_numerical_s_op_names_its_values(
    reverse: transformer.CompiledTransformer,
) -> None:
    err = _refusal(reverse, "length.frac", "a")
    assert err.reason == "length.frac is numerical: its value must be a finite number, got 'a'"
    assert err.hint == "length.frac holds 1/(length + 1), not length (length is 1..5 here)"
    err = _refusal(reverse, "length", "3")
    assert str(err) == (
        "length is numerical: its value must be a finite number, got '3'; its values are "
        "1, 2, 3, 4, 5"
    )


def test_a_length_held_only_as_its_frac_is_patched_by_its_own_name() -> None:
    model = _model("most_freq", "most_freq", 4)
    assert "length" not in {label.partition(":")[0] for label in model.residual_labels}
    # before: refused, with the hint to write 1 / 3 into length.frac oneself
    name, patch = model.sop_hook("length", 2)
    assert patch.dims == (model.residual_labels.index("length.frac"),)
    assert patch.numbers == (1 / 3,)
    assert model.sop_hook("length.frac", 1 / 3)[0] == name  # the same patch, at the same point
    assert str(_refusal(model, "length", 9)) == (
        "length has no value 9 in the model: it is held only as length.frac = 1/(length + 1), "
        "whose 4 values give length = 1, 2, 3, 4; no input gives that number there, so what the "
        "model computes from it is not certified; write any number with run_with_hooks"
    )
    assert str(_refusal(model, "length", "a")) == (
        "length is a count held only as length.frac = 1/(length + 1): its value must be a "
        "number, got 'a' (length is 1..4 here)"
    )


def test_a_label_given_as_the_s_op_names_the_call_to_write(
    reverse: transformer.CompiledTransformer,
) -> None:
    err = _refusal(reverse, "tokens:b", 1)
    assert str(err) == (
        "'tokens:b' is the label of one value's dimension, not a residual group; name the s-op "
        "and give the value: sop_hook('tokens', 'b', ...)"
    )
    quoted = _model("reverse", "reverse", 3, ["1", 1, "a"])
    err = _refusal(quoted, 'tokens:"1"', 1)
    assert err.hint == "name the s-op and give the value: sop_hook('tokens', '1', ...)"
    patch = quoted.sop_hook("tokens", "1")[1]  # as the hint says: the string's column
    assert quoted.residual_labels[patch.dims[patch.numbers.index(1.0)]] == 'tokens:"1"'


def test_a_number_the_reach_lists_no_values_for_is_written_with_a_warning(tmp_path: Path) -> None:
    """`mean` is read only within `above.sum` = `prefix_mean - mean`: the file lists no values of
    it alone, and 7 (no mean of tokens 1..3) was written without a word."""
    program = tmp_path / "mean.rasp"
    program.write_text(
        "tokens = tokens_int;\nmean = aggregate(full_s, tokens);\n"
        "prefix_mean = aggregate(select(indices, indices, <=), tokens);\n"
        "above = prefix_mean > mean;\n"
    )
    compiled = compile_sop(load_file(str(program)).get("above"), [1, 2, 3], 4)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    with pytest.warns(UncheckedPatchWarning) as caught:
        _, patch = model.sop_hook("mean", 7)
    assert patch.numbers == (7.0,)
    assert str(caught[0].message) == (
        "mean: the model lists no values of mean alone (its blocks read it only together with "
        "other dimensions), so 7 is written unchecked; a number no input gives there is outside "
        "the certificate"
    )
    assert caught[0].filename == __file__  # at the caller's line


def test_a_number_typed_within_float64_noise_writes_the_listed_number() -> None:
    """A value within `_same_number`'s 1e-9 of a listed one is that value: the patch writes the
    number the certificate covers (1/3), not the typed 0.3333333333, which is no value of the
    s-op (its float32 may be a neighbour of 1/3's)."""
    model = _model("frac_prevs", "frac_prevs", 6, ["x", "a"])
    _, patch = model.sop_hook("frac_prevs", 0.3333333333)
    assert patch.numbers == (1 / 3,)
    _, patch = model.sop_hook("frac_prevs", 0.5)
    assert patch.numbers == (0.5,)
    with pytest.raises(ModelInputError, match="has no value 0.3333"):
        model.sop_hook("frac_prevs", 0.3333)
