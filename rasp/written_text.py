"""An s-op as program text where the program gave it none: one built in Python (`MapSOp(fn=round,
inputs=(x,), text="round")`, a tracr program run from a string) has no source text, and a
message that names it by its generated residual name (`_map_16`) tells a reader nothing.

`written(node)` is the node's name where it has one, else its source text, else the call that
made it rebuilt from its inputs the same way (`round(aggregate(not select(indices, indices, <),
indices))`), cut to about `limit` characters with `...` inside the outermost calls.

A source text that one call gave several s-ops is none of theirs: every s-op a Python function
builds (a tracr library call, `lib.make_shuffle_dyck(pairs=["()"])`) has that call's span, so
it would name the s-op and the s-ops it is computed from alike. Such an s-op (one whose span an
input or, below it, a reader of its shares) is said by its note where the lowering gave it one
(`balance_() < 0`, an operator's map: rasp.tracr.operator_text), else rebuilt from its inputs:
`map(balance_())`, a lambda's.
"""

from __future__ import annotations

from rasp import sops
from rasp.errors import Span
from rasp.nodes import LABEL_MAX, is_one_term
from rasp.wording import atom_text

LIMIT = 80  # as compiler.graph's TEXT_WIDTH: a longer text is cut
_DEPTH = 8  # deeper inputs are `...` (a library call's graph is dozens of nodes deep)


def written(node: sops.Node, limit: int = LIMIT) -> str:
    """`node` as program text (the module docstring), at most about `limit` characters."""
    for depth in range(_DEPTH, -1, -1):  # shallower until it fits
        text = _text(node, depth, None)
        if len(text) <= limit:
            return text
    return text


def label(node: sops.Node, limit: int = LABEL_MAX) -> str:
    """`written(node, limit)` as a label inside other text: an operation bracketed, as
    `Node.label` brackets one (`(tokens == "a") - closes`), a name or a call as it is."""
    text = written(node, limit)
    return text if node.name or is_one_term(text) else f"({text})"


def shared_span(node: sops.Node, reader: Span | None = None) -> bool:
    """Whether `node`'s source text is a call that made more than it (module docstring): its
    span is an input's, or that of `reader`, an s-op reading it."""
    span = node.span
    if span is None:
        return False
    return _same(span, reader) or any(_same(span, c.span) for c in node.children())


def _same(span: Span, other: Span | None) -> bool:
    return other is not None and other.source is span.source and other == span


def _text(node: sops.Node, depth: int, reader: Span | None) -> str:
    if node.name:
        return node.name
    shared = shared_span(node, reader)
    if not shared and node.span is not None and (source := node.span.shown_text()):
        return " ".join(source.split())
    if node.called_as:
        return node.called_as
    if shared and node.note:  # (what it computes, as the lowering wrote it: `x (as a key)`)
        return node.note
    if depth <= 0 and node.children():
        return "..."
    match node:
        case sops.TokensSOp():
            return "tokens" if node.kind is sops.TokenKind.STR else f"tokens_{node.kind.value}"
        case sops.IndicesSOp():
            return "indices"
        case sops.LengthSOp():
            return "length"
        case sops.ConstSOp():
            return atom_text(node.value)
        case sops.MapSOp():
            args = ", ".join(_text(i, depth - 1, node.span) for i in node.inputs)
            if shared and not _one_word(node.text):
                return f"map({args})"  # (its text is the call's too, where a tracr map has no name)
            return f"{node.text}({args})" if _one_word(node.text) else f"map({node.text}, {args})"
        case sops.Select():
            keys, queries = (
                _text(node.keys, depth - 1, node.span),
                _text(node.queries, depth - 1, node.span),
            )
            return f"select({keys}, {queries}, {node.comparison.value})"
        case sops.AggregateSOp():
            selector, values = (
                _text(node.selector, depth - 1, node.span),
                _text(node.sop, depth - 1, node.span),
            )
            return f"aggregate({selector}, {values})"
        case sops.SelectorWidthSOp():
            return f"selector_width({_text(node.selector, depth - 1, node.span)})"
        case sops.SelectNot():
            return f"not {_operand(node.inner, depth - 1, node.span)}"
        case sops.SelectAnd() | sops.SelectOr():
            word = "and" if isinstance(node, sops.SelectAnd) else "or"
            left, right = (_operand(n, depth - 1, node.span) for n in (node.left, node.right))
            return f"{left} {word} {right}"
    return node.label


def _operand(node: sops.Node, depth: int, reader: Span | None) -> str:
    """A selector operand of `and`, `or`, `not`: bracketed where it is one of them itself."""
    text = _text(node, depth, reader)
    combined = isinstance(node, sops.SelectAnd | sops.SelectOr | sops.SelectNot)
    return f"({text})" if combined and text != node.label else text


def _one_word(text: str) -> bool:
    """A function's name (`round`, `my_fn`), which a call reads as; else a description."""
    return text.replace("_", "a").replace(".", "a").isalnum()
