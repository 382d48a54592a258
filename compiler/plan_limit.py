"""A build stopped while it is planned, the first time one of its heads alone makes it larger than
the parameter limit.

The vocabulary's bound (compiler.vocab_bound) is proved from the program's structure before
`prepare`; where a select of the tokens sits inside an `or`, or reads maps of them (sort,
most_freq), which head it becomes is known only once it is planned. Planning such a head over
thousands of tokens is where the time goes (`attention.selector_weights` fills a row per value
of each side: sort over 5,000 tokens, 15 s and a GB per build, then its sketch), and the build is
then refused by `build_limits.check_params` anyway.

Once a head's query/key columns are counted (before its weights are filled), its layer's d_head
is known to be at least those columns and assembly's `bos` and `pad` (`assemble._head_widths`),
rounded up to a power of 4 where the head averages keys (`assemble._layer_shape`, the same float
expression, monotone in the width), and the residual holds the token one-hot where the program
reads the tokens (d_model >= |V| + 3, vocab_bound; >= 3 where it never does). The model then has at least vocab_bound's embedding and one layer of that head:
counted as `config_params` counts them, never above what this build would have. Above the limit
the plan stops there with `PlannedOverLimit`, an `OverParamLimit`: the build takes the route a
build refused by `check_params` takes (compiler.alternatives), only sooner. A head that copies a
one-hot (an aggregate of the tokens: reverse) is counted so too, before its value rows and W_O:
its d_v value columns bound its layer's d_head, and the dims it writes are in the residual
beside the token one-hot (`check_value_head`).

Before any of that, each build's output is checked from the value analysis it plans from
(`check_output`): an output (the tokens or an aggregate) that takes strings is a one-hot with a
column per string, so W_U has at least that many columns of d_model + 1 >= |V| + 4 entries; with
the embedding, over 10,000 tokens that alone exceeds the default limit wherever the output takes
every token (sort, most_freq), which then needs no select planned.

It applies to the driver's builds under a limit (not the size prediction's probes) and from
vocab_bound.BOUND_FROM tokens on, below which planning is quick and the refusal names the
build's own size.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from compiler.blocks import BOS, ONE, PAD, Atom, Dim
from compiler.budget import bytes_text
from compiler.graph import IRNode, Op
from compiler.model import OverParamLimit
from compiler.vocab_bound import (
    BOUND_FROM,
    EXTRA_ROWS,
    HEAD_EXTRA,
    embedding_params,
    head_params,
    least_d_model,
    output_columns,
)
from rasp.errors import Diagnostic, option

# (the parameter limit, |V|, whether the program reads the tokens) of the build being planned;
# None: no limit applies
_LIMIT: ContextVar[tuple[int, int, bool] | None] = ContextVar("plan_limit", default=None)


class PlannedOverLimit(OverParamLimit):
    """A build over the parameter limit, found while planning one of its heads."""


@contextmanager
def planning_under(
    max_params: int | None, n_tokens: int, tokens_read: bool = True
) -> Iterator[None]:
    """Plans inside are stopped at a head that makes the model larger than `max_params` (None:
    no limit), over a vocabulary of `n_tokens` tokens (`tokens_read`: vocab_bound.reads_tokens,
    whether the residual holds their one-hot)."""
    limited = max_params is not None and n_tokens >= BOUND_FROM
    limit = (max_params, n_tokens, tokens_read) if limited else None
    token = _LIMIT.set(limit)  # type: ignore[arg-type]
    try:
        yield
    finally:
        _LIMIT.reset(token)


def check_output(output: IRNode, values: Sequence[Atom]) -> None:
    """Raise PlannedOverLimit where the output's unembedding, one column per string among its
    `values` (the value analysis the build plans from), with the token embedding makes the build
    being planned larger than its limit: before any select's table is built (sort over 14,000
    tokens planned two 14,000 x 14,000 tables for 20 s and 1.9 GB before its width head).

    Only for the tokens and an aggregate, whose one-hot lists every value the analysis gives
    (compiler.aggregates: a value no key writes keeps its column, empty); a map's may list only
    the values its rows reach."""
    limit = _LIMIT.get()
    if limit is None or output.op not in (Op.TOKENS, Op.AGGREGATE):
        return
    name, span = output.name, output.span
    max_params, v, tokens_read = limit
    columns = output_columns(values)
    d_model = least_d_model(v, tokens_read)
    params = embedding_params(v, columns, d_model)
    if params <= max_params:
        return
    raise PlannedOverLimit(
        [
            Diagnostic(
                f"with {v:,} tokens the model would be too large: at least {params:,} parameters "
                f"({bytes_text(4 * params)} of float32 weights), counted from the values of the "
                f"output '{name}' before anything is planned: it takes {columns:,} strings, an "
                f"unembedding of {columns:,} columns beside the embedding's {v + EXTRA_ROWS:,} "
                f"rows, over a residual of at least {d_model:,} dimensions"
                f"{' (the token one-hot)' if tokens_read else ''}",
                span,
                _hint(max_params),
            )
        ]
    )


def _beside(tokens_read: bool, written: int) -> str:
    """What the residual's counted dimensions are, beside `one`, `bos` and `pad`."""
    if tokens_read:
        return f" (the token one-hot{' and those' if written else ''})"
    return " (those it writes)" if written else ""


def _hint(max_params: int) -> str:
    return (
        f"the limit is {max_params:,} parameters: use fewer tokens (a smaller vocabulary), or "
        f"raise the limit ({option('max_params')}) if the machine can hold it"
    )


def check_head(qk_columns: int, averages: bool) -> None:
    """Raise PlannedOverLimit where a head of `qk_columns` query/key columns (`averages`: it may
    select several keys, so its layer's d_head is a power of 4) makes the build being planned
    larger than its limit."""
    _check_width(
        qk_columns + HEAD_EXTRA,
        averages,
        f"its select reads {qk_columns:,} classes of query and key values",
    )


def check_value_head(value_columns: int, averages: bool, out_dims: Iterable[Dim]) -> None:
    """Raise PlannedOverLimit where a head whose value copies a one-hot of `value_columns`
    columns into `out_dims` makes the build being planned larger than its limit: its layer's
    d_head is at least that (`assemble._head_widths`), and the residual holds the dims it writes
    besides the token one-hot (`layout.lay_out`), known before the head's value rows and its
    [d_v, d_v] W_O are filled (reverse over 5,000 tokens: 2.6 s and 200 MB per build, then
    refused after planning)."""
    written = {d for d in out_dims if d.name != "tokens" and d not in (ONE, BOS, PAD)}
    _check_width(
        value_columns,
        averages,
        f"its value copies a one-hot of {value_columns:,} columns into {len(written):,} "
        "dimensions of its own",
        len(written),
    )


def _check_width(columns: int, averages: bool, why: str, written: int = 0) -> None:
    """`written`: residual dimensions the head writes, beyond the token one-hot's."""
    limit = _LIMIT.get()
    if limit is None:
        return
    max_params, v, tokens_read = limit
    # assembly's own expression (float log, monotone in the width): never above its d_head
    d_head = 4 ** math.ceil(math.log(columns, 4)) if averages else columns
    d_model = least_d_model(v, tokens_read) + written
    params = embedding_params(v, d_model=d_model) + head_params(d_model, d_head)
    if params <= max_params:
        return
    shape = (
        f"{d_head:,} columns (a power of 4, as the keys it averages need)"
        if averages
        else (f"{d_head:,} columns")
    )
    raise PlannedOverLimit(
        [
            Diagnostic(
                f"with {v:,} tokens the model would be too large: at least {params:,} parameters "
                f"({bytes_text(4 * params)} of float32 weights), found while planning this "
                f"head, before its weights: {why}, a head of {shape} over a residual of at "
                f"least {d_model:,} dimensions{_beside(tokens_read, written)}",
                None,  # located at the node being planned (plan_state.Memo.once)
                _hint(max_params),
            )
        ]
    )
