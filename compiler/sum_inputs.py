"""The compile's last builds: a stated sum's inputs built for the line of their numbers, where every
other build is unproved (`BuildOptions.sum_copies`, then `direct_maps` on the sums' readers).

A map stating an affine form (`x + y`: `compiler.known_affine`) over numerical sources is a free
view of their numbers; the default reads some inputs otherwise, and their error is the sum's:

- A copy (an aggregate of one key) of many numbers is a one-hot: an MLP snaps the copied s-op's
  number onto its columns, whose rounding grows with the steps' activations, and the sum reads
  each column times its value. In defs fuzz seed 2172213 (reduced in docs/campaigns.md),
  `aggregate(select_from_first(tokens, "2"), v0, 1) + count(tokens, "1")` at N = 10: v0's
  columns erred by 0.021, the output by 9.33 against a snap margin of 0.00347 (90M parameters).
  Those copies alone copied as one number (`sum_copies`; `numeric_copies` copies every copy of
  many numbers so, and there tabled a conditional past the pair limit), the sum is the line of
  the copied number and the count: 1.1e-4, proved in 39,444 parameters. The seed copies
  `shift(v0, 1, -1)`: a copy of a copy, both copied so (the outer alone reads the inner one-hot's
  columns, 137): 49,394 parameters.
- A chain of maps over a sum is fused by default: one step MLP over one term with the other as
  context, whose dot products have three products (not the integer band's two) and rounded
  activations that grow with the number's distance from each threshold. In defs seed 2148200
  at N = 16, `acc = mark + t0` (a bool an MLP writes and a product of two copies, up to 4,096)
  under four rounds of `(acc * 0.5 + k) % 4`: a one-hot erring by 342, against the snap of
  `shift(acc, 2, -1) + count(tokens, "1")`, 0.0312 (every other build: 644 to 1.7e6). With the
  sum computed first, on its own (`direct_maps` on its readers), the chain is a step MLP over its
  one number alone (two products: the band's whole numbers, an exact one-hot): proved.

Tried after every other build and form (`compiler.driver`), so that no program another build
proves changes; certified as every build is; where neither is proved or each is refused while
planning, the refusal is the earlier build's, with these among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op
from compiler.known_sums import sum_maps
from compiler.model import Sketch

COPIES = "with the copies stated sums read copied as numbers"
SUMS_FIRST = "with stated sums that maps read computed first"


def sum_inputs_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, or where `graph()` (the prepared default form) has no stated sum
    (`known_sums.sum_maps`), or where some decision the certifier refused is computed from none
    of them (these builds would fail it too); else the first proved of the build with the copies
    those sums read copied as numbers (`sum_copies`) and the one with the maps that read those
    sums computing them first (`direct_maps`), or `kept` with why not among its tried."""
    if kept.certificate.ok:
        return kept
    program = graph()
    sums = sum_maps(program)
    if not sums or build_facts.untouched_failure(kept, sums):
        return kept
    build = builds()
    copies = sum_copies(program, sums, build.single_key())
    readers = sum_readers(program, sums)
    residual = kept.model.metadata["residual"]

    def changed(sketch: Sketch) -> bool:
        # (the options changed nothing: the model refused before)
        return list(sketch.residual) != residual

    trials = [
        (COPIES, BuildOptions(sum_copies=copies), bool(copies)),
        (SUMS_FIRST, BuildOptions(direct_maps=readers), bool(readers)),
    ]
    tried: list[tuple[str, str]] = []
    for how, options, some in trials:
        if not some:
            continue
        note(f"build {how}")
        found = build_trials.proved(build, options, how, note, tried, worth=changed)
        if found is not None:
            return found
    return replace(kept, tried=(*kept.tried, *tried))


def sum_copies(program: Graph, sums: frozenset[str], single_key: frozenset[str]) -> frozenset[str]:
    """The aggregates of one key (named in `single_key`) that a map named in `sums` reads, and
    the copies those copy, down the chain (`shift(v0, 1, -1)` copied again: a copy of a one-hot
    reads its columns times their values)."""
    todo = [i for node in program.nodes if node.name in sums for i in node.inputs]
    found: set[int] = set()
    while todo:
        index = todo.pop()
        node = program[index]
        if node.op is Op.AGGREGATE and node.name in single_key and index not in found:
            found.add(index)
            todo.append(node.inputs[1])
    return frozenset(program[i].name for i in found)


def sum_readers(program: Graph, sums: frozenset[str]) -> frozenset[str]:
    """The maps of `program` that read a map named in `sums`."""
    indices = {node.index for node in program.nodes if node.name in sums}
    return frozenset(
        node.name
        for node in program.nodes
        if node.op is Op.MAP and any(i in indices for i in node.inputs)
    )
