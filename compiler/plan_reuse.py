"""Refusals while planning that another build of the program would repeat.

`compiler.alternatives.keep_proved` tries several builds of one program, and a build refused
while planning often leads to others that differ from it only in options its plan never read: a
map's table too large, planned the same with numbers copied as numbers where the program copies
no number of one key (numeric fuzz seed 1480029 at N = 16: the copy build planned 0.6 s of a
1.9 s refusal to find it again). Planning is a function of the options (the value analysis and
everything else are the same for every build of one program), and the options of
`plan_context.TRACKED_OPTIONS` are read only through `PlanContext.option`, which notes each read:
a build that differs from a refused one only in tracked options that plan did not read would run
the same plan and raise the same refusal, which it is given without planning. A difference in
any other option is planned.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from compiler.build_trials import BuildOptions
from compiler.plan_context import TRACKED_OPTIONS
from rasp.errors import CompileError


@dataclass(frozen=True)
class PlanRefusal:
    """A build refused while planning: its options, the tracked options its plan read, and the
    refusal."""

    options: BuildOptions
    read: frozenset[str]
    refusal: CompileError


def repeated(refused: list[PlanRefusal], options: BuildOptions) -> CompileError | None:
    """The refusal a build of `options` would repeat, planned (one of `refused` whose plan read
    none of the options they differ in, all tracked); None: it must be planned."""
    for known in refused:
        unread = TRACKED_OPTIONS - known.read
        if all(
            field.name in unread
            for field in fields(BuildOptions)
            if getattr(known.options, field.name) != getattr(options, field.name)
        ):
            return known.refusal
    return None
