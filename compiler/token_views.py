"""The one value a key-only select pins at every key it selects (value sets of pinned copies).

`aggregate(select(tokens_int, 2, ==), tokens_int, -1)` selects only keys holding 2, so it is 2,
a mean of copies of 2 (2.0) or its default -1: not every value of `tokens_int`, nor any mean of
them. `count_keys.pinned_value` proves that where the select and the aggregated s-op read one
source; this also proves it where they read different views of the token: `tokens`,
`tokens_int`, `tokens_float` and the others are separate input s-ops in the graph, but each is
the interpreter's conversion of one token (`rasp.sops.read_token`), so
`aggregate(select(tokens, "2", ==), tokens_int, -1)` averages copies of 2 too (compiler fuzz
numeric `--causal` seed 2111510: listed as every mean of 0, 1 and 2, the division reading it was
refused at N = 6, 797,638 parameters where it compiled at all; with the values 0, 1 and 2 still
listed beside the means of 2, it was refused at N = 6 by the output's snap margin).

The pinned value says nothing about a query whose keys the select all skips: the aggregate takes
its default there (an input without a "2"), which `means.MeanValues.aggregate_values` keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compiler.blocks import Atom, exact_key, value_key
from compiler.count_keys import pinned_value
from compiler.graph import Graph, Op
from compiler.key_predicates import conjuncts_of, evaluate_at, key_only, map_sources, signature
from rasp import sops


def held_value(
    graph: Graph,
    selector: int,
    sop: int,
    values: Callable[[int], Sequence[Atom]],
    vocab: Sequence[Atom],
) -> tuple[Atom] | None:
    """(v,) where a key-only conjunct of `selector` holds only at keys where `sop` is the one
    value v: a predicate on a source s that `sop` is computed from alone (`pinned_value`), or on
    one view of the token where `sop` is computed from views of the token alone. None where no
    conjunct pins one (a token a view cannot read, or a map raising on one, makes no claim)."""
    for i in conjuncts_of(graph, selector):
        if not key_only(graph, i):
            continue
        pinned = pinned_value(graph, i, sop, values) or _views_pin(graph, i, sop, values, vocab)
        if pinned is not None:
            return pinned
    return None


def _views_pin(
    graph: Graph,
    conjunct: int,
    sop: int,
    values: Callable[[int], Sequence[Atom]],
    vocab: Sequence[Atom],
) -> tuple[Atom] | None:
    """(v,) where key-only `conjunct`, a predicate on one view of the token, holds only at
    vocabulary tokens where `sop`, computed from views of the token alone, is v."""
    sources = list(dict.fromkeys(map_sources(graph, sop)))
    if not sources or any(graph[s].op is not Op.TOKENS for s in sources):
        return None
    holds = signature(graph, conjunct, values)
    if holds[0] != "holds" or graph[holds[1]].op is not Op.TOKENS:
        return None
    return _one_value(graph, holds[1], holds[2], sources, sop, vocab)


def _one_value(
    graph: Graph,
    source: int,
    where: frozenset,
    sources: list[int],
    sop: int,
    vocab: Sequence[Atom],
) -> tuple[Atom] | None:
    """(v,) where `sop` is v at every vocabulary token whose `source` view is in `where`."""
    seen: dict[tuple[str, str], Atom] = {}
    for raw in vocab:
        try:
            if value_key(_view(graph, source, raw)) not in where:
                continue
            at = {s: _view(graph, s, raw) for s in sources}
            held = evaluate_at(graph, sop, at)
        except Exception:  # noqa: BLE001 (a conversion or a program's function may raise anything)
            return None
        seen.setdefault(exact_key(held), held)
        if len(seen) > 1:
            return None
    return (next(iter(seen.values())),) if len(seen) == 1 else None


def _view(graph: Graph, index: int, raw: Atom) -> Atom:
    """The token `raw` as the input s-op `index` reads it (as token_values converts it)."""
    kind = graph[index].kind
    if kind is None:
        raise ValueError("an input s-op with no kind")
    return sops.read_token(kind, raw)
