"""Selectors that select at most one key because they compare a count that differs at every key
they can select.

Long addition finds each column's carry at the nearest later column that is not a 9:

    c = selector_width(select(indices, indices, >) and not nine);
    nearest = select(c, c - 1, ==) and later and not nine;

`c` at position k counts the positions after k where `not nine` holds. Among the positions where it
holds, `c` strictly decreases (a later one is counted by every earlier one), so no two of them share
a value, and `nearest`, which only selects such positions, selects at most one key. The value
analysis (compiler.values) knows that only from this proof: without it `carry` would be any mean of
0s and 1s over up to N keys (a one-hot of 1,247 values in long addition at N = 32, 163M parameters).

The rule, for any order `<`, `<=`, `>`, `>=`: with `c = selector_width(select(indices, indices,
order) and Q_1 and ... and Q_m)` where each Q_j depends on the key alone (its query side is a
constant), `c` is injective on the keys where every Q_j holds; a conjunction that contains
`select(c, y, ==)` and every Q_j selects at most one key.

A Q_j may also be a class `select(x, x, ==)` (one s-op on both sides): `c` then counts the earlier
keys of the key's own class, and is injective within each class. A conjunction that requires that
class too selects keys of the query's class only, so again at most one. The first occurrence of
each token:

    seen = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));
    first = select(tokens, tokens, ==) and select(seen, 0, ==);

A Q_j is compared by where it holds: a key-only predicate of a chain of one-input maps of a source
s (and `not`, `and`, `or` of such predicates of one s) is the set of s's values where it holds,
so `select(tokens, "a", ==)` in the count and `select(is_a, True, ==)` with `is_a = tokens == "a"`
in the conjunction are one predicate.

The count and the predicates may also be written as one map compared with a constant, as the
first "b" is found:

    before = selector_width(select(is_b, True, ==) and select(indices, indices, <));
    first = select(is_b and before == 0, True, ==);

The map is computed from `before` and `tokens`; on every combination of their values it holds only
where `before` is 0 and the token is "b". So the keys it selects share one count, and `is_b`, the
count's predicate, holds at each of them: at most one key.

A count may also be read through the original's `has_focus(sel)`, `aggregate(sel, 1, 0) > 0`, as
the prelude's `mark_first_instance` does: a mean of a whole constant c with a default d != c is d
exactly where `sel` selects no key (c or c's float elsewhere), so a select that holds only where
it is d pins the count of `sel` at 0 (`_is_focus`). The position of the first "a",
`aggregate(select_from_first(tokens, "a"), indices)`, is then one index, not any mean of indices.

A class the count counts within need not be required by the conjunction where the map pins it to
one class: `select(seen == 1 and tokens == "a", True, ==)`, with `seen` counting the earlier keys
of the key's own token, holds only at keys of the token "a" and of one count (the second "a").

A count pinned at 0 may also select several keys that hold one value (`selects_equal_values`):

    bigger = selector_width(select(tokens_int, tokens_int, >));
    max_tok = aggregate(select(bigger == 0, True, ==), tokens_int);

`bigger` counts the keys holding a larger number than the key's own, so it is 0 exactly at the
keys holding the largest one (`<`: the smallest), and the aggregate averages copies of one number.
Such a count is also a rank, larger for each larger number: a sort without a tie-break,
`aggregate(select(smaller, indices, ==), tokens_int)` with `smaller =
selector_width(select(tokens_int, tokens_int, <))`, averages keys of one number too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom, exact_key, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.key_predicates import (
    MAX_SOURCE_VALUES,
    conjuncts_of,
    evaluate_at,
    is_class,
    key_only,
    map_sources,
    signature,
)
from compiler.rank_digits import digit_order
from rasp import sops
from rasp.walks import first_visits

_ORDERS = (sops.Comparison.LT, sops.Comparison.LEQ, sops.Comparison.GT, sops.Comparison.GEQ)


def selects_one_by_count(
    graph: Graph, node: IRNode, values: Callable[[int], Sequence[Atom]] | None = None
) -> bool:
    """Whether the conjunction `node` contains `select(c, y, ==)` with `c` a count of later (or
    earlier) keys that satisfy key-only predicates the conjunction also requires (module doc);
    `values(i)`, node i's value set, lets two predicates written differently be one."""
    if node.op is not Op.AND and node.op is not Op.SELECT:
        return False
    conjuncts = conjuncts_of(graph, node.index)
    required = {
        signature(graph, i, values) for i in conjuncts if key_only(graph, i) or is_class(graph, i)
    }
    for i in conjuncts:
        select = graph[i]
        if select.op is not Op.SELECT:
            continue
        if values is not None and key_only(graph, i) and _pins_a_count(graph, i, required, values):
            return True
        if select.comparison is not sops.Comparison.EQ:
            continue
        width = graph[select.inputs[0]]
        if width.op is not Op.SELECTOR_WIDTH:
            continue
        counted = _counted_predicates(graph, width.inputs[0], values)
        if counted is not None and counted <= required:
            return True
    return False


def selects_equal_values(
    graph: Graph, selector: int, sop: int, values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether every key `selector` selects (for any query) holds the same value of `sop`, which
    is x or computed from x alone, where a conjunct is
    - `select(x, x, ==)`: the query's x;
    - `select(r, y, ==)` with r = `selector_width(select(x, x, <))` (`<=`, `>`, `>=`): a rank
      of x's value, larger (smaller) for each larger x;
    - or `select(m, constant, op)` holding, on every combination of its sources' values, only
      where such an r with `<` (`>`) is 0: the keys of the smallest (largest) x (module doc);
    - or a key-only select of x (and `not`, `and`, `or` of such selects of one x) that holds
      only at values of x where `sop`, computed from x alone, is one value (`_pins_the_value`).
    With r, x's values must be all numbers (no NaN, which no comparison orders) or all strings."""
    for i in conjuncts_of(graph, selector):
        node = graph[i]
        if is_class(graph, i) and (
            _computed_from(graph, sop, node.inputs[0])
            or _tells_apart(graph, node.inputs[0], sop, values)
        ):
            # every selected key holds the query's x: one value, where no two of x's values are
            # equal as numbers (1 and 1.0, True and 1), which a map might still tell apart
            xs = values(node.inputs[0])
            if len({value_key(v) for v in xs}) == len(set(xs)):
                return True
        if key_only(graph, i) and _pins_the_value(graph, i, sop, values):
            return True
        if node.op is not Op.SELECT:
            continue
        rank = graph[node.inputs[0]]
        if node.comparison is sops.Comparison.EQ and rank.op is Op.SELECTOR_WIDTH:
            # the keys of one rank among x's values (`select(x, x, <)` counts the smaller ones,
            # more for each larger x): one x, whatever the query compares the rank with
            x = _extreme_of(graph, rank.index, _ORDERS)
            if (
                x is not None
                and _totally_ordered(values(x))
                and (
                    _computed_from(graph, sop, x)
                    # x = f(sop), f one-to-one (tracr's None check on a sort's keys), where two
                    # of x's values equal as numbers (7 and 7.0, of one rank) come from sop's
                    # equal ones: one rank, one x, one sop (copies of one number, in its forms)
                    or (
                        _tells_apart(graph, x, sop, values)
                        and _equal_from_equal(graph, x, sop, values)
                    )
                )
            ):
                return True
        if not key_only(graph, i):
            continue
        for count, held in _held(graph, i, values):
            x = _extreme_of(graph, count)
            if (
                x is not None
                and _computed_from(graph, sop, x)
                and _totally_ordered(values(x))
                and all(_no_key(graph, count, at[count]) for at in held)
            ):
                return True
    return False


def _pins_the_value(
    graph: Graph, index: int, sop: int, values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether key-only `index` pins `sop` to one value (`pinned_value`)."""
    return pinned_value(graph, index, sop, values) is not None


def pinned_value(
    graph: Graph, index: int, sop: int, values: Callable[[int], Sequence[Atom]]
) -> tuple[Atom] | None:
    """(v,) where key-only `index` (a `select(k, constant, op)` of a chain of one-input maps of a
    source s, or `not`, `and`, `or` of such selects of one s) holds only at values of s where
    `sop`, computed from s alone, is the one value v: `aggregate(select(tokens, "a", ==),
    indicator(tokens == "b"))` averages copies of 0, not any mean of 0s and 1s. None where it
    does not (a map that raises on such a value makes no claim). A tuple: v may be None."""
    holds = signature(graph, index, values)
    if holds[0] != "holds" or not _computed_from(graph, sop, holds[1]):
        return None
    source, where = holds[1], holds[2]
    seen: dict[tuple[str, str], Atom] = {}
    for value in values(source):
        if value_key(value) not in where:
            continue
        try:
            held = evaluate_at(graph, sop, {source: value})
        except Exception:  # noqa: BLE001 (a program's function may raise anything)
            return None
        seen.setdefault(exact_key(held), held)
        if len(seen) > 1:
            return None
    return (next(iter(seen.values())),) if len(seen) == 1 else None


def _held(
    graph: Graph, index: int, values: Callable[[int], Sequence[Atom]]
) -> list[tuple[int, list[dict[int, Atom]]]]:
    """For key-only `select(m, constant, op)`: each count (or focus, `_is_focus`) m is computed
    from, with the combinations of m's sources' values where the select holds (none where there
    are more than MAX_SOURCE_VALUES classes of combinations or combinations where it holds, or a
    map or the comparison raises on one, or none holds).

    Values of a source that m reads alike are tried once (`_reading_classes`): the first maximum,
    `ismax and before == 0` with `ismax = bigger == 0` and two counts of up to N values each, is
    tried on 2 x 2 classes, not N² combinations."""
    select = graph[index]
    keys, queries = select.inputs
    sources = list(dict.fromkeys(map_sources(graph, keys)))
    counts = [s for s in sources if graph[s].op is Op.SELECTOR_WIDTH or _is_focus(graph, s)]
    if not counts:
        return []
    classes = []  # per source, its values in groups that `keys` reads alike
    for source in sources:
        grouped = _reading_classes(graph, keys, source, values(source))
        if grouped is None:
            return []
        classes.append(grouped)
    if math.prod(map(len, classes)) > MAX_SOURCE_VALUES:
        return []
    comparison, constant = select.comparison, graph[queries].value
    assert comparison is not None
    held = []  # the combinations where it holds, as {source: value}
    for combo in itertools.product(*classes):
        at = {s: members[0] for s, members in zip(sources, combo, strict=True)}
        try:
            holds = comparison.apply(evaluate_at(graph, keys, at), constant)
        except Exception:  # noqa: BLE001 (a program's function may raise anything)
            return []
        if holds:
            if len(held) + math.prod(map(len, combo)) > MAX_SOURCE_VALUES:
                return []
            held += [dict(zip(sources, c, strict=True)) for c in itertools.product(*combo)]
    return [(count, held) for count in counts] if held else []


def _reading_classes(
    graph: Graph, root: int, source: int, vals: Sequence[Atom]
) -> list[list[Atom]] | None:
    """`source`'s values grouped by what `root` (maps of several sources) reads of them: the
    values of the largest subexpressions of `root` computed from `source` alone. Two values of
    one group give `root` the same value wherever the other sources stand. None where there are
    more than MAX_SOURCE_VALUES values or such a subexpression raises on one."""
    if len(vals) > MAX_SOURCE_VALUES:
        return None
    readers = _largest_reading(graph, root, source)
    groups: dict[tuple[Any, ...], list[Atom]] = {}
    for value in vals:
        try:
            read = tuple(evaluate_at(graph, r, {source: value}) for r in readers)
        except Exception:  # noqa: BLE001 (a program's function may raise anything)
            return None
        groups.setdefault(tuple(map(exact_key, read)), []).append(value)
    return list(groups.values())


def _largest_reading(graph: Graph, index: int, source: int) -> list[int]:
    """The largest subexpressions of node `index` (maps and constants over sources) that are
    computed from `source` and constants alone, each once."""
    # each node walked once, its sources found once (bottom up): a walk of the tree called
    # map_sources at each of a loop's 3^k paths (defs fuzz seed 2202086)
    sources: dict[int, frozenset[int]] = {}

    def sources_of(i: int) -> frozenset[int]:
        if i not in sources:
            node = graph[i]
            if node.op is Op.CONST:
                sources[i] = frozenset()
            elif node.op is Op.MAP:
                sources[i] = frozenset().union(*(sources_of(j) for j in node.inputs))
            else:
                sources[i] = frozenset({i})
        return sources[i]

    def below(i: int) -> Sequence[int]:  # a map not yet of `source` alone: its inputs
        node = graph[i]
        return node.inputs if node.op is Op.MAP and sources_of(i) != {source} else ()

    return [i for i in first_visits(index, below, key=int) if sources_of(i) == {source}]


def _extreme_of(
    graph: Graph, count: int, orders: tuple[sops.Comparison, ...] = _ORDERS[::2]
) -> int | None:
    """x where `count` is `selector_width(select(x, x, order))` for one of `orders` (by default
    `<` and `>`) and nothing else, else None; or that select rewritten over the digits of x's
    rank (compiler.order_digits), which selects the same keys."""
    select = graph[graph[count].inputs[0]]
    if select.op is not Op.SELECT:
        found = digit_order(graph, select.index)
        return found[0] if found is not None and found[1] in orders else None
    if select.comparison not in orders:
        return None
    keys, queries = select.inputs
    return keys if keys == queries else None


def _computed_from(graph: Graph, index: int, source: int) -> bool:
    """Whether node `index` is `source`, or maps of it and constants."""
    node = graph[index]
    if index == source or node.op is Op.CONST:
        return True
    return node.op is Op.MAP and all(_computed_from(graph, i, source) for i in node.inputs)


def _tells_apart(
    graph: Graph, x: int, source: int, values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether x is `source` read through one-input maps each of which gives different values of
    its input different values (or raises), so that keys of one x hold one `source`: tracr's
    `select(word_length, word_length, ==)` compares the map 'key is not None' of word_length,
    which raises at None and is the identity elsewhere. Tried on every value of each input, up
    to MAX_SOURCE_VALUES of them; a map that raises there makes no claim."""
    while x != source:
        node = graph[x]
        if node.op is not Op.MAP or len(node.inputs) != 1 or node.fn is None:
            return False
        (arg,) = node.inputs
        ins = values(arg)
        if len(ins) > MAX_SOURCE_VALUES:
            return False
        seen: set[Any] = set()
        for v in ins:
            try:
                out = node.fn(v)
            except Exception:  # noqa: BLE001 (a program's function may raise anything)
                continue  # no key holds this input: the interpreter stops there
            key = exact_key(out)
            if key in seen:
                return False
            seen.add(key)
        x = arg
    return True


def _equal_from_equal(
    graph: Graph, x: int, source: int, values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether values of x (`source` read through one-input maps, `_tells_apart`) that Python
    calls equal come only from values of `source` it calls equal. A map that raises on a value
    gives x no value there."""
    fns = []
    while x != source:
        node = graph[x]
        fns.append(node.fn)
        x = node.inputs[0]
    first: dict[Any, Any] = {}
    for value in values(source):
        out = value
        try:
            for fn in reversed(fns):
                out = fn(out)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 (a program's function may raise anything)
            continue
        try:
            if not first.setdefault(out, value) == value:
                return False
        except TypeError:  # (an unhashable value, which no model holds: no claim)
            return False
    return True


def _totally_ordered(vals: Sequence[Atom]) -> bool:
    """Whether `<` and `>` order these values totally: all numbers without NaN (bools count as
    numbers, as Python compares them), or all strings."""
    if all(isinstance(v, str) for v in vals):
        return True
    return all(isinstance(v, int | float) and not math.isnan(v) for v in vals)


def _pins_a_count(
    graph: Graph, index: int, required: set[Any], values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether key-only `select(m, constant, op)`, with m computed by maps from a count c (as in
    `_counted_predicates`) and other s-ops, holds only at one value of c and only where each of
    c's predicates holds or is `required` (module doc). Every combination of the sources' values
    is tried, up to MAX_SOURCE_VALUES of them; a map or comparison that raises makes no claim."""
    for count, held in _held(graph, index, values):
        if len({value_key(at[count]) for at in held}) != 1:
            continue
        if graph[count].op is Op.AGGREGATE and not _no_key(graph, count, held[0][count]):
            continue  # a focus's one value elsewhere is many widths
        counted = _counted_predicates(graph, graph[count].inputs[0], values)
        if counted is not None and all(_implied(graph, p, held, required) for p in counted):
            return True
    return False


# a focus's constant: a whole number whose float64 mean over up to N copies is itself
MAX_FOCUS_CONSTANT = 2**20


def _is_focus(graph: Graph, index: int) -> bool:
    """Whether node `index` is `aggregate(sel, c, d)` with c a constant int (not a bool) and d a
    number other than c: d where `sel` selects no key, c (one key) or c's float (a mean of
    copies of c) elsewhere, so d tells the count of `sel` is 0 (module doc)."""
    node = graph[index]
    if node.op is not Op.AGGREGATE:
        return False
    constant, default = graph[node.inputs[1]], node.value
    return (
        constant.op is Op.CONST
        and type(constant.value) is int
        and abs(constant.value) <= MAX_FOCUS_CONSTANT
        and type(default) in (int, float)
        and default != constant.value
    )


def _no_key(graph: Graph, count: int, value: Atom) -> bool:
    """Whether the count (or focus) `count` taking `value` means its selector selects no key."""
    node = graph[count]
    zero = node.value if node.op is Op.AGGREGATE else 0
    return value_key(value) == value_key(zero)


def _implied(
    graph: Graph, predicate: tuple[Any, ...], held: list[dict[int, Atom]], required: set[Any]
) -> bool:
    """Whether a count's predicate holds wherever the select does: required by the conjunction,
    or one of a source the select reads, holding at that source's value in every combination;
    a class `select(x, x, ==)` where x, computed from the select's sources, has one value in
    every combination (the second "a": the keys the select holds at are all of one class)."""
    if predicate in required:
        return True
    if predicate[-1] == "class":
        x = predicate[2]
        try:
            return len({value_key(evaluate_at(graph, x, at)) for at in held}) == 1
        except Exception:  # noqa: BLE001 (x reads more than the sources, or a map raises)
            return False
    if predicate[0] != "holds":
        return False
    _, source, where = predicate
    return all(source in at and value_key(at[source]) in where for at in held)


def _counted_predicates(
    graph: Graph, selector: int, values: Callable[[int], Sequence[Atom]] | None
) -> set[Any] | None:
    """The key-only predicates Q_j of `select(indices, indices, order) and Q_1 and ...`, or None
    when `selector` is not of that form (no order between positions, or one more conjunct that
    depends on the query)."""
    orders, predicates = 0, set()
    for i in conjuncts_of(graph, selector):
        node = graph[i]
        if (
            node.op is Op.SELECT
            and node.comparison in _ORDERS
            and all(graph[j].op is Op.INDICES for j in node.inputs)
        ):
            orders += 1
        elif key_only(graph, i) or is_class(graph, i):
            predicates.add(signature(graph, i, values))
        else:
            return None
    return predicates if orders == 1 else None
