"""Coarse steps (compiler.coarse_steps): a map of two numbers where one matters only
through a few classes, sorted into them by a step MLP of its own. A map read both as a number and
as a one-hot is planned once per reading; each plan built that class MLP again, on the same
columns, and the certifier refused the model it could not read ("MLP 'a~b' writes residual
dimension 'a~b:1', which MLP 'a~b' wrote already": compiler fuzz defs seed 2133064 at N = 12)."""

from __future__ import annotations

from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from compiler.blocks import Encoded
from compiler.coarse_steps import _new_classes
from compiler.plan_state import Built
from rasp.errors import Source
from rasp.interpreter import load_source

# `x * length` is a map of `hist * length` (in classes mod 4) and the length, read as a number by
# v0's sum and as a one-hot by `(v0 * length) % 4`: both readings sort into the same classes
PROGRAM = """
x = (selector_width(select(tokens, tokens, ==)) * length) % 4;
v0 = (indices == 0) / 2 + x * length;
res = v0 + (v0 * length) % 4;
"""


def test_a_map_read_both_ways_shares_its_classes() -> None:
    root = load_source(Source("classes.rasp", PROGRAM)).get("res")
    model = compile_sop(root, list("ab"), 7)  # (at N = 7 on main: refused, unchecked)
    assert model.metadata["certificate"]["ok"]
    inputs = all_inputs("ab", 7)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_other_classes_of_one_map_get_columns_of_their_own() -> None:
    # (on the decoded width, or over rows merged since the other reading's plan)
    built = Built()
    built.classes[("a key",)] = Encoded.materialised_categorical("s~m", (1, 2))
    built.classes[("another",)] = Encoded.materialised_categorical("s~m~2", (1, 2))
    assert _new_classes(built, "s~m", [1, 3]).name == "s~m~3"
    assert _new_classes(built, "t~m", [1, 3]).name == "t~m"
