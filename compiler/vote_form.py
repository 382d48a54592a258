"""The form of a program with differences of two 0/1 means read as one mean of votes
(`compiler.vote_means`), built only where the program's other forms are refused or not proved.

tracr's `make_count(make_pair_balance(tokens, "a", "b"), -1)` reads `opens - closes`, two means
each off by float32 rounding, and is refused from N = 10; read through one mean of the keys'
votes it is proved. The rewrite is not made in the default form: it adds a head whose value map
reads both votes, and where the default already fuses a map of the two means after their one
head (`frac_a > frac_b`, one layer) the vote form takes two. So it is one more form, as the sums
kept as means are (`compiler.program_forms`): tried after them, kept where proved, and the model
marked `"votes_as_means": true` (the tools pair its generated names with that graph:
`forms.prepare(..., votes=True)`). Where it is not built or not proved, the refusal says why: the
vote form's own refusal as a note, and, located at each difference whose readers the rewrite
left as they are, why (past its 100,000 (w, a, b) limit, or a reader that is no function of the
vote mean).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler.build_trials import Kept
from compiler.forms import Forms
from compiler.refusals import also_tried, why_not_proved
from rasp import sops
from rasp.errors import CompileError

# the kept build of a prepared program (`compiler.program_forms.keep_form`) given its form, the
# callable that writes its other forms (`Forms`' flags), and whether it is the default form (whose
# size the compile predicted)
KeepForm = Callable[[sops.Node, Callable[..., sops.Node], bool], Kept]

_VOTES = "with differences of means read as one mean of votes"


def or_votes(sop: sops.Node, keep: KeepForm, forms: Forms, note: Callable[[str], None]) -> Kept:
    """`keep` of the prepared program `sop`; where that is refused or not proved and the vote
    form differs, `keep` of the vote form in its place if that is proved. Else the first's
    refusal (raised) or build, with why the vote form did not do."""
    try:
        kept = keep(sop, forms, True)
    except CompileError as err:
        found = _vote_build(keep, forms, note)
        if isinstance(found, Kept):
            return found
        extra = [*also_tried(found, err.diagnostics[0].message), *forms.voted().reasons]
        if not extra:
            raise
        raise type(err)([*err.diagnostics, *extra]) from None
    if kept.certificate.ok:
        return kept
    found = _vote_build(keep, forms, note)
    if isinstance(found, Kept):
        return found
    return replace(kept, tried=(*kept.tried, *found), notes=(*kept.notes, *forms.voted().reasons))


def _vote_build(
    keep: KeepForm, forms: Forms, note: Callable[[str], None]
) -> Kept | tuple[tuple[str, str], ...]:
    """The vote form's proved build, or why there is none (nothing where it is the default)."""
    if not forms.votes_differ():
        return ()
    note("build with differences of means read as one mean of votes")
    try:
        other = keep(forms(votes=True), lambda **flags: forms(votes=True, **flags), False)
    except CompileError as err:
        return ((_VOTES, err.diagnostics[0].message),)
    if not other.certificate.ok:
        why = why_not_proved(other.certificate, other.graph)
        return ((_VOTES, f"{other.model.param_count():,} parameters, not proved: {why}"),)
    other.model.metadata["votes_as_means"] = True
    return other
