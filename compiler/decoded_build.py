"""The compile's last build: an output that adds means, with each mean decoded first
(`compiler.decoded_sums`), where every other build and form left the output's snap unproved.

Tried after all of them (`compiler.driver`), so that no program another build or form proves
changes: where the plain sum of two means over selects of the tokens is not proved (`0.5 * m0 + 2 *
m1`, seed 780331 #19, refused from N = 20), this build's output errs by the rounding of two terms on
a dyadic grid, not by the heads' errors, and its decoder's margin holds to a larger N.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op

DECODED = "with each mean decoded to its values first"


def decoded_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, its snap is not what failed, or the output of `graph()` (the
    prepared default form's) is no map of means; else that form's build (`builds()`) with the
    output's means decoded first where it is proved, or `kept` with why that build did not do
    among its tried."""
    if kept.certificate.ok or not build_facts.snap_failed(kept.certificate):
        return kept
    program = graph()
    if not adds_means(program):
        return kept
    note("build with each mean decoded to its values first")
    tried: list[tuple[str, str]] = []
    options = BuildOptions(decoded_sums=frozenset({program.output.name}))
    found = build_trials.proved(builds(), options, DECODED, note, tried)
    if found is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))


def adds_means(program: Graph) -> bool:
    """Whether the output is a map of two or more aggregates and maps (and constants), one of
    them an aggregate (a mean over a positional select of a positional value is a map of the
    position once prepared, compiler.position_functions)."""
    node = program.output
    if node.op is not Op.MAP:
        return False
    read = [program[i].op for i in dict.fromkeys(node.inputs) if program[i].op is not Op.CONST]
    return (
        len(read) >= 2 and Op.AGGREGATE in read and all(op in (Op.AGGREGATE, Op.MAP) for op in read)
    )
