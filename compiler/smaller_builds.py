"""Two builds of a proved program that can only save blocks, kept where proved and no larger.

- *Maps moved before single-key copies* (`BuildOptions.moved_maps`, `compiler.moved_maps`):
  `round(shift(x, 1, d))` as `shift(round(x), 1, round(d))`, the map stepped on x where x is
  written and the copy moving the map's few values, not x's many. Each chain's first map alone
  first (`Builds.first_moves`), then every map of the chains (`Builds.moves`), each kept where no
  larger than the build before it.
- *One reading of a map read two ways* (`BuildOptions.shared_readings`): a map read both as a
  number and as a one-hot was two step MLPs over the same input, one writing the number and one
  the one-hot; the number is then the free view of the one-hot (sum of value x column), and the
  MLP that wrote it is gone.

Each changes the model of a program that is proved today, so each is kept only where it is
proved (the certifier has the last word, as for every build) and has no more parameters and no
more layers than the build kept so far, and fewer of one (`no_larger`): not the usual
`build_cost`, which trades a layer for a quarter of the parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_trials
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Op
from compiler.model import Sketch

MOVED = "with maps moved before single-key copies"
CHAINS = "with chains of maps moved before single-key copies"
SHARED = "with numbers of one-hot maps read from the one-hot"


def smaller_instead(
    build: Builds, kept: Kept, note: Callable[[str], None], tried: list[tuple[str, str]]
) -> Kept:
    """`kept` (proved), or a build with maps moved before their copies, then with maps read two
    ways read from one one-hot, each where proved and no larger (module doc); once per build
    (`Kept.smaller_tried`: a second pass would plan and certify the same builds again)."""
    if not kept.certificate.ok or kept.smaller_tried:
        return kept
    moved, first = build.moves(), build.first_moves()
    if first and not kept.options.moved_maps:
        options = replace(kept.options, moved_maps=first)
        kept = _no_larger(build, kept, options, MOVED, note, tried)
    if moved != first and kept.options.moved_maps < moved:
        # every map of each chain, where no larger than its first alone moved (or none)
        options = replace(kept.options, moved_maps=moved)
        kept = _no_larger(build, kept, options, CHAINS, note, tried)
    shared = read_two_ways(kept)
    if shared and not kept.options.shared_readings:
        options = replace(kept.options, shared_readings=shared)
        kept = _no_larger(build, kept, options, SHARED, note, tried)
    return replace(kept, smaller_tried=True)


def read_two_ways(kept: Kept) -> frozenset[str]:
    """The maps of `kept` whose residual holds both their number and their one-hot."""
    labels = {str(label) for label in kept.model.metadata["residual"]}
    one_hots = {label.split(":", 1)[0] for label in labels if ":" in label}
    return frozenset(
        node.name
        for node in kept.graph.nodes
        if node.op is Op.MAP and node.name in labels and node.name in one_hots
    )


def no_larger(sketch: Sketch, params: int, layers: int) -> bool:
    """Whether `sketch` has no more parameters and no more layers than (params, layers), and
    fewer of one."""
    mine = (sketch.params, sketch.layers)
    return mine[0] <= params and mine[1] <= layers and mine != (params, layers)


def _no_larger(
    build: Builds,
    kept: Kept,
    options: BuildOptions,
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
) -> Kept:
    """The build with `options` where it is proved and `no_larger` than `kept`, else `kept`."""
    params, layers = kept.model.param_count(), len(kept.model.metadata["layers"])
    found = build_trials.proved(
        build, options, how, note, tried, worth=lambda sketch: no_larger(sketch, params, layers)
    )
    return kept if found is None else replace(found, one_hot_note=kept.one_hot_note)
