"""The certifier's embedding check: at every real position the embedding writes what the program
means there, for every token id and every position 1..N (`compiler.certify` starts its walk here).

The blocks are checked over the readings' values (`compiler.reach`), so the walk rests on the
embedding setting them right. For a reading no block writes (an *input* reading: `tokens`,
`indices`, a map of either the compiler embeds), the reach records its value at every token id or
every real position (`InputReach`). The exact embedding (W_E[t] + W_pos[i]: two float32 rows, summed
exactly in float64) must give, float64 noise aside:

- `one` = 1, `bos` = `pad` = 0 at every real position (every block's reading assumes it);
- every recorded reading the recorded value, at every token id (its dimensions then the same at
  every position) or at every position (the same for every token);
- every other reading, where it reads dimensions no block writes (`length - indices - 1` beside a
  block's `length`, or `tokens_int + indices`, of both), dimensions a record pins: a one-hot's, a
  vector's or a one-dimension number's (the compiler records a number per such dimension where
  no reading pins it).

`record_inputs` computes the record at compile time from the intended (float64) embedding, whose
dimensions mean what their labels say (`tokens:a` is 1 for token a, `indices` is the index, a map
of the position holds its value there: `compiler.positional`); `check_embedding` checks the
weights against it, located at the token or the position, the reading, and both values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from compiler.bounds import ReadError
from compiler.reach import Axis, InputReach, Reach, Reading

# Only where the record is made (`_snap`, at compile time, from the intended float64 embedding):
# a number this close (relative) to a listed one is that value up to float64's rounding of a
# coefficient sum. The check itself matches nothing within it: a record holds where the exact sum
# of the float32 embedding's terms is the recorded value up to the reading's misfit (which every
# map that reads the reading carries as error: `bounds.Linear`), exactly (`_exact_miss`). Before,
# a difference within NOISE was matched and carried by nothing: 1e-10 written where a number's
# dimension holds 0 re-checked as proved, the walk reading the 0 it assumed.
NOISE = 1e-9


def record_inputs(
    reach: Reach, w_e: np.ndarray, w_pos: np.ndarray | None, labels: Sequence[str]
) -> Reach:
    """`reach` with its input record, from the intended embedding (`w_e` [V + 2, d_model], `w_pos`
    [N + 1, d_model] or None): each input reading of the token alone or of the position alone
    is recorded; a dimension another reading reads (one a block writes in part, or a sum of the
    token and the position) that no record pins gets a one-dimension numerical reading of its
    own, recorded too."""
    one = list(labels).index("one")
    n_tok = w_e.shape[0] - 2
    w_pos = np.zeros((2, w_e.shape[1])) if w_pos is None else w_pos  # none: every position 0
    e, p = w_e[:n_tok], w_pos[1:]  # [V, d_model], [N, d_model]
    readings = list(reach.readings)
    records: list[InputReach] = []

    def record(r: int) -> bool:
        reading = readings[r]
        dims = _dims(reading, one)
        if not np.any(p[:, dims]):
            by, columns = Axis.TOKEN, _columns(e, p[:1], dims)
        elif not np.any(e[:, dims]):
            by, columns = Axis.POSITION, _columns(e[:1], p, dims)
        else:
            return False  # of both: its dimensions are pinned instead
        at = decode(reading, columns, one)
        if not reading.categorical and not reading.vector:
            # an unlisted number is a map of the position that raises there (written 0): no value
            at = [_snap(x, reading.numbers) for x in at]
        records.append(InputReach(r, by, tuple(at)))
        return True

    recorded = [r for r in input_readings(reach, one) if record(r)]
    written = block_dims(reach, one)
    pinned = set().union(*(pins(readings[r], one) for r in recorded))
    for r, reading in enumerate(reach.readings):
        for d in [] if r in recorded else sorted(set(_dims(reading, one)) - written - pinned):
            column = p[:, d] if np.any(p[:, d]) else e[:, d]
            numbers = tuple(sorted({float(x) for x in column}))
            readings.append(
                Reading(labels[d], False, (((d, 1.0),),), numbers, tuple(f"{x:g}" for x in numbers))
            )
            if not record(len(readings) - 1):
                raise ValueError(f"the embedding's {labels[d]!r} depends on token and position")
            pinned.add(d)
    return dataclasses.replace(reach, readings=tuple(readings), inputs=tuple(records))


def special_dims(residual: Sequence[str]) -> tuple[int, int, int]:
    """The dimensions labelled `one`, `bos` and `pad`: ReadError where a (hand-edited) file's
    residual labels lack one, which the walk cannot start without."""
    labels = list(residual)
    for label in ("one", "bos", "pad"):
        if label not in labels:
            raise ReadError(f"the file's residual labels no {label!r} dimension")
    return labels.index("one"), labels.index("bos"), labels.index("pad")


def check_embedding(
    w: Mapping[str, np.ndarray],
    reach: Reach,
    residual: Sequence[str],
    max_len: int,
    tokens: Sequence[Any] = (),
) -> set[int]:
    """Check the embedding (float64 copies of the float32 weights) against the reach's record;
    ReadError, located, where it differs. Returns the input readings' dimensions (the embedding's
    to claim, written or not: no block may write them)."""
    one, bos, pad = special_dims(residual)
    w_e = w["embed.W_E"]
    n_tok = w_e.shape[0] - 2
    w_pos = w.get("pos_embed.W_pos", np.zeros((max_len + 1, w_e.shape[1])))
    e, p = w_e[:n_tok], w_pos[1 : max_len + 1]  # real tokens [V, d], real positions [N, d]

    def token(t: int) -> str:
        return f"token {tokens[t]!r} (id {t})" if t < len(tokens) else f"token id {t}"

    for d, want in ((one, 1.0), (bos, 0.0), (pad, 0.0)):
        x = e[:, d][:, None] + p[:, d][None, :]  # [V, N]
        if np.any(x != want):
            t, i = (int(k) for k in np.argwhere(x != want)[0])
            raise ReadError(
                f"the embedding writes {residual[d]!r} = {x[t, i]:.9g} for {token(t)} at "
                f"position {i + 1}; at a real position it is {want:g}"
            )
    if reach.inputs is None:
        raise ReadError(
            "the file's reach does not record what the embedding holds (written by an older "
            "compiler): recompile it to certify the embedding"
        )
    records = _records(reach, n_tok, max_len)
    written, claimed, pinned = block_dims(reach, one), set(), set()
    for r, rec in records.items():
        reading = reach.readings[r]
        dims = _dims(reading, one)
        if set(dims) & written:
            raise ReadError(
                f"the reach records embedding values for reading {reading.name!r}, which a block "
                "writes"
            )
        # the other axis must not move the reading's dimensions: one row of it stands for all
        fixed, rows = (p, (e, p[:1])) if rec.by is Axis.TOKEN else (e, (e[:1], p))
        moved = [d for d in dims if np.any(fixed[:, d] != fixed[:1, d])]
        if moved:
            other = "position to position" if rec.by is Axis.TOKEN else "token to token"
            raise ReadError(
                f"the embedding's {residual[moved[0]]!r} changes from {other}, but reading "
                f"{reading.name!r} is a function of the {rec.by.value} alone"
            )
        columns = _columns(*rows, dims)
        found = decode(reading, columns, one)
        terms = _Terms.of(reading, columns, one)
        for k, (want, got) in enumerate(zip(rec.at, found, strict=True)):
            listed = reading.categorical or reading.vector or want in reading.numbers
            if want is None or (listed and _holds(reading, terms, k, want, got)):
                continue  # None: the program has no value there (nor any input that long)
            where = token(k) if rec.by is Axis.TOKEN else f"position {k + 1} (index {k})"
            if not listed:
                raise ReadError(
                    f"the reach records {reading.name} = {_show(reading, want)} for {where}, "
                    "which is not among the reading's values"
                )
            held = _show(reading, got) if got is not None else _held(columns, k, residual)
            raise ReadError(
                f"the embedding writes {reading.name} = {held} for {where}, "
                f"where the program has {reading.name} = {_show(reading, want)}"
            )
        claimed |= set(dims)
        pinned |= pins(reading, one)
    # every other reading reads dimensions that blocks write or that a record pins
    for r, reading in enumerate(reach.readings):
        loose = [] if r in records else sorted(set(_dims(reading, one)) - written - pinned)
        if loose:
            raise ReadError(
                f"reading {reading.name!r} reads residual dimension {residual[loose[0]]!r}, which "
                "no block writes and no record of the embedding pins"
            )
    return claimed


def block_dims(reach: Reach, one: int) -> set[int]:
    """The residual dimensions the reach's blocks write: heads' out dims, MLP parts' out readings."""
    heads = {d for h in reach.heads for v in h.values for d in v.out}
    return heads.union(*(_dims(reach.readings[m.out], one) for m in reach.mlps))


def input_readings(reach: Reach, one: int) -> list[int]:
    """The readings of dimensions no block writes (constants, which read `one` alone, aside)."""
    written = block_dims(reach, one)
    return [
        r
        for r, reading in enumerate(reach.readings)
        if (dims := _dims(reading, one)) and not written.intersection(dims)
    ]


def pins(reading: Reading, one: int) -> set[int]:
    """The dimensions whose values a value of `reading` fixes: all of a one-hot's (the hot one
    named) or a vector's, a number's one dimension; none of a one-hot value of several."""
    dims = _dims(reading, one)
    if reading.vector:
        return set(dims)
    if reading.categorical:
        several = any(len([d for d, _ in t if d != one]) > 1 for t in reading.terms)
        return set() if several else set(dims)
    return set(dims) if len(dims) == 1 else set()


def decode(reading: Reading, columns: dict[int, np.ndarray], one: int) -> list[float | None]:
    """The coordinate each of P exact residual rows gives `reading` (`columns`: dimension -> [P]):
    the first value whose terms hold (categorical: one of its dimensions 1, the reading's others
    0; vector: its numbers), None where none does; a numerical reading's number."""
    dims = _dims(reading, one)
    size = len(next(iter(columns.values()))) if columns else 0
    if not reading.categorical and not reading.vector:
        (terms,) = reading.terms
        value = np.full(size, sum(c for d, c in terms if d == one), dtype=np.float64)
        for d, c in terms:
            if d != one:
                value = value + c * columns[d]
        return [float(v) for v in value]
    x = np.stack([columns[d] for d in dims], axis=1) if dims else np.zeros((size, 0))  # [P, D]
    col = {d: j for j, d in enumerate(dims)}
    if reading.vector:
        out: list[float | None] = [None] * size
        for k, terms in enumerate(reading.terms):
            want = np.zeros(len(dims))
            for d, c in terms:
                want[col[d]] = c
            # exactly: `bounds.Linear` reads a vector's dimensions as these numbers, with no error
            holds = np.all(x == want, axis=1)
            for i in np.flatnonzero(holds):
                out[i] = float(k) if out[i] is None else out[i]
        return out
    # categorical: value k holds where exactly one of its dimensions is 1 and the reading's others
    # 0, or (a value no dimension stands for) where every dimension is 0; the first that holds
    hot = x == 1.0
    clean = (hot | (x == 0.0)).all(axis=1)
    first = np.full(len(dims), -1)  # per dimension, the first value it stands for
    empty = -1  # the first value no dimension stands for
    for k, terms in reversed(list(enumerate(reading.terms))):
        own = [col[d] for d, _ in terms if d != one]
        first[own] = k
        empty = k if not own else empty
    n_hot = hot.sum(axis=1)
    k_at = np.where(n_hot == 1, first[hot.argmax(axis=1)] if dims else -1, empty)
    k_at = np.where(clean & (n_hot <= 1), k_at, -1)
    return [None if k < 0 else float(k) for k in k_at]


def _records(reach: Reach, n_tok: int, max_len: int) -> dict[int, InputReach]:
    """The reach's input records by reading, each well formed (else ReadError)."""
    assert reach.inputs is not None
    out: dict[int, InputReach] = {}
    for rec in reach.inputs:
        if not 0 <= rec.reading < len(reach.readings) or rec.reading in out:
            raise ReadError(f"the reach's embedding record names reading {rec.reading} badly")
        size = {Axis.TOKEN: n_tok, Axis.POSITION: max_len}[rec.by]
        if size != len(rec.at):
            raise ReadError(
                f"the reach's embedding record of {reach.readings[rec.reading].name!r} has "
                f"{len(rec.at)} values by {rec.by.value}"
            )
        out[rec.reading] = rec
    return out


def _dims(reading: Reading, one: int) -> list[int]:
    return sorted({d for terms in reading.terms for d, _ in terms if d != one})


def _columns(a: np.ndarray, b: np.ndarray, dims: Sequence[int]) -> dict[int, np.ndarray]:
    """The exact rows a + b (one of them a single row) at `dims` only: [V or N] each."""
    return {d: a[:, d] + b[:, d] for d in dims}


def _snap(x: float | None, numbers: Sequence[float]) -> float | None:
    """The listed number nearest x within float64 noise (x itself where listed), else None. (The
    first one within the noise took 2^53 + 2 as 2^53, both listed: a wrong record, which the
    check, matching within the noise too, let through.)"""
    near = [n for n in numbers if x is not None and abs(n - x) <= NOISE * max(1.0, abs(n))]
    return min(near, key=lambda n: abs(n - x)) if near and x is not None else None


@dataclasses.dataclass(frozen=True)
class _Terms:
    """A numerical reading's terms over the rows of the exact embedding: the constant (its `one`
    terms), and per other term its coefficient [T] and the dimension's number at each row [P, T]
    (exact: sums of two float32 rows)."""

    constant: tuple[float, ...]
    coefs: np.ndarray
    x: np.ndarray

    @staticmethod
    def of(reading: Reading, columns: dict[int, np.ndarray], one: int) -> _Terms | None:
        if reading.categorical or reading.vector:
            return None
        (terms,) = reading.terms
        size = len(next(iter(columns.values()))) if columns else 0
        others = [(d, c) for d, c in terms if d != one]
        x = np.stack([columns[d] for d, _ in others], axis=1) if others else np.zeros((size, 0))
        coefs = np.array([c for _, c in others], dtype=np.float64)
        return _Terms(tuple(c for d, c in terms if d == one), coefs, x)

    def exact(self, k: int) -> Fraction | None:
        """b + sum_t c_t x_t at row `k` in exact rationals (None where a number is not finite):
        from the non-zero products only (a one-hot's row holds one)."""
        live = np.flatnonzero((self.x[k] != 0) & (self.coefs != 0))
        parts = [*((c, 1.0) for c in self.constant), *zip(self.coefs[live], self.x[k, live])]
        if not all(math.isfinite(float(n)) for part in parts for n in part):
            return None
        return sum((Fraction(float(c)) * Fraction(float(x)) for c, x in parts), Fraction(0))


def _holds(reading: Reading, terms: _Terms | None, k: int, want: float, got: float | None) -> bool:
    """Whether row `k` of the exact embedding holds the reading's value `want`: a one-hot's or a
    vector's value index exactly; a number's terms, summed exactly, within its misfit (decode's
    float64 sum `got` may round)."""
    if got is None:
        return False
    if terms is None:
        return got == want
    exact = terms.exact(k) if math.isfinite(want) else None
    if exact is None:
        return got == want  # (an infinite embedding fails the walk's range check)
    return abs(Fraction(want) - exact) <= Fraction(reading.misfit)


def _held(columns: dict[int, np.ndarray], k: int, residual: Sequence[str]) -> str:
    """What a reading's dimensions hold at row `k` where they hold none of its values (a stray
    0.6 beside a one-hot's 1 is not `every dimension 0`)."""
    nonzero = [f"{residual[d]} = {x[k]:.6g}" for d, x in columns.items() if x[k] != 0]
    return f"no value ({', '.join(nonzero) if nonzero else 'every dimension 0'})"


def _show(reading: Reading, coord: float | None) -> str:
    if coord is None:
        return "no value (every dimension 0)"
    if reading.categorical or reading.vector:
        k = int(coord)
        return reading.labels[k] if 0 <= k < len(reading.labels) else f"value #{k}"
    return f"{coord:.9g}"
