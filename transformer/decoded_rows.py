"""Decoded numbers -> rows of plain Python values (transformer.decoding reads the numbers off the
logits): rows cut to each input's length, a grid's quotients k / d as ints where whole, and the
type a whole number takes at a position flagged by the file's `whole_types` (format version 7).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from transformer.vocab import Atom

INT, FLOAT = 1, 2  # `whole_types` flags "i" and "f"


def type_flags(whole_types: Sequence[str]) -> np.ndarray:
    """`whole_types` as int8 `[max_len + 1, max_len]`: row n holds length n's flags (INT, FLOAT,
    or 0 for "."); row 0 (no input) none."""
    size = len(whole_types)
    table = np.zeros((size + 1, size), dtype=np.int8)
    for n, row in enumerate(whole_types, start=1):
        chars = np.frombuffer(row.encode("ascii"), dtype=np.uint8)
        table[n, :n] = np.where(chars == ord("i"), INT, np.where(chars == ord("f"), FLOAT, 0))
    return table


def listed_kinds(values: np.ndarray) -> np.ndarray:
    """Per listed value (an object array): INT for an int, FLOAT for a whole float, 0 otherwise."""
    kinds = [
        INT if type(v) is int else FLOAT if type(v) is float and v.is_integer() else 0
        for v in values
    ]
    return np.array(kinds, dtype=np.int8)


def retyped(chosen: np.ndarray, kinds: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """`chosen [batch, n]` (an object array of decoded values, `kinds` theirs) with each whole
    number given the type its position's flag (`flags [batch, n]`) says."""
    to_float = (flags == FLOAT) & (kinds == INT)
    to_int = (flags == INT) & (kinds == FLOAT)
    for mask, kind in ((to_float, float), (to_int, int)):
        if mask.any():
            chosen[mask] = np.array([kind(x) for x in chosen[mask]], dtype=object)
    return chosen


def grid_rows_of(
    codes: np.ndarray,
    d: np.ndarray,
    lengths: Sequence[int],
    int_positions: Sequence[int],
    flags: np.ndarray | None,
) -> list[list[Atom]]:
    """Codes k `[batch, n]` over denominators `d` (broadcast to `[batch, n]`) -> rows of k / d:
    Python ints where d is 1 (a single whole value passed through, as the interpreter gives it)
    or the position is among `int_positions`, floats elsewhere; `flags [batch, n]`, where the
    file gives `whole_types`, overrule both."""
    # only real positions become ints: a padding code may be anything, inf or NaN among them
    real = np.arange(codes.shape[1]) < np.asarray(lengths)[:, None]  # [batch, n]
    whole = (d == 1) & real  # [batch, n]
    if int_positions:
        flagged = np.zeros(codes.shape[1], dtype=bool)
        flagged[[i for i in int_positions if i < codes.shape[1]]] = True
        whole = whole | (flagged[None, :] & real)
    quotients = codes / d  # [batch, n]; float64 division, as the mean's (whole: k / 1, or m)
    if flags is not None:  # an int where flagged "i" and whole, never where flagged "f"
        integral = np.rint(quotients) == quotients
        whole = (whole & (flags != FLOAT)) | ((flags == INT) & integral)
    if 2 * np.count_nonzero(whole) > whole.size:
        out = quotients.astype(object)  # [batch, n]
        out[whole] = exact_ints(quotients[whole])
        return rows(out, lengths)
    # mostly floats: `tolist` makes them directly, then the few whole entries are replaced
    found = rows(quotients, lengths)
    at_b, at_i = np.nonzero(whole)
    values = exact_ints(quotients[at_b, at_i]).tolist()
    for b, i, value in zip(at_b.tolist(), at_i.tolist(), values, strict=True):
        row = found[b]
        if i < len(row):
            row[i] = value
    return found


def exact_ints(numbers: np.ndarray) -> np.ndarray:
    """Finite whole-valued floats `[k]` -> an object array of the Python ints they equal (rounded
    half to even): through int64 where they fit, which would wrap larger ones (1e30 to -2**63)."""
    rounded = np.rint(numbers)
    if rounded.size == 0 or float(np.abs(rounded).max()) < 2.0**63:
        return rounded.astype(np.int64).astype(object)
    out = np.empty(rounded.shape, dtype=object)
    out[...] = [int(x) for x in rounded.tolist()]
    return out


def rows(table: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
    """Row b of `table [batch, n]` cut to its input's length, as plain Python values."""
    if all(n == table.shape[1] for n in lengths):
        return table.tolist()  # one call for the whole batch
    return [row[:n].tolist() for row, n in zip(table, lengths, strict=True)]


def char_rows(table: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
    """Rows of one-character strs from `table [batch, n]` (uint8 Latin-1 code points), row b cut
    to its input's length: one str for the batch, then `list` of each row's slice, whose
    characters are CPython's shared one-character strs (no object made per token)."""
    n = table.shape[1]
    text = table.tobytes().decode("latin-1")  # row-major: row b at [b * n, (b + 1) * n)
    return [list(text[b * n : b * n + length]) for b, length in enumerate(lengths)]
