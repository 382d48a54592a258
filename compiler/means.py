"""Value sets of aggregates: the values, the default and every mean the interpreter can compute.

`MeanValues` answers for one aggregate at a time, reading what the inference knows about its
inputs (`relations.Known`: value sets, relations, selector widths per position) and reporting
problems there. Where the keys depend on tokens but the aggregated s-op has a relation, the
aggregate has one per length: a mean of keys of an input of length n lies within the bounds of
the s-op's values at length n (`means_within`), so `v0 - length` for a mean v0 of `indices` is
never positive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler.blocks import Atom, is_number, sort_values, value_key
from compiler.graph import IRNode, Op
from compiler.pinned_means import EXACT_SUMS, copy_means, pinned_means, sums_exact
from compiler.relations import Known, Relation, already_reported
from rasp.errors import Diagnostic
from rasp.seqvalues import value_repr

MAX_VALUES = 100_000  # values one s-op may take (means included)
MAX_SUM_WORK = 20_000_000  # (sum, value) pairs enumerating the means of one aggregate may visit


class MeanValues:
    def __init__(self, known: Known) -> None:
        self.known = known
        self._sums: dict[tuple[float, ...], list[set[float]]] = {}
        self._means: dict[tuple[Any, ...], tuple[Atom, ...]] = {}
        # per value set: the count whose sums overflowed, and whether by work (else by values);
        # an aggregate asks once per (position, width), and each would redo the enumeration
        self._overflow: dict[tuple[float, ...], tuple[int, bool]] = {}
        # the same for exact sums of ints (apart: (3,) == (3.0,) as a key)
        self._int_sums: dict[tuple[int, ...], list[set[int]]] = {}
        self._int_overflow: dict[tuple[int, ...], tuple[int, bool]] = {}

    def aggregate_values(
        self,
        node: IRNode,
        *,
        single_selector: bool,
        equal_values: bool = False,
        default_taken: bool = True,
        held: Sequence[Atom] | None = None,
    ) -> tuple[Relation | None, tuple[Atom, ...]]:
        """The aggregate's values (per (position, length) where known). `equal_values`: the
        selected keys always hold one value of the aggregated s-op (`count_keys`), so a mean of
        whole numbers is one of them, exactly (as a float). `default_taken` False: the selector
        selects a key for every query of every input, so the default is never the value. `held`:
        every key the selector selects, for every query, holds one of these values of the s-op
        (`token_views.held_value`: the one value a key-only select pins), which stand for its
        value set; a query that selects no key still takes the default (`default_taken`)."""
        known = self.known
        dflt = [node.value] if default_taken else []
        selector, sop = node.inputs
        vals = known.values[sop] if held is None else sort_values(held)
        # Several selected values are averaged when all are numbers (None or a string among them
        # is refused on that input only): the means range over the numbers among the values.
        numbers = [v for v in vals if is_number(v)]
        widths = known.widths.get(selector)
        several = (
            not single_selector and known.n_max >= 2
            if widths is None
            else any(w >= 2 for w in widths.values())
        )
        if several and any(isinstance(v, bool) for v in vals) and any(is_number(v) for v in vals):
            # The interpreter averages such a mix as numbers (the original's isinstance(v, int)
            # check lets bools through) on some inputs and refuses all-bool selections on others.
            known.problems.append(
                Diagnostic(
                    f"'{node.text}' may average a mix of bools and numbers",
                    node.span,
                    "make the values all numbers (indicator(...)) or all bools, or select at "
                    "most one key",
                )
            )
            return None, sort_values([*vals, *dflt])
        others = [v for v in vals if not is_number(v)]
        if several and numbers and others:
            # The interpreter averages the numbers on inputs where only numbers are selected; one
            # mean head cannot also carry None or a string.
            known.problems.append(
                Diagnostic(
                    f"'{node.text}' may average several numbers, but its values also include "
                    f"{value_repr(others[0])}",
                    node.span,
                    "a compiled model averages numbers only: map the other values to numbers "
                    "before aggregating, or select at most one key",
                )
            )
            return None, sort_values([*vals, *dflt])
        per_length = self.length_constants(sop) if several else None
        # copies of one number: the mean is the number itself (as a float) where float64 adds
        # up to N copies exactly, else each count's mean of copies (copy_means)
        exact = several and equal_values and all(sums_exact(v, known.n_max) for v in numbers)
        copies = (
            [float(v) for v in numbers]
            if exact
            else copy_means(numbers, known.n_max)
            if several and equal_values
            else None
        )
        if widths is None and per_length is not None:
            # every selected key holds the same whole number c: its mean is c (as a float)
            rel = {
                (i, n): known.intern([per_length[n], float(per_length[n]), *dflt])
                for i, n in known.pairs
            }
            return rel, ()
        if widths is None:
            # keys chosen by tokens, but what they hold may be bounded per length (`indices`)
            by_length = self.source_by_length(sop)
            if by_length is not None and held is not None:
                by_length = self.held_by_length(by_length, vals)
            if single_selector or known.n_max < 2 or not numbers:
                if by_length is not None:
                    return self.per_length(dflt, by_length, lambda n, s: ()), ()
                return None, sort_values([*vals, *dflt])
            if copies is not None:
                if by_length is not None and exact:
                    return self.per_length(dflt, by_length, lambda n, s: map(float, s)), ()
                return None, sort_values([*vals, *dflt, *copies])
            bos = self.bos_means(selector, sop)
            if bos is not None:
                return None, sort_values(bos)
            reported = len(known.problems)
            means = self.means_up_to(numbers, known.n_max, node)
            if by_length is not None and len(known.problems) == reported:
                within = self.means_within(numbers, node)
                if within is not None:
                    return self.per_length(dflt, by_length, within), ()
            return None, sort_values([*vals, *dflt, *means])
        default, every = known.intern([node.value]), known.intern(vals)
        copied = self._copied(selector, sop) if any(w == 1 for w in widths.values()) else None
        averaged = self._averaged(selector, sop) if several and numbers else None
        pinned = (
            pinned_means(known, selector, sop, node, self.sums_of) if several and numbers else None
        )
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        # `means_of` per width, asked once (dyck1 at N = 256: 66K pairs, 256 widths); an empty
        # answer (too many sums, reported) is asked again, as each pair reported it
        by_width: dict[int, tuple[Atom, ...]] = {}
        for p, w in widths.items():
            if w == 0:
                rel[p] = default
            elif w == 1:
                rel[p] = every if copied is None else copied(*p)
            elif averaged is not None and (mean := averaged(*p)) is not None:
                rel[p] = mean
            elif per_length is not None:
                rel[p] = known.intern([float(per_length[p[1]])])
            elif pinned is not None and (means := pinned(*p)) is not None:
                rel[p] = means
            elif copies is not None:
                rel[p] = known.intern(copies)
            elif numbers:
                found = by_width.get(w)
                if found is None:
                    found = self.means_of(numbers, w, node)
                    if found:
                        by_width[w] = found
                rel[p] = found
            else:
                rel[p] = known.intern([])  # the interpreter refuses to average non-numbers
        return rel, ()

    def _copied(self, selector: int, sop: int) -> Callable[[int, int], tuple[Atom, ...]] | None:
        """Where positions decide the selector and `sop` has a relation: (i, n) -> the values
        `sop` takes at the one key selected there (the flip of a prefix mean copies k / (n - i),
        not every mean). None where `sop` has no relation."""
        source = self.known.relation[sop]
        if source is None:
            return None
        keys: dict[int, np.ndarray] = {}  # per length: the key each query selects (if one)

        def at(i: int, n: int) -> tuple[Atom, ...]:
            chosen = keys.get(n)
            if chosen is None:
                matrix = self.known.matrix(selector, n)  # known: the selector's widths are
                assert matrix is not None
                chosen = keys[n] = matrix.argmax(axis=1)
            return source[(int(chosen[i]), n)]  # type: ignore[index]

        return at

    def _averaged(self, selector: int, sop: int) -> Callable[[int, int], tuple[Atom, ...] | None]:
        """Where positions decide the selector: (i, n) -> the one mean the interpreter computes
        there, when `sop` is known exactly at every position of length n (`indices`, a mean of
        them: the mean of every key is (n - 1) / 2, not any mean of n values of 0..N-1); None at a
        length where it is not, or where the interpreter averages otherwise (`_column_means`)."""
        found: dict[int, np.ndarray | None] = {}  # per length: each query's mean, as computed

        def at(i: int, n: int) -> tuple[Atom, ...] | None:
            if n not in found:
                column = self.known.column(sop, n)
                matrix = self.known.matrix(selector, n)  # known: the selector's widths are
                assert matrix is not None
                found[n] = None if column is None else _column_means(matrix, column)
            means = found[n]
            return None if means is None else self.known.intern([float(means[i])])

        return at

    def source_by_length(self, sop: int) -> dict[int, tuple[Atom, ...]] | None:
        """Where `sop` has a relation: per length n, every value it takes at some position of an
        input of length n (whichever keys are selected there, they hold these)."""
        rel = self.known.relation[sop]
        if rel is None:
            return None
        sets: dict[int, dict[int, tuple[Atom, ...]]] = {}  # n -> its distinct sets, by id
        for (_, n), vs in rel.items():
            sets.setdefault(n, {})[id(vs)] = vs
        return {
            n: self.known.intern([v for vs in group.values() for v in vs])
            for n, group in sets.items()
        }

    def held_by_length(
        self, by_length: dict[int, tuple[Atom, ...]], held: Sequence[Atom]
    ) -> dict[int, tuple[Atom, ...]]:
        """`source_by_length` kept to the values the selected keys hold (`held`): at a length
        where the s-op never takes one, no key is selected (the query takes its default)."""
        keep = {value_key(v) for v in held}
        return {
            n: self.known.intern([v for v in s if value_key(v) in keep])
            for n, s in by_length.items()
        }

    def per_length(
        self,
        dflt: list[Atom],
        by_length: dict[int, tuple[Atom, ...]],
        extra: Callable[[int, tuple[Atom, ...]], Any],
    ) -> Relation:
        """The aggregate's relation from its source's values per length: at every position of
        length n, the default (`dflt`: empty where it is never taken), a value of the source at
        length n (one key selected), or one of `extra(n, those values)` (the means of several)."""
        known = self.known
        at_length = {n: known.intern([*s, *dflt, *extra(n, s)]) for n, s in by_length.items()}
        return {(i, n): at_length[n] for i, n in known.pairs}

    def means_within(
        self, numbers: Sequence[Atom], node: IRNode
    ) -> Callable[[int, tuple[Atom, ...]], list[float]] | None:
        """(n, the source's values at length n) -> the means of `numbers` (`means_of`, already
        computed for every count) of at most n values that lie within those values' bounds: a
        mean of n or fewer keys of an input of length n, each holding a value between lo and hi,
        lies between lo and hi, up to float64's rounding of the sum (`_rounding_slack`). None
        where a number is not finite (inf and -inf average to nan)."""
        if not all(math.isfinite(v) for v in numbers):
            return None
        found = [
            (w, np.array(self.means_of(numbers, w, node), dtype=np.float64))
            for w in range(2, self.known.n_max + 1)
        ]
        means = np.concatenate([m for _, m in found])
        counts = np.concatenate([np.full(len(m), w) for w, m in found])
        order = np.lexsort((counts, means))  # by value, then count: the first of each is its least
        means, counts = means[order], counts[order]
        first = np.ones(len(means), dtype=bool)
        first[1:] = means[1:] != means[:-1]
        means, counts = means[first], counts[first]
        whole = all(
            float(v).is_integer() and abs(v) * self.known.n_max < EXACT_SUMS for v in numbers
        )

        def within(n: int, values: tuple[Atom, ...]) -> list[float]:
            here = [float(v) for v in values if is_number(v)]
            if not here:
                return []
            lo, hi = min(here), max(here)
            slack = 0.0 if whole else _rounding_slack(lo, hi, n)
            keep = (counts <= n) & (means >= lo - slack) & (means <= hi + slack)
            return means[keep].tolist()

        return within

    def length_constants(self, sop: int) -> dict[int, Atom] | None:
        """The value of `sop` per length when at each length every position holds the same number
        whose float64 sums of up to n copies are exact (`length`, `2 * length`, `length * 0.25`;
        `sums_exact`): a mean of any keys of an input of length n is then that number, exactly.
        None when it is not so (`length * 0.1`: at length 4 three copies of 0.4 average to 0.4000000000000001)."""
        rel = self.known.relation[sop]
        if rel is None:
            return None
        out: dict[int, Atom] = {}
        for (_, n), vals in rel.items():
            if len(vals) != 1 or value_key(out.setdefault(n, vals[0])) != value_key(vals[0]):
                return None
        # at length n at most n keys are selected
        if not all(is_number(v) and sums_exact(v, n) for n, v in out.items()):
            return None
        return out

    def bos_means(self, selector: int, sop: int) -> list[Atom] | None:
        """The BOS trick: the values when the selector always selects key 0 and only key 0 counts.

        `aggregate(sel or select(indices, 0, ==), indicator(indices == 0))` (the original's
        `selector_width`, the paper's `_with_bos_selector_width`) selects w >= 1 keys, of which
        only key 0 is non-zero, so its value is v0 (w = 1) or v0 / w: N values, not every mean.
        None when the pattern does not apply.
        """
        n_max = self.known.n_max
        firsts: dict[tuple[str, Any], Atom] = {}  # by value_key: 1 and 1.0 both occur
        for n in range(1, n_max + 1):
            column = self.known.column(sop, n)
            if column is None or any(not is_number(v) or v != 0 for v in column[1:]):
                return None
            if not is_number(column[0]) or isinstance(column[0], bool):
                return None
            firsts.setdefault(value_key(column[0]), column[0])
        if not self._always_selects_key0(selector):
            return None
        out: list[Atom] = list(firsts.values())
        for v0 in firsts.values():
            out.extend(v0 * 1.0 / w for w in range(2, n_max + 1))
        return out

    def _always_selects_key0(self, index: int) -> bool:
        """Whether every query of every length selects key 0 (positional parts decide it)."""
        node = self.known.g[index]
        if node.op is Op.OR:
            return any(self._always_selects_key0(i) for i in node.inputs)
        if node.op is Op.AND:
            return all(self._always_selects_key0(i) for i in node.inputs)
        for n in range(1, self.known.n_max + 1):
            m = self.known.matrix(index, n)
            if m is None or not m[:, 0].all():
                return False
        return True

    def means_of(self, vals: Sequence[Atom], w: int, node: IRNode) -> tuple[Atom, ...]:
        """Every mean of exactly w values drawn (with repetition) from `vals`, as the interpreter
        computes it. Ints whose sums may pass 2^53 it sums as Python ints, rounds once, then
        divides (`rasp.sops`: float(S) / w, S the exact sum, where float64 adds would round at
        each add); a float among the values may make the column floats, whose float64 adds (the
        ints converted) are taken in any order. Below 2^53 both are the same exact sums."""
        nums = tuple(sorted({float(v) for v in vals}))
        ints = tuple(sorted({int(v) for v in vals if isinstance(v, int)}))
        exact = not ints or max(abs(v) for v in ints) * w < EXACT_SUMS
        floats = any(not isinstance(v, int) for v in vals)
        key: tuple[Any, ...] = (nums, w) if exact else (nums, ints, floats, w)
        if key not in self._means:
            sums = self.sums_of(nums, w, node) if exact or floats else set()
            whole = None if exact else self.int_sums_of(ints, w, node)
            if sums is None or (not exact and whole is None):
                return self.known.intern([])
            means = {a / w for a in sums}
            means.update(m for s in whole or () if (m := _rounded_mean(s, w)) is not None)
            self._means[key] = self.known.intern(means)
        return self._means[key]

    def sums_of(self, vals: Sequence[Atom], w: int, node: IRNode) -> set[float] | None:
        """Every float64 sum of exactly w values drawn (with repetition) from `vals`, in any
        order; None (reported) where there are too many."""
        nums = tuple(sorted({float(v) for v in vals}))
        return self._sums_by_adds(nums, w, node, 0.0, self._sums, self._overflow)

    def int_sums_of(self, ints: tuple[int, ...], w: int, node: IRNode) -> set[int] | None:
        """Every exact sum (Python ints) of exactly w of `ints` (repetition allowed); None
        (reported) where there are too many."""
        return self._sums_by_adds(ints, w, node, 0, self._int_sums, self._int_overflow)

    def _sums_by_adds(
        self,
        nums: tuple[Any, ...],
        w: int,
        node: IRNode,
        zero: float,
        cache: dict[Any, list[set[Any]]],
        overflows: dict[Any, tuple[int, bool]],
    ) -> set[Any] | None:
        sums = cache.setdefault(nums, [{zero}])  # sums[k]: every sum of k values
        overflow = overflows.get(nums)
        if overflow is not None and w >= overflow[0]:  # the sums of w values overflow again
            self._too_many(node, len(nums), work=overflow[1])
            return None
        while len(sums) <= w:
            if len(sums[-1]) * len(nums) > MAX_SUM_WORK:  # minutes of Python, whatever it yields
                overflows[nums] = (len(sums), True)
                self._too_many(node, len(nums), work=True)
                return None
            nxt: set[Any] = set()
            for a in sums[-1]:  # stop as soon as there are too many (not after |sums| x |nums|)
                nxt.update(a + v for v in nums)
                if len(nxt) > MAX_VALUES:  # whatever the order: the whole set is larger still
                    overflows[nums] = (len(sums), False)
                    self._too_many(node, len(nums))
                    return None
            sums.append(nxt)
        return sums[w]

    def means_up_to(self, vals: Sequence[Atom], n_max: int, node: IRNode) -> list[Atom]:
        out: set[float] = set()
        for w in range(2, n_max + 1):
            out.update(self.means_of(vals, w, node))
            if len(out) > MAX_VALUES:
                self._too_many(node, len(vals))
                break
        return sorted(out)

    def _too_many(self, node: IRNode, distinct: int, work: bool = False) -> None:
        if not already_reported(node, self.known.problems):
            what = (
                f"has too many sums to enumerate (more than {MAX_SUM_WORK:,} steps)"
                if work
                else f"can take more than {MAX_VALUES} values"
            )
            self.known.problems.append(
                Diagnostic(
                    f"the mean computed by '{node.text}' {what}",
                    node.span,
                    f"averaging {distinct} distinct numbers over up to {self.known.n_max} positions; "
                    "reduce max length or the number of distinct values averaged",
                )
            )


def _rounded_mean(total: int, w: int) -> float | None:
    """The interpreter's mean of ints summing to `total`: `total * 1.0 / w`; None where the sum
    is past float's range (it refuses that input)."""
    try:
        return float(total) / w
    except OverflowError:
        return None


def _rounding_slack(lo: float, hi: float, n: int) -> float:
    """How far outside [lo, hi] float64 may place a mean of at most n values within it: a sum
    in key order errs by at most (n - 1) * u * n * max(|lo|, |hi|) (u = 2^-53), the division by
    half an ulp more; doubled, with room to spare. (Whole numbers below EXACT_SUMS / N sum
    exactly: their means need none.)"""
    return 2.0**-50 * (n + 1) * n * max(abs(lo), abs(hi), 2.0**-1000)


def _column_means(selected: np.ndarray, column: Sequence[Atom]) -> np.ndarray | None:
    """Each query's mean of the selected keys' values (`selected`: [n_query, n_key]) as
    `rasp.sops` computes it from the whole column: whole numbers (ints, bools among them) summed
    exactly, then divided; any float in the column makes every value a float64, summed in key
    order. None where the interpreter takes another path (None, a string, bools alone: it
    refuses or averages by rows) or the values are not finite (a nan compares with nothing)."""
    if not all(type(v) in (int, float, bool) for v in column) or all(
        type(v) is bool for v in column
    ):
        return None
    count = np.maximum(selected.sum(axis=1), 1)  # [n_query]
    if all(type(v) in (int, bool) for v in column):
        if max(abs(int(v)) for v in column) * len(column) >= EXACT_SUMS:
            return None  # the interpreter sums such whole numbers by rows, as Python ints
        values = np.array([int(v) for v in column], dtype=np.float64)
        return (selected.astype(np.float64) @ values) / count  # exact sums: any order alike
    values = np.array([float(v) for v in column], dtype=np.float64)
    if not np.isfinite(values).all():
        return None
    total = np.zeros(len(selected))  # [n_query]
    for k, value in enumerate(values):
        total = np.where(selected[:, k], total + value, total)  # IEEE adds, in key order
    means = total / count
    return means if np.isfinite(means).all() else None
