"""`A or B` compiled as A where B holds only where A does (compiler.absorb)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from compiler.absorb import absorbing_side
from compiler.forms import prepare
from compiler.graph import Op, build_graph
from compiler.maps import MapPlanner
from compiler.plan_context import PlanContext
from compiler.plan_state import Built
from compiler.values import infer_values
from rasp.errors import Source
from rasp.interpreter import load_file, load_source

PAPER = Path(__file__).resolve().parents[2] / "programs" / "paper_examples.rasp"
BOS_VOCAB = ["§", "a", "b", "c"]


def _covering(text: str, name: str, vocab: list, n: int) -> list[str | None]:
    """For each OR of the program's graph: the text of the input that covers it, or None."""
    sop = prepare(load_source(Source("<test>", text)).get(name), vocab, n)
    graph = build_graph(sop)
    ctx = PlanContext(graph, infer_values(graph, vocab, n), vocab)
    support = MapPlanner(ctx, None, Built()).support  # type: ignore[arg-type]  (no reading asked)
    out = []
    for node in graph.nodes:
        if node.op is Op.OR:
            side = absorbing_side(ctx, support, node)
            out.append(None if side is None else graph[side].text)
    return out


def test_a_disjunct_that_adds_no_pair_is_dropped_and_one_that_does_is_kept() -> None:
    covered = (
        "take = select(indices, 0, ==) or select(indices, indices - 1, ==);\n"
        "x = aggregate(take, tokens);"
    )
    # key 0 is taken by the first select; the second takes key i - 1 >= 0: neither covers
    assert _covering(covered, "x", list("ab"), 5) == [None]
    covered = (
        "place = -1 if indices == 0 else selector_width(select(tokens, tokens, <));\n"
        "take = select(place, indices - 1, ==) or "
        "(select(indices, 0, ==) and select(indices, indices, ==));\n"
        "x = aggregate(take, tokens);"
    )
    # the BOS (place -1) already takes itself through the first select
    assert _covering(covered, "x", list("ab"), 5) == ["select(place, indices - 1, ==)"]


def test_the_negation_of_an_absorbed_or_is_the_complement_of_the_covering_select() -> None:
    # `select(length, "a", ==)` never holds: the OR is its matching `==`, whose negation has no
    # matching form; the complement of that select's table was asked of the OR node (a crash)
    text = (
        'same = select(length, length, ==) or select(length, "a", ==);\n'
        'res = aggregate(not same, length + indicator(tokens == "a"), 0.5);'
    )  # (reading tokens: an s-op of the position alone would be a map of indices)
    assert _covering(text, "res", list("abc"), 5) == ["select(length, length, ==)"]
    sop = load_source(Source("<test>", text)).get("res")
    for head_masks in (True, False):
        model = compile_sop(sop, list("abc"), 5, head_masks=head_masks)
        assert check_inputs(model, sop, all_inputs(list("abc"), 5)) == 363


@pytest.mark.exactness
def test_the_papers_bos_sort_grows_linearly() -> None:
    # Its `take` was a joint (indices, mean) reading on the key side: 51M parameters at N = 64.
    sort_bos = load_file(PAPER).get("sort_bos")
    model = compile_sop(sort_bos, BOS_VOCAB, 64, name="sort_bos")
    assert model.metadata["config"]["d_model"] < 400  # 4,557 before
    rng = random.Random(3)
    inputs = [["§", *rng.choices("abc", k=rng.randint(0, 63))] for _ in range(40)]
    inputs += [rng.choices(BOS_VOCAB, k=rng.randint(1, 64)) for _ in range(20)]  # no BOS
    assert check_inputs(model, sort_bos, inputs) == len(inputs)
    small = compile_sop(sort_bos, BOS_VOCAB, 5, name="sort_bos")
    assert check_inputs(small, sort_bos, all_inputs(BOS_VOCAB, 5)) > 0


def test_a_width_of_an_absorbed_or_builds_nothing_for_the_covered_side() -> None:
    """`(s and not select(v2, v1, >)) or s` is s: the width used to expand the OR by
    inclusion-exclusion (|A| + |B| - |A and B|), and the planner built every aggregate up front, so
    v1 and v2 (a mean of means) had blocks the output never reads: 22M parameters at N = 7, over a
    minute at N = 8. Now the width is s's alone and only nodes the output may read are built."""
    text = (
        'v1 = aggregate(select(tokens, "b", <) or select(indices, indices, >=),'
        ' indicator(tokens == "b"), 0);\n'
        "v2 = aggregate(select(indices, 2, >=), v1, 0);\n"
        "s = select(tokens, tokens, <=);\n"
        "res = selector_width((s and not select(v2, v1, >)) or s);\n"
    )
    sop = load_source(Source("<test>", text)).get("res")
    model = compile_sop(sop, list("abc"), 6)
    assert model.param_count() < 2_000
    assert not any(str(label).startswith(("v1", "v2")) for label in model.metadata["residual"])
    check_inputs(model, sop, all_inputs("abc", 6))


def test_many_classes_are_settled_by_a_few_or_by_all() -> None:
    # x over (token, index): 80 classes a side at N = 40, more than the few tried first for a
    # witness each way; `<` inside `<=` is found only over all of them
    x = 'x = 100 * indicator(tokens == "a") + indices;\n'
    inside = x + "s = aggregate(select(x, x, <) or select(x, x, <=), indices);"
    assert _covering(inside, "s", list("ab"), 40) == ["select(x, x, <=)"]
    apart = x + "s = aggregate(select(x, x, <) or select(x, x, >), indices);"
    assert _covering(apart, "s", list("ab"), 40) == [None]
    # one pair of the 6,400 takes a key the other select does not: not covered
    once = x + "s = aggregate(select(x, x, <) or select(x, 139, ==), indices);"
    assert _covering(once, "s", list("ab"), 40) == [None]


def test_all_pairs_are_checked_a_slice_of_query_classes_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the sample, the tables over all pairs were made at once (most_freq at N = 256: 4,656
    x 4,656 classes, 1.5 s, for an `or` neither side covers); a slice at a time, the check stops
    at the first slice with a witness each way, and says the same."""
    from compiler import absorb

    monkeypatch.setattr(absorb, "_SLICE_PAIRS", 1_000)
    pairs: list[int] = []
    on = absorb._Truth.on

    def counted(self: absorb._Truth, queries, keys):  # type: ignore[no-untyped-def]
        pairs.append(len(queries) * len(keys))
        return on(self, queries, keys)

    monkeypatch.setattr(absorb._Truth, "on", counted)
    x = 'x = 100 * indicator(tokens == "a") + indices;\n'
    inside = x + "s = aggregate(select(x, x, <) or select(x, x, <=), indices);"
    assert _covering(inside, "s", list("ab"), 40) == ["select(x, x, <=)"]
    # the sample (here every class: 80 a side, stride 1), then 6 slices of the 6,400 pairs
    assert len(pairs) == 1 + 6 and max(pairs[1:]) <= 2_000
    apart = x + "s = aggregate(select(x, x, <) or select(x, x, >), indices);"
    assert _covering(apart, "s", list("ab"), 40) == [None]
