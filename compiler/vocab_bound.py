"""A lower bound on a model's size from its vocabulary and the program's structure alone.

The size prediction (compiler.budget) plans the program at two small lengths, and the build
checks its shape before allocating weights (compiler.build_limits); both first analyse the
values, then plan every select's table. With a large vocabulary that is where the time goes:
`select(tokens, tokens, ==)` over 5,000 tokens built 5,000 x 5,000 tables for seconds and a GB
before the shape was refused. What the vocabulary forces on every build is known from |V| alone:

- every model embeds |V| + 2 rows (the tokens, BOS and PAD) over a residual of `one`, `bos`,
  `pad` and, where the program reads the tokens, the raw token one-hot (compiler.layout lays it
  out only where a block or the output reads it): d_model >= |V| + 3, and the embedding alone
  has (|V| + 2)(|V| + 3) parameters (d_model >= 3 for a program that never reads the tokens);
- a selector_width that is the program's output, of a select comparing the tokens with
  themselves (string tokens: no numerical matching, compiler.addressing), is a head whose table
  has a class per token (|V| - 1 for `<` and `>`, whose least token selects nothing), plus the
  `bos` and `pad` columns; its layer averages keys (two positions can hold one token), so its
  d_head is a power of 4 at least that wide (compiler.assemble).

These are counted the way `config_params` counts them, so the bound never exceeds what the build
would have: a compile refused here would have been refused after planning, only later. Below
BOUND_FROM tokens that planning is quick (hist or sort over 256 tokens is refused in 0.4 s), and
its refusal names the build's own size, not a bound: the vocabulary is not checked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compiler.blocks import Atom
from compiler.budget import bytes_text
from compiler.graph import Graph, IRNode, Op, build_graph
from rasp import sops
from rasp.errors import CompileError, Diagnostic, Span, option

# the embedding's rows beside the tokens (BOS, PAD) and the residual's dims beside the token
# one-hot (`one`, `bos`, `pad`): compiler.assemble's d_vocab and compiler.layout's order
EXTRA_ROWS = 2
EXTRA_DIMS = 3
# assembly's own columns in every head (`bos`, `pad`)
HEAD_EXTRA = 2
BOUND_FROM = 256  # tokens; fewer are left to the build's own, exact, refusal
_STRING_KINDS = (sops.TokenKind.STR, sops.TokenKind.ASIS)


@dataclass(frozen=True)
class Bound:
    params: int  # at least this many parameters
    why: str  # the construct responsible, described
    span: Span | None


def lower_bound(
    graph: Graph | None, vocab: Sequence[Atom], max_len: int, tokens_read: bool = True
) -> Bound:
    """The largest of the bounds the module doc lists that apply to `graph` (the program before
    `prepare`; None: a graph not built yet, the embedding's bound alone) over `vocab` at
    `max_len`; `tokens_read`: whether the program reads the tokens (`reads_tokens`)."""
    v = len(vocab)
    d_model = least_d_model(v, tokens_read)
    embedding = embedding_params(v, d_model=d_model)
    best = Bound(
        embedding,
        f"every model embeds its {v:,} tokens{' as a one-hot' if tokens_read else ''}: "
        f"{v + EXTRA_ROWS:,} embedding rows (the tokens, BOS and PAD) of at least {d_model:,} "
        "residual dimensions",
        None if graph is None else graph.output.span,
    )
    head = None if graph is None else _token_width_head(graph, vocab, max_len)
    if head is not None:
        select, classes = head
        # assembly's own expression (float log, monotone in the width): never above its d_head
        d_head = 4 ** math.ceil(math.log(classes + HEAD_EXTRA, 4))
        params = embedding + head_params(d_model, d_head)
        if params > best.params:
            best = Bound(
                params,
                f"this select compares the tokens with themselves: its selector_width is a head "
                f"with a column for each of {classes:,} classes of tokens, {d_head:,} columns "
                f"(a power of 4, as the keys it averages need) over a residual of at least "
                f"{d_model:,} dimensions (the token one-hot)",
                select.span,
            )
    return best


def reads_tokens(sop: sops.Node) -> bool:
    """Whether the program mentions the tokens: where it does not, no block reads the token
    one-hot and the layout leaves it out (where it does, a block almost always reads it)."""
    return any(isinstance(node, sops.TokensSOp) for node in sops.walk(sop))


def least_d_model(v: int, tokens_read: bool = True) -> int:
    """The fewest residual dimensions over `v` tokens: `one`, `bos`, `pad` and, where the program
    reads the tokens, their one-hot."""
    return (v if tokens_read else 0) + EXTRA_DIMS


def embedding_params(v: int, out_columns: int = 1, d_model: int | None = None) -> int:
    """The embedding's parameters over `v` tokens: W_E's |V| + 2 rows of at least |V| + 3
    dimensions (`d_model` where more are known), and W_U's `out_columns` columns (one at least)
    and their bias."""
    d_model = v + EXTRA_DIMS if d_model is None else d_model
    return (v + EXTRA_ROWS) * d_model + (d_model + 1) * out_columns


def output_columns(values: Sequence[Atom]) -> int:
    """The fewest unembedding columns an output of these `values` (its value analysis) has: where
    one is a string, the output is a one-hot (no number holds it, compiler.encode) with a column
    per value, and distinct strings are never one column (only equal numbers are merged,
    `Built.canonical`); else 1 (a number's logit)."""
    strings = {v for v in values if type(v) is str}
    return max(len(strings), 1)


def head_params(d_model: int, d_head: int) -> int:
    """One layer's parameters with one head of `d_head` columns over `d_model` dimensions, as
    `config_params` counts them (W_Q, W_K, W_V, W_O, their biases, the layer's output bias)."""
    return 4 * d_model * d_head + 3 * d_head + d_model


def check_vocab_size(
    sop: sops.Node, vocab: Sequence[Atom], max_len: int, max_params: int | None
) -> None:
    """Refuse, before any value is analysed, a program `sop` (before `prepare`) whose vocabulary
    alone makes its model larger than `max_params` parameters (None: no limit), from BOUND_FROM
    tokens on."""
    if max_params is None or len(vocab) < BOUND_FROM:
        return
    try:
        graph: Graph | None = build_graph(sop)
    except CompileError:  # a tracr select's Python predicate, resolved only by `prepare`
        graph = None
    bound = lower_bound(graph, vocab, max_len, reads_tokens(sop))
    if bound.params <= max_params:
        return
    raise CompileError(
        [
            Diagnostic(
                f"with {len(vocab):,} tokens the model would be too large: at least "
                f"{bound.params:,} parameters ({bytes_text(4 * bound.params)} of float32 "
                f"weights), counted from the vocabulary and the program before anything is "
                f"built: {bound.why}",
                bound.span or getattr(sop, "span", None),
                f"the limit is {max_params:,} parameters: use fewer tokens (a smaller "
                f"vocabulary), or raise the limit ({option('max_params')}) if the machine can "
                "hold it",
            )
        ]
    )


def _token_width_head(
    graph: Graph, vocab: Sequence[Atom], max_len: int
) -> tuple[IRNode, int] | None:
    """The output's select and its class count where the output is a selector_width of a select
    comparing string tokens with themselves (None: the program is not of that form)."""
    out = graph.output
    if out.op is not Op.SELECTOR_WIDTH or len(vocab) < 2:
        return None
    select = graph[out.inputs[0]]
    cmp = select.comparison
    if select.op is not Op.SELECT or not isinstance(cmp, sops.Comparison):
        return None
    sides = [graph[i] for i in select.inputs]
    if not all(s.op is Op.TOKENS and s.kind in _STRING_KINDS for s in sides):
        return None
    if not all(isinstance(t, str) for t in vocab):  # numbers may be matched in a few columns
        return None
    strict = cmp in (sops.Comparison.LT, sops.Comparison.GT, sops.Comparison.NEQ)
    # two keys for one query: two equal tokens (==, <=, >=), or, for a strict comparison, two
    # tokens below (above, beside) a third
    if max_len < (3 if strict else 2):
        return None
    # a class per distinct non-zero row of the table (compiler.attention): for < and > the least
    # (greatest) token selects nothing
    classes = len(vocab) - (cmp in (sops.Comparison.LT, sops.Comparison.GT))
    return select, classes
