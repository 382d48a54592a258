"""How values look: the original RASP REPL's formatting, plus JSON for `--json`.

The strings copy the original (tech-srl/RASP `REPL.py`, `Support.py`) so its users read us at a
glance (`<TAB>` is a tab character):

         s-op: rev
     <TAB> Example: rev("hello") = [o, l, l, e, h] (strings)
        value: n =  3
         list: l = [1, 2]
         console function: f(a, b)

Sequences print their values as `[a, b]`, or `[v]*n` when all n > 1 values are equal; floats are
rounded to 3 places, bools are `T`/`F`, strings are unquoted. Selectors print as a 0/1 grid labelled
with the example's tokens (rows are queries, columns keys); `full seq display` rows write values in
full. Three deliberate differences from the original: grid columns are as wide as the widest token
(the original misaligns multi-character tokens), the `full seq display` input row shows the
example's real type (the original always says `(strings)`), and under a named s-op it shows the
s-op example (the original shows the selector example there, whatever `set s-op example` said).
Where the REPL gives a terminal's width (`ExampleSettings.width`), a grid or `full seq display`
rows wider than it are shown in chunks of positions (`rasp.display_chunks`); without one, as the
original's.

Everything here returns strings; nothing prints.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rasp.display_chunks import fits, fitted, span_text
from rasp.sops import Selector, SeqType, SeqValue, SOp, evaluate, type_of_value
from rasp.text_width import display_width, ljust, rjust, string_repr
from rasp.text_wrap import wrap_indented
from rasp.values import BuiltinFunction, RaspFunction
from rasp.wording import int_text

# The original prints headers as `print(pref, extra, "   s-op:", name)`: `print` puts a space
# between
# the (often empty) parts, so a top-level header starts with 5 spaces and a `value:` one with 4.
_EXAMPLE = " \t Example:"
_GRID_INDENT = " \t\t\t "
# (ours) a chunk's heading, and `full seq display` one position a line: under `Example:`, the
# columns the original's tabs take left for the table
_HEADING = " \t "


# ------------------------------------------------------------------------------------------------
# Atoms and sequences


def atom_text(value: Any) -> str:
    """One sequence element as the original shows it: floats to 3 places, bools `T`/`F`."""
    value = _plain(value)
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, float):
        return str(round(value, 3))
    return _text(value)


def values_text(values: Sequence[Any]) -> str:
    """`[a, b, c]`, or `[v]*n` when all n > 1 values are equal."""
    plain = [_plain(v) for v in values]
    if len(plain) > 1 and all(_same(v, plain[0]) for v in plain[1:]):
        return f"[{atom_text(plain[0])}]*{len(plain)}"
    return "[" + ", ".join(atom_text(v) for v in plain) + "]"


def seq_text(seq: SeqValue) -> str:
    """`[o, l, l, e, h] (strings)`."""
    return f"{values_text(seq.values)} ({_seq_label(seq)})"


def _seq_label(seq: SeqValue) -> str:
    return values_label(seq.values, seq.type.value)


def values_label(values: Iterable[Any], type_name: str) -> str:
    """`type_name`, or "tuples" or "lists" where every value (None aside) is one: tracr's tuples
    and lists are string tokens to the type rule; unboxed for display, they are labelled as what
    they are (`[('a', 0), ('b', 1)] (tuples)`, and `rasp show`'s output line)."""
    kinds = {type(v) for v in values if v is not None}
    if kinds == {tuple}:
        return "tuples"
    if kinds == {list}:
        return "lists"
    return type_name


def literal_text(value: Any) -> str:
    """A top-level value: strings in double quotes (as the original), the rest as Python does."""
    value = _plain(value)
    if isinstance(value, str):
        return f'"{value}"'
    return python_text(value)


def python_text(value: Any) -> str:
    """Python's `str` of atoms, lists and dicts (elements in `repr` form)."""
    value = _plain(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_python_item(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{_python_item(k)}: {_python_item(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, Selector | SOp):
        return value.label
    if isinstance(value, RaspFunction | BuiltinFunction):  # (a dict example's value may be one)
        return f"function {value.signature()}"
    if isinstance(value, SeqValue):  # an applied s-op kept in a variable: `x = f("abc");`
        return seq_text(value)
    if isinstance(
        value, np.ndarray
    ):  # an applied selector; the original shows {query: [0/1 per key]}
        rows = np.asarray(value, dtype=bool).astype(int).tolist()
        return "{" + ", ".join(f"{i}: {row}" for i, row in enumerate(rows)) + "}"
    return _text(value)


def _python_item(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, str):
        return string_repr(value)  # (`repr`, an emoji sequence shown as itself)
    return python_text(value)


def _text(value: Any) -> str:
    """Python's `str`, for ints of any length too."""
    return int_text(value) if isinstance(value, int) else str(value)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (evaluation may hand back either)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _same(a: Any, b: Any) -> bool:
    # The original compares with a set, where 1 == 1.0 == True: a mean's 4.0 beside a single
    # key's 4 (`[4.0, 4]`) shows as `[4.0]*2`, the first value. A set finds an object by identity
    # first: one nan copied to every position is one value, nans computed apart are not.
    return a is b or bool(a == b)


# ------------------------------------------------------------------------------------------------
# Examples: the running example, selector grids, full sequence rows


def example_text(example: Any) -> str:
    """The running example as `show example` prints it: `"hello"` or `[1, 2, 3]`."""
    return literal_text(example)


def example_tokens(example: Any) -> list[Any]:
    """The tokens of an example: a string's characters, or a list's elements."""
    if isinstance(example, str):
        return list(example)
    return [_plain(v) for v in example]


def selector_grid(
    labels: Sequence[Any], matrix: np.ndarray, prefix: str = "", width: int | None = None
) -> list[str]:
    """The original's 0/1 grid: a header of key labels, then one `q | 1 1  ` row per query.

    `matrix` is bool `[n_query, n_key]`; `labels` are the example's tokens (the same for both axes).
    A grid wider than `width` columns is shown in chunks of keys, every query in each
    (`rasp.display_chunks`).
    """
    texts = [_text(_plain(v)) for v in labels]
    # columns as a terminal shows them: a label `日` is one character but two columns
    size = max((display_width(t) for t in texts), default=1)
    hits = np.asarray(matrix, dtype=bool)

    def grid(lo: int, hi: int, queries: int | None = None) -> list[str]:
        keys = " ".join(ljust(t, size) for t in texts[lo:hi])
        header = prefix + _GRID_INDENT + " " * (size + 3) + keys
        rows = [header.rstrip() if size > 1 else header]
        for label, row in zip(texts[:queries], hits, strict=False):
            cells = " ".join(("1" if hit else " ").ljust(size) for hit in row[lo:hi])
            rows.append(f"{prefix}{_GRID_INDENT}{rjust(label, size)} | {cells}")
        return rows

    def heading(lo: int, hi: int, n: int) -> str:
        return f"{prefix}{_HEADING}{'keys' if hi - lo > 1 else 'key'} {span_text(lo, hi, n)}:"

    # (every row is as wide as the first: its label and cells are padded to `size`)
    return fitted(len(texts), grid, heading, width, lambda lo, hi: grid(lo, hi, 1))


def full_seq_rows(
    example: Sequence[Any], seq: SeqValue, prefix: str = "", width: int | None = None
) -> list[str]:
    """`full seq display`: aligned `input:` and `output:` rows with their types.

    Values are written in full (`0.3333333333333333`, as the original); bool rows show only the
    rarer value (`T` or `F`), so the interesting positions stand out. Rows wider than `width`
    columns are shown in chunks of positions, aligned alike (`rasp.display_chunks`).
    """
    inputs = _full_texts(example)
    outputs = _full_texts(seq.values)
    size = max(display_width(t) for t in [*inputs, *outputs])  # terminal columns, as above
    input_type = _type_label(example)

    def rows(lo: int, hi: int) -> list[str]:
        return [
            f"{prefix} \t\tinput:   {_aligned(inputs[lo:hi], size)} \t ({input_type})",
            f"{prefix} \t\toutput:  {_aligned(outputs[lo:hi], size)} \t ({seq.type.value})",
        ]

    def heading(lo: int, hi: int, n: int) -> str:
        return f"{prefix}{_HEADING}{'positions' if hi - lo > 1 else 'position'} {span_text(lo, hi, n)}:"

    if width is not None and len(inputs) > 1 and not fits(rows(0, 2), width):
        # chunks of one position each: a position a line reads better
        return _by_position(inputs, input_type, outputs, seq.type.value, prefix, width)
    return fitted(len(inputs), rows, heading, width)


def _by_position(
    inputs: list[str],
    input_type: str,
    outputs: list[str],
    output_type: str,
    prefix: str,
    width: int,
) -> list[str]:
    """`full seq display`'s rows turned into columns, for a terminal too narrow for two
    positions side by side: `  3: l  1.0`, under a heading that names the columns (its output
    under its input where the two do not fit on one line, each name on a line of its own where
    that does not fit either). A row wider than the terminal is shown whole, past its edge."""
    at = len(str(len(inputs) - 1))
    size, out_size = (max(display_width(t) for t in texts) for texts in (inputs, outputs))
    lead = f"{prefix}{_HEADING}position: "
    lines = [f"{lead}input ({input_type})  output ({output_type})"]
    if not fits(lines, width):
        lines = [f"{lead}input ({input_type})", f"{prefix}{_HEADING}{'':10}output ({output_type})"]
    if not fits(lines, width):
        # (inside a list on a 40-column terminal, 25 columns in): a column's name a line, and
        # one still too wide broken at its space, its type hanging two columns in
        names = ("position:", f"input ({input_type})", f"output ({output_type})")
        lines = [part for name in names for part in wrap_indented(prefix + _HEADING + name, width)]
    for k, (given, got) in enumerate(zip(inputs, outputs, strict=True)):
        lines.append(
            f"{prefix}{_HEADING}{k:>{at}}: {rjust(given, size)}  {rjust(got, out_size)}".rstrip()
        )
    return lines


def _full_texts(values: Sequence[Any]) -> list[str]:
    """A row of `full seq display` as the original writes it: Python's `str` of each value (floats
    in full, not rounded), or, when the first value is a bool, only the rarer of T and F (both on a
    tie), each value marked by its truth."""
    plain = [_plain(v) for v in values]
    if plain and isinstance(plain[0], bool):
        return _bool_marks(plain)
    return [_text(v) for v in plain]


def _bool_marks(values: Sequence[Any]) -> list[str]:
    # counted as the original counts them, by equality (`list.count`): 1 and 1.0 are True, 0 is
    # False, and a value such as 2 or 1.5 (in a row of numbers that starts with a bool) is neither,
    # though it is marked as truthy
    trues, falses = list(values).count(True), list(values).count(False)
    t_mark = "T" if trues <= falses else ""
    f_mark = "F" if falses <= trues else ""
    return [t_mark if v else f_mark for v in values]


def _aligned(texts: Iterable[str], width: int) -> str:
    return " ".join(rjust(t, width) for t in texts)


def _type_label(values: Sequence[Any]) -> str:
    types = {type_of_value(_plain(v)) for v in values}
    if types == {SeqType.INTS, SeqType.FLOATS}:
        return SeqType.FLOATS.value
    if len(types) == 1 and None not in types:
        (only,) = types
        assert only is not None
        return only.value
    return SeqType.STRINGS.value


def _all_equal(seq: SeqValue) -> bool:
    first = _plain(seq.values[0]) if len(seq.values) else None
    return len(seq.values) > 0 and all(_same(_plain(v), first) for v in seq.values)


# ------------------------------------------------------------------------------------------------
# Named values (what the REPL prints after an assignment) and applied values (`f("abc");`)


@dataclass(frozen=True)
class ExampleSettings:
    """What the REPL shows under a named s-op or selector."""

    seq_example: Any = "hello"
    sel_example: Any = "hello"
    show_seq: bool = True
    show_sel: bool = True
    full_seq: bool = False
    # the terminal's columns, that a grid or `full seq display` rows wider than it are shown in
    # chunks of (`rasp.display_chunks`); None (a pipe, the goldens): as the original's
    width: int | None = None


FunctionText = Callable[[Any], str | None]


def named_value(
    name: str | None,
    value: Any,
    settings: ExampleSettings,
    *,
    function_text: FunctionText = lambda v: None,
    indent: str = "",
    item_prefix: str = "",
) -> list[str]:
    """The lines the original prints for `name = value;` (an s-op's example is evaluated here).

    `function_text` renders a function value (`console function: f(a, b)`) or returns None for
    anything that is not a function; it keeps this module free of the interpreter.
    `indent` and `item_prefix` serve nested lists and dicts, printed one item per line.
    """
    if isinstance(value, SOp):
        shown = name if name is not None else value.label
        lines = [f"{_lead(indent, item_prefix)}   s-op: {shown}"]
        if settings.show_seq:
            lines += _seq_example(shown, value, settings, indent)
        return lines
    if isinstance(value, Selector):
        shown = name if name is not None else value.label
        lines = [f"{_lead(indent, item_prefix)}   selector: {shown}"]
        if settings.show_sel:
            tokens = example_tokens(settings.sel_example)
            matrix = evaluate(value, tokens)
            assert isinstance(matrix, np.ndarray)
            lines.append(f"{indent}{_EXAMPLE}")
            lines += selector_grid(tokens, matrix, indent, settings.width)
        return lines
    func = function_text(value)
    if func is not None:
        return [f"{_lead(indent, item_prefix)}   {func}"]
    if isinstance(value, (list, tuple, dict)):
        return _container(name, value, settings, function_text, indent, item_prefix)
    named = f"{name} = " if name is not None else ""
    return [f"{indent} {item_prefix}   value: {named} {literal_text(value)}"]


def _lead(indent: str, item_prefix: str) -> str:
    return f"{indent} {item_prefix} "


def _container(
    name: str | None,
    value: list[Any] | tuple[Any, ...] | dict[Any, Any],
    settings: ExampleSettings,
    function_text: FunctionText,
    indent: str,
    item_prefix: str,
) -> list[str]:
    kind = "dict" if isinstance(value, dict) else "list"
    named = f"   {kind}: " + (f"{name} = " if name is not None else "")
    items = list(value.values()) if isinstance(value, dict) else list(value)
    head = _lead(indent, item_prefix) + named
    if not any(_is_structured(v, function_text) for v in items):
        return [head + python_text(value)]
    opener, closer = ("{", "}") if isinstance(value, dict) else ("[", "]")
    lines = [f"{head}{indent} {opener}"]
    if isinstance(value, dict):
        for key, item in value.items():
            lines += named_value(
                None,
                item,
                settings,
                function_text=function_text,
                indent=indent + "\t\t\t",
                item_prefix=f"{literal_text(key)} : ",
            )
    else:
        for item in items:
            lines += named_value(
                None, item, settings, function_text=function_text, indent=indent + "\t\t"
            )
    lines.append(f"{indent} {' ' * len(named)} {closer}")
    return lines


def _is_structured(value: Any, function_text: FunctionText) -> bool:
    return isinstance(value, (list, tuple, dict, SOp, Selector)) or function_text(value) is not None


def _seq_example(name: str, sop: SOp, settings: ExampleSettings, indent: str) -> list[str]:
    tokens = example_tokens(settings.seq_example)
    seq = evaluate(sop, tokens)
    assert isinstance(seq, SeqValue)
    desc = f"{name}({example_text(settings.seq_example)}) ="
    if not settings.full_seq:
        return [f"{indent}{_EXAMPLE} {desc} {seq_text(seq)}"]
    if _all_equal(seq):
        return [
            f"{indent}{_EXAMPLE} {desc} {seq_text(seq)} [skipped full display: identical values]"
        ]
    return [f"{indent}{_EXAMPLE}", *full_seq_rows(tokens, seq, indent, settings.width)]


def applied_value(
    value: SeqValue | np.ndarray,
    tokens: Sequence[Any],
    full_seq: bool = False,
    width: int | None = None,
) -> list[str]:
    """What `f("abc");` prints: `\\t =  [c, b, a] (strings)`, or a selector's grid (a table
    wider than `width`: in chunks of positions)."""
    if isinstance(value, np.ndarray):
        return ["\t = ", *selector_grid(tokens, value, width=width)]
    if not full_seq:
        return [f"\t =  {seq_text(value)}"]
    if _all_equal(value):
        return [f"\t =   {seq_text(value)} [skipped full display: identical values]"]
    return ["\t = ", *full_seq_rows(tokens, value, width=width)]


def example_lines(which: str, seq_example: Any, sel_example: Any) -> list[str]:
    """`show example`: `which` is "both", "s-op" or "selector"."""
    lines = []
    if which in ("both", "s-op"):
        lines.append(f"\ts-op example: {example_text(seq_example)}")
    if which in ("both", "selector"):
        lines.append(f"\tselector example: {example_text(sel_example)}")
    return lines


# ------------------------------------------------------------------------------------------------
# JSON


def json_value(value: Any) -> Any:
    """A sequence element as a JSON value: ints, floats, strings and bools keep their JSON type.

    Non-finite floats have no JSON form; they become null rather than invalid JSON.
    """
    value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def seq_json(seq: SeqValue | Sequence[Any]) -> str:
    """Exactly one JSON value: the list of per-position outputs."""
    values = seq.values if isinstance(seq, SeqValue) else seq
    # json.dumps writes an int with `int.__repr__`, which refuses more than 4,300 digits
    items = [json_value(v) for v in values]
    return "[" + ", ".join(_json_item(v) for v in items) + "]"


def _json_item(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return int_text(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
