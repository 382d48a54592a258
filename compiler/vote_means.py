"""A difference of two means of 0/1 values over one positional selector, read only through maps
that depend on it as a number: one mean of the keys' votes (+1, -1, 0).

tracr's `make_pair_balance(tokens, "a", "b")` is `opens - closes` with opens and closes the prefix
fractions of "a" and of "b" (two means over one `select(indices, indices, <=)`), and
`make_count(balance, -1)` compares it with -1. Read as two means, the balance is a difference of
two numbers each off by float32 rounding, and the count's select, reading it, was refused from
N = 10 (5.7e-5 of error in its key, more than the steps between widths allow). The mean of the
votes `[t == "a"] - [t == "b"]` over the same keys is one number, certified at N = 16 and 32.

Over the rationals the two are one number: with a ones of x1 and b ones of x2 among the w keys a
query selects, a/w - b/w = (a - b)/w, and a - b is the sum of the votes. In float64 they are not:
the interpreter computes fl(fl(a/w) - fl(b/w)) (0.7 - 0.6 = 0.09999999999999998 at w = 10, where
the vote mean is 0.1), so the difference node itself is never replaced. Its readers are: each one
(a map of the difference alone, `balance == -1`) becomes a table over the vote mean, built by
running the program's own functions (the difference's, then the reader's) on the interpreter's
values of both means for every (w, a, b) that can occur, and kept only where every (w, a, b)
with one vote mean gives the reader one value (type included): then the reader's value on every
input is the table's at that input's vote mean, exactly, and the model of the rewritten graph is
certified against those values as any other. A reader that is not such a function of the vote
mean (the difference read as an output, its last bits seen), or raises on some (w, a, b), keeps
the program as it is.

It applies to a map D of exactly two aggregates over one selector S that depends on positions
alone and selects at least one key at every query of every length (a default never taken), of
values x1 and x2 whose value sets (the compiler's analysis) are ints 0 and 1, where every reader
of D is a one-input map or a select of D against a constant (RASP's `select(bal, -1, ==)`, read as
the map `bal == -1` and then `select(holds, True, ==)`, as `compiler.constant_sides` does). The interpreter's mean of w whole numbers with sum s is s itself (the
int) for w = 1 and the float64 division s / w for w >= 2 (an exact sum of small ints, then one
correctly rounded division: `rasp.sops._means`), which `_mean` computes. (a, b) ranges over
0 <= a, b <= w, or a + b <= w where no key can vote for both (x1 and x2 maps of the tokens alone,
never 1 together on one token): a superset of what occurs, which only adds checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.constant_sides import ComparedWith
from compiler.rewrite import ValueFacts, positional_nodes, positional_widths, rebuilt
from rasp import sops
from rasp.atoms import atom_key
from rasp.errors import CompileError

# (w, a, b) combinations each difference is evaluated on: a check, not a table. tracr's
# functions take about 45 us a call: 100K is 4.5 s (a pair balance up to N = 82; 2.2 s at N = 64)
MAX_COMBINATIONS = 100_000


@dataclasses.dataclass(frozen=True)
class _Vote:
    """A key's vote: x1 - x2 (each 0 or 1)."""

    def __call__(self, first: int, second: int) -> int:
        return first - second


@dataclasses.dataclass(frozen=True, eq=False)
class _Table:
    """A reader's value at each vote mean (keyed by `atom_key`: 1 and 1.0 apart)."""

    table: dict[Any, Any]

    def __call__(self, mean: Any) -> Any:
        return self.table[atom_key(mean)]


def _mean(total: int, w: int) -> int | float:
    """The interpreter's mean of w whole numbers summing to `total` (rasp.sops._means)."""
    return total if w == 1 else total / w


def vote_means(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with each reader of a difference of two 0/1 means over one selector a table over
    the mean of the keys' votes (module docstring); `root` itself where there is none."""
    order = list(sops.walk(root))
    readers: dict[int, list[sops.Node]] = {}
    for node in order:
        for child in node.children():
            readers.setdefault(child.id, []).append(node)
    positional, _ = positional_nodes(order)
    sites = [
        node
        for node in order
        if node is not root
        and _difference(node, positional) is not None
        and readers.get(node.id)
        and all(_read_as_number(r, node) is not None for r in readers[node.id])
    ]
    if not sites or not vocab:
        return root
    try:
        facts = ValueFacts(
            [x for d in sites for x in _difference(d, positional)[1:]], vocab, max_len
        )  # type: ignore[index]
    except CompileError:
        return root
    local = _token_local(order)
    tables: dict[int, tuple[sops.MapSOp, sops.AggregateSOp, dict[Any, Any]]] = {}
    for d in sites:
        found = _difference(d, positional)
        assert found is not None
        select, x1, x2 = found
        if not all(_zero_one(facts.values(x)) for x in (x1, x2)):
            continue
        widths = positional_widths(select, max_len)
        if widths is None or min(min(ws) for ws in widths) < 1:
            continue
        both = not (x1.id in local and x2.id in local and _exclusive(x1, x2, vocab))
        combos = _combinations(sorted({w for ws in widths for w in ws}), both)
        if combos is None:
            continue
        assert isinstance(d, sops.MapSOp)
        points = _points(d, combos)
        if points is None:
            continue
        for reader in readers[d.id]:
            fn = _read_as_number(reader, d)
            assert fn is not None
            table = _table(fn, points)
            if table is not None:
                tables[reader.id] = (reader, d, table)  # type: ignore[assignment]
    if not tables:
        return root
    means: dict[int, sops.AggregateSOp] = {}
    new: dict[int, sops.Node] = {}
    for node in order:
        found_table = tables.get(node.id)
        if found_table is None:
            new[node.id] = rebuilt(node, new)
            continue
        reader, d, table = found_table
        mean = means.get(d.id)
        if mean is None:
            mean = means[d.id] = _vote_mean(d, positional, new)
        holds = sops.MapSOp(
            fn=_Table(table),
            inputs=(mean,),
            text=reader.text if isinstance(reader, sops.MapSOp) else reader.label,
            span=reader.span,
            name=reader.name if isinstance(reader, sops.MapSOp) else None,
            note=f"{reader.label} (a table over {mean.label})",
        )
        if isinstance(reader, sops.MapSOp):
            new[node.id] = holds
            continue
        # a select of the difference against a constant: `select(holds, True, ==)`, which
        # selects the same keys (compiler.constant_sides)
        assert isinstance(reader, sops.Select)
        true = sops.ConstSOp(value=True, span=reader.span)
        sides = (holds, true) if reader.keys is d else (true, holds)
        new[node.id] = dataclasses.replace(
            reader, keys=sides[0], queries=sides[1], comparison=sops.Comparison.EQ
        )
    return new[root.id]


def _read_as_number(reader: sops.Node, d: sops.Node) -> Any:
    """The function of d's value a reader computes: a one-input map's, or `d OP c` of a select
    of d against a constant c (per key or per query); None for any other reader."""
    if isinstance(reader, sops.MapSOp):
        return reader.fn if reader.inputs == (d,) else None
    if not isinstance(reader, sops.Select):
        return None
    comparison = reader.comparison
    if reader.keys is d and isinstance(reader.queries, sops.ConstSOp):
        return ComparedWith(comparison, reader.queries.value, value_is_key=False)
    if reader.queries is d and isinstance(reader.keys, sops.ConstSOp):
        return ComparedWith(comparison, reader.keys.value, value_is_key=True)
    return None


def _difference(
    node: sops.Node, positional: set[int]
) -> tuple[sops.Selector, sops.SOp, sops.SOp] | None:
    """(S, x1, x2) where `node` is a map of aggregate(S, x1) and aggregate(S, x2), S positional."""
    if not isinstance(node, sops.MapSOp) or len(node.inputs) != 2:
        return None
    first, second = node.inputs
    if not (isinstance(first, sops.AggregateSOp) and isinstance(second, sops.AggregateSOp)):
        return None
    if first.selector is not second.selector or first.selector.id not in positional:
        return None
    if first.bools_as_numbers or second.bools_as_numbers or first is second:
        return None
    if first.sop.id in positional or second.sop.id in positional:
        return None
    return first.selector, first.sop, second.sop


def _zero_one(values: tuple[Atom, ...]) -> bool:
    return bool(values) and all(type(v) is int and v in (0, 1) for v in values)


def _exclusive(x1: sops.SOp, x2: sops.SOp, vocab: Sequence[Atom]) -> bool:
    """Whether no token gives both maps 1 (both maps of the tokens alone)."""
    for token in vocab:
        try:
            evaluator = sops.Evaluator([token])
            if evaluator.seq(x1).values[0] == 1 and evaluator.seq(x2).values[0] == 1:
                return False
        except Exception:  # noqa: BLE001 (a token the program fails on: no exclusivity claimed)
            return False
    return True


def _combinations(widths: list[int], both: bool) -> list[tuple[int, int, int]] | None:
    """Every (w, a, b) with 0 <= a, b <= w (a + b <= w unless `both`); None past the limit."""
    count = sum((w + 1) ** 2 if both else (w + 1) * (w + 2) // 2 for w in widths)
    if count > MAX_COMBINATIONS:
        return None
    return [
        (w, a, b) for w in widths for a in range(w + 1) for b in range(w + 1) if both or a + b <= w
    ]


def _points(d: sops.MapSOp, combos: list[tuple[int, int, int]]) -> list[tuple[Any, Any]] | None:
    """(the vote mean's key, the difference's value) at every (w, a, b); None where the
    difference raises or gives a value the interpreter refuses at one."""
    out = []
    for w, a, b in combos:
        try:
            value = d.fn(_mean(a, w), _mean(b, w))
        except Exception:  # noqa: BLE001 (the program fails there: the rewrite is not made)
            return None
        if sops.type_of_value(value) is None:
            return None
        out.append((atom_key(_mean(a - b, w)), value))
    return out


def _table(fn: Any, points: list[tuple[Any, Any]]) -> dict[Any, Any] | None:
    """The reader's value per vote mean, or None where it is not a function of it."""
    table: dict[Any, tuple[Any, Any]] = {}
    read: dict[Any, tuple[Any, Any]] = {}  # the difference's value's key -> the reader's
    for mean, d in points:
        d_key = atom_key(d)
        found = read.get(d_key)
        if found is None:
            try:
                value = fn(d)
            except Exception:  # noqa: BLE001 (the program fails there: the rewrite is not made)
                return None
            if sops.type_of_value(value) is None or value != value:
                return None
            found = read[d_key] = (atom_key(value), value)
        if table.setdefault(mean, found)[0] != found[0]:
            return None
    return {k: v for k, (_, v) in table.items()}


def _vote_mean(
    d: sops.MapSOp, positional: set[int], new: dict[int, sops.Node]
) -> sops.AggregateSOp:
    found = _difference(d, positional)
    assert found is not None
    select, x1, x2 = found
    first, second = new[x1.id], new[x2.id]
    text = f"{x1.label} - {x2.label}"
    votes = sops.MapSOp(fn=_Vote(), inputs=(first, second), text=text, span=d.span, note=text)  # type: ignore[arg-type]
    note = f"the mean of {text} (for {d.label})"
    return sops.AggregateSOp(
        selector=new[select.id],
        sop=votes,
        default=0,
        span=d.span,
        note=note,  # type: ignore[arg-type]
    )


def _token_local(order: list[sops.Node]) -> set[int]:
    """Maps of the tokens (and constants) alone."""
    out: set[int] = set()
    for node in order:
        if isinstance(node, (sops.TokensSOp, sops.ConstSOp)) or (
            isinstance(node, sops.MapSOp) and node.inputs and all(c.id in out for c in node.inputs)
        ):
            out.add(node.id)
    return out
