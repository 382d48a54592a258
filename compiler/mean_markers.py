"""The numbers a tracr mean stands in for what it cannot average (bools, None), and the maps back.

`compiler.resolve` makes a tracr mean a plain aggregate over numbers: bools read as 0/1 and None
as a stand-in number (`AsNumber`), and a map after the mean gives the stand-ins back (`Markers`).
Other stages recognise those maps: the encoder's hints (`maps_back`), the output decoder
(`none_stand_in`) and the vote form (`AS_NUMBER_TEXT`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compiler.rounded import unrounded
from rasp import sops
from rasp.errors import RaspRuntimeError
from rasp.nodes import LABEL_MAX
from rasp.written_text import written

# the text of the map that gives a mean its values as numbers (compiler.vote_means reads through it)
AS_NUMBER_TEXT = "bools as 0/1, None as a number"


def as_number_note(values: sops.Node, none: Any) -> str:
    """How messages and `rasp show` name the map giving a tracr mean `values` as numbers: by
    tracr's word for an s-op read as numbers, `numerical(any_negative)` (it shares its mean's
    span, a library call's too, so its source text names it not: it read `map(any_negative)`),
    with the number standing in for None where there is one (`numerical(x) (None as -1)`)."""
    shown = f"numerical({written(values, LABEL_MAX)})"
    return shown if none is None else f"{shown} (None as {none})"


def maps_back(fn: Any) -> bool:
    """Whether `fn` is a tracr mean's map back from its stand-ins (its default's among them)."""
    return isinstance(unrounded(fn), Markers)


def none_marker(node: sops.Node) -> Any:
    """The number a map back from a mean (`Markers`) gives None for, else None."""
    fn = unrounded(node.fn) if isinstance(node, sops.MapSOp) else None
    if isinstance(fn, Markers):
        return next((m for m, original in fn.back if original is None), None)
    return None


def none_stand_in(fn: Any) -> int | None:
    """The number a map back from `resolve._none_as_number` (or a mean's, where None is its only
    stand-in and no mean of it with numbers is possible) gives None for, else None: a model may
    output that number itself, decoded as None (`output.none_at`, compiler.encode)."""
    fn = unrounded(fn)
    if isinstance(fn, Markers) and fn.mixes is None and len(fn.back) == 1:
        marker, original = fn.back[0]
        return marker if original is None else None
    return None


@dataclasses.dataclass(frozen=True)
class AsNumber:
    """A value as the mean reads it: bools as 0/1, None as its stand-in."""

    none: int | None

    def __call__(self, value: Any) -> Any:
        if value is None:
            return self.none
        return int(value) if isinstance(value, bool) else value


@dataclasses.dataclass(frozen=True)
class Markers:
    """The mean's stand-in numbers back to what they stand for; a value strictly between the two
    numbers of `mixes` is a mean of None's stand-in with numbers, tracr's error."""

    back: tuple[tuple[int, Any], ...]
    mixes: tuple[float, float] | None = None

    def __call__(self, value: Any) -> Any:
        if self.mixes is not None and self.mixes[0] < value < self.mixes[1]:
            raise RaspRuntimeError(
                "ValueError: a mean over several values with None among them (tracr averages "
                "only ints, bools and floats)"
            )
        for marker, original in self.back:
            if value == marker:
                return original
        return value
