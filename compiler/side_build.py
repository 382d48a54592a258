"""The compile's last build for a select that reads maps of means: those maps computed as
tables over their inputs' one-hots (`BuildOptions.table_sides`, compiler.side_tables), where
every other build and form left the model unproved.

Tried after all of them (`compiler.driver`, after `decoded_build`), so that no program another
build or form proves changes (the vote form of `make_count(make_pair_balance(...), -1)` stays the
model kept at N = 16). The build is certified as every build is; where it is not proved, or is
refused while planning (a table over more rows than a map lists, or over the parameter limit), the
refusal is the earlier build's, with this one among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph
from compiler.noisy_sides import side_maps

SIDES = "with select sides from means as tables over their one-hots"


def sides_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved or no select of `graph()` (the prepared default form) reads a
    map of means; else that form's build (`builds()`) with those maps as tables where it is
    proved, or `kept` with why that build did not do among its tried."""
    if kept.certificate.ok:
        return kept
    names = side_maps(graph())
    if not names:
        return kept
    note("build with select sides from means as tables")
    tried: list[tuple[str, str]] = []
    found = build_trials.proved(builds(), BuildOptions(table_sides=names), SIDES, note, tried)
    if found is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))
