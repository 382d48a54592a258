"""Per-position output grids: the denominators a numerical output decodes with.

A mean of whole numbers over a selection whose width depends on the position alone
(`aggregate(select(indices, indices, <=), x)`: exactly i + 1 keys at position i) is at position i a
multiple of 1/(i+1). Listed together, the values of every position lie far closer than float32
resolves (254/255 and 255/256 differ by 1.5e-5, less than twice the error of a mean over 256
keys), but at one position they are 1/(i+1) apart. The file then gives one denominator per
position (`output.denominators`, format version 4) and the runtime decodes position i as
round(x * d_i) / d_i: a margin of 1/(2 d_i) instead of half the smallest gap of the whole list.

The denominators come from the value analysis's per-(position, length) relation, so every value the
output can take at position i is on its grid (up to float64 noise: the interpreter's mean of
floats may differ from k/d in the last bit, which outputs compared by value ignore).

A count over the input's length (`selector_width(select(tokens, "a", ==)) / length`, or its mean
form) is k / n at every position of an input of length n instead: its grid is one denominator per
length (`output.length_denominators`, format version 5), which the runtime picks by each input's
length. A mean over the query and every later key (`aggregate(select(indices, indices, >=), x)`,
the mirror of frac_prevs) is k / (n - i): one denominator per distance from the end,
`output.end_denominators` (version 5 too). Where several kinds fit, the coarsest is written.

A grid point decodes as an int exactly where its denominator is 1; where the values there are
whole floats (a mean times 1.0 at position 0), the denominator is 2 instead, which decodes them as
floats with a margin of 1/4.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from compiler.blocks import Atom, is_number, value_key
from compiler.fits import FLOAT64_NOISE
from compiler.graph import Graph, Op
from compiler.map_values import apply_map
from compiler.output_grid import GridAxis, OutputGrid
from compiler.picks import Pick
from compiler.relations import Relation, selector_matrix

# A grid finer than this is no grid: its margin would be below float32's reach anyway.
MAX_DENOMINATOR = 1 << 20
# a numerical output lists its values (for snapping) up to this many, as many as an s-op may take
# (means.MAX_VALUES): beyond it the decoder gives the float itself, promised within 1e-6 only
MAX_OUTPUT_VALUES = 100_000
MAX_WIDENED_CALLS = 1_000_000  # map calls `widened_relation` makes at most

# the output entry's field for each axis (docs/format.md)
GRID_KEYS = {
    GridAxis.POSITION: "denominators",
    GridAxis.LENGTH: "length_denominators",
    GridAxis.END: "end_denominators",
    GridAxis.PAIR: "pair_denominators",
}
# the axes tried first: a per-(position, length) grid only where none of them fits (it is never
# coarser, and its file field, format version 10, lists max_len (max_len + 1) / 2 entries)
LINE_AXES = (GridAxis.POSITION, GridAxis.LENGTH, GridAxis.END)


def output_grid(
    relation: Relation | None, values: Sequence[Atom], max_len: int
) -> OutputGrid | None:
    """The grid a numerical output decodes on (the coarsest of the per-position, per-length and
    per-distance-from-the-end ones; the first of them on a tie), or None where listing its
    `values` (noise twins merged) separates them at least as well: a grid is used only where it is
    coarser than the list's smallest gap, or the list would be too long to write."""
    lcms = None if relation is None else set_denominators(relation)  # shared by the axes
    grids = [
        OutputGrid(axis, found)
        for axis in LINE_AXES
        if lcms is not None
        and (found := output_denominators(relation, max_len, axis, lcms)) is not None
    ]
    if not grids and lcms is not None:
        # a count over the length minus a positional mean, k/n - f(i): at (i, n) a multiple of
        # 1/lcm(n, f(i)'s denominator), where every position's (every length's) lcm is too fine
        pair = output_denominators(relation, max_len, GridAxis.PAIR, lcms)
        grids = [] if pair is None else [OutputGrid(GridAxis.PAIR, pair)]
    if not grids:
        return None
    grid = min(grids, key=lambda g: max(g.denominators))  # min keeps the first on a tie
    numbers = np.unique(np.array([float(v) for v in values if is_number(v)], dtype=np.float64))
    if len(numbers) <= MAX_OUTPUT_VALUES:
        smallest_gap = float(np.diff(numbers).min()) if len(numbers) > 1 else math.inf
        if smallest_gap >= 1 / max(grid.denominators):
            return None
    if grid.axis in (GridAxis.POSITION, GridAxis.PAIR) or relation is None:
        return grid  # a position's (a pair's) denominator is 1 exactly where its values are ints
    return OutputGrid(grid.axis, grid.denominators, int_positions(relation, grid, max_len))


def int_positions(relation: Relation, grid: OutputGrid, max_len: int) -> tuple[int, ...]:
    """The program positions at which every value, at every length, is an int (not a bool), and
    some length's denominator there is not 1: a per-length or from-the-end grid would decode them
    as floats (format version 6 lists them: they decode as ints)."""
    whole = [True] * max_len
    finer = [False] * max_len  # a denominator other than 1 reaches the position
    ints: dict[int, bool] = {}  # per distinct (interned) set
    for (i, n), vals in relation.items():
        if whole[i]:
            key = id(vals)
            if key not in ints:
                ints[key] = all(type(v) is int for v in vals)
            whole[i] = ints[key]
        d = grid.denominators[n - 1 if grid.axis is GridAxis.LENGTH else n - 1 - i]
        finer[i] = finer[i] or d != 1
    return tuple(i for i in range(max_len) if whole[i] and finer[i])


def widened_relation(
    graph: Graph,
    values: Sequence[tuple[Atom, ...]],
    relation: Sequence[Relation | None],
    index: int,
    max_len: int,
) -> Relation | None:
    """Node `index`'s relation, or for a map of which only some inputs have one (`hist / length`:
    a count read from the tokens over the length), a wider one: at each (i, n) the map of the
    inputs' values there, an input without a relation taking any of its values. Every value the
    map takes at (i, n) is among them, so a grid that fits them fits the map; the value analysis
    keeps relations for position-only nodes, so this one serves the output grid alone. It is taken
    over the chain's sources (the non-map s-ops the map is computed from, the whole chain one
    function), which meet at (i, n) as they do in the program; where those are too many, over the
    map's inputs. None where no source (or input) has a relation, or where both would take more
    than MAX_WIDENED_CALLS calls.

    An aggregate that copies one key chosen by positions alone (`select(indices, indices, ==)`,
    the flip `select(indices, length - indices - 1, ==)`) takes at (i, n) the values its source
    takes at the selected key (its default where none is). The value analysis does so where the
    source has a relation (the reverse of a prefix mean is k / (n - i), on a grid from the end);
    here the source's widened relation serves where it has none (the copy of `(f * 0.5) if tokens
    == "c" else f`, k / (2n) at length n)."""
    node = graph[index]
    if node.op is Op.AGGREGATE and relation[node.inputs[1]] is None:
        copied = _copied_relation(graph, values, relation, index, max_len)
        if copied is not None:
            return copied
    if relation[index] is not None:
        return relation[index]
    if node.op is not Op.MAP or node.fn is None:
        return None
    if not any(isinstance(v, float) for v in values[index]):
        return None  # no fractions: no grid (output_denominators)
    # over the chain's sources first: `(3 * f - 2) if tokens == "c" else f * 0.5` reads f through
    # two maps, whose sets at (i, n) would multiply, and an input without a relation would take
    # every value it has at any length; from f, each value meets the tokens once, at its length
    sources, chain, maps = _chain(graph, index)
    widened = _widened(sources, chain, values, relation, max_len, maps)
    if widened is None:
        widened = _widened(node.inputs, node.fn, values, relation, max_len, 1)
    return widened


def _copied_relation(
    graph: Graph,
    values: Sequence[tuple[Atom, ...]],
    relation: Sequence[Relation | None],
    index: int,
    max_len: int,
) -> Relation | None:
    """The aggregate `index`'s values at each (i, n) where its selector chooses at most one key
    by positions alone: its source's (widened) relation at that key, or the default. None where
    positions do not decide the selector, it may choose several keys, or the source has no
    relation."""
    selector, source = graph[index].inputs
    source_rel = widened_relation(graph, values, relation, source, max_len)
    if source_rel is None:
        return None
    default = (graph[index].value,)
    out: dict[tuple[int, int], tuple[Atom, ...]] = {}
    for n in range(1, max_len + 1):
        matrix = selector_matrix(graph, relation, selector, n)  # [query, key]
        if matrix is None:
            return None
        counts = matrix.sum(axis=1)
        if (counts > 1).any():
            return None  # a mean of several keys: not a copy
        keys = matrix.argmax(axis=1)
        for i in range(n):
            out[(i, n)] = source_rel[(int(keys[i]), n)] if counts[i] else default
    return out


def _widened(
    inputs: Sequence[int],
    fn: Callable[..., Atom],
    values: Sequence[tuple[Atom, ...]],
    relation: Sequence[Relation | None],
    max_len: int,
    cost: int,
) -> Relation | None:
    """At each (i, n), `fn` over its inputs' values there (all of an input's values where it has
    no relation); None where no input has a relation, or where that takes more than
    MAX_WIDENED_CALLS map calls (`cost` per combination of the inputs' values)."""
    if not any(relation[i] is not None for i in inputs):
        return None
    keyed: dict[tuple[int, int], tuple[int, ...]] = {}
    sets_of: dict[tuple[int, ...], list[tuple[Atom, ...]]] = {}
    for n in range(1, max_len + 1):
        for i in range(n):
            sets = [values[k] if relation[k] is None else relation[k][(i, n)] for k in inputs]
            key = tuple(map(id, sets))  # interned sets: equal ids, equal sets
            keyed[(i, n)] = key
            sets_of.setdefault(key, sets)
    # counted before any call: a map too costly to widen costs nothing
    combinations = sum(math.prod(len(s) for s in sets) for sets in sets_of.values())
    if combinations * cost > MAX_WIDENED_CALLS:
        return None
    outputs: dict[tuple[int, ...], tuple[Atom, ...]] = {}
    for key, sets in sets_of.items():
        found = [apply_map(fn, args) for args in itertools.product(*sets)]
        # distinct by type and value: 1, 1.0 and True stay apart
        outputs[key] = tuple({value_key(out): out for ok, out in found if ok}.values())
    return {pair: outputs[key] for pair, key in keyed.items()}


class _Failed(Exception):
    """A map of the chain raised: the interpreter errors there (apply_map drops the point)."""


def _chain(graph: Graph, index: int) -> tuple[tuple[int, ...], Callable[..., Atom], int]:
    """The s-ops map `index` is computed from through its chain of maps (`_reached`), the chain
    as one function of their values, and how many maps it calls."""
    reached = _reached(graph, index)
    order = tuple(k for k, source in reached.items() if source)
    maps = sum(graph[k].op is Op.MAP and not source for k, source in reached.items())

    def chain(*args: Atom) -> Atom:
        env = dict(zip(order, args, strict=True))

        def value(k: int) -> Atom:
            if k not in env:
                node = graph[k]
                if node.op is Op.CONST:
                    return node.value
                ok, out = apply_map(node.fn, [value(i) for i in node.inputs])
                if not ok:
                    raise _Failed
                env[k] = out
            return env[k]

        try:
            return value(index)
        except _Failed:
            raise ValueError("a map of the chain fails here") from None

    return order, chain, maps


def _reached(graph: Graph, index: int) -> dict[int, bool]:
    """`index` and every node reached from it through maps' inputs, each once, and whether it
    is a source of the chain: a non-map s-op (constants are not), a pick (compiler.picks: its V
    means would meet in every combination, where the pick reads one of them), or a map of the
    position alone (`indices < 3`: through `indices`, every (position, length) pair would be its
    own combination with a per-length fraction)."""
    seen: dict[int, bool] = {}
    stack = [index]
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        node = graph[k]
        if node.op is Op.MAP:
            source = k != index and (isinstance(node.fn, Pick) or graph.reads_position_only(k))
            if not source:
                stack.extend(node.inputs)
        else:
            source = node.op is not Op.CONST
        seen[k] = source
    return seen


def output_denominators(
    relation: Relation | None,
    max_len: int,
    axis: GridAxis = GridAxis.POSITION,
    lcms: dict[int, tuple[int, bool]] | None = None,
) -> tuple[int, ...] | None:
    """Per program position i (0..max_len-1), per input length n (1..max_len) with `axis=LENGTH`,
    per distance from the end n - 1 - i (0..max_len-1) with `axis=END`, or per (i, n) at
    n (n - 1) / 2 + i with `axis=PAIR` (`pair_index`), a d such that every
    value the output can take there is k / d for a whole k; None where there is no relation, a
    value is not a number, or no denominator up to MAX_DENOMINATOR fits. A grid of whole numbers only (every d = 1) is None too: listed values
    snap those as well. d is 1 only where every value is an int (module doc). `lcms`: the
    relation's `set_denominators`, where the caller has them (they do not depend on the axis)."""
    if relation is None:
        return None
    if lcms is None:
        lcms = set_denominators(relation)
    if lcms is None:
        return None
    cells = max_len * (max_len + 1) // 2 if axis is GridAxis.PAIR else max_len
    sets_at: list[set[int]] = [set() for _ in range(cells)]
    for (i, n), values in relation.items():
        sets_at[grid_cell(axis, i, n)].add(id(values))  # interned tuples: each set once per entry
    out: list[int] = []
    for sets in sets_at:
        d, has_float = 1, False
        for key in sets:
            own, floats = lcms[key]
            d, has_float = math.lcm(d, own), has_float or floats
        if d == 1 and has_float:
            d = 2  # whole floats: 1 would decode them as ints
        if d > MAX_DENOMINATOR:
            return None
        out.append(d)
    return tuple(out) if any(d > 1 for d in out) else None


def grid_cell(axis: GridAxis, i: int, n: int) -> int:
    """Which of a grid's denominators serves program position i of an input of length n."""
    if axis is GridAxis.POSITION:
        return i
    if axis is GridAxis.LENGTH:
        return n - 1
    if axis is GridAxis.END:
        return n - 1 - i
    return n * (n - 1) // 2 + i


def set_denominators(relation: Relation) -> dict[int, tuple[int, bool]] | None:
    """Per distinct value set of `relation` (by id), the lcm of its floats' denominators (at most
    MAX_DENOMINATOR + 1: any more is no grid; 1 for none) and whether it has a float; None where a value is
    not a number, no value is a float, or a float has no denominator up to MAX_DENOMINATOR. At
    N = 1500 frac_prevs' 1.1M (position, length) entries took 11 s per axis, this part each time."""
    distinct: dict[int, tuple[Atom, ...]] = {}
    for values in relation.values():
        distinct[id(values)] = values
    floats: set[float] = set()
    for values in distinct.values():
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None  # a decoded number cannot tell a bool from 0/1; strings: no grid
            if isinstance(v, float):
                floats.add(v)
    if not floats:
        return None  # whole numbers only: every d_i would be 1
    ordered = sorted(floats)
    found = denominators_of(np.array(ordered, dtype=np.float64))
    if (found == 0).any():
        return None
    denominator_of = dict(zip(ordered, found.tolist(), strict=True))
    lcms: dict[int, tuple[int, bool]] = {}
    for key, values in distinct.items():
        own = {denominator_of[v] for v in values if isinstance(v, float)}
        lcms[key] = (_capped_lcm(own), bool(own))
    return lcms


def _capped_lcm(denominators: set[int]) -> int:
    """min(lcm of `denominators`, MAX_DENOMINATOR + 1): each distinct one once, and stopped once
    past the cap (the lcm of a value set's hundreds of denominators grew to a big int first:
    numeric seed 2070534 at N = 8, 44 s)."""
    d = 1
    for q in denominators:
        d = math.lcm(d, q)
        if d > MAX_DENOMINATOR:
            return MAX_DENOMINATOR + 1
    return d


def denominators_of(values: np.ndarray) -> np.ndarray:
    """Per value, the least denominator q <= MAX_DENOMINATOR of a fraction p / q equal to it up to
    float64 noise (relative: 1e-12 is no noisy 0), or 0 where there is none; [P] int64.

    The continued-fraction convergents of all values at once: the fraction a mean k / w rounds
    to is one of them, with the least denominator that reaches it."""
    v = values.astype(np.float64)  # [P]
    tol = FLOAT64_NOISE * np.abs(v)
    found = np.zeros(v.shape, dtype=np.int64)
    done = ~np.isfinite(v)
    x = np.where(done, 0.0, v)
    h_prev, h = np.zeros_like(v), np.ones_like(v)  # numerators of the last two convergents
    k_prev, k = np.ones_like(v), np.zeros_like(v)  # denominators
    for _ in range(64):  # a float64 has at most about 40 terms
        a = np.floor(x)
        h_prev, h = h, a * h + h_prev
        k_prev, k = k, a * k + k_prev
        hit = ~done & (k <= MAX_DENOMINATOR) & (np.abs(h / np.maximum(k, 1) - v) <= tol)
        found[hit] = k[hit].astype(np.int64)
        rest = x - a
        done |= hit | (k > MAX_DENOMINATOR) | (rest == 0)
        if done.all():
            break
        x = np.where(done, 0.0, 1.0 / np.where(done, 1.0, rest))
    return found
