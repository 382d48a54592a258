"""A select with a Python predicate (tracr's `Select(keys, queries, lambda k, q: ...)`), rebuilt from
the selects the compiler reads: comparisons of the keys and queries or of maps of them.

Given every value the keys and the queries can take, the predicate is a finite table. The first of
these forms that reproduces the table exactly is used (each is checked cell by cell):

- constant: every cell the same (`select(0, 0, ==)` or `select(0, 1, ==)`);
- a comparison of the values themselves (`lambda k, q: k < q` is `select(keys, queries, <)`);
- an equivalence: keys and queries fall into classes and a query selects exactly the keys of its
  class (`q == k + 1`, `k % 3 == q % 3`): `==` between the class labels, `!=` for its complement;
- a threshold (the queries' key sets form a chain): `<=` between a key's level and a query's rank;
- an interval: in sorted query order each key is selected by a contiguous run (`abs(k - q) <= 1`):
  two threshold selects on the query joined by `and`;
- thresholds within classes: keys and queries fall into classes, a query selects only keys of its
  own class, and within each class the queries' key sets form a chain (`k[0] == q[0] and k[1] <=
  q[1]` over (token, index) pairs: the same token, at or before the query): `==` between the
  class labels and `<=` between a key's level and a query's rank, joined by `and`;
- anything else: one `!=` select per distinct query row that misses keys ("not this row's query
  with a key it misses"), joined by `and`; the queries are read once, as their row's number.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom, value_key
from rasp import sops
from rasp.errors import RaspError, RaspRuntimeError, Span

MAX_TABLE_CELLS = 4_000_000  # predicate calls one select may need (keys x queries)

_COMPARISONS = (
    sops.Comparison.EQ,
    sops.Comparison.NEQ,
    sops.Comparison.LT,
    sops.Comparison.LEQ,
    sops.Comparison.GT,
    sops.Comparison.GEQ,
)


class LookupFn:
    """A map given as a table over the values its input can take (keyed by `value_key`)."""

    def __init__(self, table: dict[tuple[str, Atom], Atom], what: str) -> None:
        self.table = table
        self.what = what

    def __call__(self, value: Atom) -> Atom:
        try:
            return self.table[value_key(value)]
        except KeyError:
            raise RaspRuntimeError(
                f"{value!r} is not a value the {self.what} were compiled for"
            ) from None


def table_of(
    fn: Callable[[Any, Any], Any], keys: Sequence[Atom], queries: Sequence[Atom]
) -> list[list[bool]]:
    """[query][key] of the predicate; a cell where it raises is False (the interpreter raises there,
    so no model output is promised)."""
    out = []
    for q in queries:
        row = []
        for k in keys:
            try:
                row.append(bool(fn(k, q)))
            except Exception:  # noqa: BLE001 (a program's predicate may raise anything)
                row.append(False)
        out.append(row)
    return out


def fails_everywhere(
    fn: Callable[[Any, Any], Any], keys: Sequence[Atom], queries: Sequence[Atom]
) -> tuple[Atom, Atom, str] | None:
    """(key, query, what went wrong) of the first pair where the predicate raises, if it raises on
    every pair (a lambda of one argument): every input has a position, so the interpreter fails
    on each and no model has an output to give. None where some pair gives a value."""
    first = None
    for q in queries:
        for k in keys:
            try:
                fn(k, q)
            except RaspError as exc:
                first = first or (k, q, exc.message)
            except Exception as exc:  # noqa: BLE001 (a program's predicate may raise anything)
                first = first or (k, q, f"{type(exc).__name__}: {exc}")
            else:
                return None
    return first


class Rebuild:
    """Builds the replacement of one predicate select over `keys` and `queries` (s-op nodes)."""

    def __init__(
        self,
        keys: sops.SOp,
        queries: sops.SOp,
        key_values: Sequence[Atom],
        query_values: Sequence[Atom],
        table: list[list[bool]],
        *,
        name: str | None,
        span: Span | None,
    ) -> None:
        self.keys, self.queries = keys, queries
        self.kv, self.qv = list(key_values), list(query_values)
        self.t = table
        self.name, self.span = name, span

    def selector(self) -> sops.Selector:
        for build in (
            self._constant,
            self._comparison,
            self._equivalence,
            self._threshold,
            self._interval,
            self._class_thresholds,
        ):
            found = build()
            if found is not None:
                return found
        return self._conjunction()

    # -- forms ------------------------------------------------------------------------------------

    def _constant(self) -> sops.Selector | None:
        cells = {c for row in self.t for c in row}
        if len(cells) > 1:
            return None
        hit = cells != {False}
        zero, other = sops.ConstSOp(value=0), sops.ConstSOp(value=0 if hit else 1)
        return self._select(zero, other, sops.Comparison.EQ)

    def _comparison(self) -> sops.Selector | None:
        for cmp in _COMPARISONS:
            try:
                same = all(
                    cmp.apply(k, q) == self.t[i][j]
                    for i, q in enumerate(self.qv)
                    for j, k in enumerate(self.kv)
                )
            except TypeError:  # e.g. ordering a string against a number
                continue
            if same:
                return self._select(self.keys, self.queries, cmp)
        return None

    def _equivalence(self) -> sops.Selector | None:
        for negate, cmp in ((False, sops.Comparison.EQ), (True, sops.Comparison.NEQ)):
            t = [[c != negate for c in row] for row in self.t]
            labels = _class_labels(t)
            if labels is None:
                continue
            key_label, query_label = labels
            return self._labelled(key_label, query_label, cmp)
        return None

    def _threshold(self) -> sops.Selector | None:
        rows = sorted({frozenset(j for j, c in enumerate(row) if c) for row in self.t}, key=len)
        if any(not a <= b for a, b in itertools.pairwise(rows)):
            return None
        rank = {row: r + 1 for r, row in enumerate(rows)}
        level = [
            next((r + 1 for r, row in enumerate(rows) if j in row), len(rows) + 1)
            for j in range(len(self.kv))
        ]
        query_rank = [rank[frozenset(j for j, c in enumerate(row) if c)] for row in self.t]
        key_map = self._map(self.keys, self.kv, level, "key")
        query_map = self._map(self.queries, self.qv, query_rank, "query")
        return self._select(key_map, query_map, sops.Comparison.LEQ)

    def _interval(self) -> sops.Selector | None:
        """Each key is selected by a contiguous run of queries in sorted query order:
        `low(key) <= query_rank <= high(key)`, two threshold selects on the query itself."""
        try:
            order = sorted(range(len(self.qv)), key=lambda i: self.qv[i])  # type: ignore[arg-type,return-value]
        except TypeError:
            return None
        rank = {i: r for r, i in enumerate(order)}
        lo, hi = [], []
        for j in range(len(self.kv)):
            ranks = sorted(rank[i] for i in range(len(self.qv)) if self.t[i][j])
            if ranks and ranks[-1] - ranks[0] + 1 != len(ranks):
                return None
            lo.append(ranks[0] if ranks else 1)
            hi.append(ranks[-1] if ranks else 0)
        query_rank = self._map(
            self.queries, self.qv, [rank[i] for i in range(len(self.qv))], "query"
        )
        low = self._map(self.keys, self.kv, lo, "key_low")
        high = self._map(self.keys, self.kv, hi, "key_high")
        above = sops.Select(
            keys=low, queries=query_rank, comparison=sops.Comparison.LEQ, span=self.span
        )
        below = sops.Select(
            keys=high, queries=query_rank, comparison=sops.Comparison.GEQ, span=self.span
        )
        return sops.SelectAnd(left=above, right=below, span=self.span, name=self.name)

    def _class_thresholds(self) -> sops.Selector | None:
        """`class(k) == class(q) and level(k) <= rank(q)`, where the classes are the connected
        blocks of the table and each block is a threshold (its rows a chain of key sets)."""
        found = _blocked_chains(self.t)
        if found is None:
            return None
        key_class, key_level, query_class, query_rank = found
        same = self._select(
            self._map(self.keys, self.kv, key_class, "key_class"),
            self._map(self.queries, self.qv, query_class, "query_class"),
            sops.Comparison.EQ,
        )
        below = self._select(
            self._map(self.keys, self.kv, key_level, "key_level"),
            self._map(self.queries, self.qv, query_rank, "query_rank"),
            sops.Comparison.LEQ,
        )
        same.name = below.name = None
        return sops.SelectAnd(left=same, right=below, span=self.span, name=self.name)

    def _conjunction(self) -> sops.Selector:
        """Any table: number the distinct query rows that miss some keys; for each such row r one
        atom `key_r != query_row`, where key_r is r for the keys row r misses (else -1). A query
        selects the keys no atom excludes. The queries are read once (their row number) and a
        conjunction is what the compiler's heads add up exactly (one head, whatever its size)."""
        row_of: dict[tuple[bool, ...], int] = {}
        for row in self.t:
            if not all(row):
                row_of.setdefault(tuple(row), len(row_of))
        query_row = [row_of.get(tuple(row), -2) for row in self.t]
        queries = self._map(self.queries, self.qv, query_row, "query")
        atoms: list[sops.Selector] = []
        for row, r in row_of.items():
            missed = [-1 if c else r for c in row]
            atoms.append(
                sops.Select(
                    keys=self._map(self.keys, self.kv, missed, f"key{r}"),
                    queries=queries,
                    comparison=sops.Comparison.NEQ,
                    span=self.span,
                )
            )
        out = atoms[0]
        for atom in atoms[1:]:
            out = sops.SelectAnd(left=out, right=atom, span=self.span)
        out.name = self.name
        return out

    # -- helpers ----------------------------------------------------------------------------------

    def _labelled(
        self, key_label: list[int | None], query_label: list[int | None], cmp: sops.Comparison
    ) -> sops.Selector:
        """`cmp` between class labels: a key's label is its class (None: no query selects it),
        a query's the class it selects (None: none). The values themselves serve as labels when
        each class has one key (or one query) and no two values are equal numbers."""
        if _one_per_class(key_label) and _distinct(self.kv):
            label_value = {lab: self.kv[j] for j, lab in enumerate(key_label) if lab is not None}
            fresh = _fresh(self.kv)
            qmap = [label_value[lab] if lab is not None else fresh for lab in query_label]
            return self._select(self.keys, self._map(self.queries, self.qv, qmap, "query"), cmp)
        if _one_per_class(query_label) and _distinct(self.qv):
            label_value = {lab: self.qv[i] for i, lab in enumerate(query_label) if lab is not None}
            fresh = _fresh(self.qv)
            kmap = [label_value[lab] if lab is not None else fresh for lab in key_label]
            return self._select(self._map(self.keys, self.kv, kmap, "key"), self.queries, cmp)
        kmap = [lab if lab is not None else -1 for lab in key_label]
        qmap = [lab if lab is not None else -2 for lab in query_label]
        key_map = self._map(self.keys, self.kv, kmap, "key")
        return self._select(key_map, self._map(self.queries, self.qv, qmap, "query"), cmp)

    def _map(self, node: sops.SOp, values: list[Atom], outs: list[Any], role: str) -> sops.SOp:
        if all(value_key(v) == value_key(o) for v, o in zip(values, outs, strict=True)):
            return node  # the identity
        table = {value_key(v): o for v, o in zip(values, outs, strict=True)}
        what = "keys" if role.startswith("key") else "queries"
        name = f"{self.name}_{role}" if self.name else None
        return sops.MapSOp(
            fn=LookupFn(table, what),
            loose=True,
            inputs=(node,),
            text=f"{role} classes",
            span=self.span,
            name=name,
        )

    def _select(self, keys: sops.SOp, queries: sops.SOp, cmp: sops.Comparison) -> sops.Select:
        return sops.Select(
            keys=keys, queries=queries, comparison=cmp, span=self.span, name=self.name
        )


def _class_labels(t: list[list[bool]]) -> tuple[list[int | None], list[int | None]] | None:
    """Labels when `t` is a disjoint union of complete blocks (each key and each query in at most
    one block, a query selecting exactly the keys of its block); None otherwise."""
    rows: dict[tuple[bool, ...], int] = {}
    query_label: list[int | None] = []
    for row in t:
        if not any(row):
            query_label.append(None)
            continue
        query_label.append(rows.setdefault(tuple(row), len(rows)))
    n_keys = len(t[0]) if t else 0
    key_label: list[int | None] = [None] * n_keys
    for row, label in rows.items():
        for j, hit in enumerate(row):
            if hit:
                if key_label[j] is not None:
                    return None  # a key selected by two different rows: blocks overlap
                key_label[j] = label
    return key_label, query_label


def _blocked_chains(
    t: list[list[bool]],
) -> tuple[list[int], list[int], list[int], list[int]] | None:
    """(key class, key level, query class, query rank) with t[i][j] exactly when key j's class is
    query i's and its level is at most the query's rank; None where the table has no such form.
    The classes are the connected blocks of selected cells; a key no query selects gets class
    -1 and a query that selects nothing -2, so `==` excludes them."""
    n_q, n_k = len(t), len(t[0]) if t else 0
    parent = list(range(n_q + n_k))  # union-find: queries 0..n_q-1, then keys

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, row in enumerate(t):
        for j, hit in enumerate(row):
            if hit:
                parent[find(i)] = find(n_q + j)
    query_rows = [frozenset(j for j, hit in enumerate(row) if hit) for row in t]
    rows: dict[int, list[frozenset[int]]] = {}  # block -> its distinct query rows
    for i, keys in enumerate(query_rows):
        if keys and keys not in rows.setdefault(find(i), []):
            rows[find(i)].append(keys)
    blocks = {b: r for r, b in enumerate(rows)}
    rank: dict[frozenset[int], int] = {}
    key_level = [0] * n_k
    for chain in rows.values():
        chain.sort(key=len)
        if any(not a <= b for a, b in itertools.pairwise(chain)):
            return None
        for r, keys in enumerate(chain, start=1):
            rank[keys] = r
            for j in keys:
                key_level[j] = key_level[j] or r  # the first (smallest) row holding the key
    key_class = [blocks.get(find(n_q + j), -1) for j in range(n_k)]
    query_class = [blocks[find(i)] if keys else -2 for i, keys in enumerate(query_rows)]
    query_rank = [rank.get(keys, 0) for keys in query_rows]
    rebuilt = all(
        t[i][j] == (key_class[j] == query_class[i] and key_level[j] <= query_rank[i])
        for i in range(n_q)
        for j in range(n_k)
    )
    return (key_class, key_level, query_class, query_rank) if rebuilt else None


def _one_per_class(labels: list[int | None]) -> bool:
    present = [lab for lab in labels if lab is not None]
    return len(present) == len(set(present))


def _distinct(values: list[Atom]) -> bool:
    """No two values equal as Python compares them (1, 1.0 and True are one value to `==`)."""
    try:
        return len(set(values)) == len(values)
    except TypeError:
        return False


def _fresh(values: list[Atom]) -> Atom:
    """A label equal to none of `values` (and of their kind, so comparisons stay cheap)."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == len(values):
        return int(min(numbers, default=0)) - 1
    taken = {v for v in values if isinstance(v, str)}
    label = "\x00none"
    while label in taken:
        label += "_"
    return label
