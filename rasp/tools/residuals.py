"""A model's residual stream read as program variables, at every checkpoint of one run.

A compiled model labels its residual dimensions `name:value` (one dimension of a categorical
variable) or `name` (a numerical one). `decode_checkpoints` runs the model once with its cache and
decodes, after the embedding and after every attention and MLP sublayer, every variable complete
there, beside the interpreter's value (a variable held only in parts through the file's reach:
`rasp.tools.residual_parts`). `rasp verify` uses it to find the first variable that goes
wrong (`rasp.tools.verify.diagnose`), the REPL's `:residual` prints it, and `draw` reads the cache
through `residual_at`.

The model is anything with the runtime's interface (`RuntimeModel`); this module imports neither
torch nor the compiler.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rasp import residual_labels
from rasp.errors import RaspError
from rasp.sops import Evaluator, Node, SeqValue, SOp
from rasp.tools import residual_types
from rasp.tools.residual_helpers import HelperDim, written_helpers
from rasp.tools.residual_parts import PartsReading, frac_widths, parts_readings

RESIDUAL_TOL = 1e-4  # numerical residual dims (relative and absolute)
# A one-hot column of an exact model is 0 or 1 up to float32 rounding (a head's selected keys'
# weights sum to 1, the others' are exactly 0); one further off (0.6 beside the hot 1, a hot 3)
# is a fault the argmax alone would read as the right value, blaming a later reader of it.
ONE_HOT_TOL = 1e-2
SPECIAL_DIMS = frozenset({"one", "bos", "pad"})
# what the special dims hold at every real position, after every sublayer
SPECIAL_AT_REAL = {"one": 1.0, "bos": 0.0, "pad": 0.0}
SPECIAL_AT_BOS = {"one": 1.0, "bos": 1.0, "pad": 0.0}  # (docs/format.md)


class RuntimeModel(Protocol):
    """The runtime's interface (`transformer.CompiledTransformer`), as the tools use it."""

    meta: Any  # `transformer.metadata.ModelMetadata` (its `.raw` is the JSON) or the JSON itself

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]: ...
    def encode(self, inputs: Sequence[Sequence[Any]]) -> tuple[Any, Any]: ...
    def run_with_cache(self, ids: Any) -> tuple[Any, Mapping[str, Any]]: ...


@dataclass(frozen=True)
class Unclear:
    """A one-hot group that holds no single value: some column is neither 0 nor 1, or two are
    1. `columns`: the labels and values of its non-zero columns."""

    columns: tuple[tuple[str, float], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{label}: {value:.6g}" for label, value in self.columns) + "}"


@dataclass(frozen=True)
class ResidualVariable:
    """A program variable materialised in the residual stream."""

    name: str
    dims: tuple[int, ...]
    values: tuple[str, ...] | None  # the label values of a categorical variable; None if numerical
    quoted: bool = False  # its strings are written as JSON (`rasp.residual_labels`)

    def decode(self, resid: np.ndarray) -> list[Any]:
        """The variable at every position of `resid` [pos, d_model]."""
        block = resid[:, list(self.dims)]  # [pos, n_dims]
        if self.values is None:
            return [float(v) for v in block[:, 0]]
        return [self._one_hot(row) for row in block]

    def _one_hot(self, row: np.ndarray) -> str | Unclear | None:
        """The label of the one column at 1, the others at 0 (None: every column 0)."""
        off = ~(np.minimum(np.abs(row), np.abs(row - 1.0)) <= ONE_HOT_TOL)  # NaN too
        hot = np.flatnonzero(row >= 0.5)
        if not off.any() and len(hot) <= 1:
            return self.values[int(hot[0])] if len(hot) else None
        labels = self.values or ()
        return Unclear(
            tuple((labels[k], float(row[k])) for k in np.flatnonzero(~(np.abs(row) <= ONE_HOT_TOL)))
        )

    def agrees(self, got: Any, want: Any) -> bool:
        if isinstance(got, Unclear):
            return False
        if self.values is None:
            if isinstance(want, str) or got is None:
                return False
            return math.isclose(got, float(want), rel_tol=RESIDUAL_TOL, abs_tol=RESIDUAL_TOL)
        if got is None:
            # No column is hot: right where the value has no column. The compiler lays out only
            # the columns something reads (`indices:3` of the index one-hot, not all N of them).
            return not any(_labels(label, want, self.quoted) for label in self.values)
        own = residual_labels.text_of(want, self.quoted)
        if own in self.values:
            # the value's own column, where it has one: `res:1` is not `res:1.0` beside it
            return got == own
        return _labels(got, want, self.quoted)


def _labels(label: str, value: Any, quoted: bool = False) -> bool:
    """Whether `name:{label}` is the column of `value` (labels are str of the value, or a string
    in JSON where the variable's values need it: `rasp.residual_labels`)."""
    decided = residual_labels.text_is(label, value, quoted)
    if decided is not None:
        return decided
    if label == str(value):
        return True
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False  # None (tracr's) or a tuple has no number to compare: was a TypeError
    try:  # a number the compiler labelled canonically (1.0 as "1")
        return float(label) == float(value)
    except ValueError:
        return False


def residual_variables(labels: Sequence[str]) -> dict[str, ResidualVariable]:
    """Group residual labels by variable name (the special one/bos/pad dims excluded). A variable
    held both as a number and as (some) one-hot columns, as `indices` can be, is read as its
    number: the one-hot lists only the columns something reads."""
    groups: dict[str, list[tuple[int, str | None]]] = {}
    for d, label in enumerate(labels):
        name, sep, value = str(label).partition(":")
        if sep or name not in SPECIAL_DIMS:
            groups.setdefault(name, []).append((d, value if sep else None))
    out = {}
    for name, dims in groups.items():
        numbers = [d for d, v in dims if v is None]
        if numbers:
            out[name] = ResidualVariable(name, (numbers[0],), None)
        else:
            texts = tuple(str(v) for _, v in dims)
            out[name] = ResidualVariable(
                name, tuple(d for d, _ in dims), texts, residual_labels.quoted(texts)
            )
    return out


def checkpoints(meta: Mapping[str, Any]) -> list[tuple[str, int | None, str, list[str]]]:
    """(hook name, layer, sublayer, variables complete there) in execution order.

    One head may compute several variables (`"name": "a, b"`), and a variable listed in several
    sublayers (selector_width: a head, then an MLP) is complete only after the last of them.
    """
    points: list[tuple[str, int | None, str, list[str]]] = [
        ("blocks.0.hook_resid_pre", None, "embedding", [])
    ]
    final: dict[str, int] = {}
    for layer, ops in enumerate(meta.get("layers", [])):
        for sublayer, hook in (("attn", "resid_mid"), ("mlp", "resid_post")):
            points.append((f"blocks.{layer}.hook_{hook}", layer, sublayer, []))
            for op in ops.get(sublayer, []):
                for name in str(op.get("name")).split(","):
                    final[name.strip()] = len(points) - 1
    for name, index in final.items():
        points[index][3].append(name)
    return points


@dataclass(frozen=True)
class DecodedVariable:
    """One variable at one checkpoint: the model's decoded value beside the interpreter's."""

    name: str
    # per position, typed as the interpreter's values (`rasp.tools.residual_types`): `NO_VALUE`
    # where a categorical variable has no value, an `Unclear` where it holds no single one
    model: tuple[Any, ...]
    interpreter: tuple[Any, ...] | None  # None: no s-op behind the name, or the interpreter fails
    wrong: tuple[int, ...]  # the positions where the two disagree
    new: bool  # completed at this checkpoint (at the embedding: every input variable)
    quoted: bool = False  # `model`'s label texts write strings as JSON (`rasp.residual_labels`)


@dataclass(frozen=True)
class Stray:
    """A dim holding something where an exact model holds a fixed value: a variable's dim before
    the first sublayer that writes it (0: nothing writes there earlier), or `one`, `bos` or
    `pad` (1, 0, 0 at a real position; 1, 1, 0 at BOS). A stray write is wrong before anything decodes it: the
    block that reads it is not where the model went wrong."""

    label: str  # the dim's residual label (`frac_prevs`, `reverse:b`, `pad`)
    position: int | None  # the first program position where it strays; None: at BOS
    value: float
    expected: float
    written_at: str | None  # where the variable is first written ("layer 0 attn"); None: special

    @property
    def group(self) -> str:
        return self.label.partition(":")[0]


@dataclass(frozen=True)
class Checkpoint:
    """The residual stream at one hook, decoded: every variable complete there, newest first."""

    hook: str
    layer: int | None  # None: the embedding
    sublayer: str  # "embedding", "attn" or "mlp"
    variables: tuple[DecodedVariable, ...]
    # program variables completed here that the residual holds only in parts (`target_position`
    # as `target_position.part0`, `.int`, ...) and that no reading of the file's reach reads whole
    # (`rasp.tools.residual_parts`): no value to decode, so not checked
    in_parts: tuple[str, ...] = ()
    # dims that hold something where the model holds a fixed value (`Stray`), in residual order
    strays: tuple[Stray, ...] = ()
    # dims this sublayer wrote that hold no decoded variable (`hist.frac`: `residual_helpers`)
    helpers: tuple[HelperDim, ...] = ()

    @property
    def where(self) -> str:
        if self.layer is None:
            return "after the embedding"
        return f"after layer {self.layer} {self.sublayer}"


def decode_checkpoints(
    model: RuntimeModel, tokens: list[Any], nodes: Mapping[str, Node], pad_to: int = 0
) -> list[Checkpoint]:
    """Run `model` once on `tokens` (padded to `pad_to` positions, where longer) with its cache
    and decode every checkpoint of `checkpoints`.

    At each checkpoint every variable complete so far is decoded (newly completed ones first) and,
    when `nodes` names an s-op for it, compared with the interpreter's value. Variables with no
    s-op node (helper dims) are left out. A variable held only in parts is decoded through the
    readings of it the file's reach records (`rasp.tools.residual_parts`), each once its
    dimensions are written; one with no such reading is listed in `Checkpoint.in_parts`.
    """
    meta = meta_dict(model)
    variables: dict[str, Any] = dict(residual_variables(meta["residual"]))
    evaluator = Evaluator(tokens)
    ids, _ = model.encode(padded_batch(tokens, pad_to))
    _, cache = model.run_with_cache(ids)
    n = len(tokens)
    points = checkpoints(meta)
    written_later = {name for _, _, _, names in points for name in names}
    # a width read only through its 1/(w + 1) has no group of its own: decoded from that
    variables.update(frac_widths(meta["residual"], sorted(written_later - set(variables))))
    live: list[str] = [v for v in variables if v not in written_later]  # written by the embedding
    completes, read = _parts_completed(meta, points, nodes, variables)
    wanted: dict[str, tuple[Any, ...] | None] = {}
    first = _first_writes(meta)
    numbers = residual_types.number_types(meta)
    decoded: list[Checkpoint] = []
    before: np.ndarray | None = None  # the previous checkpoint's real positions

    def interpreter(source: str) -> tuple[Any, ...] | None:
        node = nodes.get(source)
        if source not in wanted and isinstance(node, SOp):
            try:
                wanted[source] = tuple(as_seq(evaluator.value(node)).values)
            except RaspError:
                wanted[source] = None
        return wanted.get(source)

    for at, (hook, layer, sublayer, written) in enumerate(points):
        new = [v for v in written if v in variables and v not in live]
        for reading in completes.get(at, ()):
            # read under its own name (`target_position.int`: its residual group alone has no node)
            variables[reading.name] = reading
            live = [v for v in live if v != reading.name]
            new = [v for v in new if v != reading.name] + [reading.name]
        live = new + live  # newly written variables are checked first
        rows = _numpy(residual_at(cache, hook))[0, : n + 1]  # [BOS + n, d_model]
        resid = rows[1:]  # real positions only
        row: list[DecodedVariable] = []
        held = {d for d, label in enumerate(meta["residual"]) if label in SPECIAL_DIMS}
        for name in live:
            var = variables[name]
            source = getattr(var, "variable", name)  # a reading of a variable held in parts
            node = nodes.get(source)
            if node is None or not isinstance(node, SOp):
                continue  # a generated name the compiler does not expose: cannot be checked
            held.update(var.dims)
            if source == "tokens" and layer is None:
                # the embedding's token one-hot holds the input's atoms as given (compiler.layout),
                # not `tokens` as the program reads it: [1, 1.5, "1.5"] is not ["1", "1.5", "1.5"]
                wanted[source] = tuple(tokens)
            want = interpreter(source)
            got = tuple(var.decode(resid))
            wrong = (
                ()
                if want is None
                else tuple(pos for pos, (g, w) in enumerate(zip(got, want)) if not var.agrees(g, w))
            )
            columns = _columns(meta, var)
            row.append(
                DecodedVariable(
                    name,
                    residual_types.typed(var, got, columns, numbers, RESIDUAL_TOL, want),
                    want,
                    wrong,
                    name in new or layer is None,
                    getattr(var, "quoted", False),
                )
            )
        unread = tuple(v for v in _in_parts(written, nodes) if v not in read)
        strays = _strays(rows, meta["residual"], at, first, points)
        helpers = (
            ()
            if before is None
            else written_helpers(before, resid, meta["residual"], held, interpreter)
        )
        before = resid
        decoded.append(Checkpoint(hook, layer, sublayer, tuple(row), unread, strays, helpers))
    return decoded


def _columns(meta: Mapping[str, Any], var: Any) -> dict[str, Any] | None:
    """A one-hot group's typed value per label text, where the file records them all."""
    typed = meta.get("residual_values")
    texts = getattr(var, "values", None)
    if not isinstance(typed, list) or texts is None or isinstance(var, PartsReading):
        return None
    entries = [typed[d] if d < len(typed) else None for d in var.dims]
    if not all(isinstance(e, list) and len(e) == 1 for e in entries):
        return None
    return {text: e[0] for text, e in zip(texts, entries, strict=True)}


def padded_batch(tokens: list[Any], pad_to: int) -> list[list[Any]]:
    """`tokens` first, in a batch padded to `pad_to` positions (a filler input that long beside
    it) where that is longer: a head that attends to PAD keys shows only so."""
    return [tokens] if pad_to <= len(tokens) else [tokens, [tokens[0]] * pad_to]


def _first_writes(meta: Mapping[str, Any]) -> dict[str, int]:
    """Each name the layer map lists, by the checkpoint after the first sublayer listing it (the
    one that completes it may come later: selector_width's head, then its MLP); the checkpoints
    are `checkpoints(meta)`'s, the embedding's first."""
    first: dict[str, int] = {}
    for layer, ops in enumerate(meta.get("layers", [])):
        for offset, sublayer in enumerate(("attn", "mlp")):
            for op in ops.get(sublayer, []):
                for name in str(op.get("name")).split(","):
                    first.setdefault(name.strip(), 1 + 2 * layer + offset)
    return first


def started_at(meta: Mapping[str, Any], name: str, where: str) -> str | None:
    """Which sublayer (`layer 0 attn`) first writes `name` or a part of it (`name.*`), where
    that is before `where` (`after layer 0 mlp`), the checkpoint that completes it; else None."""
    first = _first_writes(meta)
    # a part's reading (`w.int`) is its own; a variable is begun by any of its parts
    found = [
        at for n, at in first.items() if n == name or ("." not in name and n.startswith(f"{name}."))
    ]
    if not found:
        return None
    _, layer, sublayer, _ = checkpoints(meta)[min(found)]
    started = f"after layer {layer} {sublayer}"
    return started.removeprefix("after ") if started != where else None


def _strays(
    rows: np.ndarray,
    labels: Sequence[str],
    at: int,
    first: Mapping[str, int],
    points: Sequence[tuple[str, int | None, str, list[str]]],
) -> tuple[Stray, ...]:
    """The dims of `rows` [BOS + real positions, d_model] (checkpoint `at`) that hold something
    where the model holds a fixed value: the special dims (at BOS too), a variable's before it is
    written. NaN counts as off."""
    found: list[Stray] = []
    for d, label in enumerate(map(str, labels)):
        group = label.partition(":")[0]
        if label in SPECIAL_AT_REAL:
            expected = np.full(len(rows), SPECIAL_AT_REAL[label])
            expected[0] = SPECIAL_AT_BOS[label]
            written_at = None
        elif first.get(group, 0) > at:
            _, layer, sublayer, _ = points[first[group]]
            expected, written_at = np.zeros(len(rows)), f"layer {layer} {sublayer}"
        else:
            continue
        off = np.flatnonzero(~(np.abs(rows[:, d] - expected) <= RESIDUAL_TOL))
        if len(off):
            k = int(off[0])
            position = None if k == 0 else k - 1
            found.append(Stray(label, position, float(rows[k, d]), float(expected[k]), written_at))
    return tuple(found)


def _parts_completed(
    meta: Mapping[str, Any],
    points: Sequence[tuple[str, int | None, str, list[str]]],
    nodes: Mapping[str, Node],
    variables: Mapping[str, Any],
) -> tuple[dict[int, list[PartsReading]], set[str]]:
    """The reach readings of the variables held only in parts, by the checkpoint after which
    every dimension they read is written (the last sublayer naming a dimension's group; a group
    no sublayer names is the embedding's, unless it is one of the variable's parts, whose writer
    is then taken to be the last sublayer naming any of them); and the variables they read."""
    held = {v for _, _, _, names in points for v in _in_parts(names, nodes) if v not in variables}
    readings = parts_readings(meta, sorted(held))
    final = {name: at for at, (_, _, _, names) in enumerate(points) for name in names}
    labels = meta["residual"]
    by_point: dict[int, list[PartsReading]] = {}
    for variable, found in readings.items():
        parts = [at for name, at in final.items() if name.startswith(f"{variable}.")]
        last = max(parts, default=0)
        for reading in found:
            groups = [str(labels[d]).partition(":")[0] for d in reading.dims if d < len(labels)]
            at = max(
                (final.get(g, last if g.startswith(f"{variable}.") else 0) for g in groups),
                default=last,
            )
            by_point.setdefault(at, []).append(reading)
    return by_point, set(readings)


def _in_parts(written: Sequence[str], nodes: Mapping[str, Node]) -> tuple[str, ...]:
    """The program variables among `written` that are parts (`name.part`) of an s-op `nodes`
    names, which the residual holds no whole value of."""
    found: dict[str, None] = {}
    for label in written:
        base, dot, _ = label.partition(".")
        if dot and isinstance(nodes.get(base), SOp) and base not in written:
            found[base] = None
    return tuple(found)


def operation_of(meta: Mapping[str, Any], name: str) -> str | None:
    """What the file's layer map says `name` computes (the last sublayer that lists it, else the
    positional embedding's list)."""
    found = next(
        (str(op.get("op")) for op in (meta.get("embedding") or []) if op.get("name") == name), None
    )
    for ops in meta.get("layers", []):
        for op in [*ops.get("attn", []), *ops.get("mlp", [])]:
            names = [n.strip() for n in str(op.get("name")).split(",")]
            if name in names:
                texts = str(op.get("op")).split("; ")
                found = texts[names.index(name)] if len(texts) == len(names) else str(op.get("op"))
    return found


def meta_dict(model: RuntimeModel) -> Mapping[str, Any]:
    """The file's metadata JSON object (the runtime keeps it as `meta.raw`)."""
    meta = model.meta
    return meta if isinstance(meta, Mapping) else meta.raw  # type: ignore[attr-defined]


def residual_at(cache: Mapping[str, Any], hook: str) -> Any:
    """`cache[hook]`; a model without blocks has no `blocks.0.hook_resid_pre`: embed + pos_embed."""
    if hook not in cache and hook == "blocks.0.hook_resid_pre":
        return cache["hook_embed"] + cache["hook_pos_embed"]
    return cache[hook]


def _numpy(tensor: Any) -> np.ndarray:
    if hasattr(tensor, "detach"):
        tensor = tensor.detach().float().cpu().numpy()
    return np.asarray(tensor, dtype=np.float64)


def as_seq(value: SeqValue | np.ndarray) -> SeqValue:
    """An s-op's value (verifying a selector is refused before it gets here)."""
    if isinstance(value, SeqValue):
        return value
    raise TypeError("verify needs an s-op, not a selector")  # the CLI checks this first
