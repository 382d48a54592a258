"""A reach (JSON, as a model file holds it) with its residual dimensions named by label.

A reach names residual dimensions by position: a reading's terms and a head's out dims. Where
two compilers lay the residual out differently (before 2026-12-05 every program had the token
one-hot, read or not: `length.rasp`'s `_map_2` at dimension 6, now 3), the same program's reaches
differ in those numbers only. Read through each file's `residual` labels they are equal, and an
equal reach under a one-to-one renaming of dimensions is the same program (the certifier reads
`one`, `bos` and `pad` by label too), so `rebuild.rebuild_reach` compares them so where the
positions differ."""

from __future__ import annotations

import copy
from typing import Any


def by_label(reach: Any, residual: Any) -> dict[str, Any] | None:
    """A copy of `reach` with every residual index replaced by its label in `residual`, in the
    order written (a vector reading's terms, a copy's out dims and its columns go together).
    None where the labels do not name dimensions one to one (not distinct strings) or the reach
    is not shaped as a compiler writes it: the comparison then stays by position."""
    if not isinstance(reach, dict) or not isinstance(residual, list):
        return None
    if not isinstance(reach.get("readings"), list) or not isinstance(reach.get("heads"), list):
        return None
    if not all(isinstance(x, str) for x in residual) or len(set(residual)) != len(residual):
        return None
    # the MLPs' points (most of a large reach) name readings, not dimensions: shared, not copied
    out = {**reach, "readings": copy.deepcopy(reach["readings"])}
    out["heads"] = copy.deepcopy(reach["heads"])
    try:
        for reading in out["readings"]:
            reading["terms"] = [
                [[_label(d, residual), c] for d, c in terms] for terms in reading["terms"]
            ]
        for head in out["heads"]:
            for value in head["values"]:
                value["out"] = [_label(d, residual) for d in value["out"]]
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    return out


def _label(d: Any, residual: list[str]) -> str:
    if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < len(residual):
        raise ValueError(f"no residual dimension {d!r}")
    return residual[d]


def unread(residual: list[str], rebuilt: list[str]) -> list[str]:
    """The file's residual labels the rebuilt model has no dimension for (`tokens:a` ...)."""
    kept = set(rebuilt)
    return [label for label in residual if label not in kept]


__all__ = ["by_label", "unread"]
