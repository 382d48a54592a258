"""The compile's last build for a select that reads maps of means: those maps computed as
tables over their inputs' one-hots (`BuildOptions.table_sides`, compiler.side_tables), where
every other build and form left the model unproved.

Tried after all of them (`compiler.driver`, after `decoded_build`), so that no program another
build or form proves changes (the vote form of `make_count(make_pair_balance(...), -1)` stays the
model kept at N = 16). The build is certified as every build is; where it is not proved, or is
refused while planning (a table over more rows than a map lists, or over the parameter limit), the
refusal is the earlier build's, with this one among what was also tried. Where a select reads a
copy of a number (a single-key aggregate), itself or through maps, and that build is not proved
either, the same build with copies of many numbers built as one number each (compiler.copy_sides:
the select's one-hot of the copy is then a step over one number, exact) is tried last.

Where a side (or a map a side reads) compares one mean with an exact s-op of a few values
(`length > m`), the build with it stepped over the mean per value of that s-op (compiler.
threshold_sides) is tried before the tables where its sketch is smaller than theirs (or theirs is
refused), else after every other build: the first proved is kept, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.build_trials import NOT_PROVED, BuildOptions, Builds, Kept
from compiler.copy_sides import COPIES, side_copies, side_sources
from compiler.graph import Graph
from compiler.model import Sketch
from compiler.noisy_sides import side_maps
from compiler.snap_one_hot import snaps_some
from compiler.threshold_sides import THRESHOLDS, threshold_sides
from rasp.errors import CompileError

SIDES = "with select sides from means as tables over their one-hots"
SNAPPED = "with the one-hots of a few values that select sides read snapped first"


def sides_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved or no select of `graph()` (the prepared default form) reads a
    map of means or an aggregate; else that form's builds (`builds()`) with those maps as tables,
    then (where a select reads a copy of many numbers) with such copies as numbers too
    (compiler.copy_sides), then with the one-hots of a few values that heads write and those
    tables or selects read snapped first (compiler.snap_one_hot), the first proved, or `kept`
    with why those builds did not do among its tried."""
    if kept.certificate.ok:
        return kept
    program = graph()
    names = side_maps(program)
    residual = kept.model.metadata["residual"]
    # the aggregates a select reads: only those of many numbers read as their one-hot change
    # when copied as numbers (checked before the value analysis that says which are copies);
    # the s-ops it reads: only those read as a one-hot change when snapped
    read = side_copies(program)
    copied = bool(read) and build_facts.copies_many(residual, program, read)
    sources = side_sources(program)
    one_hots = any(label.split(":")[0] in sources for label in residual if ":" in label)
    if not names and not copied and not one_hots:
        return kept
    build = builds()
    copied = copied and build_facts.copies_many(residual, program, read & build.single_key())
    tried: list[tuple[str, str]] = []
    steps = threshold_sides(program) if names else frozenset()
    stepped = BuildOptions(table_sides=names - steps, threshold_sides=steps)
    # before the tables only where smaller: no model the tables prove changes for a larger one
    first = bool(steps) and _smaller(build, stepped, BuildOptions(table_sides=names))

    def thresholds() -> Kept | None:
        note("build with select sides stepped per value of an exact s-op")
        return build_trials.proved(build, stepped, THRESHOLDS, note, tried)

    if first and (found := thresholds()) is not None:
        return found
    if names:
        note("build with select sides from means as tables")
        found = build_trials.proved(build, BuildOptions(table_sides=names), SIDES, note, tried)
        if found is not None:
            return found
    if copied:
        # after the tables: no model the table build proves changes
        note("build with select sides copied as numbers")
        found = build_trials.proved(
            build,
            BuildOptions(table_sides=names, numeric_copies=True),
            COPIES,
            note,
            tried,
            # (no copy of more than a few numbers: the same model as one tried before)
            worth=lambda sketch: list(sketch.residual) != residual,
        )
        if found is not None:
            return found
    tables = next((why for how, why in tried if how == SIDES), "")
    if one_hots or (names and NOT_PROVED in tables):
        # (the tables' build built and not proved, or a select reads an aggregate's one-hot;
        # only a build that snaps one: else a model tried before)
        note("build with select sides snapped")
        found = build_trials.proved(
            build,
            BuildOptions(table_sides=names, snapped_sides=True),
            SNAPPED,
            note,
            tried,
            worth=lambda sketch: snaps_some(sketch.residual),
        )
        if found is not None:
            return found
    if steps and not first and (found := thresholds()) is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))


def _smaller(build: Builds, options: BuildOptions, than: BuildOptions) -> bool:
    """Whether the build of `options` is sketched (planned) smaller than that of `than`, or
    `than`'s is refused while planning (a table over too many rows) and `options`' is not."""
    sketches: list[Sketch | None] = []
    for each in (options, than):
        try:
            sketches.append(build.sketch(each))
        except (CompileError, MemoryError):
            sketches.append(None)
    mine, theirs = sketches
    return mine is not None and (theirs is None or mine.cost < theirs.cost)
