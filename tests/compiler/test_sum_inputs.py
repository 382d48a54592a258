"""A stated sum's inputs built for its line in the driver's last builds (compiler.sum_inputs).

`COPY` is defs fuzz seed 2172213 as session 67 reduced it: a copy of v0 (a count plus a copied
value or a mean over later positions, fractions of denominators up to N - 1) plus a count, output
values 0.0069 apart at N = 10. Every other build reads the copy as a one-hot whose columns err by
0.021 (the MLP snapping v0's number onto them): 9.33 at the output's snap, margin 0.00347. With
that copy alone copied as one number, the sum is a line of numbers (1.1e-4): proved.

`CHAIN` is defs fuzz seed 2148200 with its defs inlined and its unused locals dropped: `acc` is
`mark + t0`, a bool an MLP writes plus a product of two copies (up to 4,096 at N = 16), under
four rounds of `(acc * 0.5 + k) % 4`, and the output `shift(acc, 2, -1) + count(tokens, "1")`.
Every other build fuses the chain into one step MLP over t0 with the bool as context, whose
one-hot errs by 342 against the output's snap of 0.0312; over the sum computed first, the chain
steps over one number in the integer band (exact) and the model is proved (30.2M parameters)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.build_trials import BuildOptions
from compiler.graph import build_graph
from compiler.known_sums import sum_maps
from compiler.smaller_builds import MOVED, SHARED
from compiler.sum_inputs import COPIES, SUMS_FIRST, sum_copies, sum_readers
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

CHAIN = """v0 = count(tokens, "1");
t9 = 0 - v0;
g1 = load_from_location(shift(t9, 2, -1), 2) * load_from_location(t9, 1) + t9;
acc = mark_first_instance(shift(g1, 2, 0.5), 1) + load_from_location(v0, 2) * load_from_location(g1, 1);
for k in range(4) {
    acc = (acc * 0.5 + k) % 4;
}
res = shift(acc, 2, -1) + v0;"""
COPY = """load "induction";
def g0(g0_b) {
    t1 = (load_from_location(g0_b, 1) if (tokens == "1") else aggregate(select(indices, indices, >), g0_b, -1));
    return count(tokens, "0") + t1;
}
v0 = g0(g0(0.5));
res = aggregate(select_from_first(tokens, "2"), v0, 1) + count(tokens, "1");"""
VOCAB = list("012")
PROGRAMS = Path(__file__).parents[2] / "programs"


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text), search_dirs=[PROGRAMS]).get("res")
    assert isinstance(root, SOp)
    return root


def test_the_readers_are_the_maps_over_a_stated_sum() -> None:
    graph = build_graph(_root(CHAIN))
    sums = sum_maps(graph)
    readers = sum_readers(graph, sums)
    # the first round of the chain reads `mark + t0`; the output (a sum itself) is read by none
    assert "acc" in sums and "res" in sums
    assert readers
    by_name = {node.name: node for node in graph.nodes}
    assert all(any(graph[i].name in sums for i in by_name[r].inputs) for r in readers)
    assert "res" not in readers


def test_the_copies_are_the_aggregates_of_one_key_a_stated_sum_reads() -> None:
    graph = build_graph(_root(COPY))
    copies = sum_copies(graph, sum_maps(graph), frozenset({"_aggregate_1", "_g0_aggregate_1"}))
    # the output's copy of v0; the mean over later positions selects several keys
    assert copies == {"_aggregate_1"}
    # the seed copies `shift(v0, 1, -1)`: a copy of a copy, both copied as numbers
    seed = COPY.replace("), v0, 1)", "), shift(v0, 1, -1), 1)")
    graph = build_graph(_root(seed))
    single = frozenset({"_aggregate_1", "_shift_aggregate_1", "_g0_aggregate_1"})
    assert sum_copies(graph, sum_maps(graph), single) == {"_aggregate_1", "_shift_aggregate_1"}


def test_no_build_but_the_last_copies_only_the_sums_copies() -> None:
    assert BuildOptions().direct_maps == frozenset()
    assert BuildOptions().sum_copies == frozenset()


def _last_certified(stages: list[str]) -> str:
    """The last build certified, not counting the smaller builds a proved build then tries
    (`compiler.smaller_builds`: kept only where no larger, of the build proved)."""
    smaller = (f"compiling: certify {MOVED}", f"compiling: certify {SHARED}")
    return [s for s in stages if s.startswith("compiling: certify") and s not in smaller][-1]


@pytest.mark.slow  # (every other build is tried and refused first: about a minute)
@pytest.mark.exactness
def test_a_copy_plus_a_count_is_proved_with_the_copy_as_a_number() -> None:
    root = _root(COPY)
    stages: list[str] = []
    model = compile_sop(root, VOCAB, 10, progress=lambda stage, done, total: stages.append(stage))
    assert model.metadata["certificate"]["ok"]
    assert _last_certified(stages) == f"compiling: certify {COPIES}"
    inputs = all_inputs(VOCAB, 3) + random_inputs(VOCAB, 10, 60, 2172213)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.slow  # (every other build is tried and refused first: 1.5 to 9 minutes)
@pytest.mark.exactness
def test_a_chain_over_a_sum_is_proved_over_the_sum_computed_first() -> None:
    root = _root(CHAIN)
    stages: list[str] = []
    model = compile_sop(root, VOCAB, 16, progress=lambda stage, done, total: stages.append(stage))
    assert model.metadata["certificate"]["ok"]
    # proved by the last build, tried only where every other was not
    assert _last_certified(stages) == f"compiling: certify {SUMS_FIRST}"
    inputs = all_inputs(VOCAB, 3) + random_inputs(VOCAB, 16, 60, 2148200)
    assert check_inputs(model, root, inputs) == len(inputs)
