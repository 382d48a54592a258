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

from compiler.alternatives import form_instead
from compiler.build_trials import Builds, Kept
from compiler.graph import Graph
from compiler.smaller_builds import MOVED


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
    names, chains = build.first_moves(), build.moves()
    if not names:
        return kept
    # every build moves each chain's first map; where one is proved, the chains too where no
    # larger (compiler.smaller_builds, inside keep_proved: the build's own moves are left alone)
    build = replace(
        build, moves=lambda: chains if chains != names else frozenset(), first_moves=frozenset
    )
    return form_instead(
        kept,
        build,
        graph(),
        lambda options: replace(options, moved_maps=options.moved_maps or names),
        MOVED,
        max_len,
        max_params,
        note,
    )
