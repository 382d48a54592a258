"""Why a map fails on every input: one call of its function that fails, in the interpreter's words
(`rasp.sops.python_error_text`) with the values it was called with, for the refusal's message (the
bare "fails on every input" left the reader to find which call raised and why)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.graph import Graph, IRNode, Op
from compiler.relations import Relation
from rasp import sops
from rasp.errors import RaspError
from rasp.nodes import LABEL_MAX, cut_label
from rasp.seqvalues import value_repr
from rasp.text_width import display_width
from rasp.wording import input_words

# a residual name the compiler made (`_map_15`, `_has_focus_aggregate_1`), no program text
_GENERATED = re.compile(r"(?<![\w.])_[a-z][a-z0-9_]*_\d+\b")

# calls tried before giving up on an example (each one a call of the program's function)
_TRIES = 2_000


def map_failure(
    graph: Graph,
    node: IRNode,
    rel: Relation | None,
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
) -> tuple[str, str] | None:
    """(what went wrong, where: `tokens = "a", length = 1`) for one failing call of the map `node`,
    or None where none is found. Where the map's relation has a position with no value, the
    arguments come from that position (every call there fails); else from its inputs' sets."""
    if node.fn is None or not node.inputs:
        return None
    for args in itertools.islice(_candidates(node, rel, relation, values), _TRIES):
        named = dict(zip(node.inputs, args, strict=True))
        if len(named) < len(args) and tuple(named[i] for i in node.inputs) != args:
            continue  # (`tokens - tokens` reads one value twice: no call of two)
        failed = _failure(node.fn, args)
        if failed is not None:
            why, type_error = failed
            # (an input read twice, `tokens - tokens`, holds one value: named once)
            shown = ", ".join(
                f"{_input_text(graph[i], node.inputs.index(i), len(named))} = {_value_text(v)}"
                for i, v in named.items()
            )
            if type_error and _reads_number_text(graph, named):  # as `rasp run` hints it
                shown = f"{shown}; {sops.STR_TOKENS_HINT}"
            return why, shown
    return None


def _reads_number_text(graph: Graph, named: dict[int, Atom]) -> bool:
    """Whether the call read `tokens` (as strings) where a token was a number's text ("3")."""
    return any(
        graph[i].op is Op.TOKENS and graph[i].kind is sops.TokenKind.STR and sops.number_text(v)
        for i, v in named.items()
    )


def _candidates(
    node: IRNode,
    rel: Relation | None,
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
) -> Iterable[tuple[Atom, ...]]:
    rels = [relation[i] for i in node.inputs]
    if rel is not None and all(r is not None for r in rels):
        empty = next((p for p, got in rel.items() if not got), None)
        if empty is not None:
            return itertools.product(*(r[empty] for r in rels))  # type: ignore[index]
    return itertools.product(*(values[i] for i in node.inputs))


def _failure(fn: Any, args: tuple[Atom, ...]) -> tuple[str, bool] | None:
    """What the interpreter says of `fn(*args)`, and whether Python raised a TypeError (`"3" +
    1`), or None where it accepts the result."""
    try:
        out = fn(*args)
    except RaspError as exc:
        return exc.message, False
    except (ArithmeticError, TypeError, ValueError, KeyError, IndexError) as exc:
        return sops.python_error_text(exc), isinstance(exc, TypeError)
    if sops.type_of_value(out) is None:
        return f"it gives {value_repr(out)[:60]}, which is not a value an s-op can hold", False
    return None


def _input_text(node: IRNode, k: int, count: int) -> str:
    """Input k of `count`: its name, else its program text (cut to LABEL_MAX columns, as the
    interpreter's hint cuts it), else `its input` / `its second input`; never a generated name that
    a refused program has no model to show (`map(_map_15)`)."""
    if node.named:
        return node.name
    # a long text is program text only where the node has a place in the source (a map built
    # in Python carries a description of its own)
    short = display_width(node.text) <= LABEL_MAX  # (columns, as `cut_label` cuts: `日` is two)
    if node.text and (short or node.span is not None) and not _GENERATED.search(node.text):
        text = cut_label(node.text)
        return f"({text})" if " " in text else text
    return input_words(k, count)


def _value_text(value: Atom) -> str:
    if isinstance(value, str):
        return f'"{value}" (a string)'  # as the interpreter's own hint quotes it
    if isinstance(value, bool):
        return f"{value} (a boolean)"
    return value_repr(value)
