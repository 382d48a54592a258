"""The `output` entry of a model file's metadata: how the logits decode (docs/format.md), checked
field by field: the encoding and type, the listed values, an output grid (format versions 4 and
5), the positions it decodes as ints (version 6) and a whole number's type per length and
position (version 7; 8 for a categorical output), the listed number that decodes as None
(version 9), and whether its marked strings are a tracr
program's tuples (`output.tuples`)."""

from __future__ import annotations

from typing import Any

from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.metadata_checks import Checker, json_text


def parse_output(
    check: Checker, obj: dict[str, Any], d_vocab_out: int, version: int, max_len: int
) -> OutputSpec:
    """The checked `output` entry of a model with `d_vocab_out` logit columns."""
    name = check.get(obj, "name", "output.", str)
    encoding_text, type_text = (
        check.get(obj, "encoding", "output.", str),
        check.get(obj, "type", "output.", str),
    )
    try:
        encoding, out_type = OutputEncoding(encoding_text), OutputType(type_text)
    except ValueError:
        raise check.fail(
            f"'output.encoding'/'output.type' are {json_text(encoding_text)}/{json_text(type_text)}; "
            "expected "
            "categorical|numerical and ints|floats|strings|bools"
        ) from None
    values = None
    if "values" in obj or encoding is OutputEncoding.CATEGORICAL:
        values = check.atoms(
            check.get(obj, "values", "output.", list), "output.values", allow_null=True
        )
    if encoding is OutputEncoding.CATEGORICAL and len(values or ()) != d_vocab_out:
        raise check.fail(
            f"'output.values' lists {len(values or ())} values "
            f"but 'config.d_vocab_out' is {d_vocab_out}"
        )
    if encoding is OutputEncoding.NUMERICAL:
        if d_vocab_out != 1:
            raise check.fail(
                f"a numerical output needs 'config.d_vocab_out' = 1, got {d_vocab_out}"
            )
        if values is not None and (not values or not all(_is_number(v) for v in values)):
            raise check.fail(
                "a numerical output's 'output.values' must be a non-empty list of numbers"
            )
        if values is None and out_type is OutputType.STRINGS:
            raise check.fail("a numerical output of type 'strings' needs 'output.values'")
    grids: dict[str, tuple[int, ...]] = {}
    for key, (since, per) in _GRID_FIELDS.items():
        if key in obj:
            grids[key] = _parse_denominators(
                check, obj, key, since, per, encoding, out_type, version, max_len
            )
            if values is not None:
                raise check.fail(f"'output.values' and 'output.{key}' exclude each other")
    if len(grids) > 1:
        first, second = list(grids)[:2]
        raise check.fail(f"'output.{first}' and 'output.{second}' exclude each other")
    int_positions: tuple[int, ...] = ()
    if "int_positions" in obj:
        int_positions = _parse_int_positions(check, obj, grids, version, max_len)
    whole_types: tuple[str, ...] = ()
    if "whole_types" in obj:
        if values is None and not grids:
            raise check.fail("'output.whole_types' needs 'output.values' or a grid")
        categorical = encoding is OutputEncoding.CATEGORICAL
        whole_types = _parse_whole_types(check, obj, version, max_len, categorical)
    tuples = False
    if "tuples" in obj:
        tuples = check.get(obj, "tuples", "output.", bool)
        if tuples and encoding is not OutputEncoding.CATEGORICAL:
            raise check.fail("'output.tuples' needs a categorical output (its values are strings)")
    none_at = _parse_none_at(check, obj, encoding, values, version) if "none_at" in obj else None
    return OutputSpec(
        name,
        encoding,
        out_type,
        values,
        grids.get("denominators"),
        grids.get("length_denominators"),
        grids.get("end_denominators"),
        int_positions,
        whole_types,
        tuples,
        none_at=none_at,
        pair_denominators=grids.get("pair_denominators"),
    )


def _parse_none_at(
    check: Checker,
    obj: dict[str, Any],
    encoding: OutputEncoding,
    values: tuple[Any, ...] | None,
    version: int,
) -> float:
    """`output.none_at` (format version 9): the listed number of a numerical output that
    decodes as None (a number standing in for tracr's None in the model)."""
    if version < 9:
        raise check.fail("metadata 'output.none_at' needs 'format_version' 9 or later")
    at = obj["none_at"]
    if encoding is not OutputEncoding.NUMERICAL or values is None:
        raise check.fail("'output.none_at' needs a numerical output with 'output.values'")
    if not _is_number(at) or not any(_is_number(v) and v == at for v in values):
        raise check.fail(
            f"'output.none_at' must be one of the numbers 'output.values' lists, got {json_text(at)}"
        )
    return at


def _parse_whole_types(
    check: Checker, obj: dict[str, Any], version: int, max_len: int, categorical: bool
) -> tuple[str, ...]:
    """`output.whole_types` (format version 7; 8 for a categorical output): per input length
    n = 1..max_len, n flags, one per program position: "i" a whole number decodes as an int
    there, "f" as a float, "." as the values or grid say."""
    since = 8 if categorical else 7
    if version < since:
        kind = " of a categorical output" if categorical else ""
        raise check.fail(
            f"metadata 'output.whole_types'{kind} needs 'format_version' {since} or later"
        )
    raw = check.get(obj, "whole_types", "output.", list)
    if len(raw) != max_len or not all(
        isinstance(row, str) and len(row) == n and set(row) <= set("if.")
        for n, row in enumerate(raw, start=1)
    ):
        raise check.fail(
            f"'output.whole_types' must hold {max_len} strings, the n-th of n characters "
            "'i', 'f' or '.' (one per position of an input of length n)"
        )
    return tuple(raw)


def _parse_int_positions(
    check: Checker,
    obj: dict[str, Any],
    grids: dict[str, tuple[int, ...]],
    version: int,
    max_len: int,
) -> tuple[int, ...]:
    """`output.int_positions` (format version 6): the program positions a per-length or
    from-the-end grid decodes as ints (round(x * d) / d is a whole number there), increasing."""
    if version < 6:
        raise check.fail("metadata 'output.int_positions' needs 'format_version' 6 or later")
    if not ({"length_denominators", "end_denominators"} & set(grids)):
        grids_text = "'output.length_denominators' or 'output.end_denominators'"
        raise check.fail(f"'output.int_positions' needs {grids_text}")
    raw = check.get(obj, "int_positions", "output.", list)
    if not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < max_len for i in raw
    ) or any(a >= b for a, b in zip(raw, raw[1:])):
        raise check.fail(
            f"'output.int_positions' must list increasing program positions 0..{max_len - 1}"
        )
    return tuple(raw)


# output grid field -> (the format version that introduced it, what its entries are per)
_GRID_FIELDS = {
    "denominators": (4, "program position"),
    "length_denominators": (5, "input length 1..max_len"),
    "end_denominators": (5, "distance from the end n - 1 - i = 0..max_len-1"),
    "pair_denominators": (10, "position i of an input of length n, at n (n - 1) / 2 + i"),
}


def _parse_denominators(
    check: Checker,
    obj: dict[str, Any],
    key: str,
    since: int,
    per: str,
    encoding: OutputEncoding,
    out_type: OutputType,
    version: int,
    max_len: int,
) -> tuple[int, ...]:
    """An output grid (docs/format.md): `output.denominators` (format version 4), one whole
    d_i >= 1 per program position, position i decoding as round(x * d_i) / d_i; or
    `output.length_denominators` (version 5), one e_n per input length n = 1..max_len, every
    position of an input of length n decoding as round(x * e_n) / e_n; or
    `output.end_denominators` (version 5), one f_k per k = n - 1 - i = 0..max_len-1, position i of
    an input of length n decoding as round(x * f_k) / f_k; or `output.pair_denominators`
    (version 10), max_len (max_len + 1) / 2 of them, position i of an input of length n
    decoding as round(x * d) / d with d the entry n (n - 1) / 2 + i."""
    if version < since:
        raise check.fail(f"metadata 'output.{key}' needs 'format_version' {since} or later")
    if encoding is not OutputEncoding.NUMERICAL or out_type not in (
        OutputType.INTS,
        OutputType.FLOATS,
    ):
        raise check.fail(f"'output.{key}' needs a numerical output of type ints or floats")
    raw = check.get(obj, key, "output.", list)
    count, size = (max_len * (max_len + 1) // 2, "max_len (max_len + 1) / 2 = ")
    if key != "pair_denominators":
        count, size = max_len, "max_len = "
    if len(raw) != count or not all(
        isinstance(d, int) and not isinstance(d, bool) and 1 <= d < 2**31 for d in raw
    ):
        raise check.fail(
            f"'output.{key}' must list {size}{count} whole numbers >= 1 (one per {per})"
        )
    return tuple(raw)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float)  # bools count: a numerical `bools` output snaps to 0/1
