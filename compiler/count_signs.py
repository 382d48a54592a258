"""A map of two counts that depends on which is larger alone: a map of one mean of votes.

    na = selector_width(select(tokens, "a", ==));
    nb = selector_width(select(tokens, "b", ==));
    balanced = na == nb;

is a map of two widths. Compiled so, each width is decoded from its head's 1/(w + 1) by an MLP of
about 2N units before the comparison can read it, and the comparison takes a second layer: 26,317
parameters at N = 256, where the resolution of 1/(w + 1) still sufficed at N = 64 (541). The same
value is the sign of the mean over every key of its vote, +1 where "a", -1 where "b":

    votes = indicator(tokens == "a") - indicator(tokens == "b");
    balanced = aggregate(select(1, 1, ==), votes) == 0;

one head and a step at 0, whose nearest other means are +-1/n. The interpreter sums the votes
exactly (whole numbers in float64), so the mean is (na - nb) / n with the sign of na - nb: the map
reads its sign through a table of three values. Two counts within one positional scope (`select
(tokens, "(", ==) and select(indices, indices, <=)` against the same with ")": as many closing
brackets as opening ones so far) are the same over the scope; a scope that selects no key gives
the mean's default 0, where both counts are 0.

A map qualifies where it is computed through maps from exactly two such counts of key-only
predicates (the select's query a constant) within one scope (or none), and nothing else but
constants, and its value (and type) at every 0 <= c1, c2 <= max_len depends on the sign of
c1 - c2 alone: `na == nb`, `na > nb`, `not (na <= nb)`, `"tie" if na == nb else "a" if na > nb
else "b"`. The map is evaluated as the interpreter applies maps, at every such pair, also ones no
input reaches; where it raises at any, or there are more pairs than a budget allows, it is left as
it is. Its steps that read one count are applied once per value of that count, only the lowest
steps that read both at every pair, and the steps above those once per class of pairs that give
them the same inputs (dyck1's `indicator(balance < 0)`: `-` at each pair, the rest once per
balance). As in `compiler.ratio_maps`, only maps read by something other than such maps are
rewritten (`not balanced` needs no rewrite of `balanced` when nothing else reads it), and only where
nothing else then reads the two counts: the mean replaces them. Where another s-op still reads them
(dyck2's depth, `n_opens - n_closes`, also pairs each closer with its opener), the mean would be
a head more beside them, and a larger value set for the maps over it to plan (dyck2 at N = 256
compiled in 8 s instead of 4).

`count_signs(order, max_len, is_division)` finds them; `compiler.fraction_means` writes them, as
part of the form whose counts are means (kept where proved and smaller).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler import vector_maps
from compiler.blocks import Atom, exact_key
from compiler.map_values import apply_map
from compiler.ratio_maps import count_parts, map_leaves, maps_under
from compiler.rewrite import positional_nodes
from rasp import sops
from rasp.operators import strict_key

# map applications over every pair of every candidate (about a second of Python)
MAX_EVALUATIONS = 2_000_000
# `_Plan._column_classes`' answer where compiler.vector_maps does not compute the steps
_LOOP: Any = object()


@dataclass(frozen=True)
class SignTable:
    """The map's value where the mean of votes is negative, zero and positive."""

    below: Atom
    equal: Atom
    above: Atom

    def __call__(self, mean: Any) -> Atom:
        if mean > 0:
            return self.above
        return self.below if mean < 0 else self.equal

    def structure(self) -> Hashable:
        """Equal for tables of equal values and types (compiler.dedupe merges their maps)."""
        return ("sign table", *(strict_key(v) for v in (self.below, self.equal, self.above)))


@dataclass(frozen=True)
class Votes:
    """A key's vote: 1 where the first count's predicate holds on it, minus 1 where the second's
    does (0 where both or neither). Called with the first count's keys and the second's (one
    argument where both read the same s-op)."""

    first: tuple[sops.Comparison, Any]
    second: tuple[sops.Comparison, Any]

    def __call__(self, *keys: Any) -> int:
        (op1, c1), (op2, c2) = self.first, self.second
        return int(bool(op1.apply(keys[0], c1))) - int(bool(op2.apply(keys[-1], c2)))

    def structure(self) -> Hashable:
        """Equal for the same two predicates (compiler.dedupe: one mean of votes for every map
        of the same two counts)."""
        (op1, c1), (op2, c2) = self.first, self.second
        return ("votes", op1, strict_key(c1), op2, strict_key(c2))


@dataclass(frozen=True)
class SignMap:
    """A map node that is `table(sign(c1 - c2))` for the counts of `first` and `second` (each a
    select with a constant query) within `scope` (None: over every key)."""

    first: sops.Select
    second: sops.Select
    scope: sops.Selector | None
    table: SignTable
    votes: Votes  # the predicates of `first` and `second` on their keys


def count_signs(
    order: Sequence[sops.Node], max_len: int, is_division: Callable[[sops.Node], bool]
) -> dict[int, SignMap]:
    """Per map node of `order` (children first, the root last) that is a function of the sign of
    the difference of two counts (module doc) and is read by something else than such maps: its
    rewrite. `is_division` tells the divisions another rewrite makes means."""
    positional, _ = positional_nodes(list(order))
    counted: dict[int, tuple[sops.Select, sops.Selector | None]] = {}
    for node in order:
        if isinstance(node, sops.SelectorWidthSOp):
            parts = count_parts(node.selector, positional)
            if parts is not None and isinstance(parts[0].queries, sops.ConstSOp):
                counted[node.id] = parts
    if len(counted) < 2:
        return {}
    # per node: the counts it is computed from through maps alone (None: it reads anything else)
    leaves: dict[int, frozenset[int] | None] = {}
    for node in order:
        leaves[node.id] = map_leaves(node, leaves, lambda n: n.id in counted, is_division)
    read_outside = {order[-1].id}
    for node in order:
        if not (isinstance(node, sops.MapSOp) and _candidate(leaves[node.id], counted)):
            read_outside.update(child.id for child in node.children())
    by_id = {node.id: node for node in order}
    pairs = {  # per candidate map, its two counts
        node.id: tuple(sorted(leaves[node.id]))  # type: ignore[arg-type]
        for node in order
        if isinstance(node, sops.MapSOp)
        and node.id in read_outside
        and _candidate(leaves[node.id], counted)
    }
    # only where nothing else still reads the counts; a pair whose table fails for one of its
    # maps keeps its counts, so none of its maps is rewritten
    still = _read(order[-1], set(pairs))
    out: dict[int, SignMap] = {}
    failed: set[tuple[int, ...]] = set()
    budget = MAX_EVALUATIONS
    for k, pair in pairs.items():
        if still.intersection(pair) or pair in failed:
            continue
        node = by_id[k]
        assert isinstance(node, sops.MapSOp)
        table, spent = _sign_table(maps_under(node), pair[0], pair[1], max_len, budget)
        budget -= spent
        if table is None:
            failed.add(pair)
            continue
        (s1, scope), (s2, _) = counted[pair[0]], counted[pair[1]]
        out[k] = SignMap(s1, s2, scope, table, Votes(_predicate(s1), _predicate(s2)))
    return {k: m for k, m in out.items() if pairs[k] not in failed}


def _read(root: sops.Node, rewritten: set[int]) -> set[int]:
    """The ids of the nodes the program still reads once the maps `rewritten` read the mean of
    votes instead of their counts."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        if node.id not in rewritten:
            stack.extend(node.children())
    return seen


def _predicate(select: sops.Select) -> tuple[sops.Comparison, Any]:
    """A select with a constant query as what it asks of each key."""
    assert isinstance(select.queries, sops.ConstSOp)  # (counted: key-only)
    return select.comparison, select.queries.value


def _candidate(
    found: frozenset[int] | None, counted: dict[int, tuple[sops.Select, sops.Selector | None]]
) -> bool:
    """Two counts within one scope (or both over every key)."""
    if found is None or len(found) != 2:
        return False
    a, b = (counted[k][1] for k in found)
    return (a is None and b is None) or (a is not None and b is not None and a.id == b.id)


# The maps as a computation of (c1, c2): per step its function and where each argument comes
# from, ("count", 0 or 1), ("step", k) or ("const", value).
Shape = tuple[tuple[Callable[..., Any], tuple[tuple[Any, ...], ...]], ...]

# Tables already computed, by the shape's key: the functions by their structure where they have
# one (as compiler.dedupe compares maps), so the form `prepare` writes again for the compile, with
# maps of its own made the same way, finds its table here.
_TABLES: dict[Hashable, SignTable | None] = {}
MAX_TABLES = 64


def _sign_table(
    steps: list[sops.MapSOp], first: int, second: int, max_len: int, allowance: int
) -> tuple[SignTable | None, int]:
    """The last step's value per sign of c1 - c2, where it has one (value and type) at every
    0 <= c1, c2 <= max_len and raises at none; else None. With the map applications it took:
    none where they would be more than `allowance` (then None too)."""
    where: dict[int, tuple[Any, ...]] = {first: ("count", 0), second: ("count", 1)}
    shape, keys = [], []
    for k, step in enumerate(steps):
        args = tuple(
            ("const", child.value) if isinstance(child, sops.ConstSOp) else where[child.id]
            for child in step.inputs
        )
        shape.append((step.fn, args))
        keys.append((_function_key(step.fn), tuple(_argument_key(a) for a in args)))
        where[step.id] = ("step", k)
    try:
        key: Hashable | None = (max_len, tuple(keys))
        hash(key)
    except TypeError:  # a function or constant with no key: computed each time
        key = None
    if key is not None and key in _TABLES:
        return _TABLES[key], 0
    plan = _Plan.of(tuple(shape))
    cost = (max_len + 1) ** 2 * max(1, len(plan.lowest)) + (max_len + 1) * len(shape)
    if cost > allowance:
        return None, 0
    table = plan.table(max_len)
    if key is not None:
        if len(_TABLES) >= MAX_TABLES:
            _TABLES.clear()
        _TABLES[key] = table
    return table, cost


def _function_key(fn: Callable[..., Any]) -> Hashable:
    structure = getattr(fn, "structure", None)
    how = structure() if callable(structure) else None
    return ("function", fn) if how is None else how


def _argument_key(argument: tuple[Any, ...]) -> Hashable:
    return ("const", strict_key(argument[1])) if argument[0] == "const" else argument


@dataclass(frozen=True)
class _Plan:
    """How a shape is evaluated at every pair without applying every step at each: the steps
    that read one count (or none) once per value of it; at each pair only the lowest steps that
    read both (`lowest`: their other inputs are steps of one count); the steps above those once
    per class of pairs that give them the same inputs (`frontier`: what they read, and the last
    step where it is not one of them). `balance = c1 - c2; indicator(balance < 0)` applies `-` at
    each pair and the rest once per balance."""

    shape: Shape
    sources: tuple[frozenset[int], ...]  # per step: the counts it reads (through steps)
    lowest: tuple[int, ...]
    frontier: tuple[tuple[Any, ...], ...]

    @staticmethod
    def of(shape: Shape) -> _Plan:
        sources: list[frozenset[int]] = []
        for _, args in shape:
            read: set[int] = set()
            for a in args:
                if a[0] == "count":
                    read.add(a[1])
                elif a[0] == "step":
                    read |= sources[a[1]]
            sources.append(frozenset(read))
        both = [len(s) == 2 for s in sources]
        upper = [
            both[k] and any(a[0] == "step" and both[a[1]] for a in args)
            for k, (_, args) in enumerate(shape)
        ]
        lowest = tuple(k for k in range(len(shape)) if both[k] and not upper[k])
        frontier = dict.fromkeys(
            a
            for k, (_, args) in enumerate(shape)
            if upper[k]
            for a in args
            if a[0] != "const" and not (a[0] == "step" and upper[a[1]])
        )
        if not upper[-1]:
            frontier[("step", len(shape) - 1)] = None
        return _Plan(shape, tuple(sources), lowest, tuple(frontier))

    def table(self, max_len: int) -> SignTable | None:
        counts = range(max_len + 1)
        one = self._per_count(counts)  # (step, its count's value) -> value
        if one is None:
            return None
        classes = self._column_classes(one, counts)
        if classes is None:
            return None
        if classes is _LOOP:
            classes = self._loop_classes(one, counts)
        if classes is None:
            return None
        known: dict[int, tuple[tuple[str, str], Atom]] = {}
        for pair, signs in classes.values():  # the steps above: once per class
            value = _evaluate(self.shape, pair)
            if value is None:
                return None
            typed = exact_key(value[0])
            for sign in signs:
                if known.setdefault(sign, (typed, value[0]))[0] != typed:
                    return None
        return SignTable(known[-1][1], known[0][1], known[1][1])

    def _column_classes(
        self, one: dict[tuple[int, int], Any], counts: range
    ) -> dict[Any, tuple[tuple[int, int], set[int]]] | None:
        """`_loop_classes`' classes, each first met at the same pair, from the lowest steps
        computed on columns at every pair at once (compiler.vector_maps: exactly Python's
        values); None where one raises, `_LOOP` where that module does not compute one or a key
        would not say which value it is (-0.0, NaN). dyck1 at N = 256: 66K pairs, 0.4 s one at
        a time."""
        pair_count = len(counts) ** 2
        c1 = np.repeat(np.arange(len(counts), dtype=np.int64), len(counts))  # c1, then c2
        c2 = np.tile(np.arange(len(counts), dtype=np.int64), len(counts))
        pairs = (c1, c2)
        done: dict[int, vector_maps.Column] = {}

        def column(argument: tuple[Any, ...]) -> vector_maps.Column | None:
            kind, what = argument[0], argument[1]
            if kind == "const":
                found = vector_maps.column([what])
                return None if found is None else vector_maps.broadcast(found, pair_count)
            if kind == "count":
                return vector_maps.column(pairs[what].tolist())
            if len(self.sources[what]) == 2:
                return done[what]
            if not self.sources[what]:
                found = vector_maps.column([one[what, 0]])
                return None if found is None else vector_maps.broadcast(found, pair_count)
            (count,) = self.sources[what]
            found = vector_maps.column([one[what, c] for c in counts])
            if found is None:
                return None
            at = pairs[count]
            return vector_maps.Column(found.num[at], found.kind[at], found.ok[at])

        for k in self.lowest:
            fn, args = self.shape[k]
            columns = [column(a) for a in args]
            if any(c is None for c in columns):
                return _LOOP
            got = vector_maps.apply_columns(fn, columns)  # type: ignore[arg-type]
            if got is None or not vector_maps.plain(got):
                return _LOOP
            if not got.ok.all():
                return None  # (the loop: a step raises at some pair)
            done[k] = got
        keys = []
        for argument in self.frontier:
            col = column(argument)
            if col is None or not vector_maps.plain(col):
                return _LOOP
            # a plain value's type and float64 bits name it, as its exact_key does
            keys += [np.asarray(col.kind, dtype=np.int64), np.asarray(col.num).view(np.int64)]
        if not keys:
            keys = [np.zeros(pair_count, dtype=np.int64)]
        rows = np.ascontiguousarray(np.stack(keys, axis=1))
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        signs = np.sign(c1 - c2)
        both = np.unique(inverse * 3 + signs + 1)  # each class's signs
        by_class: dict[int, set[int]] = {}
        for code in both.tolist():
            by_class.setdefault(code // 3, set()).add(code % 3 - 1)
        classes: dict[Any, tuple[tuple[int, int], set[int]]] = {}
        for cls in np.argsort(first, kind="stable").tolist():  # first met first, as the loop
            at = int(first[cls])
            classes[cls] = ((int(c1[at]), int(c2[at])), by_class[cls])
        return classes

    def _loop_classes(
        self, one: dict[tuple[int, int], Any], counts: range
    ) -> dict[Any, tuple[tuple[int, int], set[int]]] | None:
        """The pairs (c1, c2) grouped by what the steps above the lowest read (their first pair,
        and the signs of c1 - c2 among them), in the order first met; None where a step raises."""
        classes: dict[tuple[Any, ...], tuple[tuple[int, int], set[int]]] = {}
        # each argument's reader, made once: (N + 1)^2 pairs read them (66K at N = 256)
        lowest = [
            (k, self.shape[k][0], [self._reader(a, one, counts) for a in self.shape[k][1]])
            for k in self.lowest
        ]
        frontier = [self._reader(a, one, counts) for a in self.frontier]
        for c1 in counts:
            for c2 in counts:
                pair = (c1, c2)
                done: dict[int, Any] = {}
                for k, fn, readers in lowest:
                    found = _apply(fn, [read(pair, done) for read in readers])
                    if found is None:
                        return None
                    done[k] = found[0]
                key = tuple([exact_key(read(pair, done)) for read in frontier])
                classes.setdefault(key, (pair, set()))[1].add((c1 > c2) - (c1 < c2))
        return classes

    def _per_count(self, counts: range) -> dict[tuple[int, int], Any] | None:
        """The steps that read one count (or none) at each of its values (a step of none at 0);
        None where one raises."""
        one: dict[tuple[int, int], Any] = {}
        for k, (fn, args) in enumerate(self.shape):
            if len(self.sources[k]) == 2:
                continue
            for c in counts if self.sources[k] else (0,):
                found = _apply(fn, [self._read(a, (c, c), one, {}) for a in args])
                if found is None:
                    return None
                one[k, c] = found[0]
        return one

    def _reader(
        self, argument: tuple[Any, ...], one: dict[tuple[int, int], Any], counts: range
    ) -> Callable[[tuple[int, int], dict[int, Any]], Any]:
        """How an argument is read at a pair (with the steps of both counts evaluated at it,
        `done`): a count, a constant, such a step, or a step of one count (or none) looked up in
        `one`."""
        kind, what = argument[0], argument[1]
        if kind == "const":
            return lambda pair, done: what
        if kind == "count":
            return lambda pair, done: pair[what]
        if len(self.sources[what]) == 2:  # evaluated at the pair, before it is read
            return lambda pair, done: done[what]
        if not self.sources[what]:
            value = one[what, 0]
            return lambda pair, done: value
        (count,) = self.sources[what]
        column = [one[what, c] for c in counts]
        return lambda pair, done: column[pair[count]]

    def _read(
        self,
        argument: tuple[Any, ...],
        pair: tuple[int, int],
        one: dict[tuple[int, int], Any],
        done: dict[int, Any],
    ) -> Any:
        """An argument's value at `pair`: a count, a constant, a step of both counts evaluated
        at the pair (`done`), or a step of one count (or none) looked up in `one`."""
        kind, what = argument[0], argument[1]
        if kind == "const":
            return what
        if kind == "count":
            return pair[what]
        if what in done:
            return done[what]
        read = self.sources[what]
        return one[what, pair[next(iter(read))] if read else 0]


def _apply(fn: Callable[..., Any], values: list[Any]) -> tuple[Atom] | None:
    """(fn's value,), applied as the interpreter applies maps; None where it raises or gives a
    value no sequence holds."""
    try:
        ok, value = apply_map(fn, values)
    except Exception:  # noqa: BLE001 (a map the interpreter would not survive either)
        return None
    return (value,) if ok else None


def _evaluate(shape: Shape, counts: tuple[int, int]) -> tuple[Atom] | None:
    """(the last step's value,) at the counts, each step applied as the interpreter applies
    maps; None where one raises or gives a value no sequence holds."""
    done: list[Any] = []
    for fn, args in shape:
        values = [
            counts[a[1]] if a[0] == "count" else done[a[1]] if a[0] == "step" else a[1]
            for a in args
        ]
        found = _apply(fn, values)
        if found is None:
            return None
        done.append(found[0])
    return (done[-1],)
