"""Sums of numbers held as one-hots read as lines (compiler.known_sums): the compile's last build,
tried where nothing else is proved.

`LINE` is a reduction of defs fuzz seed 2148200 (`shift(acc, 2, -1) + count(tokens, "1")`, acc a
chain of `(acc * 0.5 + k) % 4` over a product of counts): the copy of acc's one-hot (3 values and
the default) plus the count. The default steps the sum over the count's 1/(w+1) with the copy as
context, whose weights multiply the one-hot's error (acc's step MLP writes it with its rounding):
the output's snap has margin 0.125 against 217 at N = 16. As a line, the sum is the copy's columns
times their values plus the count's decoded number; the copy's columns snapped first, exact."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.known_sums import sum_maps
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.loose_sums import count_every_weight
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs

LINE = """v0 = count(tokens, "1");
acc = count(tokens, "0") * count(tokens, "2") + v0 * 3;
for k in range(2) {
    acc = (acc * 0.5 + k) % 4;
}
acc = (round(acc) % 3) * 0.25;
res = shift(acc, 2, -1) + v0;"""
VOCAB = list("012")


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def test_a_copy_plus_a_count_compiles_as_a_line_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _root(LINE)
    # since the output sums count the units that can be on, the line is proved without the
    # copy's columns snapped (70,969 parameters, where it made 79,021 with them); with every
    # weight counted, the bound before, it needs the snaps
    plain = compile_sop(root, VOCAB, 16)
    assert not any(b["name"] == "res" for layer in plain.metadata["layers"] for b in layer["mlp"])
    assert not any("~snap" in label for label in plain.metadata["residual"])
    assert plain.param_count() <= 79_021
    count_every_weight(monkeypatch)
    model = compile_sop(root, VOCAB, 16)
    assert model.metadata["certificate"]["ok"]
    # the output is a view (no block computes it), over the copy's snapped columns
    assert not any(b["name"] == "res" for layer in model.metadata["layers"] for b in layer["mlp"])
    assert any("~snap" in label for label in model.metadata["residual"])
    inputs = all_inputs(VOCAB, 5) + random_inputs(VOCAB, 16, 60, 2148200)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_without_the_line_build_the_sum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("compiler.driver.lines_instead", lambda kept, *rest: kept)
    # (the copy-snaps build, tried after it, proves it too: acc's one-hot snapped before the copy;
    # nor the one-hot output of its maps of maps fused, tried after that, which proves it)
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *rest: kept)
    monkeypatch.setattr("compiler.driver.fused_output_instead", lambda kept, *args: kept)
    with pytest.raises(CompileError, match="snap decision"):
        compile_sop(_root(LINE), VOCAB, 16)


# over a larger product acc's one-hot is too noisy for the snap and the line alike
LARGER = LINE.replace("+ v0 * 3;", "* 2 + v0;")


def test_a_refusal_names_the_line_builds_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    # (refused without the one-hot output of its maps of maps fused, the driver's last build)
    monkeypatch.setattr("compiler.driver.fused_output_instead", lambda kept, *args: kept)
    text = LARGER
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(text), VOCAB, 16)
    rendered = refused.value.render()
    assert "also tried with sums of numbers held as one-hots read as lines" in rendered
    assert "also tried with those lines' one-hots snapped first" in rendered


def test_the_larger_product_is_proved_as_a_fused_one_hot_output() -> None:
    # since session 69 (compiler.fused_output): 609,173 parameters, a one-hot of 68 values
    root = _root(LARGER)
    model = compile_sop(root, VOCAB, 16)
    assert model.metadata["output"]["encoding"] == "categorical"
    inputs = all_inputs(VOCAB, 5) + random_inputs(VOCAB, 16, 60, 2148200)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_the_sums_are_the_maps_that_state_an_affine_form_of_two_s_ops() -> None:
    # the first acc (a product plus `v0 * 3`) and the output; `v0 * 3` reads one s-op, and
    # `(acc * 0.5 + k) % 4` states no form
    assert sum_maps(build_graph(_root(LINE))) == {"acc", "res"}
