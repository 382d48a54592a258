"""Counted means: a map of a positional mean of 0/1 values that depends on the count alone becomes
a map of a `selector_width`.

The original RASP counts a prefix as `round((indices + 1) * aggregate(select(indices, indices,
<=), indicator(tokens == "(")))`. The mean of 0/1 values over the i+1 selected keys takes every
value k/(i+1), about N^2/2 of them, so the map over (indices, mean) is a step MLP with the index
one-hot as context: at N = 256 dyck1's has 2,302 hidden units reading a 256-wide one-hot, while
the count k itself has only N+1 values. A `selector_width` is one head writing 1/(w+1), and any
map of it a step MLP over that fraction with O(N) units (compiler/widths.py), so the count is
cheaper as

    Map(table, selector_width(S and select(x, 1, ==)))

which counts exactly the selected keys whose value is 1.

`count_means(root, vocab, max_len)` rewrites an `AggregateSOp` A = aggregate(S, x) when

- S depends only on positions (indices, length, constants and maps of them), so its width w(i, n)
  at every (index i, length n) is known: the interpreter computes it on each length (positional
  nodes read no token); w = 0 gives the default;
- x's values, from the compiler's value analysis, are numbers equal to 0 or 1 (0, 0.0, 1, 1.0; no
  bools, which RASP does not average), and x is not positional (else A is positional already);
  other whole numbers count their sum instead of the ones (below);
- the maps above A whose other inputs depend only on positions (the chain: `(indices + 1) * A`,
  then `round`) read a position somewhere (else the chain is a map of the mean alone, a step MLP
  over one number, and a count gains nothing), and A is read by nothing but that chain (a mean
  used as a value stays a mean: `frac_prevs`);
- every node of the chain read from outside it (its exits, M) is a function of c alone over every
  combination that can occur: each (i, n) with its width and the chain's positional inputs there,
  each count c of ones the values allow among w(i, n) keys, each value the interpreter's aggregate
  gives for it; and there no map of the chain raises and no node it removes mixes types (the
  interpreter would fail where the rewritten graph would not). Where an exit is not (it reads the
  position too: `round((indices + 1) * A) * 2 + indices`), the first step on every path from A that
  is a function of c alone (`round(...)`) is rewritten instead, when no step before it is read
  from outside, and the steps above it are kept, over it (`_cut`).

The aggregate's value for c ones among w keys is the interpreter's (`rasp.sops.Evaluator.
_aggregate`): the default for w = 0, the selected value itself for w = 1 (an int stays an int; 1
and 1.0 both tried when x can take both), `float(c / w)` for w >= 2 (a float64 sum of 0/1 values
is exact, then one correctly rounded division). Each exit is evaluated with the program's own
functions on those values, so its table holds the very values the chain computes (`_CountTable`:
ints stay ints). The exit keeps its name, text and span; the count takes the aggregate's span. The
result equals the input graph on every input over `vocab` of length 1..max_len (and fails where
it fails); a graph with nothing to rewrite is returned unchanged, the same object.

Values that are other whole numbers (a prefix sum of digits, a balance of -1/0/+1 steps) are the
same with the sum s of the selected values in place of the count c: the tables are over every sum
of w values (`weighted_counts.reachable_sums`), the mean for w >= 2 is `float(s / w)` (a float64
sum of whole numbers below 2^53 is exact, as for 0/1), and s is `weighted_counts.weighted_count`'s
widths per bit, where `weighted_counts.sum_fits` allows them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler import vector_maps
from compiler.blocks import Atom, exact_key
from compiler.map_values import apply_map
from compiler.rewrite import ValueFacts, positional_nodes, rebuilt
from compiler.weighted_counts import reachable_sums, sum_fits, weighted_count, whole_values
from rasp import sops
from rasp.errors import CompileError, RaspError

# Chain evaluations one aggregate may need ((position values, count, mean) combinations); beyond
# it the aggregate is left a mean (a chain reading both indices and length under a prefix select
# has ~N^3/6 of them).
MAX_CHAIN_EVALUATIONS = 1_000_000


def count_means(
    root: sops.Node, vocab: Sequence[Atom], max_len: int, *, weighted: bool = True
) -> sops.Node:
    """`root` with every counted mean rewritten (the module docstring); `root` itself if none is.
    `weighted=False`: means of whole numbers other than 0 and 1 are left means."""
    order = list(sops.walk(root))
    readers: dict[int, list[sops.Node]] = {n.id: [] for n in order}
    for node in order:
        for child in {c.id: c for c in node.children()}.values():
            readers[child.id].append(node)
    positional, moving = positional_nodes(order)
    chains = [
        chain
        for node in order
        if isinstance(node, sops.AggregateSOp)
        and (chain := _chain(node, order, readers, positional, moving, root)) is not None
    ]
    if not chains:
        return root
    try:  # x's values, from the compiler's own analysis
        facts = ValueFacts([chain.values for chain in chains], vocab, max_len)
    except CompileError:
        return root  # the compile itself reports it, in its own words
    places = _places(chains, max_len)
    tables = {}
    for chain in chains:
        groups = places.get(chain.mean.id)
        possible = facts.values(chain.values)
        ints = whole_values(possible)
        if groups is None or ints is None:
            continue
        if not set(ints) <= {0, 1} and not (weighted and sum_fits(ints, max_len)):
            continue
        if not set(ints) <= {0, 1} and max(w for w, _ in groups) <= 1:
            # a copy (one key at most): its values are x's, no mean to save, and its sum's
            # widths per bit cost a head each (tracr's shift of 0..10 with a number standing in
            # for None, InterpBench's insert zeros: 10,711 parameters in 2 layers, not 1,759)
            continue
        found = _count_tables(chain, possible, ints, groups)
        if found is not None:
            tables[chain.mean.id] = (chain, found, ints)
    if not tables:
        return root
    return _rewritten(order, root, list(tables.values()))


@dataclasses.dataclass(frozen=True)
class _CountTable:
    """A count's value under the original chain: the chain's own outputs, looked up by count."""

    table: tuple[tuple[int, Any], ...]
    _lookup: dict[int, Any] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_lookup", dict(self.table))

    def __call__(self, count: int) -> Any:
        if count not in self._lookup:
            # never at a count the program can reach (the table holds every one the analysis allows)
            raise ValueError(f"no value for the count {count}")
        return self._lookup[count]


@dataclasses.dataclass(frozen=True)
class _Chain:
    """An aggregate (`mean`), the maps above it that read only it and positional s-ops (`steps`,
    topological order), those read from outside (`exits`), and the positional s-ops they read."""

    mean: sops.AggregateSOp
    steps: tuple[sops.MapSOp, ...]
    exits: tuple[sops.MapSOp, ...]
    context: tuple[sops.SOp, ...]

    @property
    def values(self) -> sops.SOp:
        return self.mean.sop


def _chain(
    mean: sops.AggregateSOp,
    order: list[sops.Node],
    readers: dict[int, list[sops.Node]],
    positional: set[int],
    moving: set[int],
    root: sops.Node,
) -> _Chain | None:
    """The maps above `mean` whose other inputs are positional, when the rewrite may apply to
    them (positional selector, values not positional, a chain that reads a position, the mean read
    by the chain alone)."""
    if mean.bools_as_numbers or mean.selector.id not in positional or mean.sop.id in positional:
        return None
    inside = {mean.id}
    steps: list[sops.MapSOp] = []
    for node in order:
        if (
            isinstance(node, sops.MapSOp)
            and node.inputs
            and all(c.id in inside or c.id in positional for c in node.inputs)
            and any(c.id in inside for c in node.inputs)
        ):
            inside.add(node.id)
            steps.append(node)

    def read_outside(node: sops.Node) -> bool:
        return node is root or any(r.id not in inside for r in readers[node.id])

    if read_outside(mean):
        return None
    context = {c.id: c for s in steps for c in s.inputs if c.id not in inside}
    if not any(i in moving for i in context):
        return None  # a map of the mean alone: one number, no context to save
    return _Chain(
        mean,
        tuple(steps),
        tuple(s for s in steps if read_outside(s)),
        tuple(context.values()),
    )


# (w, the context's values): what a chain's value at one position depends on besides the count
_Place = tuple[int, tuple[Atom, ...]]


def _places(chains: list[_Chain], max_len: int) -> dict[int, list[_Place]]:
    """Per mean, the distinct (width, context values) at every (i, n), n <= max_len, computed by the
    interpreter itself (positional nodes read no token); a mean whose selector or context fails at
    some length (or mixes types there) is left out: its chain is not rewritten."""
    seen: dict[int, dict[tuple[Any, ...], _Place]] = {c.mean.id: {} for c in chains}
    for n in range(1, max_len + 1):
        evaluator = sops.Evaluator([None] * n, compiling=True)
        for chain in chains:
            places = seen.get(chain.mean.id)
            if places is None:
                continue
            try:
                widths = evaluator.matrix(chain.mean.selector).sum(axis=1)
                columns = [evaluator.seq(c).values for c in chain.context]
            except RaspError:
                del seen[chain.mean.id]
                continue
            for i in range(n):
                here = tuple(column[i] for column in columns)
                key = (int(widths[i]), *(exact_key(v) for v in here))
                if key not in places:
                    places[key] = (int(widths[i]), here)
    return {mean: list(places.values()) for mean, places in seen.items()}


def _count_tables(
    chain: _Chain, values: tuple[Atom, ...], ints: list[int], places: list[_Place]
) -> dict[int, dict[int, Any]] | None:
    """The steps to rewrite (by id), each with its value at each sum of the selected values
    (`ints`: the values, whole numbers; for 0 and 1 the sum is the count): the exits, when each is
    a function of the sum alone at every place, else the cut `_cut` finds; None where there is
    none or a map of the chain raises at some place."""
    per_count = max(sum(v == i for v in values) for i in ints)  # 1 and 1.0: both, for w = 1
    if sum(len(range(w * ints[0], w * ints[-1] + 1)) for w, _ in places) * per_count > (
        MAX_CHAIN_EVALUATIONS
    ):
        return None  # (before the sums: the range bounds every set of them)
    sums = reachable_sums(ints, max(w for w, _ in places))  # [w] -> the sums of w values

    def means(w: int, c: int) -> list[Atom]:
        if w == 0:
            return [chain.mean.default]
        if w == 1:
            return [v for v in values if v == c]
        return [float(c / w)]  # the interpreter's: an exact float64 sum, one rounded division

    columns = _column_tables(chain, places, sums, means)
    if columns is not _LOOP:
        return columns  # type: ignore[return-value]
    tables: list[dict[int, tuple[Any, Atom]]] = [{} for _ in chain.steps]  # sum -> value
    determined = [True] * len(chain.steps)  # the step's value is a function of the sum alone
    # a value per Python type (make_seq looks at the types alone): type() is cheaper than
    # type_of_value at each of N^2 / 2 values (dyck1 at N = 256: 70K evaluations per chain)
    types: list[dict[type, Atom]] = [{} for _ in (chain.mean, *chain.steps)]
    memo: dict[tuple[Any, ...], list[Any] | None] = {}
    for w, here in places:
        env = {c.id: v for c, v in zip(chain.context, here, strict=True)}  # `_evaluate` adds
        where = tuple(exact_key(v) for v in here)
        for c in sums[w].tolist():
            for mean in means(w, c):
                key = (where, exact_key(mean))
                out = memo.get(key, memo)
                if out is memo:
                    out = memo[key] = _evaluate(chain, env, mean)
                    for k, v in enumerate(out or ()):
                        types[k].setdefault(type(v), v)
                if out is None:
                    return None  # a map of the chain raises where the program can be
                for k, table in enumerate(tables):
                    if determined[k]:
                        value = out[1 + k]
                        typed = exact_key(value)
                        # else: more than the sum
                        determined[k] = table.setdefault(c, (typed, value))[0] == typed
    if not _one_sequence_type((chain.mean, *chain.steps), [list(t.values()) for t in types]):
        return None
    chosen = _cut(chain, determined)
    if chosen is None:
        return None
    return {chain.steps[k].id: {c: v for c, (_, v) in tables[k].items()} for k in chosen}


# `_column_tables`' answer where compiler.vector_maps does not compute the chain: the loop decides
_LOOP: Any = object()


def _column_tables(
    chain: _Chain,
    places: list[_Place],
    sums: list[np.ndarray],
    means: Callable[[int, int], list[Atom]],
) -> dict[int, dict[int, Any]] | None:
    """`_count_tables`' answer from the chain computed on columns (compiler.vector_maps: exactly
    Python's values) at every (place, sum, mean) at once, in the loop's order; `_LOOP` where that
    module does not compute a value or map of it, or a result's key would not say which it is
    (-0.0, NaN). dyck1 at N = 256: two chains of 33K rows each, 0.6 s one row at a time."""
    pieces, sums_of, place_of = [], [], []
    for p, (w, _) in enumerate(places):
        counts = sums[w]
        if w >= 2:  # float(c / w): int / int below 2^53 is the floats' correctly rounded quotient
            if (np.abs(counts) >= vector_maps.EXACT_INT).any():
                return _LOOP
            means_here = vector_maps.Column(
                counts / w,
                np.full(len(counts), vector_maps.FLOAT, dtype=np.int8),
                np.ones(len(counts), dtype=bool),
            )
            counted = counts
        else:
            listed = [(c, m) for c in counts.tolist() for m in means(w, c)]
            found = vector_maps.column([m for _, m in listed])
            if found is None:
                return _LOOP
            means_here, counted = found, np.array([c for c, _ in listed], dtype=np.int64)
        pieces.append(means_here)
        sums_of.append(counted)
        place_of.append(np.full(len(counted), p, dtype=np.int64))
    rows = np.concatenate(place_of)
    env = {
        chain.mean.id: vector_maps.Column(
            *(np.concatenate([getattr(c, f) for c in pieces]) for f in ("num", "kind", "ok"))
        )
    }
    for k, node in enumerate(chain.context):
        found = vector_maps.column([here[k] for _, here in places])
        if found is None:
            return _LOOP
        env[node.id] = vector_maps.Column(found.num[rows], found.kind[rows], found.ok[rows])
    outs = [env[chain.mean.id]]
    if not vector_maps.plain(outs[0]):
        return _LOOP  # (a -0.0 among the values: the loop keys it apart)
    for step in chain.steps:
        got = vector_maps.apply_columns(step.fn, [env[c.id] for c in step.inputs])
        if got is None or not vector_maps.plain(got):
            return _LOOP
        if not got.ok.all():
            return None  # a map of the chain raises where the program can be
        env[step.id] = got
        outs.append(got)
    types = []  # per node, a value of each Python type, in the order the loop meets them
    for col in outs:
        _, first = np.unique(col.kind, return_index=True)
        firsts = np.sort(first)
        types.append(vector_maps.atoms(vector_maps.Column(*(a[firsts] for a in _parts(col)))))
    if not _one_sequence_type((chain.mean, *chain.steps), types):  # type: ignore[arg-type]
        return None
    sums_all = np.concatenate(sums_of)
    determined, tables = [], []
    for col in outs[1:]:
        # a function of the sum: one (type, value) per sum (a plain result's bits name its value)
        bits = col.num.view(np.int64)
        order = np.lexsort((bits, col.kind, sums_all))
        s, kind, b = sums_all[order], col.kind[order], bits[order]
        same_sum = s[1:] == s[:-1]
        determined.append(not (same_sum & ((kind[1:] != kind[:-1]) | (b[1:] != b[:-1]))).any())
        keys, first = np.unique(sums_all, return_index=True)
        picked = vector_maps.atoms(vector_maps.Column(*(a[first] for a in _parts(col))))
        tables.append(dict(zip(keys.tolist(), picked or (), strict=True)))
    chosen = _cut(chain, determined)
    if chosen is None:
        return None
    return {chain.steps[k].id: tables[k] for k in chosen}


def _parts(col: vector_maps.Column) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return col.num, col.kind, col.ok


def _cut(chain: _Chain, determined: list[bool]) -> list[int] | None:
    """The steps (indices into `chain.steps`) to rewrite as maps of the sum: the exits where each
    is a function of the sum alone (the dycks' `round((indices + 1) * mean)`); else the first
    such step on every path from the mean, where no step before it on the path is read from
    outside (`round((indices + 1) * mean) * 2 + indices`: its `round(...)`, the rest kept over
    it). None: some path reaches outside without one."""
    exits = [chain.steps.index(e) for e in chain.exits]
    if all(determined[k] for k in exits):
        return exits
    raw = {chain.mean.id}  # nodes that read the mean through no rewritten step
    chosen = []
    for k, step in enumerate(chain.steps):
        if not any(c.id in raw for c in step.inputs):
            continue  # reads rewritten steps and positions only: kept, over them
        if determined[k]:
            chosen.append(k)
        elif k in exits:
            return None  # read from outside, and more than a function of the sum
        else:
            raw.add(step.id)
    return chosen or None


def _evaluate(chain: _Chain, env: dict[int, Atom], mean: Atom) -> list[Any] | None:
    """[mean, each step's value], computed as the interpreter does; None where a map raises.
    `env` holds the context's values; the mean's and the steps' are written into it (each step
    reads only the context and what this call wrote before it)."""
    env[chain.mean.id] = mean
    out: list[Any] = [mean]
    for step in chain.steps:
        try:
            ok, value = apply_map(step.fn, [env[c.id] for c in step.inputs])
        except Exception:  # noqa: BLE001 (a map the interpreter would not survive either)
            return None
        if not ok:
            return None
        env[step.id] = value
        out.append(value)
    return out


def _one_sequence_type(nodes: Sequence[sops.Node], values: Sequence[list[Atom]]) -> bool:
    """Whether every node's values may share one sequence (`rasp.sops.make_seq`'s rule): a node
    the rewrite removes must not have made the interpreter fail by mixing types."""
    for node, seen in zip(nodes, values, strict=True):
        sample = {sops.type_of_value(v): v for v in seen}  # make_seq looks at types only
        try:
            sops.make_seq(list(sample.values()), loose=node.loose)
        except RaspError:
            return False
    return True


def _rewritten(
    order: list[sops.Node],
    root: sops.Node,
    rewrites: list[tuple[_Chain, dict[int, dict[int, Any]], list[int]]],
) -> sops.Node:
    """The graph with each rewritten chain's chosen steps as maps of its count (children first);
    the rest of the graph rebuilt over them."""
    by_exit: dict[int, tuple[_Chain, dict[int, Any], list[int]]] = {
        step: (chain, table, ints)
        for chain, tables, ints in rewrites
        for step, table in tables.items()
    }
    counts: dict[int, sops.SOp] = {}  # per mean: its count (or sum), shared by its exits
    new: dict[int, sops.Node] = {}
    for node in order:
        if node.id not in by_exit:
            new[node.id] = rebuilt(node, new)
            continue
        chain, table, ints = by_exit[node.id]
        assert isinstance(node, sops.MapSOp)
        if chain.mean.id not in counts:
            named = next((n.name for n in chain.steps if n.id in by_exit and n.name), None)
            counts[chain.mean.id] = _count(chain, new, ints, named)
        new[node.id] = sops.MapSOp(
            fn=_CountTable(tuple(sorted(table.items()))),
            inputs=(counts[chain.mean.id],),
            text=node.text,
            span=node.span,
            name=node.name,
            loose=node.loose,
        )
    return new[root.id]


def _count(
    chain: _Chain, new: dict[int, sops.Node], ints: list[int], named: str | None
) -> sops.SOp:
    """selector_width(S and select(x, 1, ==)): the selected keys whose value is 1; for other
    whole numbers, their sum as widths per bit (`weighted_counts`)."""
    selector, values = new[chain.mean.selector.id], new[chain.values.id]
    assert isinstance(selector, sops.Selector) and isinstance(values, sops.SOp)
    if not set(ints) <= {0, 1}:
        return weighted_count(selector, values, ints, chain.mean.span, named)
    ones = sops.Select(keys=values, queries=sops.ConstSOp(value=1), comparison=sops.Comparison.EQ)
    return sops.SelectorWidthSOp(
        selector=sops.SelectAnd(left=selector, right=ones),
        span=chain.mean.span,
        name=f"{named}_count" if named else None,
    )
