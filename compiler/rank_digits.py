"""The digit maps of compiler.order_digits, apart so that the value analysis (compiler.count_keys)
can tell an order rewritten over digits from any other selector without importing the rewrite."""

from __future__ import annotations

import bisect
import dataclasses

from compiler.blocks import Atom


@dataclasses.dataclass(frozen=True)
class Digit:
    """Digit `place` (a power of `base`) of a number's rank among `values`."""

    values: tuple[Atom, ...]  # sorted numbers
    place: int
    base: int

    def __call__(self, value: Atom) -> int:
        rank = bisect.bisect_left(self.values, value)  # type: ignore[arg-type]
        return rank // self.place % self.base
