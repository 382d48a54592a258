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

The rewrite is an alternative form (`compiler.vote_form`): a mean of votes is one more head, whose
value map reads both tokens' bits, and may cost a layer where the default fuses a comparison of
the two means after their head (`frac_a > frac_b`: 1 layer, 2 through the vote mean); the compile
builds it only where the default form is refused or not proved. `vote_rewrite` says, located at
each difference whose readers it leaves as they are, why (past the combinations limit, or a
reader that is no function of the vote mean), for that refusal's notes.

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
from compiler.mean_markers import AS_NUMBER_TEXT
from compiler.rewrite import ValueFacts, positional_nodes, positional_widths, rebuilt
from rasp import sops
from rasp.atoms import atom_key
from rasp.errors import CompileError, Diagnostic
from rasp.written_text import label

# (w, a, b) combinations each difference is evaluated on: a check, not a table. tracr's
# functions take about 45 us a call: 100K is 4.5 s (a pair balance up to N = 82; 2.2 s at N = 64)
MAX_COMBINATIONS = 100_000

_NOT_READ = (
    "the readers of this difference of two means are not read as one mean of the keys' votes"
)


@dataclasses.dataclass(frozen=True)
class VoteRewrite:
    """`vote_rewrite`'s result: the program with readers rewritten (the input itself where none
    is), and a located note per difference whose readers were left as they are, saying why."""

    root: sops.Node
    reasons: tuple[Diagnostic, ...] = ()
    # what `confirmed` checks where the tables were read off one (w, a, b) per vote mean
    # (`vote_rewrite(..., checked=False)`); empty where every (w, a, b) was checked
    unchecked: tuple[_Check, ...] = ()


@dataclasses.dataclass(frozen=True, eq=False)
class _Check:
    """A reader's table read off the first (w, a, b) of each vote mean, to check at all of them."""

    d: sops.MapSOp
    fn: Any  # the reader's function of d's value (`_read_as_number`)
    combos: list[tuple[int, int, int]]
    table: dict[Any, Any]


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
    return vote_rewrite(root, vocab, max_len).root


def vote_rewrite(
    root: sops.Node, vocab: Sequence[Atom], max_len: int, *, checked: bool = True
) -> VoteRewrite:
    """`vote_means`, with why each difference whose readers it leaves was left (`VoteRewrite`).
    `checked=False`: each table is read off the first (w, a, b) of each vote mean alone (a
    twentieth of the calls at N = 64), for a sketch of the form's size: its graph is the checked
    one's only where `confirmed` (never build a model of it before)."""
    order = list(sops.walk(root))
    readers: dict[int, list[sops.Node]] = {}
    for node in order:
        for child in node.children():
            readers.setdefault(child.id, []).append(node)
    positional, _ = positional_nodes(order)
    sites: list[tuple[sops.MapSOp, tuple[sops.Selector, sops.SOp, sops.SOp]]] = []
    for node in order:
        found = _difference(node, positional)
        if (
            found is not None
            and node is not root
            and readers.get(node.id)
            and all(_read_as_number(r, node) is not None for r in readers[node.id])
        ):
            sites.append((node, found))  # type: ignore[arg-type]
    if not sites or not vocab:
        return VoteRewrite(root)
    try:
        facts = ValueFacts([x for _, found in sites for x in found[1:]], vocab, max_len)
    except CompileError:
        return VoteRewrite(root)  # the compile reports it, in its own words
    local = _token_local(order)
    tables: dict[int, tuple[sops.Node, sops.MapSOp, dict[Any, Any]]] = {}
    reasons: list[Diagnostic] = []
    checks: list[_Check] = []
    for d, (select, x1, x2) in sites:
        if not all(_zero_one(facts.values(x)) for x in (x1, x2)):
            continue
        widths = positional_widths(select, max_len)
        if widths is None or min(min(ws) for ws in widths) < 1:
            continue
        both = not (x1.id in local and x2.id in local and _exclusive(x1, x2, vocab))
        distinct = sorted({w for ws in widths for w in ws})
        combos = _combinations(distinct, both)
        if combos is None:
            reasons.append(_past_limit(d, distinct, both))
            continue
        points = _points(d, combos if checked else _firsts(combos))
        if points is None:
            continue
        for reader in readers[d.id]:
            fn = _read_as_number(reader, d)
            table = _table(fn, points)
            if isinstance(table, str):
                reasons.append(_no_function(d, reader, table))
            else:
                tables[reader.id] = (reader, d, table)
                if not checked:
                    checks.append(_Check(d, fn, combos, table))
    if not tables:
        return VoteRewrite(root, tuple(reasons))
    means: dict[int, sops.AggregateSOp] = {}
    new: dict[int, sops.Node] = {}
    by_id = {d.id: found for d, found in sites}
    for node in order:
        found_table = tables.get(node.id)
        if found_table is None:
            new[node.id] = rebuilt(node, new)
            continue
        reader, d, table = found_table
        mean = means.get(d.id)
        if mean is None:
            mean = means[d.id] = _vote_mean(d, by_id[d.id], new)
        new[node.id] = _read_through(reader, d, mean, table)
    return VoteRewrite(new[root.id], tuple(reasons), tuple(checks))


def confirmed(rewrite: VoteRewrite) -> bool:
    """Whether each table of an unchecked rewrite holds at every (w, a, b) of its difference:
    then the rewrite is the checked one (the same readers, the same tables: the first (w, a, b)
    of each vote mean is where a checked table takes its value, and a reader refused at one of
    them is refused at all of them)."""
    points: dict[int, list[tuple[Any, Any, tuple[int, int, int]]] | None] = {}
    for check in rewrite.unchecked:
        if check.d.id not in points:
            points[check.d.id] = _points(check.d, check.combos)
        found = points[check.d.id]
        if found is None:
            return False
        table = _table(check.fn, found)
        if isinstance(table, str) or _keys(table) != _keys(check.table):
            return False
    return True


def _keys(table: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """A table's entries, its values by `atom_key` (1 and True apart), in its order."""
    return [(k, atom_key(v)) for k, v in table.items()]


def _firsts(combos: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The first (w, a, b) of each vote mean (a - b)/w, in `combos`' order."""
    firsts: dict[Any, tuple[int, int, int]] = {}
    for w, a, b in combos:
        firsts.setdefault(atom_key(_mean(a - b, w)), (w, a, b))
    return list(firsts.values())


def _read_through(
    reader: sops.Node, d: sops.MapSOp, mean: sops.AggregateSOp, table: dict[Any, Any]
) -> sops.Node:
    """`reader` as the map `table` of the vote mean (a select: of that map against True)."""
    named = isinstance(reader, sops.MapSOp)
    holds = sops.MapSOp(
        fn=_Table(table),
        inputs=(mean,),
        text=reader.text if isinstance(reader, sops.MapSOp) else reader.label,
        span=reader.span,
        name=reader.name if isinstance(reader, sops.MapSOp) else None,
        note=f"{_shown(reader)} (a table over the mean of {mean.sop.text})",
    )
    if named or not isinstance(reader, sops.Select):
        return holds
    # a select of the difference against a constant: `select(holds, True, ==)`, which selects
    # the same keys (compiler.constant_sides)
    true = sops.ConstSOp(value=True, span=reader.span)
    sides = (holds, true) if reader.keys is d else (true, holds)
    return dataclasses.replace(
        reader, keys=sides[0], queries=sides[1], comparison=sops.Comparison.EQ
    )


def _past_limit(d: sops.MapSOp, widths: list[int], both: bool) -> Diagnostic:
    count = _count(widths, both)
    return Diagnostic(
        f"{_NOT_READ}: its selector's widths make {count:,} (width, count, count) combinations to "
        f"check, past the limit of {MAX_COMBINATIONS:,}",
        d.span,
        hint="a smaller maximum length, or the difference written as one mean over its selector "
        "(of the two values' difference per key)",
        severity="note",
    )


def _no_function(d: sops.MapSOp, reader: sops.Node, why: str) -> Diagnostic:
    """(a/w - b/w is not (a - b)/w in float64: two (a, b) of one vote mean may read apart)"""
    return Diagnostic(
        f"{_NOT_READ}: {reader.label} is not a function of it: {why}", d.span, severity="note"
    )


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
    if _count(widths, both) > MAX_COMBINATIONS:
        return None
    return [
        (w, a, b) for w in widths for a in range(w + 1) for b in range(w + 1) if both or a + b <= w
    ]


def _count(widths: list[int], both: bool) -> int:
    """How many (w, a, b) `_combinations` lists."""
    return sum((w + 1) ** 2 if both else (w + 1) * (w + 2) // 2 for w in widths)


def _points(
    d: sops.MapSOp, combos: list[tuple[int, int, int]]
) -> list[tuple[Any, Any, tuple[int, int, int]]] | None:
    """(the vote mean's key, the difference's value, (w, a, b)) at every (w, a, b); None where the
    difference raises or gives a value the interpreter refuses at one."""
    out = []
    for w, a, b in combos:
        try:
            value = d.fn(_mean(a, w), _mean(b, w))
        except Exception:  # noqa: BLE001 (the program fails there: the rewrite is not made)
            return None
        if sops.type_of_value(value) is None:
            return None
        out.append((atom_key(_mean(a - b, w)), value, (w, a, b)))
    return out


def _table(fn: Any, points: list[tuple[Any, Any, tuple[int, int, int]]]) -> dict[Any, Any] | str:
    """The reader's value per vote mean, or why it is not a function of it."""
    table: dict[Any, tuple[Any, Any, tuple[int, int, int]]] = {}
    read: dict[Any, tuple[Any, Any]] = {}  # the difference's value's key -> the reader's
    for mean, d, at in points:
        d_key = atom_key(d)
        found = read.get(d_key)
        if found is None:
            try:
                value = fn(d)
            except Exception as err:  # noqa: BLE001 (the program fails there: no rewrite)
                return f"it raises on the difference {d!r} ({type(err).__name__})"
            if sops.type_of_value(value) is None or value != value:
                return f"it gives {value!r} on the difference {d!r}"
            found = read[d_key] = (atom_key(value), value)
        first = table.setdefault(mean, (*found, at))
        if first[0] != found[0]:
            return (
                f"it gives {first[1]!r} at {_at(first[2])} and {found[1]!r} at {_at(at)}, one "
                "mean of votes"
            )
    return {k: v for k, (_, v, _) in table.items()}


def _at(at: tuple[int, int, int]) -> str:
    w, a, b = at
    return f"{a} and {b} of {w} keys"


def _vote_mean(
    d: sops.MapSOp, found: tuple[sops.Selector, sops.SOp, sops.SOp], new: dict[int, sops.Node]
) -> sops.AggregateSOp:
    select, x1, x2 = found
    first, second = new[x1.id], new[x2.id]
    text = f"{_shown(x1)} - {_shown(x2)}"
    votes = sops.MapSOp(fn=_Vote(), inputs=(first, second), text=text, span=d.span, note=text)  # type: ignore[arg-type]
    note = f"the mean of {text} (for {_shown(d)})"
    return sops.AggregateSOp(
        selector=new[select.id],
        sop=votes,
        default=0,
        span=d.span,
        note=note,  # type: ignore[arg-type]
    )


def _shown(node: sops.Node) -> str:
    """`node` as a message names it: its name, else short program text (rasp.written_text: a
    tracr library call's s-ops share the call's text, which read as the whole program), the map
    giving a mean 0/1 for its bools read through (`bools_open`, not that map's span)."""
    while (
        isinstance(node, sops.MapSOp)
        and node.name is None
        and node.text == AS_NUMBER_TEXT
        and len(node.inputs) == 1
    ):
        node = node.inputs[0]
    return label(node)


def _token_local(order: list[sops.Node]) -> set[int]:
    """Maps of the tokens (and constants) alone."""
    out: set[int] = set()
    for node in order:
        if isinstance(node, (sops.TokensSOp, sops.ConstSOp)) or (
            isinstance(node, sops.MapSOp) and node.inputs and all(c.id in out for c in node.inputs)
        ):
            out.add(node.id)
    return out
