"""The certifier's selection check: the keys a head's exact scores put on top, for every reachable
query state, are the keys its select chooses.

Saturation (`certify_attention`) proves that any two keys' scores are one level or at least
UNDERFLOW apart whatever the rounding, and the value check that each key state writes the program's
value; neither looks at *which* keys win. Here the reach's atoms (a conjunction of truth tables,
each over one query and one key reading) say which key states each query state selects, and the
head's rule (`Selects`) where they must score against BOS:

- ABOVE (aggregate): every selected key at least SEPARATE above BOS, every other key at least
  SEPARATE below it, and the selected keys within SEPARATE of each other (one level) unless the
  value analysis proved at most one of them present (`single`);
- WITH_BOS (selector_width): the selected keys within SEPARATE of BOS, the rest SEPARATE below;
- NEAREST (numerical addressing): each query state selects exactly one key state (the value
  analysis proved it present), which scores SEPARATE above BOS and every other key.

Wherever saturation holds, scores SEPARATE apart are on two levels, and scores within SEPARATE of
each other on one (two levels are UNDERFLOW apart), so with it this proves the softmax picks the
selected keys (or BOS alone). The exact scores are float64 evaluations of the float32 weights at
the reach's values, through `Linear`, with no error terms: rounding is saturation's business.

The score is a sum over groups of columns that read disjoint readings (union-find over columns,
the readings their weights touch and the atoms' reading pairs), and the query and key states are
products of their readings: so every extreme over all (query, key) pairs is a sum or a max of
per-group extremes, and the check enumerates each group's own pairs only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from compiler.blocks import Selects
from compiler.bounds import Linear
from compiler.certificate import UNDERFLOW, Check
from compiler.certify_parts import HeadPartition, product, state_label
from compiler.certify_walk import MAX_STATES, Walk
from compiler.reach import HeadReach, Reading

SEPARATE = UNDERFLOW / 2
MAX_SELECTION_PAIRS = 200_000_000  # (query, key) state pairs over all groups of one head

Pick = tuple[float, int]  # an extreme of one group's per-state values, and the state with it
Verdict = Callable[[float, str], Check]


@dataclass(frozen=True)
class _Group:
    cols: np.ndarray  # the head's columns whose scores it owns
    query: tuple[int, ...]  # positions in head.query
    key: tuple[int, ...]  # positions in head.key
    atoms: tuple[int, ...]  # indices into head.atoms


@dataclass
class _Stats:
    """Per realisable query state of one group: exact scores against its key states, less BOS's."""

    coords: np.ndarray  # [P, len(query)] the states (for labels)
    has: np.ndarray  # [P] some key state selected
    count: np.ndarray  # [P] how many key states selected
    sel_lo: np.ndarray  # [P] lowest selected score - BOS (inf where none)
    sel_hi: np.ndarray  # [P] highest selected score - BOS (-inf where none)
    other_hi: np.ndarray  # [P] highest unselected score - BOS (-inf where none)
    all_hi: np.ndarray  # [P] highest score - BOS


def check_selection(
    walk: Walk,
    head: HeadReach,
    where: str,
    weights: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],  # W_Q, b_Q, W_K, b_K
    bos_key: np.ndarray,  # [own width] the BOS key's exact vector
    d_head: int,  # the layer's (the weights are the head's own columns, `compiler.head_slices`)
) -> Check:
    """The selection check of one head, as a Check (kind "selection", bound 0)."""

    def verdict(margin: float, text: str) -> Check:
        return Check(where, head.name, head.op, "selection", margin, 0.0, text, 0.0)

    if head.atoms is None:
        return verdict(
            -math.inf,
            "the file does not record which keys this head selects (written by an older "
            "compiler): recompile it to certify the selection",
        )
    groups = _groups(walk, head, weights[0], weights[2])
    if isinstance(groups, str):
        return verdict(-math.inf, groups)
    readings = walk.reach.readings
    pairs = sum(
        math.prod(readings[head.query[i]].size for i in g.query)
        * math.prod(readings[head.key[i]].size for i in g.key)
        for g in groups
    )
    # the zero columns past the head's own width: a group of one pair each, as counted padded
    pairs += d_head - weights[0].shape[1]
    if pairs > MAX_SELECTION_PAIRS:
        return verdict(
            -math.inf,
            f"{pairs:,} (query, key) state pairs: more than the selection check enumerates "
            f"({MAX_SELECTION_PAIRS:,})",
        )
    scale = math.sqrt(d_head)
    groups = _audible(groups, weights, bos_key)
    stats = [_group_stats(walk, head, g, weights, bos_key, scale) for g in groups]
    if any(len(s.has) == 0 for s in stats):
        return verdict(math.inf, "no real query state")
    rule = Selects(head.selects)
    if rule is Selects.NEAREST:
        return _nearest(groups, stats, head, readings, verdict)
    return _levels(groups, stats, head, readings, rule, verdict)


def _levels(
    groups: list[_Group],
    stats: list[_Stats],
    head: HeadReach,
    readings: tuple[Reading, ...],
    rule: Selects,
    verdict: Verdict,
) -> Check:
    """ABOVE and WITH_BOS: sums of per-group extremes (each group's query state is free)."""
    found: list[tuple[float, str]] = []
    if all(s.has.any() for s in stats):  # some query state selects a key
        lo = [_pick(np.where(s.has, s.sel_lo, np.inf), min) for s in stats]
        hi = [_pick(np.where(s.has, s.sel_hi, -np.inf), max) for s in stats]
        low, high = sum(v for v, _ in lo), sum(v for v, _ in hi)
        if rule is Selects.ABOVE:
            found.append(
                (
                    low - SEPARATE,
                    f"{_query(groups, stats, lo, head, readings)}: a key it "
                    f"selects scores {_versus(low)} (needs {SEPARATE:g} above)",
                )
            )
            if not head.single:
                spread = [_pick(np.where(s.has, s.sel_hi - s.sel_lo, -np.inf), max) for s in stats]
                total = sum(v for v, _ in spread)
                found.append(
                    (
                        SEPARATE - total,
                        f"{_query(groups, stats, spread, head, readings)}: keys it "
                        f"selects score {total:.4g} apart (one level needs under {SEPARATE:g})",
                    )
                )
        else:
            worse = (lo, low) if -low > high else (hi, high)
            found.append(
                (
                    SEPARATE - abs(worse[1]),
                    f"{_query(groups, stats, worse[0], head, readings)}: a "
                    f"key it selects scores {_versus(worse[1])} (one level needs under {SEPARATE:g})",
                )
            )
    # a key the query does not select fails some group's atoms: the best such key is that group's
    # best unselected one, with the best keys of every other group
    all_hi = [_pick(s.all_hi, max) for s in stats]
    for g, s in enumerate(stats):
        other = _pick(s.other_hi, max)
        if other[0] == -np.inf:
            continue
        picks = [*all_hi[:g], other, *all_hi[g + 1 :]]
        top = sum(v for v, _ in picks)
        found.append(
            (
                -top - SEPARATE,
                f"{_query(groups, stats, picks, head, readings)}: a key it does not "
                f"select scores {_versus(top)} (needs {SEPARATE:g} below)",
            )
        )
    if not found:
        return verdict(math.inf, "no key is ever selected or left out")
    return verdict(*min(found, key=lambda f: f[0]))


def _nearest(
    groups: list[_Group],
    stats: list[_Stats],
    head: HeadReach,
    readings: tuple[Reading, ...],
    verdict: Verdict,
) -> Check:
    """NEAREST: one selected key state per query state, alone on top, above BOS."""
    for g, s in enumerate(stats):
        bad = np.flatnonzero(s.count != 1)
        if len(bad):
            i = int(bad[0])
            picks = [(0.0, 0)] * len(stats)
            picks[g] = (0.0, i)
            return verdict(
                -math.inf,
                f"{_query(groups, stats, picks, head, readings)}: selects {int(s.count[i])} key "
                "states (numerical addressing picks exactly one)",
            )
    lo = [_pick(s.sel_lo, min) for s in stats]
    low = sum(v for v, _ in lo)
    found = [
        (
            low - SEPARATE,
            f"{_query(groups, stats, lo, head, readings)}: the key it selects "
            f"scores {_versus(low)} (needs {SEPARATE:g} above)",
        )
    ]
    for g, s in enumerate(stats):
        gap = _pick(s.sel_lo - s.other_hi, min)
        if gap[0] == np.inf:
            continue
        picks = [(0.0, 0)] * len(stats)
        picks[g] = gap
        found.append(
            (
                gap[0] - SEPARATE,
                f"{_query(groups, stats, picks, head, readings)}: another key "
                f"scores {_versus(-gap[0], 'the key it selects')} (needs {SEPARATE:g} below)",
            )
        )
    return verdict(*min(found, key=lambda f: f[0]))


def _pick(values: np.ndarray, how: Callable[..., object]) -> Pick:
    """The extreme of a group's per-state values and the state that has it."""
    i = int(np.argmin(values) if how is min else np.argmax(values))
    return float(values[i]), i


def _versus(d: float, what: str = "BOS") -> str:
    """A score's distance d from another's, in words."""
    return f"{abs(d):.4g} {'above' if d > 0 else 'below'} {what}" if d else f"as {what} does"


def _query(
    groups: list[_Group],
    stats: list[_Stats],
    picks: list[Pick],
    head: HeadReach,
    readings: tuple[Reading, ...],
) -> str:
    """The query state made of each group's picked state, for people."""
    ids: list[int] = []
    coords: list[float] = []
    for g, s, (_, i) in zip(groups, stats, picks, strict=True):
        ids.extend(head.query[p] for p in g.query)
        coords.extend(s.coords[i])
    return "query " + state_label(readings, tuple(ids), np.array(coords))


def _groups(walk: Walk, head: HeadReach, wq: np.ndarray, wk: np.ndarray) -> list[_Group] | str:
    """`HeadPartition`'s groups, each atom's query and key reading joined too. A string: the
    reach is malformed."""
    readings = walk.reach.readings
    part = HeadPartition(head, readings, walk.one, wq, wk)
    of_query: dict[int, list[int]] = {}  # a query reading's position -> its atoms
    for a, atom in enumerate(head.atoms or ()):
        if atom.query not in head.query or atom.key not in head.key:
            return f"an atom of the select reads a reading the head does not (atom {a})"
        q_size, k_size = readings[atom.query].size, readings[atom.key].size
        if atom.table.shape != (q_size, k_size):
            return f"an atom's table is {atom.table.shape}, its readings {(q_size, k_size)}"
        q = head.query.index(atom.query)
        part.join(part.query_node(q), part.key_node(head.key.index(atom.key)))
        of_query.setdefault(q, []).append(a)
    return [
        _Group(cols, query, key, tuple(a for q in query for a in of_query.get(q, [])))
        for cols, query, key in part.groups()
    ]


def _audible(
    groups: list[_Group],
    weights: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    bos_key: np.ndarray,
) -> list[_Group]:
    """The groups less those that read nothing and score an exact 0 against every key and BOS
    (a zero query column, or a zero key column that is 0 at BOS too): a head's d_head pads to the
    widest head's, and each unused column is a group of its own (4,088 of 4,096 in mixed seed
    1820364 at N = 16, two `Linear`s each). Their extremes are all ±0, which leave every sum of
    extremes `_levels` and `_nearest` take as it was (the sums start at 0, never -0.0); their
    one state selects its one key (count 1, nothing unselected) and names no reading. One is
    kept where all are such (the checks' texts for a head of nothing)."""
    wq, bq, wk, bk = weights
    # per column, once: (slicing W's columns group by group copied d_model rows each time)
    quiet = (~(wq != 0).any(axis=0) & (bq == 0)) | (
        ~(wk != 0).any(axis=0) & (bk == 0) & (bos_key == 0)
    )
    kept = [g for g in groups if g.query or g.key or g.atoms or not bool(quiet[g.cols].all())]
    return kept or groups[:1]


def _evaluate(
    walk: Walk, w: np.ndarray, b: np.ndarray, ids: tuple[int, ...], cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A group's realisable states on one side: coordinates [P, len(ids)], exact values [P, c]."""
    sp = (walk.one, walk.bos, walk.pad)
    # one zero column more: a state no dimension realises is NaN there even where no column reads
    w_cols = np.hstack([w[:, cols], np.zeros((w.shape[0], 1))])
    lin = Linear(w_cols, np.append(b[cols], 0.0), walk.reach.readings, ids, walk.err, sp)
    coords = product(walk.reach.readings, ids)
    value = lin.at(ids, coords).value
    real = ~np.isnan(value).any(axis=1)
    return coords[real], value[real, :-1]


def _value_index(reading: Reading, coords: np.ndarray) -> np.ndarray:
    """A state's value index in `reading` from its coordinate (a number for a numerical one)."""
    if reading.categorical or reading.vector:
        return coords.astype(np.int64)
    numbers = np.array(reading.numbers)
    order = np.argsort(numbers, kind="stable")
    return order[np.searchsorted(numbers[order], coords)]


def _group_stats(
    walk: Walk,
    head: HeadReach,
    group: _Group,
    weights: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    bos_key: np.ndarray,
    scale: float,
) -> _Stats:
    wq, bq, wk, bk = weights
    readings = walk.reach.readings
    q_ids = tuple(head.query[i] for i in group.query)
    k_ids = tuple(head.key[i] for i in group.key)
    q_coords, qv = _evaluate(walk, wq, bq, q_ids, group.cols)
    k_coords, kv = _evaluate(walk, wk, bk, k_ids, group.cols)
    atoms = [(head.atoms or ())[a] for a in group.atoms]
    q_index = [_value_index(readings[a.query], q_coords[:, q_ids.index(a.query)]) for a in atoms]
    k_index = [_value_index(readings[a.key], k_coords[:, k_ids.index(a.key)]) for a in atoms]
    bos = qv @ bos_key[group.cols] / scale  # [Pq]
    n_q, n_k = len(qv), len(kv)
    out = {name: np.empty(n_q) for name in ("sel_lo", "sel_hi", "other_hi", "all_hi")}
    count = np.zeros(n_q, dtype=np.int64)
    chunk = max(1, MAX_STATES // max(n_k, 1))
    for start in range(0, n_q, chunk):
        rows = slice(start, start + chunk)
        scores = qv[rows] @ kv.T / scale - bos[rows, None]  # [rows, Pk]
        chosen = np.ones(scores.shape, dtype=bool)
        for a, qi, ki in zip(atoms, q_index, k_index, strict=True):
            chosen &= a.table[np.ix_(qi[rows], ki)]
        count[rows] = chosen.sum(axis=1)
        out["sel_lo"][rows] = np.where(chosen, scores, np.inf).min(axis=1, initial=np.inf)
        out["sel_hi"][rows] = np.where(chosen, scores, -np.inf).max(axis=1, initial=-np.inf)
        out["other_hi"][rows] = np.where(chosen, -np.inf, scores).max(axis=1, initial=-np.inf)
        out["all_hi"][rows] = scores.max(axis=1, initial=-np.inf)
    return _Stats(q_coords, count > 0, count, **out)
