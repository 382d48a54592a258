"""The compile's last build where nothing is proved: every build of the prepared default form with
its maps of single-key copies moved before the copy (`compiler.moved_maps`).

A proved build tries the moved maps where they make it smaller (`compiler.smaller_builds`); a
program no build proves may be proved moved: a map over a copy reads the copy's one-hot of its
source's many values (each column's error times its value), where moved it is stepped on the
source and the copy moves its few values. Tried after every other build (`compiler.driver`), so
that no program another build proves changes; certified as every build is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler.alternatives import keep_proved
from compiler.build_trials import NOT_PROVED, Builds, Kept
from compiler.graph import Graph
from compiler.refusals import refused_why, why_not_proved
from compiler.smaller_builds import MOVED
from rasp.errors import CompileError


def moved_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    max_len: int,
    max_params: int | None,
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved or the prepared default form (`graph()`) has no map to move
    (`Builds.moves`); else the build `keep_proved` keeps among that form's builds with them
    moved (each of its alternatives too) where it is proved, or `kept` with why not among its
    tried."""
    if kept.certificate.ok:
        return kept
    build = builds()
    names = build.moves()
    if not names:
        return kept
    note("build " + MOVED)
    moved = replace(
        build,
        model=lambda options: build.model(replace(options, moved_maps=names)),
        sketch=lambda options: build.sketch(replace(options, moved_maps=names)),
    )
    try:
        found = keep_proved(moved, graph(), max_len, max_params, note)
    except CompileError as err:
        return replace(kept, tried=(*kept.tried, (MOVED, refused_why(err))))
    if found.certificate.ok:
        return replace(found, options=replace(found.options, moved_maps=names))
    model = found.model
    why = f"{model.param_count():,} {NOT_PROVED} {why_not_proved(found.certificate, found.graph)}"
    return replace(kept, tried=(*kept.tried, (MOVED, why)))
