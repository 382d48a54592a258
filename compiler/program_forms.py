"""Which form of the program a compile keeps: the prepared program's, or one of two others that
`compiler.forms.prepare` writes on request (each compiled by `compiler.alternatives.keep_proved`).

- *Sums kept as means* (`weighted=False`): a map of a counted sum of whole numbers stepped over
  the sum's wide range may not be proved (`round(length * mean) % 3`: the steps' error outgrows the
  output's margin); the mean itself then, stepped with the position as context, where the default
  is refused or not proved. A model so built carries `"sums_as_means": true`.
- *Counts over the length as means* (`fractions=True`, `compiler.fraction_means`): one head where
  the default steps over (count, length), and a map of two counts that depends on which is larger
  one mean of votes (`compiler.count_signs`); kept where proved and smaller (layers, then
  parameters). A model so built carries `"fractions_as_means": true`.

The marks tell the tools that pair generated residual names with s-op nodes which graph to pair
them with (docs/format.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from compiler.blocks import Atom
from compiler.build_trials import Kept
from compiler.fraction_means import fraction_means
from compiler.model import LAYER_WORTH, OverParamLimit, build_cost
from compiler.plan_limit import PlannedOverLimit
from compiler.refusals import also_tried, refused_why, why_not_proved
from compiler.weighted_counts import sums_counted
from rasp import sops
from rasp.errors import CompileError

# the certified build of one form under a parameter limit (raises as keep_proved); a limit of
# None is the user's own
Attempt = Callable[[sops.Node, int | None], Kept]


def keep_form(
    sop: sops.Node,
    attempt: Attempt,
    prepared: Callable[..., sops.Node],
    note: Callable[[str], None],
    vocab: Sequence[Atom],
    max_len: int,
    default_size: int | None = None,
) -> Kept:
    """The kept build of the prepared program `sop` (for inputs over `vocab` of lengths up to
    `max_len`) or of another
    form (module doc); `prepared` gives a form (`prepare`'s keyword flags). Raises the default's
    refusal where no form builds, and a user's parameter limit as the default meets it where no
    other form is proved.

    Counts over the length are built first: where that form is proved, the others are built only
    under the most parameters that can still be smaller (`_largest_smaller`: its own, times 4 for
    each layer it has more than one; a model predicted larger is refused before it is built: the
    fraction of "a"s at N = 64 skips a 50M-parameter default). Where `default_size`, the default's
    size predicted before the compile (compiler.budget), is over that count, the others are not
    built at all (at N = 1024 planning the default alone takes a minute)."""
    # counts over the length, which may be means
    fraction_form = fraction_means(sop, vocab, max_len) is not sop
    fractions: Kept | None = None
    tried: tuple[tuple[str, str], ...] = ()  # the fraction form, where it was not kept
    if fraction_form:
        note("build with counts over the length as means")
        try:
            fractions = attempt(prepared(fractions=True), None)
        except CompileError as err:  # OverParamLimit too: the default may still fit
            tried = ((_FRACTIONS, refused_why(err)),)
        if fractions is not None and not fractions.certificate.ok:
            size = fractions.model.param_count()
            why = why_not_proved(fractions.certificate, fractions.graph)
            tried = ((_FRACTIONS, f"{size:,} parameters, not proved: {why}"),)
            fractions = None
    # the largest default that can still be smaller (`build_cost`): one layer, and under the
    # fraction form's parameters times LAYER_WORTH for each layer that form has more
    cap = None if fractions is None else _largest_smaller(fractions)
    kept: Kept | None = None
    if cap is None or default_size is None or default_size <= cap:
        try:
            kept = _default_or_sums(
                sop, lambda form: attempt(form, cap), prepared, note, users_limit=cap is None
            )
        except CompileError as err:
            if fractions is None:
                # the default's refusal (of its own kind: OverParamLimit is the user's limit),
                # with why the fraction form did not do either
                notes = also_tried(tried, err.diagnostics[0].message)
                if not notes:
                    raise
                raise type(err)([*err.diagnostics, *notes]) from None
    if kept is not None and tried:
        kept = replace(kept, tried=(*kept.tried, *tried))
    if kept is None or (
        fractions is not None and (not kept.certificate.ok or _cost(fractions) < _cost(kept))
    ):
        assert fractions is not None  # the default raised where no fraction form was kept
        fractions.model.metadata["fractions_as_means"] = True
        return fractions
    return kept


def _default_or_sums(
    sop: sops.Node,
    attempt: Callable[[sops.Node], Kept],
    prepared: Callable[..., sops.Node],
    note: Callable[[str], None],
    users_limit: bool = True,
) -> Kept:
    """The default form's build. Where it is refused or not proved and the program counts sums of
    whole numbers, the form with those sums kept as means replaces it if that one builds and,
    where the default built, is proved. Over the user's parameter limit (`users_limit`: not only
    a cap under which the fraction form is smaller) too: the other form may be under it (the
    prefix sum `round((indices + 1) * mean)` at N = 16, 1,994 parameters, its sums as means
    1,930, was refused under any limit between the two)."""
    kept: Kept | None = None
    refusal: CompileError | None = None
    counted = sums_counted(sop)  # sums of whole numbers, which may be kept as means instead
    try:
        kept = attempt(sop)
    except OverParamLimit as err:
        # (stopped while planned, compiler.plan_limit: a refusal while planning may have come
        # later, which the form below answers)
        if not counted or not (users_limit or isinstance(err, PlannedOverLimit)):
            raise
        refusal = err
    except CompileError as err:
        if not counted:
            raise
        refusal = err
    if kept is not None and (kept.certificate.ok or not counted):
        return kept
    note("build with sums kept as means")
    why: str | None = None  # why the form with sums as means was not kept
    try:
        other: Kept | None = attempt(prepared(weighted=False))
    except OverParamLimit:
        if isinstance(refusal, OverParamLimit):
            raise refusal from None  # both over the limit: the default's size is the one named
        raise
    except CompileError as err:
        other, why = None, refused_why(err)
    if other is not None and (kept is None or other.certificate.ok):
        other.model.metadata["sums_as_means"] = True
        return other
    if other is not None:
        size = other.model.param_count()
        why = f"{size:,} parameters, not proved: {why_not_proved(other.certificate, other.graph)}"
    tried = () if why is None else ((_SUMS, why),)
    if kept is None:
        assert refusal is not None  # the default raised: its refusal is kept
        notes = also_tried(tried, refusal.diagnostics[0].message)
        raise type(refusal)([*refusal.diagnostics, *notes]) from None
    return replace(kept, tried=(*kept.tried, *tried))


_FRACTIONS = "with counts over the length as means"
_SUMS = "with sums kept as means"


def _cost(kept: Kept) -> tuple[int, int, int]:
    """What is minimised between two proved builds (`compiler.model.build_cost`)."""
    return build_cost(len(kept.model.metadata["layers"]), kept.model.param_count())


def _largest_smaller(kept: Kept) -> int:
    """The most parameters a build can have and still be smaller than `kept` (`build_cost`): with
    one layer, its parameters times LAYER_WORTH per layer it has more than one."""
    layers = len(kept.model.metadata["layers"])
    return kept.model.param_count() * LAYER_WORTH ** max(layers - 1, 0)
