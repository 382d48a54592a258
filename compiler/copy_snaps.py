"""The driver's last build, where none before is proved: the one-hots that copies copy snapped
first (`BuildOptions.snapped_copies`, compiler.snap_one_hot).

A copy (an aggregate that selects at most one key) of a few numbers is read as a one-hot: its
head copies the source's columns with weight exactly 1, so the copy carries whatever error the
source's columns have, to every reader. A map's one-hot that a step MLP writes over a sum of
numbers is off by that step's rounding: in mixed fuzz seed 1820297, `v1 =
load_from_location(w0 + m, ...)` (w0 a width, m a mean) has its source's 12 columns (N = 7)
written by a step MLP whose pairs are both on far from their thresholds, over terms of a few
hundred (`one` times up to 142.5, w0 and m times up to 84): the certifier bounds each column by
up to 8.1e-4 (each unit's own rounding, gamma_n times its |terms|; a pair shares only its input's
error), where float32 sums of those terms in every order err by 1.2e-5 at most. A
selector width whose select reads v1 (`select(round(v0), v1, <)`) sums those errors on one query
dimension (2.7e-3) times its key scale: a score error of 0.7 a side, its head's weights off by a
factor of up to 4.1 and 1/(w+1) by 12.5 times itself, against which its decoding MLP has a relu
margin of 3 (error 202). `snapped_sides` snaps v1 where the select reads it, but a mean that
reads v1 too still reads the noisy columns (an output snap of 5.7e-5 against 0.035 in the
reduction). Snapped
before the copy, the source's columns are exact (a step pair per column, in the integer band),
the copy of an exact one-hot with weight 1 is exact, and so is every reader's input.

Tried after every other build and form (`compiler.driver`), only where some refused decision is
computed from such a copy, so that no program another build proves changes; certified, unchanged,
as every build is; where it is not proved or is refused while planning, the refusal is the
earlier build's, with this one among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op
from compiler.snap_one_hot import snaps_some

COPY_SNAPS = "with the one-hots that copies copy snapped first"


def copy_snaps_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, or where no copy of `graph()` (the prepared default form) is
    read as a one-hot in `kept`, or where some refused decision is computed from none of them;
    else that form's build with the one-hots those copies copy snapped first (planned only: a
    build that snaps nothing is `kept`'s model again), where proved, else `kept` with why not
    among its tried."""
    if kept.certificate.ok:
        return kept
    program = graph()
    residual = kept.model.metadata["residual"]
    held = {label.split(":")[0] for label in residual if ":" in label}
    aggregates = frozenset(
        node.name for node in program.nodes if node.op is Op.AGGREGATE and node.name in held
    )
    if not aggregates or build_facts.untouched_failure(kept, aggregates):
        return kept
    build = builds()
    copies = aggregates & build.single_key()
    if not copies or build_facts.untouched_failure(kept, copies):
        return kept
    note("build with the one-hots that copies copy snapped first")
    tried: list[tuple[str, str]] = []
    found = build_trials.proved(
        build,
        BuildOptions(snapped_copies=True),
        COPY_SNAPS,
        note,
        tried,
        worth=lambda sketch: snaps_some(sketch.residual),
    )
    return found if found is not None else replace(kept, tried=(*kept.tried, *tried))
