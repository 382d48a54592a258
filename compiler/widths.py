"""selector_width (and length): one head writing 1/(w+1), or a signed sum of conjunction widths.

- `length` and the width of a conjunction are one head writing `1/(w+1)` into `<name>.frac`: BOS
  scores exactly like a selected key and carries the value 1 (`frac`).
- The width of a selector that is not a conjunction needs no joint reading: inclusion-exclusion,
  |A or B| = |A| + |B| - |A and B|, makes it a signed sum of conjunction widths (`parts`), one head
  each (all in one layer), each decoded to a number by its own step MLP (`width_sum`).
"""

from __future__ import annotations

import numpy as np

from compiler import attention, step_mlp
from compiler.blocks import (
    ALL_TRUE,
    EVERY_POSITION,
    TRUE,
    Atomic,
    Dim,
    Encoded,
    Encoding,
    Relation,
    mask_atom,
    mask_label,
    sort_values,
)
from compiler.graph import IRNode, Op
from compiler.plan_context import PlanContext
from compiler.plan_state import Built, Memo
from compiler.selectors import SelectorPlanner
from rasp.walks import Steps, first_visits, unwound

# Inclusion-exclusion turns selector_width of a disjunction into this many conjunction widths at most.
MAX_WIDTH_PARTS = 4
# (query value, key value) cells a contradiction check between atoms may tabulate
MAX_CONTRADICTION_CELLS = 4_000_000

SignedTerm = tuple[int, list[Atomic]]  # (+1 or -1 times a count, the conjunction's atoms)


class WidthPlanner:
    def __init__(
        self, ctx: PlanContext, built: Built, memo: Memo, selectors: SelectorPlanner
    ) -> None:
        self.ctx, self.built, self.memo, self.selectors = ctx, built, memo, selectors
        self._parts: dict[int, list[SignedTerm] | None] = {}
        self._tables: dict[tuple[int, int, str], np.ndarray] = {}
        self._conjunctions: dict[int, bool] = {}

    def reads_frac(self, index: int) -> bool:
        """length, and selector_width of a conjunction: one head writing 1/(w+1)."""
        node = self.ctx.graph[index]
        return node.op is Op.LENGTH or (
            node.op is Op.SELECTOR_WIDTH and self.parts(node.inputs[0]) is None
        )

    def frac(self, node: IRNode) -> Encoded:
        """The head writing 1/(w+1) (w = selector width, or the length) into `<name>.frac`."""
        key = ("frac", "length") if node.op is Op.LENGTH else ("frac", node.index)

        def make() -> Encoded:
            dim = Dim(f"{node.name}.frac")
            if node.op is Op.LENGTH:
                atoms, merge = [ALL_TRUE], ("sw", "all")
            else:
                atoms, merge = self.selectors.atoms(node.inputs[0]), ("sw", node.inputs[0])
            spec = attention.selector_width_head(atoms, dim, op=node.text, name=node.name)
            self.built.add_head(spec, merge)
            self.built.bounds[dim] = 1.0
            fracs = sort_values(1.0 / (v + 1) for v in self.ctx.values(node.index))
            return Encoded(dim.name, Encoding.NUMERICAL, fracs, number=((dim, 1.0),))

        return self.memo.once(key, node, make)

    def width_sum(self, node: IRNode) -> Encoded:
        """selector_width as a signed sum of conjunction widths, each decoded by its own step MLP."""
        parts = self.parts(node.inputs[0])
        assert parts is not None
        n_max = self.ctx.max_len
        widths = tuple(range(n_max + 1))
        terms: dict[Dim, float] = {}
        for k, (sign, atoms) in enumerate(parts):
            frac_dim, part_name = Dim(f"{node.name}.frac{k}"), f"{node.name}.part{k}"
            spec = attention.selector_width_head(
                atoms, frac_dim, op=f"{node.text} (term {k})", name=part_name
            )
            self.built.add_head(spec, ("sw-part", node.inputs[0], k))
            frac = Encoded(
                frac_dim.name,
                Encoding.NUMERICAL,
                sort_values(1.0 / (w + 1) for w in widths),
                number=((frac_dim, 1.0),),
            )
            part = Encoded.materialised_numerical(part_name, widths)
            self.built.bounds[frac_dim], self.built.bounds[Dim(part_name)] = 1.0, float(n_max)
            self.built.add_mlp(
                step_mlp.numeric_mlp(
                    frac,
                    [(1.0 / (w + 1), w) for w in widths],
                    part,
                    op=f"{node.text} (term {k})",
                    name=part_name,
                    x_error=self.ctx.frac_error(),
                    exact=self.built.exact,
                )
            )
            terms[Dim(part_name)] = terms.get(Dim(part_name), 0.0) + sign
        return Encoded(
            node.name,
            Encoding.NUMERICAL,
            self.ctx.values(node.index),
            number=tuple(terms.items()),
        )

    def parts(self, index: int) -> list[SignedTerm] | None:
        """Selector `index`'s width as signed conjunction widths; None for a conjunction (one
        head reads it) or when the sum would have more than MAX_WIDTH_PARTS terms."""
        if index not in self._parts:
            self._parts[index] = (
                None
                if self._is_conjunction(index)
                else self._simplified(self._expand(index), MAX_WIDTH_PARTS)
            )
        return self._parts[index]

    def _is_conjunction(self, index: int) -> bool:
        """A select, a negated select, or an AND of conjunctions. Walked without recursion and
        kept per node: `_expand` asks it at every node of a selector thousands deep."""
        if index not in self._conjunctions:
            g = self.ctx.graph
            known = self._conjunctions
            for i in first_visits(
                index,
                lambda i: g[i].inputs if g[i].op is Op.AND else (),
                lambda i: i,
                skip=known,
            ):
                node = g[i]
                if node.op is Op.AND:
                    known[i] = all(known[j] for j in node.inputs)
                else:
                    known[i] = node.op is Op.SELECT or (
                        node.op is Op.NOT and g[node.inputs[0]].op is Op.SELECT
                    )
        return self._conjunctions[index]

    def _expand(self, index: int) -> list[SignedTerm]:
        """The selector's width as signed conjunction widths, before `_simplified` (on a list
        in the recursion's order, rasp.walks.unwound: a deep selector)."""
        return unwound(self._expand_steps(index))

    def _expand_steps(self, index: int) -> Steps[list[SignedTerm]]:
        node = self.ctx.graph[index]
        if self._is_conjunction(index):
            return [(1, self.selectors.atoms(index))]
        if node.op is Op.NOT:
            inner = yield self._expand_steps(node.inputs[0])
            return [(1, [ALL_TRUE])] + [(-s, a) for s, a in inner]
        if node.op is Op.OR:
            # the other side adds no (query, key) pair: it has no terms of its own
            covering = self.selectors.covering(node)
            if covering is not None:
                return (yield self._expand_steps(covering))
        sides = []
        for i in node.inputs:
            sides.append((yield self._expand_steps(i)))
        left, right = sides
        both = [(s1 * s2, a1 + a2) for s1, a1 in left for s2, a2 in right]
        if node.op is Op.AND:
            return both
        return left + right + [(-s, a) for s, a in both]

    def _contradicts(self, atoms: list[Atomic]) -> bool:
        """Whether atoms about the same pair of s-ops hold together for no pair of their values
        (`key < query` and `key == query` when `==` is matched and `<` is a table): the term is
        empty, which merging tables over shared readings does not see."""
        by_pair: dict[tuple[int, int], list[Relation]] = {}
        for atom in atoms:
            if atom.relation is not None:
                r = atom.relation
                by_pair.setdefault((r.keys, r.queries), []).append(r)
        for (keys, queries), relations in by_pair.items():
            if len(relations) < 2:
                continue
            k_vals, q_vals = self.ctx.values(keys), self.ctx.values(queries)
            if len(k_vals) * len(q_vals) * len(relations) > MAX_CONTRADICTION_CELLS:
                continue
            holds = np.ones((len(q_vals), len(k_vals)), dtype=bool)
            for r in relations:
                holds &= self._table(r, q_vals, k_vals)
            if not holds.any():
                return True
        return False

    def _table(self, r: Relation, q_vals: tuple, k_vals: tuple) -> np.ndarray:
        key = (r.keys, r.queries, r.label)
        if key not in self._tables:
            self._tables[key] = np.array(
                [[bool(r.holds(k, q)) for k in k_vals] for q in q_vals], dtype=bool
            ).reshape(len(q_vals), len(k_vals))
        return self._tables[key]

    def _simplified(self, terms: list[SignedTerm], limit: int) -> list[SignedTerm] | None:
        """Atoms over the same readings merged (tables AND-ed), empty terms dropped, equal ones
        summed; None beyond `limit` terms."""
        out: dict[tuple, SignedTerm] = {}
        for sign, atoms in terms:
            if self._contradicts(atoms):
                continue  # selects nothing: width 0
            groups: dict[tuple[Encoded, Encoded], np.ndarray] = {}
            positions = EVERY_POSITION  # the masks' keys: an AND of masks keeps what all keep
            matches: list[Atomic] = []  # kept as they are (their columns are their own)
            for atom in atoms:
                positions = positions & atom.positions
                if atom.is_mask:
                    continue
                if atom.is_match:
                    if not any(atom is m for m in matches):
                        matches.append(atom)
                    continue
                pair = (atom.query, atom.key)
                groups[pair] = (
                    groups[pair] & atom.table if pair in groups else np.asarray(atom.table, bool)
                )
            if not positions or any(not table.any() for table in groups.values()):
                continue  # selects nothing: width 0
            merged = [
                Atomic(q, k, t) for (q, k), t in groups.items() if not (q is TRUE and k is TRUE)
            ]
            merged += matches
            if positions != EVERY_POSITION:
                merged.append(mask_atom(positions))
            ident = tuple(
                sorted(
                    (
                        a.query.name,
                        a.key.name,
                        hash(a.query),
                        hash(a.key),
                        *_table_key(a.table),
                        mask_label(a.positions),
                        a.is_match,
                    )
                    for a in merged
                )
            )
            previous = out.get(ident, (0, merged))[0]
            out[ident] = (previous + sign, merged or [ALL_TRUE])
        parts = [(s, a) for s, a in out.values() if s != 0]
        return parts if 0 < len(parts) <= limit else None


def _table_key(table: np.ndarray) -> tuple[tuple[int, ...], str, bytes]:
    """What tells a table apart from another: a bool one packed 8 cells a byte (each table's
    bytes were 196 MB for 14,000 x 14,000 tokens)."""
    if table.dtype == bool:
        return table.shape, "?", np.packbits(table).tobytes()
    return table.shape, table.dtype.str, table.tobytes()
