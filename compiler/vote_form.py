"""The form of a program with differences of two 0/1 means read as one mean of votes
(`compiler.vote_means`): built where the program's other forms are refused or not proved, and where
they are proved, where its sketch is smaller than the model kept (kept where it is, proved).

tracr's `make_count(make_pair_balance(tokens, "a", "b"), -1)` reads `opens - closes`, two means
each off by float32 rounding, and is refused from N = 10; read through one mean of the keys'
votes it is proved. The rewrite is not made in the default form: it adds a head whose value map
reads both votes, and where the default already fuses a map of the two means after their one
head (`frac_a > frac_b`, one layer) the vote form takes two. Where the default reads two means
into tables of their own (tracr's shuffle_dyck: 3,378 parameters at N = 16), the one mean is
smaller (3,205). So it is one more form, as the sums kept as means are
(`compiler.program_forms`), marked `"votes_as_means": true` where kept (the tools pair its
generated names with that graph: `forms.prepare(..., votes=True)`).

A second build costs: `frac_a > frac_b` at N = 40 compiles in 0.8 s, its vote form in 31 s (a
fused build tried after it, over the vote mean's thousand values). So beside a proved model the
vote form is sketched alone (planned, no weight), with its tables read off one (w, a, b) per vote
mean (`Forms.unchecked_votes`: checking every (w, a, b) is most of the rewrite's time), under the
most parameters that can still be smaller; only where that sketch is smaller are the tables
checked (`Forms.confirm_votes`) and the form built, from the same plan, and kept where proved and
smaller (`build_cost`). No model is built from tables not checked.

Where neither is proved, the refusal says why: the vote form's own refusal as a note, and,
located at each difference whose readers the rewrite left as they are, why (past its 100,000
(w, a, b) limit, or a reader that is no function of the vote mean).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler.build_trials import Kept
from compiler.forms import Forms
from compiler.model import LAYER_WORTH, Sketch
from compiler.refusals import also_tried, refused_why, why_not_proved
from rasp import sops
from rasp.errors import CompileError

# the kept build of a prepared program (`compiler.program_forms.keep_form`) given its form, the
# callable that writes its other forms (`Forms`' flags), whether it is the default form (whose
# size the compile predicted), and the most parameters it may have (None: the user's limit)
KeepForm = Callable[[sops.Node, Callable[..., sops.Node], bool, int | None], Kept]
# the sketch of a form's default build under the most parameters it may have (raises its refusal)
SketchForm = Callable[[sops.Node, int], Sketch]

_VOTES = "with differences of means read as one mean of votes"


def or_votes(
    sop: sops.Node,
    keep: KeepForm,
    forms: Forms,
    note: Callable[[str], None],
    sketch: SketchForm,
) -> Kept:
    """`keep` of the prepared program `sop`; where that is refused or not proved and the vote
    form differs, `keep` of the vote form in its place if that is proved; where it is proved,
    the vote form's build in its place where that is predicted smaller, proved and smaller
    (`_smaller`). Else the first's refusal (raised) or build, with why the vote form did not do."""
    try:
        kept = keep(sop, forms, True, None)
    except CompileError as err:
        found = _vote_build(keep, forms, note)
        if isinstance(found, Kept):
            return found
        extra = [*also_tried(found, err.diagnostics[0].message), *forms.voted().reasons]
        if not extra:
            raise
        raise type(err)([*err.diagnostics, *extra]) from None
    if kept.certificate.ok:
        return _smaller(kept, keep, forms, note, sketch)
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
        other = keep(forms(votes=True), lambda **flags: forms(votes=True, **flags), False, None)
    except CompileError as err:
        return ((_VOTES, refused_why(err)),)
    if not other.certificate.ok:
        why = why_not_proved(other.certificate, other.graph)
        return ((_VOTES, f"{other.model.param_count():,} parameters, not proved: {why}"),)
    other.model.metadata["votes_as_means"] = True
    return other


def _smaller(
    kept: Kept, keep: KeepForm, forms: Forms, note: Callable[[str], None], sketch: SketchForm
) -> Kept:
    """The vote form's build where its default build's sketch is smaller than the proved `kept`
    and the build is proved and smaller (`build_cost`), else `kept`. Its tables are read off one
    (w, a, b) per vote mean for the sketch, and checked at all of them before it is built."""
    form = forms.unchecked_votes()
    if form is None:
        return kept
    # the most parameters a build can have and still be smaller: with one layer, kept's times
    # LAYER_WORTH per layer it has more (compiler.program_forms); a plan over it stops early
    most = kept.model.param_count() * LAYER_WORTH ** max(len(kept.model.metadata["layers"]) - 1, 0)
    note("sketch with differences of means read as one mean of votes")
    if not _sketched_smaller(form, most, kept, sketch):
        return kept
    if not forms.confirm_votes():
        # a table read off one (w, a, b) does not hold at another: the checked rewrite's form
        # (its readers of one value at every (w, a, b) alone), sketched on its own
        if not forms.votes_differ():
            return kept
        form = forms(votes=True)
        if not _sketched_smaller(form, most, kept, sketch):
            return kept
    note("build with differences of means read as one mean of votes")
    try:
        other = keep(form, lambda **flags: forms(votes=True, **flags), False, most)
    except (CompileError, MemoryError):  # the proved model stands
        return kept
    if not other.certificate.ok or other.model.cost >= kept.model.cost:
        return kept
    other.model.metadata["votes_as_means"] = True
    return other


def _sketched_smaller(form: sops.Node, most: int, kept: Kept, sketch: SketchForm) -> bool:
    """Whether `form`'s default build is planned under `most` parameters and is smaller than
    `kept` (its sketch's `build_cost`)."""
    try:
        return sketch(form, most).cost < kept.model.cost
    except (CompileError, MemoryError):  # refused while planning, or over `most`: not smaller
        return False
