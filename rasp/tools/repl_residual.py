"""The REPL's `:residual INPUT` report: every variable decoded from the residual stream after every
sublayer, beside the interpreter's value, in aligned columns, and the first place they diverge
(`rasp.tools.repl_compiled` runs the command; docs/inspect.md describes the report)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rasp.errors import RaspError
from rasp.residual_labels import text_of
from rasp.sops import Evaluator, Node, SeqValue, SOp
from rasp.text_width import display_width, ljust
from rasp.tools.repl_wrap import fill_cell, wrap_line, wrap_report
from rasp.tools.residual_types import NoValue

if TYPE_CHECKING:
    from rasp.tools.residual_helpers import HelperDim
    from rasp.tools.residuals import Checkpoint


class CompiledModel(Protocol):
    """What the report reads of the session's compiled model (`repl_compiled.CompiledState`,
    whose module imports this one: a protocol here keeps the import one-way)."""

    name: str
    sop: SOp
    model: Any  # transformer.CompiledTransformer
    nodes: Mapping[str, Node]

    @property
    def meta(self) -> dict[str, Any]: ...


def residual_report(state: CompiledModel, tokens: list[Any], width: int | None = None) -> str:
    """`:residual`'s text for `tokens` on the session's compiled model `state`, wrapped to
    `width` columns (None: one line each, as in a pipe)."""
    from rasp.tools.diagnosis import shown_name
    from rasp.tools.model_steps import runtime_errors
    from rasp.tools.residuals import Stray
    from rasp.tools.verify import NON_FINITE, decode_checkpoints, operation_of, same_value
    from rasp.tools.verify_text import show_tokens

    with runtime_errors(f"`{state.name}`"):
        points = decode_checkpoints(state.model, tokens, state.nodes)
        try:
            got: list[Any] = list(state.model.run([tokens])[0])
        except ArithmeticError:  # a broken model computed NaN or infinity
            got = [NON_FINITE] * len(tokens)
    failure = None
    try:
        want = list(_values(state.sop, tokens))
        output_text = _values_text(want)
        out_wrong = len(got) != len(want) or not all(map(same_value, got, want))
    except RaspError as err:
        failure, out_wrong = err.message, False
        output_text = f"(the interpreter fails: {failure})"
    rows: list[Row] = [("  ", "variable", "model (decoded residual stream)", "interpreter")]
    rows += _checkpoint_rows(points, state.meta)
    output_name = str(state.meta["output"]["name"])
    rows.append("decoded output")
    rows.append(("X " if out_wrong else "  ", output_name, _values_text(got), output_text))
    title = f"{state.name}({show_tokens(tokens)}) in the compiled model and in the interpreter"
    table = _table(rows, width)
    lines = ["(* = completed by this sublayer, X = they disagree, ? = no value, - = not evaluated)"]
    first = _first_divergence(points)
    if first is not None:
        point, var, pos = first
        name = var.group if isinstance(var, Stray) else var.name
        operation = operation_of(state.meta, name)
        what = f" = {operation}" if operation and operation != name else ""
        # (with where a def's call made it: `got_2` (got in pick, called at ...))
        shown = f"`{name}`" + shown_name(name, state.nodes).removeprefix(name)
        if isinstance(var, Stray) and var.written_at is None:
            where = f"the `{var.label}` dim"
        elif isinstance(var, Stray):
            where = f"variable {shown}{what} before it is written"
        else:
            where = f"variable {shown}{what}"
        at = "at BOS" if pos is None else f"position {pos}"
        lines.append(f"first divergence: {where}, {point.where}, {at}")
    elif failure is not None:
        lines.append("the interpreter fails on this input, so the output is not defined here")
    elif out_wrong:
        lines.append("every variable agrees; the output differs (the unembedding)")
    else:
        lines.append("the model agrees with the interpreter everywhere on this input")
    said = (wrap_report(line, width) for line in [title, *lines])  # (the table is wrapped)
    title, *lines = said
    return "\n".join(line.rstrip() for line in [title, *table, *lines])


def _values(sop: SOp, tokens: list[Any]) -> tuple[Any, ...]:
    value = Evaluator(tokens).value(sop)
    return tuple(value.values) if isinstance(value, SeqValue) else ()


def _value_text(value: Any, quoted: bool = False) -> str:
    if value is None or isinstance(value, NoValue):  # no column hot; the interpreter's None
        return "?"
    if quoted and isinstance(value, str):
        return text_of(value, quoted)
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _values_text(values: Sequence[Any], quoted: bool = False) -> str:
    """A row's values; `quoted`: a variable whose labels write strings as JSON, the interpreter's
    strings so too (`"1"` beside the model's `1` and `"1"`)."""
    return "[" + ", ".join(_value_text(v, quoted) for v in values) + "]"


def _operations_at(meta: Mapping[str, Any], point: Checkpoint) -> str:
    """` (head 0: length)`: what a sublayer computes, for its heading; "" for the embedding."""
    if point.layer is None:
        return ""
    ops = meta["layers"][point.layer].get(point.sublayer, [])
    if not ops:
        return " (no operation)"
    names = [
        f"head {op.get('head', 0)}: {op.get('name')}"
        if point.sublayer == "attn"
        else f"mlp: {op.get('name')}"
        for op in ops
    ]
    return " (" + "; ".join(names) + ")"


Row = tuple[str, str, str, str] | str  # (mark, variable, model, interpreter) or a heading


def _checkpoint_rows(points: list[Checkpoint], meta: Mapping[str, Any]) -> list[Row]:
    """A heading per checkpoint and a row per variable; a checkpoint where no decoded variable is
    new or changed is one line."""
    rows: list[Row] = []
    previous: dict[str, tuple[Any, ...]] | None = None
    for point in points:
        now = {v.name: v.model for v in point.variables}
        heading = point.where + _operations_at(meta, point)
        if previous is not None and now == previous and not any(v.new for v in point.variables):
            if not point.helpers:
                rows.append(f"{heading}: no decoded variable is new or changed")
                continue
            # a head that writes only a helper (a width's `n.frac`) did something: show it
            rows.append(f"{heading}: only helper dims are new (a later sublayer reads them)")
            rows += [_helper_row(helper) for helper in point.helpers]
            continue
        previous = now
        rows.append(heading if point.variables else f"{heading}: no decoded variable")
        for var in point.variables:
            mark = ("X" if var.wrong else " ") + ("*" if var.new else " ")
            theirs = "-" if var.interpreter is None else _values_text(var.interpreter, var.quoted)
            rows.append((mark, var.name, _values_text(var.model, var.quoted), theirs))
        for stray in point.strays:  # a dim written where the model holds a fixed value
            until = "" if stray.written_at is None else f" until {stray.written_at}"
            at = "BOS" if stray.position is None else f"position {stray.position}"
            model = f"{stray.value:.6g} at {at}"
            rows.append(("X ", stray.label, model, f"(dim holds {stray.expected:g}{until})"))
        # what a head wrote beside its neighbours' variables (`hist.frac` beside `length`)
        rows += [_helper_row(helper) for helper in point.helpers]
    return rows


def _helper_row(helper: HelperDim) -> Row:
    """`hist.frac  [1/3, 1/3, 1/2]  1/(hist + 1) = [1/3, 1/3, 1/2]`: a width's frac as the
    fraction it is, beside the one the interpreter's width gives."""
    from rasp.tools.residual_helpers import fraction_text

    def text(values: Sequence[float]) -> str:
        shown = fraction_text if helper.is_fraction else (lambda v: f"{v:.6g}")
        return "[" + ", ".join(map(shown, values)) + "]"

    theirs = "-" if helper.expected is None else text(helper.expected)
    if helper.meaning:
        theirs = f"{helper.meaning} = {theirs}" if helper.expected else f"{helper.meaning}, -"
    mark = "X " if helper.wrong else "  "
    return (mark, helper.label, text(helper.values), theirs)


def _table(rows: list[Row], width: int | None = None) -> list[str]:
    """Headings as they are; (mark, name, model, interpreter) rows in aligned columns (by
    terminal columns: a value `[日, 本]` is 8 characters wide but takes 10 columns). Where the
    table is wider than `width`, the two value columns share what the names leave, each cell
    wrapped within its column (after a value's comma), and a heading is wrapped: still a table."""
    cells = [row for row in rows if isinstance(row, tuple)]
    name_w = max((display_width(r[1]) for r in cells), default=0)
    model_w = max((display_width(r[2]) for r in cells), default=0)
    theirs_w = max((display_width(r[3]) for r in cells), default=0)
    room = 0 if width is None else width - (7 + name_w + 2)  # `  XX name  ` and the gap
    wrapping = width is not None and model_w + theirs_w > room
    if wrapping:  # the narrower column keeps its width where the other still gets half
        # (and neither is narrower than its longest word, a value or `interpreter`, uncut)
        model_min, theirs_min = (
            max([_MIN_COLUMN, *(display_width(w) for r in cells for w in r[k].split())])
            for k in (2, 3)
        )
        model_w = max(min(model_w, max(room - theirs_w, room // 2)), model_min)
        model_w = min(model_w, max(room - theirs_min, model_min))
        theirs_w = max(room - model_w, theirs_min)
    lines: list[str] = []
    for row in rows:
        if isinstance(row, str):
            lines += wrap_line(row, width, hang=2) if width is not None else [row]
            continue
        mark, name, model, theirs = row
        models = fill_cell(model, model_w) if wrapping else [model]
        theirs_lines = fill_cell(theirs, theirs_w) if wrapping else [theirs]
        for k in range(max(len(models), len(theirs_lines))):
            left = ljust(models[k] if k < len(models) else "", model_w)
            right = theirs_lines[k] if k < len(theirs_lines) else ""
            lines.append(
                f"  {mark if k == 0 else '  '} {ljust(name if k == 0 else '', name_w)}  {left}  {right}"
            )
    return lines


_MIN_COLUMN = 8  # a value column no narrower (a table of long names may then overflow)


def _first_divergence(points: list[Checkpoint]) -> tuple[Checkpoint, Any, int] | None:
    """The first wrong variable, else stray dim (a `Stray`), as `rasp verify` finds it."""
    for point in points:
        for var in point.variables:
            if var.wrong:
                return point, var, var.wrong[0]
        if point.strays:
            stray = min(point.strays, key=lambda s: -1 if s.position is None else s.position)
            return point, stray, stray.position
    return None
