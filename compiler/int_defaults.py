"""The driver's last build, where none before is proved: the program's forms with each mean's
bool default that only maps read, alike as its int, written as the int (compiler.bool_defaults).

`aggregate(select(tokens, "#", >=), length, True)` read by `w + ...` (mixed fuzz seed 2202354):
the build with select sides as tables over their inputs' one-hots reads the mean as a one-hot
decoded from its number, where True (nothing selected) and 1 (a length of 1) are one number, 1.0,
and refuses; with the default written `1` that build is proved (N = 4 to 9). The rewrite keeps
every value and type the program computes, but applied to every build it also changed which
build proves other programs (`shift(v, 1, False)` read by `round`: the position fold's 3,302
parameters in 2 layers became the default build's 15,462 in 3), so it is tried only here, after
every other build and form, where the certifier refused decisions of the kept build that are each
computed from an aggregate with a bool default and the rewrite changes something: every build the
driver tries, over the rewritten forms, certified, unchanged, as every build is (a refusal that
reaches it takes about twice as long). Where none of those is proved, the refusal is the earlier
builds', with this one among what was also tried; a refusal raised while planning is raised as it
was, the rewritten forms not built.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts
from compiler.build_trials import Kept
from compiler.forms import Forms
from compiler.graph import Op
from compiler.refusals import refused_why, why_not_proved
from rasp.errors import CompileError

INT_DEFAULTS = "with the bool defaults that only maps read written as their ints"


def int_defaults_instead(
    outcome: Kept | CompileError,
    forms: Forms,
    builds: Callable[[Forms], Kept],
    note: Callable[[str], None],
) -> Kept:
    """`outcome` (the driver's builds of `forms`: the one kept, or the refusal raised, raised
    again) where it is proved, where some decision it refused is computed from no aggregate with a
    bool default, or where `forms` has no bool default to write as its int; else `builds` of the
    forms with them written so (`Forms.with_int_defaults`) where that is proved; else `outcome`
    with why not among what was also tried."""
    if isinstance(outcome, CompileError):
        raise outcome  # (refused while planning or analysing: so is the rewritten program)
    if not _from_bool_means(outcome):
        return outcome
    other = forms.with_int_defaults()
    if other is None:
        return outcome
    note("build with the bool defaults that maps read as their ints")
    try:
        found = builds(other)
    except CompileError as err:
        why = refused_why(err)
    else:
        if found.certificate.ok:
            return found
        size = found.model.param_count()
        why = f"{size:,} parameters, not proved: {why_not_proved(found.certificate, found.graph)}"
    return replace(outcome, tried=(*outcome.tried, (INT_DEFAULTS, why)))


def _from_bool_means(kept: Kept) -> bool:
    """Whether `kept` refused decisions (not a certificate the certifier could not check: an
    attention's range, which the default does not change) and each is computed from an aggregate
    with a bool default: where some is computed from none, the rewrite changes none of its
    weights or errors, and every build of the rewritten forms refuses it too."""
    if kept.certificate.ok or kept.certificate.errors:
        return False
    if not any(math.isfinite(check.margin) for check in kept.certificate.failures()):
        return False
    graph = kept.graph
    means = frozenset(
        node.name for node in graph.nodes if node.op is Op.AGGREGATE and type(node.value) is bool
    )
    return bool(means) and not build_facts.untouched_failure(kept, means)
