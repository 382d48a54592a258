"""Whether a causal model, which sees no later position, can compute a program."""

from __future__ import annotations

from compiler.graph import Graph, Op
from compiler.values import ValueSets
from rasp.errors import CompileError, Diagnostic


def check_causal(graph: Graph, folded: Graph, values: ValueSets) -> None:
    """A causal model sees no later position: every head must provably select only earlier keys.
    What folds to a constant builds no head, so only the s-ops the folded graph still reads from
    its output are checked (`aggregate(select(indices, length - 1, ==), indices < length)` is
    True everywhere, and reads `length` for nothing); they are named as `graph` has them (a
    width of every key is that width, not `length`)."""
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
                    "add `and select(indices, indices, <=)` to the selector, or compile without causal",
                )
            )
    if problems:
        raise CompileError(problems)
