"""Adversarial probes of float64 twins (review of `compiler.select_twins`, `pinned_means`): every
program here is refused, located, or certified and the interpreter's result on every input.

The twins come from maps over s-ops without twins (`tokens + indices * 1e-14`, `t / 10 + i / 5`:
0.3 and 0.30000000000000004, `hist + 2 * i / N`), read apart (`TwinTables.apart`) where the map is
read from its sources, and met through the paths that could merge them: a categorical or a
numerical copy, a mean, a map of the map's number, a zip-map comparing two such maps, joint
selectors (`and`, `or`), sorts. No probe found a model that disagrees; with `apart` granted to every
s-op with twins and `_listed_apart` always true, the means' probes compile wrong (the refusals they
expect guard that).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from compiler import compile_sop
from compiler.fits import noise_clusters
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.tracr import lib
from tests.runtime_helpers import run_compiled

C = rasp.Comparison
VOCAB, N = [0, 1, 2], 4


def _tie() -> rasp.SOp:
    """x + i * 1e-14: 0.0, 1e-14, 2e-14 ... twins a float32 model cannot tell apart by number."""
    return rasp.SequenceMap(lambda x, i: x + i * 1e-14, rasp.tokens, rasp.indices)


def _fifths() -> rasp.SOp:
    """x / 10 + i / 5: 0.6 (x = 0, i = 3) beside 0.6000000000000001 (x = 2, i = 2)."""
    return rasp.SequenceMap(lambda x, i: x / 10 + i / 5, rasp.tokens, rasp.indices)


def _same() -> rasp.Selector:
    return rasp.Select(rasp.indices, rasp.indices, C.EQ)


def _mean(sop: rasp.SOp, selector: rasp.Selector) -> rasp.SOp:
    return rasp.numerical(rasp.Aggregate(selector, rasp.numerical(sop), default=0))


def _width(keys: rasp.SOp, queries: rasp.SOp, cmp: rasp.Comparison) -> rasp.SOp:
    return rasp.SelectorWidth(rasp.Select(keys, queries, cmp))


# name -> (program, compiles): the twins of maps read apart compile (True); a mean's are one
# number, refused (False); None: either, refused located or exact
PROBES: dict[str, tuple[Callable[[], rasp.SOp], bool | None]] = {
    "sort_unique_by_tie": (lambda: lib.make_sort_unique(rasp.tokens, _tie()), True),
    "sort_by_hist": (
        lambda: lib.make_sort(rasp.tokens, lib.make_hist(), max_seq_len=N, min_key=2),
        True,
    ),
    "and_of_twins": (
        lambda: rasp.SelectorWidth(
            rasp.SelectorAnd(
                rasp.Select(_fifths(), _fifths(), C.GT),
                rasp.Select(rasp.tokens, rasp.tokens, C.NEQ),
            )
        ),
        True,
    ),
    "or_of_twins": (
        lambda: rasp.SelectorWidth(rasp.SelectorOr(rasp.Select(_tie(), _tie(), C.LEQ), _same())),
        True,
    ),
    "map_of_numerical_map": (
        lambda: _width(
            rasp.Map(lambda v: 3 * v, rasp.numerical(_fifths())),
            rasp.Map(lambda v: 3 * v, rasp.numerical(_fifths())),
            C.LT,
        ),
        True,
    ),
    "zip_map_compares": (lambda: rasp.SequenceMap(lambda a, b: a < b, _fifths(), _tie()), True),
    # a copy is not a map: its twins share a column today (refused), though a categorical copy
    # of the map's one-hot could keep them apart
    "categorical_copy": (
        lambda: _width(rasp.Aggregate(_same(), _fifths()), _fifths(), C.LT),
        None,
    ),
    "numerical_copy": (
        lambda: _width(
            rasp.numerical(rasp.Aggregate(_same(), _fifths(), default=0)), _fifths(), C.EQ
        ),
        None,
    ),
    "mean_against_itself": (
        lambda: _width(*2 * [_mean(_fifths(), rasp.Select(rasp.tokens, rasp.tokens, C.EQ))], C.LT),
        False,
    ),
    "prefix_mean_of_ties": (
        lambda: _width(*2 * [_mean(_tie(), rasp.Select(rasp.indices, rasp.indices, C.LEQ))], C.LT),
        False,
    ),
    "mean_against_map": (
        lambda: _width(
            _mean(_fifths(), rasp.Select(rasp.tokens, rasp.tokens, C.EQ)), _fifths(), C.LEQ
        ),
        False,
    ),
}


def _inputs(vocab: list, up_to: int) -> list[list]:
    return [list(t) for n in range(1, up_to + 1) for t in itertools.product(vocab, repeat=n)]


def _agrees_everywhere(program: rasp.SOp, vocab: list, max_len: int) -> bool:
    """Compiles `program` (a CompileError propagates), certified, and checks every input."""
    model = compile_sop(program, vocab, max_len)
    assert model.metadata["certificate"]["ok"]
    inputs = _inputs(vocab, max_len)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (xs, got, want)
    return True


def test_the_probes_meet_twins() -> None:
    """The maps hold float64 twins at this length (else the probes test nothing)."""
    for f in (lambda x, i: x + i * 1e-14, lambda x, i: x / 10 + i / 5):
        values = sorted({f(x, i) for x in VOCAB for i in range(N)})
        runs = [m for _, m in noise_clusters(values) if len(m) > 1]
        assert runs, f


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_twin_probe_is_refused_or_exact(name: str) -> None:
    make, compiles = PROBES[name]
    program = make()
    if compiles:
        assert _agrees_everywhere(program, VOCAB, N)
        return
    try:
        _agrees_everywhere(program, VOCAB, N)
    except CompileError as refused:
        diagnostic = refused.diagnostics[0]
    else:
        assert compiles is None, "compiled where the twins are one number"
        return
    assert diagnostic.span is not None
    assert "closer than 1e-09" in diagnostic.message or "float64 rounding" in diagnostic.message


@pytest.mark.parametrize("default", [0.5, -0.75, 1.25])
@pytest.mark.parametrize("shift", [1, 3])
def test_pinned_halves_give_every_mean_exactly(default: float, shift: int) -> None:
    """Prefix means over a shifted copy of halves and quarters (negative too), its default pinned
    before the shift (`pinned_means`), at the maximum length: `repr(float(mean))` tells every
    float64 apart, so a mean the value analysis missed or merged would be a wrong string."""
    halves = rasp.numerical(rasp.Map(lambda t: {0: 0.5, 1: -0.25, 2: 1.75}[t], rasp.tokens))
    later = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + shift)
    copied = rasp.numerical(rasp.Aggregate(later, halves, default=default))
    mean = _mean(copied, rasp.Select(rasp.indices, rasp.indices, C.LEQ))
    assert _agrees_everywhere(rasp.Map(lambda v: repr(float(v)), mean), VOCAB, 6)
