"""The driver's last build, where none before is proved: steps over a sum of two numbers
(`compiler.linear_steps`) judged with their inputs' written error (`written_sums`).

A comparison `x < b` is planned as a step over x - b (or over 1/(x+1) - b, a width read as its
head's fraction) with the two readings' own rounding as its error. Where b is written by a chain
of maps that pass their input's error on (the recursion `g(-x if x < b else x - n, n - 1)`), the
certifier finds that error times the step's slope: defs 2172227 at N = 10, sums 0.0091 apart
(1/10 - 10 and 1/11 - 10), a relu margin of 1.5 against 9.03. With the written error the
planner refuses the steep reading and takes another (the width decoded, steps writing each
value afresh). Tried last, only where nothing else is proved, so that no model proved before
changes; the certifier, unchanged, has the last word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_trials
from compiler.build_trials import BuildOptions, Builds, Kept

WRITTEN = "with steps over sums taking their inputs' written error"


def written_instead(kept: Kept, builds: Callable[[], Builds], note: Callable[[str], None]) -> Kept:
    """`kept` where it is proved, else the default build with `written_sums` where it is proved
    (planned only: a sketch the option leaves as `kept`'s is not built), else `kept` with why
    not among its tried."""
    if kept.certificate.ok:
        return kept
    residual = kept.model.metadata["residual"]
    config = kept.model.config
    tried: list[tuple[str, str]] = []
    note("build with steps over sums taking their inputs' written error")
    build = builds()
    # with the interpolations taking their inputs' written error too: the recursion's `x - n`
    # after its first step (steps alone: defs 2172227's next level, a margin of 1 against 2.39)
    for options in (
        BuildOptions(written_sums=True),
        BuildOptions(written_sums=True, chained_lines=True),
    ):
        found = build_trials.proved(
            build,
            options,
            WRITTEN,
            note,
            tried,
            worth=lambda sketch: list(sketch.residual) != residual or sketch.config != config,
        )
        if found is not None:
            return found
    return replace(kept, tried=(*kept.tried, *tried))
