"""An s-op as program text where the program gave it none: one built in Python (`MapSOp(fn=round,
inputs=(x,), text="round")`, a tracr program run from a string) has no source text, and a
message that names it by its generated residual name (`_map_16`) tells a reader nothing.

`written(node)` is the node's name where it has one, else its source text, else the call that
made it rebuilt from its inputs the same way (`round(aggregate(not select(indices, indices, <),
indices))`), cut to about `limit` characters with `...` inside the outermost calls.
"""

from __future__ import annotations

from rasp import sops
from rasp.wording import atom_text

LIMIT = 80  # as compiler.graph's TEXT_WIDTH: a longer text is cut
_DEPTH = 8  # deeper inputs are `...` (a library call's graph is dozens of nodes deep)


def written(node: sops.Node, limit: int = LIMIT) -> str:
    """`node` as program text (the module docstring), at most about `limit` characters."""
    for depth in range(_DEPTH, -1, -1):  # shallower until it fits
        text = _text(node, depth)
        if len(text) <= limit:
            return text
    return text


def _text(node: sops.Node, depth: int) -> str:
    if node.name:
        return node.name
    if node.span is not None and (source := " ".join(node.span.shown_text().split())):
        return source
    if node.called_as:
        return node.called_as
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
            args = ", ".join(_text(i, depth - 1) for i in node.inputs)
            return f"{node.text}({args})" if _one_word(node.text) else f"map({node.text}, {args})"
        case sops.Select():
            keys, queries = _text(node.keys, depth - 1), _text(node.queries, depth - 1)
            return f"select({keys}, {queries}, {node.comparison.value})"
        case sops.AggregateSOp():
            selector, values = _text(node.selector, depth - 1), _text(node.sop, depth - 1)
            return f"aggregate({selector}, {values})"
        case sops.SelectorWidthSOp():
            return f"selector_width({_text(node.selector, depth - 1)})"
        case sops.SelectNot():
            return f"not {_operand(node.inner, depth - 1)}"
        case sops.SelectAnd() | sops.SelectOr():
            word = "and" if isinstance(node, sops.SelectAnd) else "or"
            return f"{_operand(node.left, depth - 1)} {word} {_operand(node.right, depth - 1)}"
    return node.label


def _operand(node: sops.Node, depth: int) -> str:
    """A selector operand of `and`, `or`, `not`: bracketed where it is one of them itself."""
    text = _text(node, depth)
    combined = isinstance(node, sops.SelectAnd | sops.SelectOr | sops.SelectNot)
    return f"({text})" if combined and text != node.label else text


def _one_word(text: str) -> bool:
    """A function's name (`round`, `my_fn`), which a call reads as; else a description."""
    return text.replace("_", "a").replace(".", "a").isalnum()
