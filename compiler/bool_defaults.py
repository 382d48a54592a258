"""A mean's bool default that only maps read, and read as the number it equals: the int instead.

`aggregate(sel, length, True)` gives True where nothing is selected; a model reads True as 1.0,
the same number as a selected 1 (`length` at N = 1), so no one-hot of the mean tells the two
apart, and a build that reads the mean as its one-hot (a table over it) is refused ("gives 1 and
True for inputs that are the same number"), where `aggregate(sel, length, 1)` is built. Where the
only readers are maps that give the same result, of the same type, for the bool and for its int
(`w + agg`: `w + True` and `w + 1` are the same int), the program computes the same values
everywhere with the default written as the int, and the two compile alike.

`bool_defaults(root, vocab, max_len)` rewrites an `AggregateSOp` (not tracr's `bools_as_numbers`
mean, not loose, no numpy default) whose default is a bool and whose averaged values are numbers (no bool: the
default is the only bool it gives), when it is not the output and every node that reads it is a
map whose function, called as the interpreter calls it, gives equal results (`value_key`: value and
type) with the default and with `int(default)` at every argument the aggregate fills, for every
combination of the values the compiler's value analysis lists for its other arguments (at most
MAX_CHECKED combinations per map; an exception on either side, or more combinations, keeps the
default). Then every reader gives the same value at every position of every input, and so does
every node above; the aggregate fails where it did (the default never raises, and the averaged
values are the same). A graph with nothing to rewrite is returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from compiler.blocks import Atom, is_number, value_key
from compiler.rewrite import ValueFacts, rebuilt
from rasp import sops
from rasp.errors import RaspError

# combinations of a reader's other arguments checked at most (beyond: the default is kept)
MAX_CHECKED = 100_000


def bool_defaults(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with every bool default that its maps read as its int written as the int (the
    module docstring); `root` itself where there is none."""
    order = list(sops.walk(root))
    readers: dict[int, list[sops.Node]] = {}
    for node in order:
        for child in dict.fromkeys(node.children()):
            readers.setdefault(child.id, []).append(node)
    candidates = [
        node
        for node in order
        if isinstance(node, sops.AggregateSOp)
        and type(node.default) is bool
        and not node.bools_as_numbers
        and not node.loose
        and node.numpy_default is None  # (tracr's numpy bool: what its readers are given)
        and node is not root
        and readers.get(node.id)
        and all(isinstance(r, sops.MapSOp) for r in readers[node.id])
    ]
    if not candidates or not vocab:
        return root
    wanted: list[sops.Node] = []
    for agg in candidates:
        wanted.append(agg.sop)
        wanted.extend(c for r in readers[agg.id] for c in r.children() if c is not agg)
    try:
        facts = ValueFacts(wanted, vocab, max_len)
    except RaspError:
        return root  # the compile reports it, in its own words
    found = {
        agg.id
        for agg in candidates
        if _numbers(facts.values(agg.sop))
        and all(_reads_alike(r, agg, facts) for r in readers[agg.id])  # type: ignore[arg-type]
    }
    if not found:
        return root
    new: dict[int, sops.Node] = {}
    for node in order:
        node_new = rebuilt(node, new)
        if node.id in found:
            assert isinstance(node_new, sops.AggregateSOp)
            node_new = dataclasses.replace(node_new, default=int(node_new.default))
        new[node.id] = node_new
    return new[root.id]


def _numbers(values: Sequence[Atom]) -> bool:
    return bool(values) and all(is_number(v) for v in values)


def _reads_alike(reader: sops.MapSOp, agg: sops.AggregateSOp, facts: ValueFacts) -> bool:
    """Whether `reader`'s function gives equal results (value and type) with `agg`'s default and
    with its int at the arguments `agg` fills, over every combination of the others' values."""
    others = list(dict.fromkeys(c for c in reader.inputs if c is not agg))
    columns = [facts.values(c) for c in others]
    count = 1
    for column in columns:
        count *= len(column)
        if count > MAX_CHECKED:
            return False
    default, number = agg.default, int(agg.default)
    for combo in itertools.product(*columns):
        given = dict(zip((c.id for c in others), combo, strict=True))
        try:
            as_bool = reader.fn(*(default if c is agg else given[c.id] for c in reader.inputs))
            as_int = reader.fn(*(number if c is agg else given[c.id] for c in reader.inputs))
        except Exception:  # noqa: BLE001 (any failure of the program's function: keep the bool)
            return False
        if value_key(as_bool) != value_key(as_int):
            return False
    return True
