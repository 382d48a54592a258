"""The values a map can take, for the value-set inference (`compiler.values`): its function over
its inputs' values, per (position, length) where every input has a relation (or where it is one
value at each position whatever its other inputs hold: `_decided_by_position`); a chain of maps
over the sources its inputs share; a comparison from its inputs' extremes, past the table limit; a
pick's means. `apply_map` is the interpreter's rule for one call (which results it accepts).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler import comparisons
from compiler.blocks import Atom, sort_values, value_key
from compiler.combos import MapTable, plain
from compiler.graph import Graph, IRNode, Op
from compiler.picks import Pick, pick_values, picked_values
from compiler.relations import (
    Known,
    Relation,
    combination_count,
    input_combinations,
)
from rasp import sops
from rasp.errors import Diagnostic, RaspError

MAX_MAP_COMBINATIONS = 8_000_000  # input combinations a map's table may enumerate
# combinations of shared sources a map's values are enumerated over, even where its inputs have fewer
SHARED_COMBINATIONS = 200_000
# map calls all shared-source enumerations of one analysis may spend together (combinations times
# the maps of each chain): the original RASP's rover program has 76 chains of ~12 ternaries over
# 44K combinations each, 20M calls and 40 s at N = 6, where past the budget each map is analysed
# from its inputs' values independently (a sound superset)
SHARED_CALLS = 2_000_000
# calls of a map's function spent looking for one value per position where an input has no relation
DECIDED_EVALUATIONS = 20_000

_FAILED = object()  # a chain's value where one of its maps raises
_UNSEEN = object()  # a chain step's arguments not met yet

# Exceptions the interpreter turns into a runtime error for a map (see `rasp.sops.Evaluator._map`).
_MAP_ERRORS = (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RaspError)


class MapValues:
    """The values of the maps of `graph`, from what the inference knows of their inputs (`known`,
    relations.Known); a problem goes into `known.problems`."""

    def __init__(self, graph: Graph, known: Known) -> None:
        self.g, self.known = graph, known
        self._sources: dict[int, tuple[int, ...]] = {}
        self._shared_calls_left = SHARED_CALLS
        # (sources, map, its value per combination of them) of the last chain_values
        self._last_chain: tuple[tuple[int, ...], int, dict[tuple[Any, ...], Any]] | None = None

    def map_values(self, node: IRNode) -> tuple[Relation | None, tuple[Atom, ...]]:
        assert node.fn is not None
        known = self.known
        if isinstance(node.fn, Pick):
            return self._pick_values(node, node.fn)
        shared = self.shared_sources(node)
        if shared is not None:
            return self.chain_values(node, shared)
        if len(set(node.inputs)) < len(node.inputs):
            # an s-op read twice holds one value at a position: the map over its values once,
            # not over every pair of them (`max(v0, v0)` of a mean by tokens past 60 s at N = 40)
            return self.map_values(_read_once(node))
        rels = [known.relation[i] for i in node.inputs]
        if len(known.pairs) <= MAX_MAP_COMBINATIONS and all(
            r is not None and all(len(v) == 1 for v in r.values()) for r in rels
        ):
            # one value per input and position (`length - indices`): at most one combination
            # per position, no count needed
            single = self._singleton_map(node.fn, rels)  # type: ignore[arg-type]
            if single is not None:
                return single, ()
        size = combination_count(node.inputs, known.relation, known.values)
        if size > MAX_MAP_COMBINATIONS:
            compared = self._compared(node)
            if compared is not None:  # `frac_a > frac_b` at N = 512: 44M pairs, never listed
                return compared
            independent = self._independent(node)
            if independent is not None:
                return independent
            known.problems.append(
                Diagnostic(
                    f"'{node.text}' would need a table of {size} input combinations "
                    f"(limit {MAX_MAP_COMBINATIONS})",
                    node.span,
                    "reduce the vocabulary or max length, or split the expression into maps of fewer s-ops",
                )
            )
            return None, ()
        if not all(known.relation[i] is not None for i in node.inputs):
            outs = [
                out
                for ok, out in (
                    apply_map(node.fn, a)
                    for a in input_combinations(node.inputs, known.relation, known.values)
                )
                if ok
            ]
            vals = sort_values(outs)
            fn = node.fn
            decided = self._decided_by_position(
                node.inputs,
                lambda combos: [o for ok, o in (apply_map(fn, a) for a in combos) if ok],
                vals,
            )
            return decided, vals
        fast = self._map_table(node)
        if fast is not None:
            return fast, ()
        cache: dict[tuple[int, ...], tuple[Atom, ...]] = {}
        # the function per distinct arguments: (ok, out, value_key(out))
        results: dict[tuple, tuple[bool, Atom, Any]] = {}
        keys: dict[int, tuple] = {}  # id(value set) -> its values' keys (the sets are interned)
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        for p in known.pairs:
            sets = [known.relation[i][p] for i in node.inputs]  # type: ignore[index]
            key = tuple(map(id, sets))
            if key not in cache:
                for s in sets:
                    if id(s) not in keys:
                        keys[id(s)] = tuple(map(value_key, s))
                # distinct outputs by key, the last of each kept (what sort_values keeps)
                outs: dict[Any, Atom] = {}
                combos = itertools.product(*(keys[id(s)] for s in sets))
                for arg_key, args in zip(combos, itertools.product(*sets)):
                    r = results.get(arg_key)
                    if r is None:
                        ok, out = apply_map(node.fn, args)
                        r = results[arg_key] = (ok, out, value_key(out) if ok else None)
                    if r[0]:
                        outs[r[2]] = r[1]
                cache[key] = known.intern(outs.values())
            rel[p] = cache[key]
        return rel, ()

    def _decided_by_position(
        self,
        inputs: Sequence[int],
        outputs: Callable[[Iterable[tuple[Atom, ...]]], list[Atom]],
        vals: tuple[Atom, ...],
    ) -> Relation | None:
        """A map that reads inputs without a relation (`tokens`) beside inputs with one, whose
        value at each (i, n) is nevertheless one value whatever the former hold (`length if
        tokens > "a" else length` is the length): that relation, one value per position, so that
        what reads it sees a positional s-op (`select(v1, v1, !=)` selects nothing). `outputs`
        gives the map's values at combinations of `inputs` (in that order); the unrelated inputs
        range over their whole sets, a superset of what meets at one position. None at the first
        position with two values or none, or past DECIDED_EVALUATIONS combinations."""
        known = self.known
        distinct = list(dict.fromkeys(inputs))
        related = [i for i in distinct if known.relation[i] is not None]
        free = [i for i in distinct if known.relation[i] is None]
        free_size = math.prod(len(known.values[i]) for i in free)
        if not related or free_size > DECIDED_EVALUATIONS:
            return None
        slots = related + free
        at = [slots.index(i) for i in inputs]  # combination slot of each argument
        wholes = [known.values[i] for i in free]
        keys = set(map(value_key, vals))
        budget = DECIDED_EVALUATIONS
        cache: dict[tuple[int, ...], tuple[Atom, ...] | None] = {}
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        for p in known.pairs:
            sets = [known.relation[i][p] for i in related]  # type: ignore[index]
            key = tuple(map(id, sets))
            if key not in cache:
                budget -= math.prod(map(len, sets)) * free_size
                if budget < 0:
                    return None
                combos = itertools.product(*sets, *wholes)
                outs = {value_key(v): v for v in outputs(tuple(c[k] for k in at) for c in combos)}
                one = len(outs) == 1 and next(iter(outs)) in keys
                cache[key] = known.intern(list(outs.values())) if one else None
            found = cache[key]
            if found is None:
                return None
            rel[p] = found
        return rel

    def _independent(self, node: IRNode) -> tuple[None, tuple[Atom, ...]] | None:
        """The map's values over the product of its inputs' whole sets, where the relations make
        more combinations than that product (a mean with a set per length beside `indices`, at
        N = 48: 16M per position, 60K in the product): a sound superset, without a relation.
        None where the product is past the limit too."""
        known = self.known
        distinct = list(dict.fromkeys(node.inputs))
        if math.prod(len(known.values[i]) for i in distinct) > MAX_MAP_COMBINATIONS:
            return None
        unrelated = [None] * len(known.relation)
        combos = input_combinations(node.inputs, unrelated, known.values)
        outs = [out for ok, out in (apply_map(node.fn, a) for a in combos) if ok]
        return None, sort_values(outs)

    def _compared(self, node: IRNode) -> tuple[Relation | None, tuple[Atom, ...]] | None:
        """A comparison of two numbers (compiler.comparisons) at each position, from the extremes
        of their sets there (where an input has no relation, over their whole sets, as the
        enumeration does), as map_values gives it; None where it is no such map."""
        op = comparisons.comparison_of(node.fn)
        known = self.known
        if op is None or len(node.inputs) != 2:
            return None
        if not all(comparisons.finite_numbers(known.values[i]) for i in node.inputs):
            return None
        whole = [known.intern(known.values[i]) for i in node.inputs]
        first, second = (known.relation[i] for i in node.inputs)
        if first is None or second is None:
            return None, known.intern(comparisons.outcomes(op, *whole) if all(whole) else [])
        cache: dict[tuple[int, int], tuple[Atom, ...]] = {}
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        for p, a in first.items():
            b = second[p]
            key = (id(a), id(b))
            if key not in cache:
                found = comparisons.outcomes(op, a, b) if a and b else []
                cache[key] = known.intern(found)
            rel[p] = cache[key]
        return rel, ()

    def _pick_values(self, node: IRNode, fn: Pick) -> tuple[Relation | None, tuple[Atom, ...]]:
        """A pick's values (compiler.picks): at each (i, n), the means of the query values there,
        never a product of the V means' sets."""
        known = self.known
        query, *means = node.inputs
        rels = [known.relation[m] for m in means]
        if any(r is None for r in rels):
            return None, picked_values(fn, known.values[query], [known.values[m] for m in means])
        query_rel = known.relation[query]
        every = known.intern(known.values[query])
        rel = pick_values(
            fn,
            known.pairs,
            (lambda p: every) if query_rel is None else query_rel.__getitem__,
            [r.__getitem__ for r in rels],  # type: ignore[union-attr]
            known.intern,
        )
        return rel, ()

    def sources(self, index: int) -> tuple[int, ...]:
        """The s-ops a chain of maps is computed from (constants need none): the non-map s-ops
        it reads, and the maps of the position alone it reads (`indices < 3`), which the chain
        meets as their one value per position rather than through the index."""
        if index not in self._sources:
            node = self.g[index]
            if node.op is Op.CONST:
                self._sources[index] = ()
            elif node.op is not Op.MAP:
                self._sources[index] = (index,)
            else:
                self._sources[index] = tuple(
                    dict.fromkeys(s for i in node.inputs for s in self._as_source(i))
                )
        return self._sources[index]

    def _as_source(self, index: int) -> tuple[int, ...]:
        """What input `index` contributes to its readers' sources: itself where it is a map of
        the position alone (with a fraction's per-length values, `indices` would make every
        (position, length) pair its own combination: 262K at N = 64 for `(-f) if indices < 3
        else ((2 * f) if tokens == "c" else f)`, where `indices < 3` makes 2 per length), else
        its sources."""
        return (index,) if self.g.reads_position_only(index) else self.sources(index)

    def shared_sources(self, node: IRNode) -> tuple[int, ...] | None:
        """The map's sources when its inputs share one (`f(x, g(x))`) and enumerating them is
        cheap (at most SHARED_COMBINATIONS), else None. Taking such inputs as independent would list
        outputs that never occur (`y - x` with y = 2x: -3..6 for x in 0..3, where only 0..3 can)."""
        read = [i for i in node.inputs if self.g[i].op is not Op.CONST]
        direct = list(dict.fromkeys(read))
        sources = self.sources(node.index)
        # one s-op read twice (`v - v`, or `d * d` once compiler.dedupe made the two differences
        # one node) meets itself: taken as independent, `v - v` of a v in {0, 1} lists -1 and 1,
        # outputs the model never gives, which the certifier then checks it against
        repeated = len(direct) < len(read)
        if len(read) < 2 or (
            not repeated and sum(len(self._as_source(i)) for i in direct) == len(sources)
        ):
            return None
        # Only where it is cheap: each combination is one Python call of every map in the chain
        # (dyck1's `n_opens - n_closes` over indices at N = 256 took 90 s), and the independent
        # analysis is a sound superset anyway.
        size = combination_count(sources, self.known.relation, self.known.values)
        if size > SHARED_COMBINATIONS:
            return None
        calls = size * self._chain_maps(node.index, set(sources))
        if calls > self._shared_calls_left:
            return None
        self._shared_calls_left -= calls
        return sources

    def _chain_maps(self, index: int, sources: set[int]) -> int:
        """How many maps one evaluation of `index`'s chain over `sources` calls."""
        seen: set[int] = set()
        stack = [index]
        while stack:
            i = stack.pop()
            if i in seen or i in sources or self.g[i].op is not Op.MAP:
                continue
            seen.add(i)
            stack.extend(self.g[i].inputs)
        return len(seen)

    def chain_values(
        self, node: IRNode, sources: tuple[int, ...]
    ) -> tuple[Relation | None, tuple[Atom, ...]]:
        """The map's values, its chain evaluated at every combination of its sources' values that
        can meet at one position (per position where every source has a relation). A combination
        where a map of the chain raises is dropped: the interpreter errors there."""
        # The chain as steps in the order a depth-first walk first evaluates each node (a DAG
        # evaluates each node once): slots 0..len(sources)-1 hold a combination, then one slot
        # per step; a step whose argument failed fails (_FAILED) without calling its map.
        slot = {s: k for k, s in enumerate(sources)}  # the last of equal sources, as dict() keeps
        steps: list[tuple[Any, list[int], list[tuple[int, Atom]]]] = []

        if node.index not in slot:
            # (Graph.first_visits, iterative: a chain may be thousands of maps long)
            below = self.g.first_visits(
                node.index, lambda i: i not in slot and self.g[i].op is not Op.CONST
            )
            for index in below:
                n = self.g[index]
                if index in slot or (n.op is Op.CONST and index != node.index):
                    continue
                args = [slot.get(i, -1) for i in n.inputs]
                consts = [(k, self.g[i].value) for k, i in enumerate(n.inputs) if i not in slot]
                slot[index] = len(sources) + len(steps)
                steps.append((n.fn, args, consts))
        last = slot[node.index]

        # Each step's results by its arguments: a combination of the sources repeats most steps'
        # arguments (the `==` of one source, for every value of the others), and a tracr
        # function's call costs far more than a lookup (shuffle-Dyck of two pairs at N = 8:
        # 1.8M calls, 75 s, to resolve one program)
        memos: list[dict[tuple[Any, ...], Any]] = [{} for _ in steps]

        def call(step: int, vals: Sequence[Any]) -> Any:
            """The step's value where the chain's slots hold `vals` (_FAILED where it raises)."""
            fn, args, consts = steps[step]
            a = [vals[k] if k >= 0 else None for k in args]
            for k, v in consts:
                a[k] = v
            if any(x is _FAILED for x in a):
                return _FAILED
            key = tuple(map(_memo_key, a))
            out = memos[step].get(key, _UNSEEN)
            if out is _UNSEEN:
                ok, out = apply_map(fn, a)
                out = memos[step][key] = out if ok else _FAILED
            return out

        # A chain that extends the last one analysed (`x = x + length` in a loop: each map's
        # chain is the one before and one step) takes that map's value at a combination from its
        # analysis and evaluates only the steps above it: without this each map evaluated its
        # whole chain again, quadratic in the chain's length
        previous, fresh = self._extends(node.index, sources, slot)
        done: dict[tuple[Any, ...], Any] = {}  # this map's value per combination, for the next
        filler = [_UNSEEN] * len(steps)

        def outputs(combos: Any) -> list[Atom]:
            outs = []
            for combo in combos:
                key = tuple(map(_memo_key, combo))
                got = _UNSEEN if previous is None else previous[1].get(key, _UNSEEN)
                if got is _UNSEEN:
                    vals = list(combo)
                    for step in range(len(steps)):
                        vals.append(call(step, vals))
                else:
                    vals = [*combo, *filler]
                    vals[previous[0]] = got
                    for step in fresh:
                        vals[len(sources) + step] = call(step, vals)
                done[key] = vals[last]
                if vals[last] is not _FAILED:
                    outs.append(vals[last])
            return outs

        try:
            return self._chain_outputs(sources, outputs)
        finally:
            self._last_chain = (sources, node.index, done)

    def _extends(
        self, target: int, sources: tuple[int, ...], slot: dict[int, int]
    ) -> tuple[tuple[int, dict[tuple[Any, ...], Any]] | None, list[int]]:
        """Where `target`'s chain (slotted by `slot`: the sources, then its steps) contains the
        map analysed last over the same sources: (that map's slot, its value per combination)
        and the steps `target` reads other than through it, in the chain's order (what that map
        reads is evaluated again only where read by another way too); else (None, [])."""
        if self._last_chain is None or self._last_chain[0] != sources:
            return None, []
        _, prev, values = self._last_chain
        if prev not in slot or slot[prev] < len(sources):
            return None, []
        g = self.g
        above = g.first_visits(
            target, lambda i: i != prev and i not in sources and g[i].op is not Op.CONST
        )
        first = len(sources)
        fresh = sorted(slot[i] - first for i in above if i != prev and slot.get(i, -1) >= first)
        return (slot[prev], values), fresh

    def _chain_outputs(
        self, sources: tuple[int, ...], outputs: Callable[[Any], list[Atom]]
    ) -> tuple[Relation | None, tuple[Atom, ...]]:
        """chain_values' relation (or values) from `outputs` of combinations of the sources."""
        known = self.known
        if not all(known.relation[s] is not None for s in sources):
            vals = sort_values(outputs(input_combinations(sources, known.relation, known.values)))
            return self._decided_by_position(sources, outputs, vals), vals
        cache: dict[tuple[int, ...], tuple[Atom, ...]] = {}
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        for p in known.pairs:
            sets = [known.relation[s][p] for s in sources]  # type: ignore[index]
            key = tuple(map(id, sets))
            if key not in cache:
                cache[key] = known.intern(outputs(itertools.product(*sets)))
            rel[p] = cache[key]
        return rel, ()

    def _map_table(self, node: IRNode) -> dict[tuple[int, int], tuple[Atom, ...]] | None:
        """map_values' relation through an array table of the function (compiler.combos), or
        None where that might differ from the loop."""
        known = self.known
        fn = node.fn
        table = MapTable(len(node.inputs), lambda args: apply_map(fn, args), fn)
        cache: dict[tuple[int, ...], tuple[Atom, ...]] = {}
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        # each input's sets at every pair, looked up in C (dyck1 at N = 256: 33K pairs per map)
        columns = [list(map(known.relation[i].__getitem__, known.pairs)) for i in node.inputs]  # type: ignore[union-attr]
        for p, sets in zip(known.pairs, zip(*columns), strict=True):
            key = tuple(map(id, sets))
            found = cache.get(key)
            if found is None:
                outs = table.outputs(sets)
                if outs is None:
                    return None
                found = cache[key] = known.intern(outs)  # sorted: the order found does not matter
            rel[p] = found
        return rel

    def _singleton_map(
        self, fn: Any, rels: list[Relation]
    ) -> dict[tuple[int, int], tuple[Atom, ...]] | None:
        """map_values where every input has one value per position (`length - indices`): one
        call per distinct argument tuple, without counting or tabulating set products (reverse at
        N = 1024, 525K positions of distinct arguments: its analysis takes 3 s instead of 14).
        None where an output is not plain (the loop decides then)."""
        known = self.known
        # interned sets: one id per value, so the ids name the arguments
        found: dict[Any, tuple[Atom, ...]] = {}
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        # each position's arguments as one tuple of sets (zip: no per-position list)
        columns = zip(*([r[p] for p in known.pairs] for r in rels), strict=True)
        for p, sets in zip(known.pairs, columns, strict=True):
            key = tuple(map(id, sets))
            got = found.get(key)
            if got is None:
                ok, out = apply_map(fn, [s[0] for s in sets])
                if ok and not plain(out):
                    return None  # as MapTable: the loop keeps the last of equal keys
                got = found[key] = known.intern([out] if ok else [])
            rel[p] = got
        return rel


def _memo_key(value: Atom) -> tuple[Any, ...]:
    """A key equal only for values a function cannot tell apart: of one type (1, 1.0 and True
    apart) and, for floats, of one sign (0.0 and -0.0 apart; a NaN equals only itself)."""
    if type(value) is float:
        return float, value, math.copysign(1.0, value)
    return type(value), value


@dataclass(frozen=True)
class _ReadOnce:
    """A map's function over its distinct inputs: argument k is distinct input `at[k]`."""

    fn: Callable[..., Any]
    at: tuple[int, ...]

    def __call__(self, *args: Atom) -> Atom:
        return self.fn(*(args[k] for k in self.at))


def _read_once(node: IRNode) -> IRNode:
    """`node` (a map reading one input more than once) as a map of its distinct inputs."""
    distinct = tuple(dict.fromkeys(node.inputs))
    at = tuple(distinct.index(i) for i in node.inputs)
    return dataclasses.replace(node, inputs=distinct, fn=_ReadOnce(node.fn, at))


def apply_map(fn: Any, args: Sequence[Atom]) -> tuple[bool, Atom]:
    """(True, fn(*args)) when the interpreter would accept it, else (False, None)."""
    try:
        out = fn(*args)
    except _MAP_ERRORS:
        return False, None
    if sops.type_of_value(out) is None:
        return False, None
    return True, out
