"""What a compiled model can see at a real position: the certifier's input, stored in the model file.

Every block reads the residual stream through *readings* (`compiler.blocks.Encoded`): a categorical
reading gives, per value, the residual dimensions that are 1 for it (exactly one of them is 1 at a
real position); a numerical reading gives one linear combination of dimensions equal to its value;
a vector reading gives, per value, the exact numbers several dimensions hold (numerical addressing
reads a key's index as (i, i * i)).
The reach lists, in residual indices:

- the readings (terms per value, the numbers a numerical reading takes, labels for people);
- per head: its query and key readings (every combination of their values is a possible query or
  key), what its select chooses (a conjunction of truth tables, each over one query and one key
  reading, and the rule placing the chosen keys against BOS), and per aggregate it computes, the
  value reading and the out-dim vector the program means for each value (`kind` "copy": one column
  per value; "number": the value; "width": 0 at real keys);
- per MLP part: its hidden units, its readings and every reachable point (one value per reading),
  with the program's output there, written through the part's out reading;
- the output reading (what the unembedding decodes);
- per reading that only the embedding writes (an *input* reading: `tokens`, `indices`, a map of
  either the compiler embeds), its value at every token id or at every real position
  (`InputReach`), from the program's meaning of the embedding's dimensions.

It is what the compiler's value analysis knows (sets that may over-approximate, never under); the
certifier (`compiler.certify`) checks the weights against it and trusts nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from compiler.blocks import Atom, Selects
from rasp.seqvalues import value_repr

Terms = tuple[tuple[int, float], ...]  # (residual index, coefficient)


@dataclass(frozen=True)
class Reading:
    name: str
    categorical: bool
    terms: tuple[Terms, ...]  # categorical: one per value; numerical: exactly one
    numbers: tuple[float, ...]  # numerical: the values it takes; categorical: ()
    labels: tuple[str, ...]  # each value, for people
    # A vector reading (not categorical either): per value, `terms` are the exact numbers its
    # dimensions hold (indices read as (i, i * i) by numerical addressing).
    vector: bool = False
    # numerical: a bound on |the program's value - the terms' exact value| (an affine view read as
    # its fit, `compiler.affine_fits.affine_fit`); the certifier adds it to the error of every linear map
    # that reads the reading (`bounds.Linear`). In a file as "misfit", absent where 0.
    misfit: float = 0.0

    @property
    def size(self) -> int:
        return len(self.terms) if self.categorical or self.vector else len(self.numbers)


@dataclass(frozen=True)
class ValueReach:
    reading: int | None  # index into Reach.readings; None: only BOS has a value
    out: tuple[int, ...]  # residual indices written
    kind: str  # "copy" | "number" | "width"
    columns: tuple[float, ...]  # per value: its out column ("copy") or its number ("number")
    default: tuple[float, ...]  # BOS's intended out vector


@dataclass(frozen=True, eq=False)
class AtomReach:
    """One atom of a head's select: key state k is chosen by query state q (where the rest hold)
    iff table[q's value of `query`, k's value of `key`] (readings by index; value indices in the
    reading's order: numbers for a numerical reading)."""

    query: int
    key: int
    table: np.ndarray  # bool [query reading's size, key reading's size]

    def __eq__(self, other: object) -> bool:  # the table by value (a file's round trip)
        return (
            isinstance(other, AtomReach)
            and (self.query, self.key) == (other.query, other.key)
            and np.array_equal(self.table, other.table)
        )

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        bits = np.packbits(np.asarray(self.table, dtype=bool), axis=None)
        packed = base64.b64encode(zlib.compress(bits.tobytes(), 9)).decode("ascii")
        return {
            "query": self.query,
            "key": self.key,
            "shape": list(self.table.shape),
            "table": packed,
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> AtomReach:
        rows, cols = (int(n) for n in obj["shape"])
        if rows < 0 or cols < 0:
            raise ValueError("a negative table shape")
        raw = zlib.decompress(base64.b64decode(str(obj["table"]), validate=True))
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), count=rows * cols)
        return AtomReach(int(obj["query"]), int(obj["key"]), bits.astype(bool).reshape(rows, cols))


@dataclass(frozen=True)
class HeadReach:
    layer: int
    head: int
    name: str
    op: str
    query: tuple[int, ...]
    key: tuple[int, ...]
    values: tuple[ValueReach, ...]
    single: bool = False  # at most one key scores above BOS (proved by the value analysis)
    # What the select chooses (a conjunction) and where its keys score (`Selects`); None in a file
    # written before the reach recorded it: the certifier then cannot check the selection.
    atoms: tuple[AtomReach, ...] | None = None
    selects: str = Selects.ABOVE.value
    # The keys the runtime lets it see by position (transformer.config.HEAD_MASKS; "" every key):
    # part of what it selects, outside the scores. The certifier requires the file's config to
    # give the head this mask (an edited one sees other keys).
    mask: str = ""


@dataclass(frozen=True)
class MLPReach:
    layer: int
    name: str
    op: str
    hidden: tuple[int, int]  # units [start, stop) of the layer's MLP
    readings: tuple[int, ...]
    points: tuple[tuple[float, ...], ...]  # per reading: value index (categorical) or number
    out: int  # the reading the output is written through
    outputs: tuple[float, ...]  # per point: value index (categorical) or number
    continuous: bool = False  # no unit is a decision: errors pass through (compiler.interpolate)


class Axis(Enum):
    """What an input reading is a function of: the token id (W_E) or the position (W_pos)."""

    TOKEN = "token"
    POSITION = "position"


@dataclass(frozen=True)
class InputReach:
    """What the embedding holds for one input reading: its coordinate (value index, or the number
    of a numerical reading; None: no value, every dimension 0) per token id 0..V-1 (`by` "token")
    or per real position 1..N (`by` "position")."""

    reading: int
    by: Axis
    at: tuple[float | None, ...]


@dataclass(frozen=True)
class Reach:
    readings: tuple[Reading, ...]
    heads: tuple[HeadReach, ...]
    mlps: tuple[MLPReach, ...]
    output: int
    # None in a file written before the reach recorded it: the embedding cannot be checked
    inputs: tuple[InputReach, ...] | None = None
    # What the runtime reads from the file's metadata besides the weights, as the compile meant
    # it (the certifier requires the file's to be the same; None in a file written before the
    # reach recorded it: refused): causal attention (every query sees no later key), the
    # vocabulary's tokens by id (labels: which id the runtime encodes each token as), and a digest
    # of the output entry (how logits decode: values, type, grids; `decoding_digest`).
    causal: bool = False
    tokens: tuple[str, ...] | None = None
    decoding: str | None = None
    # the longest input (the runtime runs 1..max_len tokens); the value sets end there, and a
    # model without a positional embedding has no other record of it
    max_len: int | None = None

    def check_indices(self, d_model: int) -> None:
        """ValueError where a file's reach names a residual dimension or a reading that does not
        exist (numpy would raise IndexError, or wrap a negative index round, in the certifier)."""

        def dim(d: int, where: str) -> None:
            if not 0 <= d < d_model:
                raise ValueError(f"{where} names residual dimension {d} of {d_model}")

        def reading(r: int | None, where: str) -> None:
            if r is not None and not 0 <= r < len(self.readings):
                raise ValueError(f"{where} names reading {r} of {len(self.readings)}")

        for r in self.readings:
            for terms in r.terms:
                for d, _ in terms:
                    dim(d, f"reading {r.name!r}")
            if r.categorical and len(r.labels) != len(r.terms):
                raise ValueError(
                    f"reading {r.name!r} has {len(r.terms)} values but {len(r.labels)} labels"
                )
        for h in self.heads:
            where = f"layer {h.layer} head {h.head}"
            for r in (*h.query, *h.key):
                reading(r, where)
            for v in h.values:
                reading(v.reading, where)
                for d in v.out:
                    dim(d, where)
            for atom in h.atoms or ():
                reading(atom.query, where)
                reading(atom.key, where)
        for m in self.mlps:
            for r in (*m.readings, m.out):
                reading(r, f"layer {m.layer} mlp ({m.name})")
        reading(self.output, "the output")
        for i in self.inputs or ():
            reading(i.reading, "the embedding's record")

    def to_json(self) -> dict[str, Any]:
        return {
            "readings": [
                {
                    "name": r.name,
                    "categorical": r.categorical,
                    "terms": [[list(t) for t in terms] for terms in r.terms],
                    "numbers": list(r.numbers),
                    "labels": list(r.labels),
                    **({"vector": True} if r.vector else {}),
                    **({"misfit": r.misfit} if r.misfit else {}),
                }
                for r in self.readings
            ],
            "heads": [
                {
                    "layer": h.layer,
                    "head": h.head,
                    "name": h.name,
                    "op": h.op,
                    "query": list(h.query),
                    "key": list(h.key),
                    "values": [
                        {
                            "reading": v.reading,
                            "out": list(v.out),
                            "kind": v.kind,
                            "columns": list(v.columns),
                            "default": list(v.default),
                        }
                        for v in h.values
                    ],
                    "single": h.single,
                    **({"mask": h.mask} if h.mask else {}),
                    **(
                        {}
                        if h.atoms is None
                        else {"atoms": [a.to_json() for a in h.atoms], "selects": h.selects}
                    ),
                }
                for h in self.heads
            ],
            "mlps": [
                {
                    "layer": m.layer,
                    "name": m.name,
                    "op": m.op,
                    "hidden": list(m.hidden),
                    "readings": list(m.readings),
                    # column-major: one list per reading, then the outputs
                    "points": [list(col) for col in zip(*m.points)] if m.points else [],
                    "out": m.out,
                    "outputs": list(m.outputs),
                    **({"continuous": True} if m.continuous else {}),
                }
                for m in self.mlps
            ],
            "output": self.output,
            **({"causal": True} if self.causal else {}),
            **({} if self.tokens is None else {"tokens": list(self.tokens)}),
            **({} if self.decoding is None else {"decoding": self.decoding}),
            **({} if self.max_len is None else {"max_len": self.max_len}),
            **(
                {}
                if self.inputs is None
                else {
                    "inputs": [
                        {"reading": i.reading, "by": i.by.value, "at": list(i.at)}
                        for i in self.inputs
                    ]
                }
            ),
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Reach:
        """The inverse of to_json; KeyError/TypeError/ValueError on a malformed object."""
        readings = tuple(
            Reading(
                str(r["name"]),
                bool(r["categorical"]),
                tuple(tuple((int(i), float(c)) for i, c in terms) for terms in r["terms"]),
                tuple(float(x) for x in r["numbers"]),
                tuple(str(x) for x in r["labels"]),
                bool(r.get("vector", False)),
                _misfit(r.get("misfit", 0.0)),
            )
            for r in obj["readings"]
        )
        heads = tuple(
            HeadReach(
                int(h["layer"]),
                int(h["head"]),
                str(h["name"]),
                str(h["op"]),
                tuple(int(i) for i in h["query"]),
                tuple(int(i) for i in h["key"]),
                tuple(
                    ValueReach(
                        None if v["reading"] is None else int(v["reading"]),
                        tuple(int(i) for i in v["out"]),
                        str(v["kind"]),
                        tuple(float(x) for x in v["columns"]),
                        tuple(float(x) for x in v["default"]),
                    )
                    for v in h["values"]
                ),
                bool(h.get("single", False)),
                None if "atoms" not in h else tuple(AtomReach.from_json(a) for a in h["atoms"]),
                Selects(h.get("selects", Selects.ABOVE.value)).value,
                str(h.get("mask", "")),
            )
            for h in obj["heads"]
        )
        mlps = []
        for m in obj["mlps"]:
            cols = [tuple(float(x) for x in col) for col in m["points"]]
            points = tuple(zip(*cols)) if cols else ()
            mlps.append(
                MLPReach(
                    int(m["layer"]),
                    str(m["name"]),
                    str(m["op"]),
                    (int(m["hidden"][0]), int(m["hidden"][1])),
                    tuple(int(i) for i in m["readings"]),
                    points,
                    int(m["out"]),
                    tuple(float(x) for x in m["outputs"]),
                    bool(m.get("continuous", False)),
                )
            )
        inputs = None
        if "inputs" in obj:
            inputs = tuple(
                InputReach(
                    int(i["reading"]),
                    Axis(i["by"]),
                    tuple(None if x is None else float(x) for x in i["at"]),
                )
                for i in obj["inputs"]
            )
        tokens = obj.get("tokens")
        return Reach(
            readings,
            heads,
            tuple(mlps),
            int(obj["output"]),
            inputs,
            bool(obj.get("causal", False)),
            None if tokens is None else tuple(str(t) for t in tokens),
            None if obj.get("decoding") is None else str(obj["decoding"]),
            None if obj.get("max_len") is None else int(obj["max_len"]),
        )


def atom_label(v: Atom) -> str:
    """A value's label in the reach, for people (a string quoted)."""
    return value_repr(v) if isinstance(v, str) else str(v)  # a tracr tuple or list: its repr


def decoding_digest(output: dict[str, Any]) -> str:
    """A digest of a file's `output` entry as JSON gives it back (every field the runtime's decoder
    reads: encoding, type, values, grids, int positions, whole types; and the name)."""
    text = json.dumps(json.loads(json.dumps(output)), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def value_label(v: Any) -> str:
    """A value's label as the reach gives it, for a value read back from a file's JSON (where a
    tuple became a list)."""
    return atom_label(_tuples(v))


def _tuples(v: Any) -> Any:
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def _misfit(x: object) -> float:
    """A reading's recorded misfit: a number >= 0 (a file written before it was recorded: 0)."""
    m = float(x)  # type: ignore[arg-type]
    if not m >= 0.0:  # (NaN too)
        raise ValueError(f"a reading's misfit must be a number >= 0, not {x!r}")
    return m
