"""The compile's last build: a stated sum that other maps read computed first, on its own, so that
they step over its one number (`BuildOptions.direct_maps` on the sum's readers).

A chain of maps over `x + y` (`known_affine` states its form) is fused by default: one step MLP
over one of the terms with the other as context (`compiler.map_supports`). Each step's dot
product then has three products (the number, `one` and the context's column), not the integer
band's two, so its activations are rounded, and they grow with the number's distance from each
threshold: in defs fuzz seed 2148200 at N = 16, `acc = mark + t0` (a bool and a product of two
copies, up to 4,096) is read by four rounds of `(acc * 0.5 + k) % 4`, whose step MLP of 5,358
units wrote the one-hot of `shift(acc, 2, -1)` with an error of 342, against the output's snap
of `shift(acc, 2, -1) + count(tokens, "1")`, 0.0312 (every other build: 644 to 1.7e6). Computed
first, the sum is one number and the chain a step MLP over it alone (two products: the band's
whole numbers, exact sums): proved (tests/compiler/test_sums_first.py).

Tried after every other build and form (`compiler.driver`), so that no program another build
proves changes; certified as every build is; where it is not proved or is refused while
planning, the refusal is the earlier build's, with this one among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op
from compiler.known_sums import sum_maps
from compiler.model import Sketch

SUMS_FIRST = "with stated sums that maps read computed first"


def sums_first_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, or where `graph()` (the prepared default form) has no map that
    reads a stated sum (`sum_readers`), or where some decision the certifier refused is computed
    from none of those sums (this build would fail it too); else the build with those readers
    computing their inputs first (`direct_maps`) where it is proved, or `kept` with why not among
    its tried."""
    if kept.certificate.ok:
        return kept
    program = graph()
    readers = sum_readers(program)
    if not readers or build_facts.untouched_failure(kept, sum_maps(program)):
        return kept
    residual = kept.model.metadata["residual"]

    def changed(sketch: Sketch) -> bool:
        # (the readers already stepped over the sum's number: the model refused before)
        return list(sketch.residual) != residual

    note("build with stated sums that maps read computed first")
    tried: list[tuple[str, str]] = []
    options = BuildOptions(direct_maps=readers)
    found = build_trials.proved(builds(), options, SUMS_FIRST, note, tried, worth=changed)
    if found is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))


def sum_readers(program: Graph) -> frozenset[str]:
    """The maps of `program` that read a map stating an affine form of two or more s-ops
    (`known_sums.sum_maps`)."""
    sums = {node.index for node in program.nodes if node.name in sum_maps(program)}
    return frozenset(
        node.name
        for node in program.nodes
        if node.op is Op.MAP and any(i in sums for i in node.inputs)
    )
