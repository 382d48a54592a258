"""The values of an input s-op (`tokens`, `tokens_int`, ...) over the compiled vocabulary."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom, sort_values
from compiler.graph import IRNode
from rasp import sops
from rasp.errors import Diagnostic, option


def token_values(
    node: IRNode, vocab: Sequence[Atom], problems: list[Diagnostic]
) -> tuple[Atom, ...]:
    """The input s-op's values over the vocabulary: each token converted as the interpreter
    converts it (`tokens_int` reads 3 from "3"). Tokens it cannot read are one located problem."""
    assert node.kind is not None
    out, unread = [], []
    for raw in vocab:
        try:
            out.append(sops.read_token(node.kind, raw))
        except (TypeError, ValueError, OverflowError):
            unread.append(raw)
    if unread:  # one error for all of them, at the s-op that reads them
        kind = node.kind.value
        problems.append(
            Diagnostic(
                f"the vocabulary {_listed_tokens(unread)} cannot be read as tokens_{kind}",
                node.span,
                f"tokens_{kind} reads every token with {kind}(): compile with a vocabulary of "
                f"numbers ({option('vocab', '0123456789')} or {option('vocab', '[1,2,3]')}), or "
                "read them as strings with tokens",
            )
        )
    return sort_values(out)


def _listed_tokens(tokens: Sequence[Atom], most: int = 8) -> str:
    """`token 'a'`, `tokens 'a', 'b'`, or the first `most` and how many more."""
    shown = ", ".join(repr(t) for t in tokens[:most])
    more = f" and {len(tokens) - most} more" if len(tokens) > most else ""
    return f"token {shown}" if len(tokens) == 1 else f"tokens {shown}{more}"
