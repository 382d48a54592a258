"""The compile's last build: maps stepped over a mean with a context, the mean decoded to its
values first (`BuildOptions.decoded_factors`), where every other build and form is not proved.

`length * aggregate(select(tokens, tokens, ==), indices, 0)` is gated units per length over the
mean's number (compiler.map_steps): each unit's weight, the length, multiplies the head's float32
error into the output, 24 times 4.5e-5 at N = 24 against the output snap's margin of 0.000906
(mixed fuzz seed 2197809; refused from N = 22), while the mean alone is proved, its values at
least 1/n^2 apart. Here the map reads the mean as the number of its decoded one-hot (its step
MLP, whose margins are the mean's own snap's, then one unit per value: `decoded_sums.term_mlp`),
which errs by its values' float32 rounding alone, and where the slopes are whole numbers the
product is written per bit of the factor (compiler.bit_gates). Two layers more, tens of millions
of parameters (the mean's one-hot); a one-hot output of the seed would be 1.9G.

Tried after every other build and form (`compiler.driver`), so that no program another build
proves changes; certified as every build is; where it is not proved or is refused while planning,
the refusal is the earlier build's, with this one among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op
from compiler.model import Sketch

FACTORS = "with the means that maps multiply decoded to their values first"


def factors_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, where `graph()` (the prepared default form) has no map that
    reads an aggregate beside another s-op, or where some decision the certifier refused is
    computed from none of them; else that form's build with those maps' means decoded first
    where it is proved, or `kept` with why not among its tried."""
    if kept.certificate.ok:
        return kept
    names = mean_maps(graph())
    if not names or build_facts.untouched_failure(kept, names):
        return kept
    residual = kept.model.metadata["residual"]

    def changed(sketch: Sketch) -> bool:
        # (no such map stepped over a mean in this plan: the same model, refused before)
        return list(sketch.residual) != residual

    note("build with the means that maps multiply decoded first")
    tried: list[tuple[str, str]] = []
    options = BuildOptions(decoded_factors=names)
    found = build_trials.proved(builds(), options, FACTORS, note, tried, worth=changed)
    if found is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))


def mean_maps(program: Graph) -> frozenset[str]:
    """The maps of `program` that read an aggregate and another s-op that is no constant (the
    planner decodes the aggregate where it is a mean and the map is stepped over it)."""
    found = set()
    for node in program.nodes:
        if node.op is not Op.MAP:
            continue
        read = [program[i].op for i in dict.fromkeys(node.inputs) if program[i].op is not Op.CONST]
        if len(read) >= 2 and Op.AGGREGATE in read:
            found.add(node.name)
    return frozenset(found)
