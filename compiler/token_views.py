"""Key-only selects of one view of the input pinning what another view holds (value sets).

`tokens`, `tokens_int`, `tokens_float` and the other views are separate input s-ops in the graph,
but each is the interpreter's conversion of one token. `count_keys.selects_equal_values` proves
that `aggregate(select(tokens, "2", ==), indicator(tokens == "2"))` averages copies of one value,
where the select and the aggregated s-op read one source; this proves it where they read
different views of the token: `aggregate(select(tokens, "2", ==), tokens_int)` averages copies
of 2 (compiler fuzz numeric `--causal` seed 2111510 listed every mean of 0, 1 and 2 for it, and
the division reading it was refused at N = 6, 797,638 parameters where it compiled at all)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compiler.blocks import Atom, exact_key, value_key
from compiler.graph import Graph, Op
from compiler.key_predicates import conjuncts_of, evaluate_at, key_only, map_sources, signature
from rasp import sops


def views_pin_the_value(
    graph: Graph,
    selector: int,
    sop: int,
    values: Callable[[int], Sequence[Atom]],
    vocab: Sequence[Atom],
) -> bool:
    """Whether a key-only conjunct of `selector`, a predicate on one view of the token, holds only
    at vocabulary tokens where `sop`, computed from views of the token alone, is one value. A
    token a view cannot read, or a map raising on one, makes no claim."""
    sources = list(dict.fromkeys(map_sources(graph, sop)))
    if not sources or any(graph[s].op is not Op.TOKENS for s in sources):
        return False
    for i in conjuncts_of(graph, selector):
        if not key_only(graph, i):
            continue
        holds = signature(graph, i, values)
        if holds[0] != "holds" or graph[holds[1]].op is not Op.TOKENS:
            continue
        if _one_value(graph, holds[1], holds[2], sources, sop, vocab):
            return True
    return False


def _one_value(
    graph: Graph,
    source: int,
    where: frozenset,
    sources: list[int],
    sop: int,
    vocab: Sequence[Atom],
) -> bool:
    """Whether `sop` is one value at every vocabulary token whose `source` view is in `where`."""
    seen: set[tuple[str, str]] = set()
    for raw in vocab:
        try:
            if value_key(_view(graph, source, raw)) not in where:
                continue
            at = {s: _view(graph, s, raw) for s in sources}
            seen.add(exact_key(evaluate_at(graph, sop, at)))
        except Exception:  # noqa: BLE001 (a conversion or a program's function may raise anything)
            return False
        if len(seen) > 1:
            return False
    return len(seen) == 1


def _view(graph: Graph, index: int, raw: Atom) -> Atom:
    """The token `raw` as the input s-op `index` reads it (as token_values converts it)."""
    kind = graph[index].kind
    if kind is None:
        raise ValueError("an input s-op with no kind")
    return sops._TOKEN_CONVERT[kind](raw)  # type: ignore[no-any-return]
