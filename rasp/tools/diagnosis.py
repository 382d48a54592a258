"""`rasp verify`'s diagnosis: on the first failing input, the first program variable, layer and
position where the model's residual stream decodes to another value than the interpreter's
(`rasp.tools.residuals` decodes it), a dim written where the model holds a fixed value
(`Stray`), or the unembedding; `run_batch` runs the model as the comparison does.

The model is anything with the runtime's interface; this module imports neither torch nor the
compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rasp.atoms import same_value
from rasp.call_names import about, local_name, made_in, with_place
from rasp.errors import RaspError
from rasp.sops import Evaluator, IndicesSOp, LengthSOp, Node, SOp, TokensSOp, walk
from rasp.tools.residuals import (
    RuntimeModel,
    Stray,
    as_seq,
    decode_checkpoints,
    meta_dict,
    operation_of,
    padded_batch,
    started_at,
)

NON_FINITE = "<non-finite>"  # shown as the model's output where it computed NaN or infinity


@dataclass(frozen=True)
class Divergence:
    """The first program variable the model gets wrong, where, and both values."""

    variable: str
    layer: int | None  # None: already wrong after the embedding
    # "embedding", "attn", "mlp", "unembed" (every variable right, the model's output wrong) or
    # "output" (every variable right, and the model outputs `variable`, another s-op than the one
    # verified: no fault of the model's)
    sublayer: str
    position: int | None  # program position (model position - 1)
    model: Any
    interpreter: Any
    operation: str | None = None  # what the variable computes (from the file's layer map)
    # variables completed up to this point that the residual holds only in parts, with no reading
    # of the file's reach that reads them whole (rasp.tools.residual_parts): not checked, so one
    # of them may be where the model first went wrong
    in_parts: tuple[str, ...] = ()
    # the s-op verified, where the model outputs another (`--name`); None: the model's output
    verified: str | None = None
    # "output" only: where the residual stream first holds the verified s-op (a checkpoint's
    # `where`, all of it agreeing there), None where it holds none; and whether the model's own
    # output was compared with the interpreter's value of it (False: no s-op of the program)
    held_at: str | None = None
    output_checked: bool = False
    # set where the first fault is a dim holding something where the model holds a fixed value
    # (a variable's before it is written, or `one`/`bos`/`pad`): `model` is what it holds,
    # `interpreter` the fixed value
    stray: Stray | None = None
    # where a sublayer before this one already wrote part of the variable (selector_width's
    # head writes helper dims its MLP completes it from, which are not decoded): the fault may
    # lie there; None where the variable is written by this sublayer alone
    started_at: str | None = None
    # the failing input decodes right alone (it failed in a batch): the divergence was found
    # with it padded to this many positions, as beside longer inputs; None: found alone
    padded_to: int | None = None
    # the variable's label texts (`model`) write strings as JSON: `interpreter` is shown so too
    quoted: bool = False
    # the variable as messages name it, with where a `def`'s call named or made it
    # (`y (in f, called at p.rasp:12:5)`, rasp.call_names.with_place); `variable` elsewhere.
    # Words for people, derived from `variable`: not compared
    shown: str | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        return {
            "embedding": "after the embedding",
            "unembed": "in the unembedding",
            "output": "at the output",
        }.get(self.sublayer, f"layer {self.layer} {self.sublayer}")


def run_batch(model: RuntimeModel, batch: list[list[Any]]) -> list[list[Any] | None]:
    """The model's outputs; None for an input whose output is NaN or infinite (the runtime raises an
    ArithmeticError for those, so a broken batch is rerun input by input to find them)."""
    try:
        return [list(out) for out in model.run(batch)]
    except ArithmeticError:
        outputs: list[list[Any] | None] = []
        for tokens in batch:
            try:
                outputs.append(list(model.run([tokens])[0]))
            except ArithmeticError:
                outputs.append(None)
        return outputs


# ------------------------------------------------------------------------------------------------
# Diagnosis: the first variable the model gets wrong (decoding: rasp.tools.residuals)


def shown_name(name: str, nodes: Mapping[str, Node]) -> str:
    """A residual variable's name as messages show it: with where a `def`'s call named or made
    its s-op (rasp.call_names.with_place)."""
    node = nodes.get(name)
    return name if node is None else with_place(name, local_name(node), made_in(node))


def about_names(nodes: Mapping[str, Node]) -> Callable[[str], str | None]:
    """What a message says of each residual name a `def`'s call named or made (`shown_name`'s
    parenthesis), for rasp.named_text: None for the others."""

    def told(name: str) -> str | None:
        node = nodes.get(name)
        return None if node is None else about(name, local_name(node), made_in(node))

    return told


def nodes_by_name(sop: SOp) -> dict[str, Node]:
    """The program variables `sop` depends on, by name (inputs also by their residual names)."""
    found: dict[str, Node] = {}
    for node in walk(sop):
        if node.name is not None:
            found[node.name] = node  # children come first: the last node with a name is the latest
        for kind, name in ((TokensSOp, "tokens"), (IndicesSOp, "indices"), (LengthSOp, "length")):
            if isinstance(node, kind):
                found.setdefault(name, node)
    return found


def diagnose(
    sop: SOp,
    model: RuntimeModel,
    tokens: list[Any],
    nodes: Mapping[str, Node],
    name: str | None = None,
) -> Divergence | None:
    """The first (checkpoint, variable, position) where the model's residual stream is wrong.
    `name`: `sop`'s; where the model outputs another s-op (`--name`), a faithful model still
    disagrees with `sop`, and the divergence says so (sublayer "output") instead of blaming the
    unembedding, which is blamed only where the model's output is wrong for itself. Where the
    model is right on `tokens` alone (it failed in a batch), the run is repeated padded to the
    model's maximum length, as beside longer inputs (`Divergence.padded_to`)."""
    found = _diagnose(sop, model, tokens, nodes, name, 0)
    pad_to = int(meta_dict(model).get("max_len") or 0)
    if found is None and pad_to > len(tokens):
        found = _diagnose(sop, model, tokens, nodes, name, pad_to)
        return None if found is None else replace(found, padded_to=pad_to)
    return found


def _diagnose(
    sop: SOp,
    model: RuntimeModel,
    tokens: list[Any],
    nodes: Mapping[str, Node],
    name: str | None,
    pad_to: int,
) -> Divergence | None:
    meta = meta_dict(model)
    output = str(meta.get("output", {}).get("name", "output"))
    verified = name if name is not None and name != output else None
    in_parts: list[str] = []
    held_at = None
    for point in decode_checkpoints(model, tokens, nodes, pad_to):
        in_parts += [part for part in point.in_parts if part not in in_parts]
        for var in point.variables:
            if var.wrong and var.interpreter is not None:
                pos = var.wrong[0]
                return Divergence(
                    var.name,
                    point.layer,
                    point.sublayer,
                    pos,
                    var.model[pos],
                    var.interpreter[pos],
                    operation_of(meta, var.name),
                    tuple(in_parts),
                    verified,
                    # (only where completed here: one complete earlier read right there, and a
                    # later sublayer broke it)
                    started_at=started_at(meta, var.name, point.where) if var.new else None,
                    quoted=var.quoted,
                    shown=shown_name(var.name, nodes),
                )
            if var.name == verified and var.interpreter is not None and held_at is None:
                held_at = point.where
        if point.strays:  # every variable right here: the stray write is the first fault
            stray = min(point.strays, key=lambda s: -1 if s.position is None else s.position)
            return Divergence(
                stray.group,
                point.layer,
                point.sublayer,
                stray.position,
                stray.value,
                stray.expected,
                operation_of(meta, stray.group),
                tuple(in_parts),
                verified,
                stray=stray,
                shown=shown_name(stray.group, nodes),
            )
    got = run_batch(model, padded_batch(tokens, pad_to))[0] or [NON_FINITE] * len(tokens)
    own = _values(nodes.get(output) if verified else sop, tokens)  # the model's output's
    for pos, (g, w) in enumerate(zip(got, own or ())):
        if not same_value(g, w):
            return Divergence(output, None, "unembed", pos, g, w, None, tuple(in_parts), verified)
    if verified is None:
        return None
    want = _values(sop, tokens) or ()
    for pos, (g, w) in enumerate(zip(got, want)):
        if not same_value(g, w):
            return Divergence(
                output,
                None,
                "output",
                pos,
                g,
                w,
                None,
                tuple(in_parts),
                verified,
                held_at,
                own is not None,
            )
    return None


def _values(node: Node | None, tokens: list[Any]) -> tuple[Any, ...] | None:
    """The interpreter's value of the s-op `node` on `tokens`; None: no s-op, or it fails."""
    if not isinstance(node, SOp):
        return None
    try:
        return tuple(as_seq(Evaluator(tokens).value(node)).values)
    except RaspError:
        return None
