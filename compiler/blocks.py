"""The vocabulary shared by the compiler's analysis and its weight builders.

A residual dimension is a `Dim` (`tokens:a` for one value of a categorical s-op, `frac` for a numerical
one). An s-op is *read* from the residual stream through an `Encoded`: a categorical s-op gives, for
each of its values, a linear combination of dimensions that is 1 when the s-op has that value and 0
otherwise; a numerical s-op gives one linear combination equal to its value. Materialised s-ops read
a single dimension per component; *views* (e.g. a map of one categorical s-op, or an affine map of
numerical ones) are free: they are only ever read, never written, so they cost no residual width and no
MLP. Weight builders return `HeadSpec`/`MLPSpec` blocks keyed by `Dim`; assembly turns them into the
TransformerLens-shaped arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np

from compiler.out_rows import OutRows
from compiler.output_grid import OutputGrid
from rasp import sops
from rasp.atoms import atom_key

Atom = Any  # int | float | str | bool: a RASP value

# A linear combination of residual dimensions: ((dim, coefficient), ...). The constant term uses ONE.
Terms = tuple[tuple["Dim", float], ...]


@dataclass(frozen=True)
class Dim:
    """One residual-stream direction. `value is None` means a numerical dimension."""

    name: str
    value: Atom = None
    # Distinguishes a categorical dim whose value is None-like from numerical ones; also keeps
    # 1, 1.0 and True apart (they are equal in Python but different RASP values).
    value_type: str = ""

    @staticmethod
    def categorical(name: str, value: Atom) -> Dim:
        return Dim(name, value, _type_name(value))

    @property
    def is_numerical(self) -> bool:
        return self.value_type == ""

    @property
    def label(self) -> str:
        if self.is_numerical:
            return self.name
        return f"{self.name}:{self.value}"


def _type_name(value: Atom) -> str:
    """A dim's value type, element by element for a tuple: ('a', False) == ('a', 0) in Python, and
    a joint reading of (tokens, v) where v takes both False and 0 needs a column for each (one
    dim, the keys with v = False scored apart from the rest and the selector was refused)."""
    if isinstance(value, tuple):
        return "tuple(" + ",".join(_type_name(v) for v in value) + ")"
    return type(value).__name__


ONE = Dim("one")  # 1 at every real position and at BOS
BOS = Dim("bos")  # 1 at BOS only
PAD = Dim("pad")  # 1 at PAD only
INDEX = Dim("indices")  # the position's index i, from the positional embedding
INDEX_SQUARE = Dim("indices^2")  # i * i, from the positional embedding (numerical addressing)


class Encoding(Enum):
    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"
    # Value k sets several dimensions to exact numbers: `one_hot[k]` lists (dim, number) pairs (the
    # key side of numerical addressing reads indices as (i, i * i)). Only ever read by heads.
    VECTOR = "vector"


# A dictionary key that keeps 1, 1.0 and True apart (the core's one rule, rasp.atoms); an alias,
# not a wrapper: it is called millions of times at N = 256.
value_key = atom_key


def exact_key(value: Atom) -> tuple[str, str]:
    """A key equal only for the very same value: `value_key` also keeps 1, 1.0 and True apart, but
    merges 0.0 with -0.0 (equal numbers) and tells NaNs apart by identity. Where a rewrite checks
    that a map gives one value (of one type) wherever its claim holds."""
    return type(value).__name__, repr(value)


def sort_values(values: Any) -> tuple[Atom, ...]:
    """Distinct values (1, 1.0 and True kept apart) in a deterministic order."""
    if not isinstance(values, (list, tuple)):
        values = list(values)
    kinds = set(map(type, values))
    if kinds and kinds <= {int, float}:  # a map of means: millions of numbers at N = 256
        numbers = _sorted_numbers(values, int in kinds, float in kinds)
        if numbers is not None:
            return numbers
    unique = {value_key(v): v for v in values}
    return tuple(sorted(unique.values(), key=_order))


def _sorted_numbers(values: Sequence[Any], ints: bool, floats: bool) -> tuple[Atom, ...] | None:
    """`sort_values` of ints and floats, in numpy: by value, a float before an equal int, and of
    0.0 and -0.0 the one listed last (as the dict keeps it). None (the dict's way) where a float
    is NaN, or an int is beside floats but not below 2^53 (float64 would not order it)."""
    whole = sorted({v for v in values if type(v) is int}) if ints else []
    if not floats:
        return tuple(whole)
    listed = [v for v in values if type(v) is float] if ints else values
    numbers = np.fromiter(listed, dtype=np.float64, count=len(listed))
    if np.isnan(numbers).any():
        return None
    unique = np.unique(numbers)  # sorted; 0.0 and -0.0 are one
    found = unique.tolist()
    zeros = np.flatnonzero(numbers == 0)
    if len(zeros):
        found[int(np.searchsorted(unique, 0.0))] = listed[int(zeros[-1])]
    if not whole:
        return tuple(found)
    if not -(2**53) < whole[0] <= whole[-1] < 2**53:
        return None
    keys = np.concatenate([unique, np.array(whole, dtype=np.float64)])
    tags = np.concatenate([np.zeros(len(found), np.int8), np.ones(len(whole), np.int8)])
    objects = found + whole
    return tuple([objects[i] for i in np.lexsort((tags, keys)).tolist()])


def _order(v: Atom) -> tuple[int, Any, str]:
    if isinstance(v, bool):
        return (0, int(v), "bool")
    if isinstance(v, (int, float)):
        return (1, v, type(v).__name__)
    return (2, str(v), type(v).__name__)


def is_number(v: Atom) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_NUMBERS = frozenset({int, float})
_NUMBERS_OR_BOOLS = frozenset({int, float, bool})


def all_numbers(values: Iterable[Atom], bools: bool = False) -> bool:
    """`all(is_number(v) ...)` (with `bools`: or a bool) over a value set, its types found at C
    speed (the planners ask it of a mean's ~20K values thousands of times at N = 256); a type
    outside the plain ones (a subclass) is judged one value at a time, as before."""
    values = values if isinstance(values, (tuple, list)) else tuple(values)
    if set(map(type, values)) <= (_NUMBERS_OR_BOOLS if bools else _NUMBERS):
        return True
    return all(is_number(v) or (bools and isinstance(v, bool)) for v in values)


@dataclass(frozen=True)
class Encoded:
    """How to read one s-op from the residual stream.

    categorical: `values[k]` is read as `one_hot[k]` (Terms that are 1 iff the s-op == values[k]).
    numerical:   `number` (Terms equal to the s-op's value); `values` is its finite value set.
    """

    name: str
    encoding: Encoding
    values: tuple[Atom, ...]
    one_hot: tuple[Terms, ...] = ()
    number: Terms = ()
    # numerical: a bound on |the s-op's value - `number`'s exact value| at every reachable state:
    # an affine view read as its fit, which may miss a value by float64 noise
    # (`affine_fits.affine_fit`); the certifier adds it to every decision that reads the view
    misfit: float = 0.0

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        # the hash dataclass would make, once: it hashed every value and term each time (a
        # reading of 5,000 tokens is a dict key of the planners, 0.5 s per sort of 5,000 tokens)
        return hash((self.name, self.encoding, self.values, self.one_hot, self.number, self.misfit))

    def __getstate__(self) -> dict[str, Any]:
        # (a str's hash differs from process to process: a copy elsewhere hashes anew)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @property
    def is_categorical(self) -> bool:
        return self.encoding is Encoding.CATEGORICAL

    def has(self, value: Atom) -> bool:
        """Whether `value` is one this reading reads (by value and type, as `index_of`)."""
        return value_key(value) in self._index

    def index_of(self, value: Atom) -> int:
        try:
            return self._index[value_key(value)]
        except KeyError:
            raise KeyError(value) from None

    @cached_property
    def _index(self) -> dict[tuple[str, Atom], int]:
        # value -> its first index, built once: a scan per lookup made reach building quadratic
        index: dict[tuple[str, Atom], int] = {}
        for k, v in enumerate(self.values):
            index.setdefault(value_key(v), k)
        return index

    def dims(self) -> tuple[Dim, ...]:
        """Every residual dimension this reading touches."""
        seen: dict[Dim, None] = {}
        for terms in (*self.one_hot, self.number):
            for dim, _ in terms:
                seen[dim] = None
        return tuple(seen)

    @staticmethod
    def materialised_categorical(name: str, values: tuple[Atom, ...]) -> Encoded:
        return Encoded(
            name,
            Encoding.CATEGORICAL,
            values,
            one_hot=tuple(((Dim.categorical(name, v), 1.0),) for v in values),
        )

    @staticmethod
    def materialised_numerical(name: str, values: tuple[Atom, ...]) -> Encoded:
        return Encoded(name, Encoding.NUMERICAL, values, number=((Dim(name), 1.0),))


# Where a key may lie relative to its query: the relations "<", "==", ">" of the key's index to the
# query's. A head that keeps only some of them has a mask (format version 3): it never sees the other
# keys (BOS is always seen). All three: no mask.
EVERY_POSITION: frozenset[str] = frozenset({"<", "==", ">"})
_MASK_LABELS = {
    frozenset({"<"}): "<",
    frozenset({"=="}): "==",
    frozenset({">"}): ">",
    frozenset({"<", "=="}): "<=",
    frozenset({"==", ">"}): ">=",
    frozenset({"<", ">"}): "!=",
    EVERY_POSITION: "",
}
_POSITIONS_OF = {
    sops.Comparison.LT: frozenset({"<"}),
    sops.Comparison.LEQ: frozenset({"<", "=="}),
    sops.Comparison.EQ: frozenset({"=="}),
    sops.Comparison.NEQ: frozenset({"<", ">"}),
    sops.Comparison.GEQ: frozenset({"==", ">"}),
    sops.Comparison.GT: frozenset({">"}),
}


def positions_of(comparison: sops.Comparison) -> frozenset[str] | None:
    """The key positions `select(indices, indices, comparison)` selects (None: TRUE/FALSE)."""
    return _POSITIONS_OF.get(comparison)


def mask_label(positions: frozenset[str]) -> str:
    """The file's name of a mask (transformer.config.HEAD_MASKS): "<=" for {"<", "=="}, "" for all."""
    return _MASK_LABELS[positions]


@dataclass(frozen=True)
class MatchScores:
    """A matching atom's three query/key columns (compiler.addressing): q·k = -c (q - k)^2, exactly
    0 where the query's number equals the key's and at most -c elsewhere (whole numbers)."""

    w_q: Mapping[Dim, np.ndarray]  # dim -> [3]
    w_k: Mapping[Dim, np.ndarray]  # dim -> [3]
    scale: float  # c


@dataclass(frozen=True)
class Relation:
    """What an atom says about the s-ops it compares (graph node indices): key j is selected by
    query i iff `holds(value of keys at j, value of queries at i)`. Two atoms about the same pair
    of s-ops can contradict each other (`key < query` and `key == query`): their conjunction is
    then empty whatever the readings."""

    keys: int
    queries: int
    holds: Callable[[Atom, Atom], bool]
    label: str  # tells relations apart (equal labels: equal relations)


@dataclass(frozen=True)
class Atomic:
    """One select predicate between categorical readings: selected iff table[q_index, k_index].

    A *mask atom* (`positions` not every position) is `select(indices, indices, op)` compiled as the
    head's mask: it reads nothing and scores nothing, the head just never sees the keys outside
    `positions` (its query and key read TRUE, its table is all true).

    A *matching atom* (`match`) is `select(k, q, ==)` between whole numbers scored by `match`'s
    columns instead of one column per class of `table`: 0 where it holds, at most -c elsewhere (an
    ordinary atom scores S where it holds, 0 elsewhere); its query and key are the readings the
    columns read (for the certifier), `table` its truth table over their values."""

    query: Encoded
    key: Encoded
    table: np.ndarray  # bool [len(query.values), len(key.values)]
    positions: frozenset[str] = EVERY_POSITION
    match: MatchScores | None = None
    relation: Relation | None = None  # the select it comes from, as a predicate on values

    @property
    def is_mask(self) -> bool:
        return self.positions != EVERY_POSITION

    @property
    def is_match(self) -> bool:
        return self.match is not None


TRUE = Encoded("true", Encoding.CATEGORICAL, (True,), one_hot=(((ONE, 1.0),),))
ALL_TRUE = Atomic(TRUE, TRUE, np.ones((1, 1), dtype=bool))


def mask_atom(positions: frozenset[str]) -> Atomic:
    return Atomic(TRUE, TRUE, np.ones((1, 1), dtype=bool), positions)


@dataclass(frozen=True)
class ValuePart:
    """What one aggregate (or selector width) of a head copies: `reading` at the key position (None:
    only BOS carries a value), and `intended(v)`, the out-dim vector the program means for value v
    (`default`: BOS's). The certifier compares the weights' value path with it."""

    reading: Encoded | None
    out_dims: tuple[Dim, ...]
    kind: str  # "copy" (one-hot column per value), "number" (the value itself), "width"
    default: Atom = None

    def intended(self, value: Atom) -> np.ndarray:
        if self.kind == "copy":
            row = np.zeros(len(self.out_dims))
            dim = Dim.categorical(self.out_dims[0].name, value)
            if dim not in self._column:
                raise ValueError(f"{dim!r} is not in out_dims")  # (as out_dims.index said)
            row[self._column[dim]] = 1.0
            return row
        if self.kind == "number":
            return np.array([float(value)])
        return np.zeros(1)  # "width": a real key's value is 0

    @cached_property
    def _column(self) -> dict[Dim, int]:
        # each out dim's first column, as out_dims.index finds it: a scan per value made the
        # certifier's value check quadratic (reverse over 2,000 tokens: 4,000 scans of 4,000)
        column: dict[Dim, int] = {}
        for k, dim in enumerate(self.out_dims):
            column.setdefault(dim, k)
        return column

    def intended_default(self) -> np.ndarray:
        if self.kind == "width":
            return np.ones(1)
        return self.intended(self.default)


class Selects(Enum):
    """Where a head's scores put the keys its select chooses, relative to BOS (the certifier checks
    the weights' exact scores against the select's atoms with this rule)."""

    ABOVE = "above"  # selected keys on one level above BOS (any levels if single), the rest below
    WITH_BOS = "with-bos"  # selector_width: selected keys on BOS's level, the rest below
    # numerical addressing: the one selected key (always present) alone on top; the rest anywhere
    # below it, BOS among them
    NEAREST = "nearest"


@dataclass(frozen=True)
class HeadDomain:
    """The readings a head's scores and values come from (for compiler.certify)."""

    query: tuple[Encoded, ...]
    key: tuple[Encoded, ...]
    parts: tuple[ValuePart, ...]
    # The value analysis proved the selector picks at most one key per query: the keys scoring above
    # BOS are one position, whose softmax weight is exactly 1.
    single: bool = False
    # What the select chooses, as a conjunction of truth tables over the query and key readings
    # (the scored atoms: a head's mask removes keys by position, outside the scores), and where
    # the scores put those keys. The certifier checks the scores against them.
    atoms: tuple[Atomic, ...] = ()
    selects: Selects = Selects.ABOVE


@dataclass(frozen=True)
class MLPDomain:
    """Every reachable input of an MLP as values of its readings (a numerical reading's value is its
    number), with the program's output there, written through `out` (for compiler.certify)."""

    readings: tuple[Encoded, ...]
    points: tuple[tuple[Atom, ...], ...]
    outputs: tuple[Atom, ...]
    out: Encoded


@dataclass(frozen=True)
class HeadSpec:
    """One attention head in Dim coordinates, before assembly.

    Scores are `sum_d (resid·W_Q[:, d]) (resid·W_K[:, d])`, *not* yet divided by sqrt(d_head): assembly
    folds that in. The BOS/PAD terms are added by assembly from `bos_score`: every real query gives the
    BOS key exactly `bos_score`, PAD keys get a score low enough to have weight 0, and the BOS query
    attends only to itself (so the BOS residual is input-independent).
    """

    op: str  # what it computes, for people: "aggregate(select(...), tokens)"
    name: str  # the program variable it writes
    W_Q: Mapping[Dim, np.ndarray]  # dim -> [d_qk]
    W_K: Mapping[Dim, np.ndarray]  # dim -> [d_qk]
    W_V: Mapping[Dim, np.ndarray]  # dim -> [d_v]
    W_O: np.ndarray  # [d_v, len(out_dims)]
    out_dims: tuple[Dim, ...]
    bos_score: float
    domain: HeadDomain | None = None
    mask: str = ""  # the keys the head sees (transformer.config.HEAD_MASKS; "" every key)
    # Scores are whole multiples of a power of 2 below 2^24 of them (exact addressing, matching):
    # exact in any order if dividing by sqrt(d_head) is, so assembly gives the layer a d_head that
    # is a power of 4.
    exact_scores: bool = False


@dataclass(frozen=True)
class MLPSpec:
    """One MLP (or one part of a layer's MLP) in Dim coordinates: out = relu(resid·W_in + b_in)·W_out."""

    op: str
    name: str
    W_in: Mapping[Dim, np.ndarray]  # dim -> [hidden]
    b_in: np.ndarray  # [hidden]
    out_rows: np.ndarray | OutRows  # W_out [hidden, len(out_dims)], or its entries
    out_dims: tuple[Dim, ...]
    notes: dict[str, Any] = field(default_factory=dict)
    domain: MLPDomain | None = None
    # no ReLU decides anything: each unit's input error is carried to the output (1-Lipschitz)
    continuous: bool = False

    @property
    def hidden(self) -> int:
        return int(self.b_in.shape[0])

    @cached_property
    def W_out(self) -> np.ndarray:  # noqa: N802 (TransformerLens's name)
        """[hidden, len(out_dims)], built on first reading (the same array each time after)."""
        rows = self.out_rows
        return rows.dense() if isinstance(rows, OutRows) else rows


# -- what encoding produces for scheduling and assembly ---------------------------------------------


@dataclass(frozen=True)
class PlannedHead:
    spec: HeadSpec
    merge_key: tuple[Any, ...]  # heads with equal keys attend identically and may share one head


@dataclass(frozen=True)
class Plan:
    heads: tuple[PlannedHead, ...]
    mlps: tuple[MLPSpec, ...]
    output: Encoded
    output_type: sops.SeqType
    dim_bounds: Mapping[Dim, float]  # |value| bound of each written dim at real positions
    output_values: tuple[Atom, ...] = ()  # every value the output can take
    # a numerical output's grid (compiler.grid: per-position or per-length denominators)
    output_grid: OutputGrid | None = None
    # dims the positional embedding writes (a function of the position alone): value at 0..N-1
    positional: Mapping[Dim, tuple[float, ...]] = field(default_factory=dict)
    # their s-ops: name -> (operation, the W_pos dims it is read from)
    embedded: Mapping[str, tuple[str, tuple[Dim, ...]]] = field(default_factory=dict)
    # per length, per position: the type of a whole number the output decodes to, where the
    # decoder's rule would give some cell's the wrong one (compiler.output_types)
    output_types: tuple[str, ...] | None = None
    # the number the output decodes as None (a stand-in for tracr's None, `output.none_at`)
    output_none_at: Atom | None = None
