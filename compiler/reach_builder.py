"""Building a model's reach (`compiler.reach.Reach`) from its plan: assembly hands each scheduled
block's spec to a `ReachBuilder`, which turns the spec's domain (readings in `Dim` coordinates, the
select's atoms, an MLP's reachable points) into residual indices and value coordinates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, Encoded, Encoding, HeadSpec, MLPSpec
from compiler.layout import Layout
from compiler.reach import (
    AtomReach,
    HeadReach,
    MLPReach,
    Reach,
    Reading,
    ValueReach,
    atom_label,
)


class ReachBuilder:
    """Collects readings (each stored once) while assembly walks the scheduled blocks."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.readings: list[Reading] = []
        self._ids: dict[Encoded, int] = {}
        self.heads: list[HeadReach] = []
        self.mlps: list[MLPReach] = []

    def reading(self, enc: Encoded) -> int:
        if enc not in self._ids:
            ix = self.layout.index
            # A dimension nobody reads is not laid out: no weight touches it, so it drops out.
            if enc.encoding is Encoding.VECTOR:
                terms = tuple(
                    tuple((ix[d], float(c)) for d, c in t if d in ix) for t in enc.one_hot
                )
                labels = tuple(atom_label(v) for v in enc.values)
                self._ids[enc] = len(self.readings)
                self.readings.append(Reading(enc.name, False, terms, (), labels, vector=True))
                return self._ids[enc]
            if enc.is_categorical:
                terms = tuple(
                    tuple((ix[d], float(c)) for d, c in t if d in ix) for t in enc.one_hot
                )
                numbers: tuple[float, ...] = ()
            else:
                terms = (tuple((ix[d], float(c)) for d, c in enc.number if d in ix),)
                numbers = tuple(float(v) for v in enc.values)
            labels = tuple(atom_label(v) for v in enc.values)
            self._ids[enc] = len(self.readings)
            misfit = 0.0 if enc.is_categorical else enc.misfit
            self.readings.append(
                Reading(enc.name, enc.is_categorical, terms, numbers, labels, misfit=misfit)
            )
        return self._ids[enc]

    def head(self, layer: int, index: int, spec: HeadSpec) -> None:
        if spec.domain is None:
            raise ValueError(f"head {spec.name!r} has no domain for the certifier")
        d = spec.domain
        values = []
        for part in d.parts:
            out = tuple(self.layout.index[dim] for dim in part.out_dims)
            reading = None if part.reading is None else self.reading(part.reading)
            columns: tuple[float, ...] = ()
            if part.kind == "copy" and part.reading is not None:
                columns = tuple(float(part.intended(v).argmax()) for v in part.reading.values)
            elif part.kind == "number" and part.reading is not None:
                columns = tuple(_number_values(part.reading))
            values.append(
                ValueReach(
                    reading, out, part.kind, columns, tuple(part.intended_default().tolist())
                )
            )
        self.heads.append(
            HeadReach(
                layer,
                index,
                spec.name,
                spec.op,
                tuple(self.reading(e) for e in d.query),
                tuple(self.reading(e) for e in d.key),
                tuple(values),
                d.single,
                tuple(
                    AtomReach(self.reading(a.query), self.reading(a.key), np.asarray(a.table, bool))
                    for a in d.atoms
                ),
                d.selects.value,
                spec.mask,
            )
        )

    def mlp(self, layer: int, start: int, spec: MLPSpec) -> None:
        if spec.domain is None:
            raise ValueError(f"MLP {spec.name!r} has no domain for the certifier")
        d = spec.domain
        readings = tuple(self.reading(e) for e in d.readings)
        # column by column (a step MLP over a mean may have millions of points)
        columns = [
            _coordinates(e, [point[k] for point in d.points]) for k, e in enumerate(d.readings)
        ]
        points = tuple(zip(*columns, strict=True)) if columns else tuple(() for _ in d.points)
        outputs = tuple(_coordinates(d.out, list(d.outputs)))
        self.mlps.append(
            MLPReach(
                layer,
                spec.name,
                spec.op,
                (start, start + spec.hidden),
                readings,
                points,
                self.reading(d.out),
                outputs,
                spec.continuous,
            )
        )

    def build(self, output: Encoded) -> Reach:
        out = self.reading(output)
        return Reach(tuple(self.readings), tuple(self.heads), tuple(self.mlps), out)


def _coordinates(enc: Encoded, values: list[Atom]) -> list[float]:
    """Points' coordinates on a reading: each value's index (categorical, vector) or its number."""
    if enc.is_categorical or enc.encoding is Encoding.VECTOR:
        index = enc.index_of
        return [float(index(v)) for v in values]
    return [float(v) for v in values]


def _number_values(enc: Encoded) -> Sequence[float]:
    """The number each value of a reading stands for (a categorical reading of numbers too)."""
    return [float(v) for v in enc.values]
