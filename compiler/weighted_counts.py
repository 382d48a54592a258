"""Counted means of whole numbers other than 0 and 1: the sum of the selected values as a weighted
sum of `selector_width`s, one per bit (`compiler.counts` decides where a chain is a function of the
sum; this module finds the sums a chain can meet and builds the widths).

A prefix sum of digits, `round((indices + 1) * aggregate(select(indices, indices, <=),
tokens_int))`, or a bracket balance over steps of -1, 0 and +1 is a map of the mean and the
position: a step MLP with the index one-hot as context over every mean s/(i+1), about 9N^2/2 of
them for digits (376K parameters at N = 64, refused at N = 128). The sum s itself is

    s = sum_b 2^b * selector_width(S and select(bit_b(x), 1, ==))
      - sum_b 2^b * selector_width(S and select(bit_b(-x), 1, ==))

where bit_b(v) is bit b of v's magnitude where v has that sign (0 elsewhere): one width per bit of
the largest positive value and one per bit of the largest negative one (4 for digits, 2 for -1/0/1),
each O(N) units, summed by free affine views (a chain of two-input maps, so that the value analysis
meets at most MAX_SUM_COMBOS pairs at each).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, is_number
from rasp import sops

MAX_BITS = 6  # widths one sum may take (a head and a decoding MLP each)
MAX_SUM_COMBOS = 1_000_000  # (partial sum, width) pairs the value analysis meets at one step


def whole_values(values: Sequence[Atom]) -> list[int] | None:
    """The values as sorted distinct ints when every one is a whole number (ints or floats, no
    bools, |v| < 2^20), else None."""
    if not values or not all(is_number(v) and float(v).is_integer() for v in values):
        return None
    ints = sorted({int(v) for v in values})
    return ints if max(abs(ints[0]), abs(ints[-1])) < 2**20 else None


def reachable_sums(ints: Sequence[int], widths: int) -> list[np.ndarray]:
    """[w] -> the sorted sums of w values drawn (with repeats) from `ints`, for w = 0..widths."""
    low, high = ints[0], ints[-1]
    shifts = np.array(ints, dtype=np.int64) - low  # [k] >= 0
    out = [np.zeros(1, dtype=np.int64)]
    reached = np.ones(1, dtype=bool)  # reached[j]: the sum w·low + j, for the current w
    for w in range(1, widths + 1):
        grown = np.zeros(len(reached) + high - low, dtype=bool)
        for shift in shifts.tolist():
            grown[shift : shift + len(reached)] |= reached
        reached = grown
        out.append(np.flatnonzero(reached) + w * low)
    return out


def sum_fits(ints: Sequence[int], max_len: int) -> bool:
    """Whether the weighted widths of these values are few enough, and every partial sum's pairs
    with the next width are few enough for the value analysis."""
    bits = _bits(ints)
    if len(bits) > MAX_BITS:
        return False
    span = 0  # the partial sum's range, in units of max_len
    for _, weight in bits:
        if (span * max_len + 1) * (max_len + 1) > MAX_SUM_COMBOS:
            return False
        span += abs(weight)
    return True


def _bits(ints: Sequence[int]) -> list[tuple[int, int]]:
    """(sign, weight) per width: bit b of the positive values (weight 2^b), then of the negative
    ones (weight -2^b)."""
    most = max(ints[-1], 0)
    least = max(-ints[0], 0)
    return [(1, 1 << b) for b in range(most.bit_length())] + [
        (-1, -(1 << b)) for b in range(least.bit_length())
    ]


def weighted_count(
    selector: sops.Selector, values: sops.SOp, ints: Sequence[int], span: object, name: str | None
) -> sops.SOp:
    """The sum of `values` over the keys `selector` selects, as widths per bit summed (module
    doc); named `<name>_sum`, its widths `<name>_bit<b>` (`_neg<b>` for the negative values)."""
    total: sops.SOp | None = None
    for sign, weight in _bits(ints):
        b = abs(weight).bit_length() - 1
        label = f"bit{b}" if sign > 0 else f"neg{b}"
        bit_text = f"bit {b} of {'' if sign > 0 else '-'}{values.label}"
        bit = sops.MapSOp(
            fn=_Bit(b, sign),
            inputs=(values,),
            text=bit_text,
            span=span,  # type: ignore[arg-type]
        )
        ones = sops.Select(keys=bit, queries=sops.ConstSOp(value=1), comparison=sops.Comparison.EQ)
        width = sops.SelectorWidthSOp(
            selector=sops.SelectAnd(left=selector, right=ones),
            span=span,  # type: ignore[arg-type]
            name=f"{name}_{label}" if name else None,
            # the keys the mean selects whose value has this bit: `rasp show` says so, where
            # the span's text would name the mean
            note=f"selector_width({selector.label} and {bit_text})",
        )
        if total is None and weight == 1:
            total = width  # (a map 1 * width would name the same number twice)
        elif total is None:
            total = sops.MapSOp(
                fn=_Scaled(weight),
                inputs=(width,),
                text=f"{weight} * {width.label}",
                span=span,  # type: ignore[arg-type]
            )
        else:
            total = sops.MapSOp(
                fn=_PlusScaled(weight),
                inputs=(total, width),
                text=f"{total.label} + {weight} * {width.label}",
                span=span,  # type: ignore[arg-type]
            )
    assert isinstance(total, sops.MapSOp)  # values other than 0 and 1: a weight other than 1
    total.name = f"{name}_sum" if name else None
    return total


def declared_affine(fn: object) -> tuple[float, ...] | None:
    """The coefficients of one of this module's sums ([a_1, ..., a_k, b]), else None (any other
    function, a program's own included, is fitted on its rows)."""
    return fn.affine if isinstance(fn, _Scaled | _PlusScaled) else None


def sums_counted(root: sops.Node) -> bool:
    """Whether the graph holds a sum that `weighted_count` built."""
    return any(isinstance(n, sops.MapSOp) and isinstance(n.fn, _Bit) for n in sops.walk(root))


@dataclasses.dataclass(frozen=True)
class _Bit:
    """Bit `bit` of v's magnitude where v has the sign `sign`, else 0."""

    bit: int
    sign: int

    def __call__(self, value: Atom) -> int:
        magnitude = int(value) * self.sign  # type: ignore[arg-type]
        return (magnitude >> self.bit) & 1 if magnitude > 0 else 0


@dataclasses.dataclass(frozen=True)
class _Scaled:
    weight: int

    def __call__(self, count: int) -> int:
        return self.weight * count

    @property
    def affine(self) -> tuple[float, float]:
        """The map as [a, b]: a·count + b, which `maps` reads instead of fitting its rows."""
        return (float(self.weight), 0.0)


@dataclasses.dataclass(frozen=True)
class _PlusScaled:
    weight: int

    def __call__(self, total: int, count: int) -> int:
        return total + self.weight * count

    @property
    def affine(self) -> tuple[float, float, float]:
        """The map as [a_1, a_2, b]: total + weight·count."""
        return (1.0, float(self.weight), 0.0)
