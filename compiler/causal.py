"""Whether a causal model, which sees no later position, can compute a program."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom
from compiler.constants import fold_constants
from compiler.forms import prepare
from compiler.graph import Graph, Op, build_graph
from compiler.values import ValueSets, infer_values
from rasp import sops
from rasp.errors import CompileError, Diagnostic
from rasp.tracr.lower import is_lowered

# the length the size refusals' causal check analyses: short, so it takes milliseconds where the
# refused compile would not (most_freq over 20,000 tokens: 0.8 s); what looks ahead on inputs this
# short looks ahead in a model of any longer max-len too, which takes them as well
SHORT_LEN = 8
# tracr's Python select predicates are resolved by calling them per pair of tokens (`prepare`):
# over more tokens than this that takes seconds (900 tokens: 29 s), so such a program is not checked
PREDICATE_TOKENS = 100
# the analysis is linear in the vocabulary (most_freq over 100,000 tokens: 10 s, for a note to a
# refusal made in 0.6 s), so it reads the vocabulary's first tokens only: inputs over them are
# inputs of the model too, so what looks ahead on them looks ahead in the model
NOTE_TOKENS = 1_000


def check_causal(graph: Graph, folded: Graph, values: ValueSets, *, tracr: bool = False) -> None:
    """Refuse (CompileError) where `causal_problems` finds any."""
    problems = causal_problems(graph, folded, values, tracr=tracr)
    if problems:
        raise CompileError(problems)


def causal_problems(
    graph: Graph, folded: Graph, values: ValueSets, *, tracr: bool = False
) -> list[Diagnostic]:
    """A causal model sees no later position: every head must provably select only earlier keys.
    What folds to a constant builds no head, so only the s-ops the folded graph still reads from
    its output are checked (`aggregate(select(indices, length - 1, ==), indices < length)` is
    True everywhere, and reads `length` for nothing); they are named as `graph` has them (a
    width of every key is that width, not `length`). `tracr`: a rasp.tracr program's, whose hints
    are written in its API."""
    # the selector a head may keep: the one that selects no later key
    earlier = (
        "& rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)"
        if tracr
        else "and select(indices, indices, <=)"
    )
    live = sorted(folded.read_from_output())
    problems = []
    for node in (graph[i] for i in live if folded[i].op is not Op.CONST):
        if node.op is Op.LENGTH:
            # the built-in has no place in the program: point at the first s-op that reads it
            users = (graph[i] for i in live if node.index in folded[i].inputs)
            user = next((u for u in users if u.span), None)
            problems.append(
                Diagnostic(
                    "'length' reads every position",
                    node.span or (user.span if user is not None else graph.output.span),
                    "compile without causal attention, or avoid length",
                )
            )
        elif node.op in (Op.AGGREGATE, Op.SELECTOR_WIDTH) and not values.looks_back[node.inputs[0]]:
            problems.append(
                Diagnostic(
                    f"'{node.text}' may select later positions, which a causal model cannot see",
                    node.span,
                    f"add `{earlier}` to the selector, or compile without causal",
                )
            )
    return problems


def short_causal_problems(sop: sops.Node, vocab: Sequence[Atom], max_len: int) -> list[Diagnostic]:
    """What a causal model of `sop` (before `prepare`) could not compute, found on the inputs up
    to SHORT_LEN (or max_len) tokens: for a refusal made before the value analysis (the size
    checks), which would hide it until the size is fixed. [] where the short analysis fails.
    Only the first NOTE_TOKENS tokens of `vocab` are analysed."""
    n = min(max_len, SHORT_LEN)
    try:
        if len(vocab) > PREDICATE_TOKENS:
            build_graph(sop)  # raises for tracr's Python predicates: not checked, see above
        some = list(vocab[:NOTE_TOKENS])
        graph = build_graph(prepare(sop, some, n))
        values = infer_values(graph, some, n)
        return causal_problems(graph, fold_constants(graph, values), values, tracr=is_lowered(sop))
    except CompileError:  # the refused compile's own reasons come first; this is only a note
        return []


def with_causal_problems(
    err: CompileError, sop: sops.Node, vocab: Sequence[Atom], max_len: int
) -> CompileError:
    """`err`, a refusal of a causal compile made before the causal check could run (the size
    checks, the value analysis), led by `short_causal_problems`: no smaller size fixes those."""
    found = short_causal_problems(sop, vocab, max_len)
    return err if not found else type(err)([*found, *err.diagnostics])
