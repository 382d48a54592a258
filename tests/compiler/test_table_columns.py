"""compiler.table_columns: a table over categorical s-ops reads only the sources its outputs depend
on over the reachable rows, and gives the same outputs."""

from __future__ import annotations

import itertools
import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.blocks import value_key
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


# values a one-hot keeps apart that Python's == does not (1, 1.0, True; 0, 0.0, False), and None
_ATOMS = [0, 0.0, False, 1, 1.0, True, None, "a", 2.5]


def _random_rows(rng: random.Random) -> tuple[list, int]:
    """Reachable rows of a random function of some of `width` columns, some combinations left out."""
    width = rng.randint(2, 4)
    domains = [rng.sample(_ATOMS, rng.randint(1, 4)) for _ in range(width)]
    depends = [c for c in range(width) if rng.random() < 0.5]
    outputs = [*_ATOMS, "b", -1]
    table: dict[tuple, object] = {}
    rows = []
    for combo in itertools.product(*domains):
        if rng.random() < 0.3:
            continue  # unreachable
        key = tuple(value_key(combo[c]) for c in depends)
        rows.append((combo, table.setdefault(key, rng.choice(outputs))))
    return rows, width


def test_the_kept_columns_give_every_row_its_output() -> None:
    """Property: over random rows (1, 1.0 and True apart, as a one-hot reads them), the columns kept
    determine every row's output: the projection exists and gives each row its own output, and no
    kept column can be dropped alone. Fails where value_key is replaced by == (1 read as True)."""
    rng = random.Random(5601)
    for _ in range(300):
        rows, width = _random_rows(rng)
        kept = needed_columns(rows, width)
        table = projected(rows, kept)
        assert table is not None, (rows, kept)
        given = {tuple(map(value_key, part)): value_key(out) for part, out in table}
        for combo, out in rows:
            assert given[tuple(value_key(combo[c]) for c in kept)] == value_key(out)
        if rows and len(kept) > 1:
            for c in kept:
                assert projected(rows, [k for k in kept if k != c]) is None, (rows, kept, c)
