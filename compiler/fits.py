"""Exact fits over a map's reachable points: merging float64 noise; the values a numerical output
snaps to (`snap_targets`).

A compiled map is built from its reachable (input, output) points. `merge_points` makes one point of
inputs a float32 model reads alike (`compiler.affine_fits` recognises maps that are exactly affine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from compiler.blocks import Atom, is_number, sort_values, value_key
from compiler.graph import IRNode
from compiler.twin_gaps import gap_words
from rasp.atoms import same_value
from rasp.errors import CompileError, Diagnostic
from rasp.seqvalues import value_repr

# Numbers closer than this (relative) differ only by float64 rounding in the interpreter.
FLOAT64_NOISE = 1e-9
# Below this, float64 holds every whole number exactly: two different ones are never twins.
EXACT_WHOLES = 2.0**53


def float64_twins(a: float, b: float) -> bool:
    """Whether `a` and `b` may be one number that float64 rounding told apart: within
    FLOAT64_NOISE (relative to the larger of 1 and |b|), and not two different whole numbers
    (from 10^9 on, 10^9 + 1 lies within that of 10^9, but ints carry no rounding noise)."""
    if abs(a - b) > FLOAT64_NOISE * max(1.0, abs(b)):
        return False
    return a == b or not (_exact_whole(a) and _exact_whole(b))


def _exact_whole(x: float) -> bool:
    return abs(x) < EXACT_WHOLES and float(x).is_integer()


def _twin_neighbours(ordered: np.ndarray) -> np.ndarray:
    """For sorted numbers `[P]`, whether each is a float64 twin of the one before it `[P - 1]`
    (`float64_twins`, elementwise)."""
    whole = (np.abs(ordered) < EXACT_WHOLES) & (np.rint(ordered) == ordered)
    near = np.diff(ordered) <= FLOAT64_NOISE * np.maximum(1.0, np.abs(ordered[1:]))
    return near & ~(whole[1:] & whole[:-1] & (np.diff(ordered) != 0))


class NoiseError(CompileError):
    """A map's value differs between inputs that differ only by float64 rounding (`merge_points`):
    a step MLP over that one number cannot be exact; one over the numbers it is computed from may."""


def merge_points(node: IRNode, points: list[tuple[float, Atom]]) -> list[tuple[float, Atom]]:
    """One output per x a float32 model can tell apart.

    Equal numbers (1 and 1.0) are one point and must give equal outputs. Numbers that differ only by
    float64 rounding noise (e.g. 3 * (1/3) vs 1.0, relative FLOAT64_NOISE) are one point too, kept
    at the member nearest a short decimal; their outputs must be one value as the compiler promises
    (numbers within 1e-6), else no float32 model is exact: a located CompileError.
    """
    xs = np.array([x for x, _ in points], dtype=np.float64)  # [P]
    if not len(xs) or not np.isfinite(xs).all() or np.abs(xs).max() >= 2.0**53:
        # (ints beyond 2^53 would sort as their float64 roundings)
        return _merge_sorted(node, sorted(points, key=lambda p: p[0]))
    order = np.argsort(xs, kind="stable")  # as `sorted`: ties keep their order
    ordered = xs[order]
    # A point farther than the noise from its predecessor is farther from every earlier one too,
    # so it starts a cluster: only runs of near neighbours need the exact walk (mostly equal x).
    near = _twin_neighbours(ordered)
    starts = np.flatnonzero(np.concatenate(([True], ~near))).tolist()
    ends = [*starts[1:], len(points)]
    merged: list[tuple[float, Atom]] = []
    positions = order.tolist()
    for start, end in zip(starts, ends, strict=True):
        if end - start == 1:
            merged.append(points[positions[start]])
        else:
            merged.extend(_merge_sorted(node, [points[k] for k in positions[start:end]]))
    return merged


def _one_value(run: list[tuple[float, Atom]]) -> bool:
    """Whether every point of `run` has the first's value, a plain one (not a NaN): `same_value`
    of any two of them holds."""
    v0 = run[0][1]
    t = type(v0)
    if t not in (int, float, str, bool) or v0 != v0:
        return False
    return all(type(v) is t and v == v0 for _, v in run)  # value_key(v) == value_key(v0)


Contexts = Sequence[tuple[Atom, list[tuple[float, Atom]]]]  # (context value, its points)


def merge_per_context(
    node: IRNode, per_context: Contexts, listed: Sequence[Atom] | None
) -> tuple[list[tuple[Atom, list[tuple[float, Atom]]]], dict[tuple[str, Any], Atom] | None]:
    """`merge_points` per context value, and for a categorical output the values its one-hot uses
    (`Built.canon`): one column per value written, the same in every context.

    A merged point writes one value for the points it stands for: 1 for 1 and 1.0 (a mean of one
    key and of several), or one of two float64 twins. The maps that read the output one-hot list
    their rows in the values it uses, so every value is mapped to the one written in its place.
    Equal numbers are first one value in every context (the first met), else a context that holds
    1.0 alone would write its own column while another writes 1.0's points to 1's. Where a value
    would still be written in two columns (twins merged one way here, the other way there), the
    columns are one where they are float64 twins of one value (`_twin_columns`), else the map is
    refused: no reader could tell which column to expect. `listed`: the values of the
    output's one-hot (None: a numerical output), some of which the points may not hold (their
    inputs were made canonical: 1.0 read as 1), mapped alike."""
    categorical = listed is not None
    first: dict[float, Atom] = {}  # a number -> the value that stands for it (the first met)
    replaced: dict[tuple[str, Any], Atom] = {}  # a value -> the equal one standing for it

    def stand_in(v: Atom) -> Atom:
        if not (categorical and is_number(v) and float(v) == v):  # (not an int float64 rounds)
            return v
        replaced[value_key(v)] = first.setdefault(float(v), v)
        return replaced[value_key(v)]

    per_context = [(c, [(x, stand_in(v)) for x, v in pts]) for c, pts in per_context]
    merged = [(c, merge_points(node, pts)) for c, pts in per_context]
    if not categorical:
        return merged, None
    canon: dict[tuple[str, Any], Atom] = {}
    # values met in two columns: (the value, the column it met, the other column)
    clashes: list[tuple[Atom, Atom, Atom]] = []
    met: dict[tuple[str, Any], Atom] = {}  # each value's key -> the value
    for (_, pts), (_, kept) in zip(per_context, merged, strict=True):
        for (_, v), k in zip(pts, nearest_merged(kept, pts), strict=True):
            written = kept[k][1]
            met.setdefault(value_key(v), v)
            first_met = canon.setdefault(value_key(v), written)
            if value_key(first_met) != value_key(written):
                clashes.append((v, first_met, written))
    written_values = {value_key(w): w for w in canon.values()}
    for key, w in canon.items():
        if key != value_key(w) and key in written_values:
            clashes.append((w, written_values[key], w))
    if clashes:
        merged, canon = _twin_columns(node, merged, canon, met, clashes)
    for key, v in replaced.items():
        canon.setdefault(key, canon[value_key(v)])
    for v in listed or ():
        if value_key(v) not in canon and is_number(v) and float(v) in first:
            canon[value_key(v)] = canon[value_key(first[float(v)])]
    return merged, canon


def nearest_merged(merged: list[tuple[float, Atom]], points: list[tuple[float, Atom]]) -> list[int]:
    """For each point, the index of the merged point nearest its x (the lower on a tie): the
    point whose value is written in its place (`merged` sorted by x, as merge_points gives it)."""
    xs = np.array([x for x, _ in merged], dtype=np.float64)  # sorted, distinct
    at = np.array([x for x, _ in points], dtype=np.float64)
    hi = np.clip(np.searchsorted(xs, at), 0, len(xs) - 1)
    lo = np.clip(hi - 1, 0, len(xs) - 1)
    return np.where(np.abs(xs[lo] - at) <= np.abs(xs[hi] - at), lo, hi).tolist()


def _twin_columns(
    node: IRNode,
    merged: list[tuple[Atom, list[tuple[float, Atom]]]],
    canon: dict[tuple[str, Any], Atom],
    met: dict[tuple[str, Any], Atom],
    clashes: list[tuple[Atom, Atom, Atom]],
) -> tuple[list[tuple[Atom, list[tuple[float, Atom]]]], dict[tuple[str, Any], Atom]]:
    """`merged` and `canon` with the columns of each clash made one: a value met in two columns
    (5/6 squared from either of 5/6's float64 twins, 0.6944444444444443 and ...45, at two points
    merged the other way round) is written in one, where the columns are float64 twins of one
    value, and one of them (nearest a short decimal, as `merge_noise` keeps) stands for every
    value either stood for (`_stands_for`: the decoder gives it where the interpreter has any of
    them, and `rasp verify` compares so). Else `_two_columns`' refusal, as before: a column of
    values that are not twins would decode one as another. The maps that read the one-hot list
    their rows in these values (`Built.canon`), and refuse where twins lead to different results."""
    parent: dict[tuple[str, Any], tuple[str, Any]] = {}

    def root(key: tuple[str, Any]) -> tuple[str, Any]:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    columns = {value_key(w): w for w in canon.values()}
    for _, a, b in clashes:
        columns.update(((value_key(a), a), (value_key(b), b)))  # (b need be no value's first)
        parent[root(value_key(a))] = root(value_key(b))
    groups: dict[tuple[str, Any], list[Atom]] = {}  # a group's root -> its columns
    for key, w in columns.items():
        groups.setdefault(root(key), []).append(w)
    stood: dict[tuple[str, Any], list[Atom]] = {}  # a group's root -> the values it stands for
    for key, w in canon.items():
        stood.setdefault(root(value_key(w)), []).append(met[key])
    into: dict[tuple[str, Any], Atom] = {}  # a column's key -> the column written in its place
    for top, members in groups.items():
        if len(members) == 1:
            continue
        kept = _twin_kept(members, stood.get(top, []))
        if kept is None:
            raise _two_columns(node, next(v for v, _, _ in clashes if root(value_key(v)) == top))
        into.update((value_key(w), kept) for w in members)
    merged = [(c, [(x, into.get(value_key(w), w)) for x, w in pts]) for c, pts in merged]
    canon = {key: into.get(value_key(w), w) for key, w in canon.items()}
    return merged, canon


def _twin_kept(members: list[Atom], values: list[Atom]) -> Atom | None:
    """The column to keep of `members` (columns met by one value), which must stand for every
    one of `values` (`_stands_for`), the member nearest a short decimal first; None where the
    members are not float64 twins of one value (numbers, no bool, each within FLOAT64_NOISE of
    the least: `float64_twins`) or none stands for them all."""
    if not all(is_number(w) and not isinstance(w, bool) for w in members):
        return None
    numbers = sorted(float(w) for w in members)
    if not all(math.isfinite(x) and float64_twins(numbers[0], x) for x in numbers):
        return None
    ordered = sorted(members, key=lambda w: (abs(float(w) - round(float(w), 9)), float(w)))
    return next((w for w in ordered if all(map(partial(_stands_for, w), values))), None)


def _two_columns(node: IRNode, value: Atom) -> CompileError:
    return CompileError(
        [
            Diagnostic(
                f"'{node.text}' would write {value!r} to two different one-hot columns: its "
                "inputs hold numbers that float32 cannot tell apart in some contexts only",
                node.span,
                "compute the input exactly (a count rather than a fraction), or read this "
                "value as a number",
            )
        ]
    )


def _stands_for(written: Atom, value: Atom) -> bool:
    """Whether a model that writes `written` where the program gives `value` keeps the promise:
    `same_value`, and a whole number never stands for a different int (the output's whole types
    may decode it as an int, compared exactly: 1000000000.0 within 1e-6 of 1000000001 decoded
    as 1000000000)."""
    if not same_value(written, value):
        return False
    if isinstance(value, int) and not isinstance(value, bool) and is_number(written):
        return not float(written).is_integer() or written == value
    return True


def _zero_one(value: Atom) -> bool:
    return type(value) is int and value in (0, 1)


def _merge_sorted(node: IRNode, points: list[tuple[float, Atom]]) -> list[tuple[float, Atom]]:
    """`merge_points` over points sorted by x."""
    clusters: list[list[tuple[float, Atom]]] = []
    for x, v in points:
        if clusters and float64_twins(clusters[-1][0][0], x):
            clusters[-1].append((x, v))
        else:
            clusters.append([(x, v)])
    merged = []
    # float64 twins of one value (most runs): no check below can fail
    one = bool(points) and _one_value(points)
    for cluster in clusters:
        # (of equal xs, an int value 0 or 1 first: a tracr mean's 0 or 1 is one selected bool,
        # which `rasp verify` takes as the int, not as 0.0 or 1.0; the int stands for them too)
        x0, v0 = min(cluster, key=lambda p: (abs(p[0] - round(p[0], 9)), not _zero_one(p[1])))
        if one:
            merged.append((x0, v0))
            continue
        for x, v in cluster:
            if x == x0 and not _stands_for(v0, v):
                raise CompileError(
                    [
                        Diagnostic(
                            f"'{node.text}' gives {value_repr(v0)} and {value_repr(v)} for inputs "
                            f"that are the same number ({x})",
                            node.span,
                            "a compiled model reads numbers, so 1 and 1.0 cannot lead to different results",
                        )
                    ]
                )
        for x, v in cluster:
            if x != x0 and not _stands_for(v0, v):
                raise NoiseError(
                    [
                        Diagnostic(
                            f"'{node.text}' gives {v0!r} at {x0!r} and {v!r} at {x!r}, "
                            + gap_words(x0, x, FLOAT64_NOISE),
                            node.span,
                            "a model computes in float32 and cannot tell them apart: compute the "
                            "input exactly (a count rather than a fraction), or move the point "
                            "where the result changes away from the values the input takes "
                            "(round(x + 0.001) rather than a tie at .5)",
                        )
                    ]
                )
        merged.append((x0, v0))
    return merged


def merge_noise(values: Sequence[Atom]) -> tuple[Atom, ...]:
    """`values` without the numbers that differ from another only by float64 noise (relative
    FLOAT64_NOISE): each cluster keeps the member nearest a short decimal, as `merge_points` does.
    Equal numbers (0 and 0.0) all stay: a model reads them alike and the runtime picks the int."""
    dropped = {
        i
        for kept, members in noise_clusters(values)
        for i in members
        if float(values[i]) != float(values[kept])  # (10^17 + 1 and 10^17 are one float64)
    }
    return tuple(v for i, v in enumerate(values) if i not in dropped)


def noise_clusters(values: Sequence[Atom]) -> list[tuple[int, tuple[int, ...]]]:
    """The runs of `values`' finite numbers that differ only by float64 noise (sorted, each within
    FLOAT64_NOISE of the run's least), as (index of the member kept, every member's index), the
    kept one nearest a short decimal as in `merge_points`; a run of one number included."""
    numbers = sorted(
        (float(v), i) for i, v in enumerate(values) if is_number(v) and math.isfinite(float(v))
    )
    clusters: list[list[tuple[float, int]]] = []
    for x, i in numbers:
        if clusters and float64_twins(clusters[-1][0][0], x):
            clusters[-1].append((x, i))
        else:
            clusters.append([(x, i)])
    return [
        (min(cluster, key=lambda p: abs(p[0] - round(p[0], 9)))[1], tuple(i for _, i in cluster))
        for cluster in clusters
    ]


def snap_targets(program: Sequence[Atom], reading: Sequence[Atom]) -> tuple[Atom, ...]:
    """What a numerical output snaps to: the program's values, float64 twins (0.6 and
    0.6000000000000001) listed once, since two targets with nothing between them cannot both be
    snapped to. The output's reading may list numbers the program never outputs (an aggregate's
    default where some key is always selected); the certifier checks the snap of each, so each is
    a target too, unless it is within noise of a program value (whose type, 2 or 2.0, must win)."""
    near = merge_noise(program)
    kept = np.unique([float(v) for v in near if is_number(v)])  # sorted
    extra = []
    for v in reading:
        if not is_number(v) or not math.isfinite(x := float(v)):
            continue
        at = int(np.searchsorted(kept, x))
        closest = min(
            (abs(kept[j] - x) for j in (at - 1, at) if 0 <= j < len(kept)), default=math.inf
        )
        if closest > FLOAT64_NOISE * max(1.0, abs(x)):
            extra.append(v)
    return near if not extra else merge_noise(sort_values([*near, *extra]))
