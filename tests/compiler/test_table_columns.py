"""compiler.table_columns: a table over categorical s-ops reads only the sources its outputs depend
on over the reachable rows, and gives the same outputs."""

from __future__ import annotations

import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.table_columns import needed_columns, projected
from rasp import tracr as rasp


def test_a_column_the_outputs_do_not_depend_on_is_dropped() -> None:
    # (x, i) -> x + y: i is a function of nothing here, y matters
    rows = [((x, y, i), x + y) for x in range(3) for y in range(2) for i in range(4)]
    assert needed_columns(rows, 3) == (0, 1)
    assert sorted(projected(rows, (0, 1))) == sorted(
        ((x, y), x + y) for x in range(3) for y in range(2)
    )


def test_a_column_that_decides_some_rows_is_kept() -> None:
    rows = [((x, i), x if i > 0 else 0) for x in range(3) for i in range(3)]
    assert needed_columns(rows, 2) == (0, 1)
    assert projected(rows, (0,)) is None


def test_a_column_only_reachable_rows_make_redundant_is_dropped() -> None:
    # x is None exactly at i = 0 (a shift by one): `x if i > 0 else 0` is a function of x alone
    rows = [((None, 0), 0)] + [((x, i), x) for x in range(3) for i in range(1, 4)]
    assert needed_columns(rows, 2) == (0,)


def _pairwise_sum() -> rasp.SOp:
    # InterpBench's pairwise sum (case 118), written as its authors wrote it for tracr
    select = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1)
    shifted = rasp.Aggregate(select, rasp.tokens, default=None)
    previous = rasp.SequenceMap(lambda x, y: x if y > 0 else 0, shifted, rasp.indices)
    return rasp.SequenceMap(lambda x, y: int(x + y), rasp.tokens, previous)


def test_interpbench_pairwise_sum_reads_no_index_in_its_table() -> None:
    # The fused chain's table was over (tokens, shifted, indices): 892 units, 108,053 parameters
    # at N = 9 over 0..10 (tracr's model: 39,842). `previous` is None exactly at index 0, so the
    # outputs are a function of (tokens, shifted): 17,942.
    program = _pairwise_sum()
    vocab = list(range(11))
    model = compile_sop(program, vocab, 9)
    assert model.param_count() < 30_000
    rng = random.Random(118)
    inputs = [[rng.choice(vocab) for _ in range(rng.randint(1, 9))] for _ in range(80)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert list(got) == program(tokens)
