"""Which form of the program a compile keeps: the prepared program's, or one of two others that
`compiler.driver.prepare` writes on request (each compiled by `compiler.alternatives.keep_proved`).

- *Sums kept as means* (`weighted=False`): a map of a counted sum of whole numbers stepped over
  the sum's wide range may not be proved (`round(length * mean) % 3`: the steps' error outgrows the
  output's margin); the mean itself then, stepped with the position as context, where the default
  is refused or not proved. A model so built carries `"sums_as_means": true`.
- *Counts over the length as means* (`fractions=True`, `compiler.fraction_means`): one head where
  the default steps over (count, length); kept where proved and smaller (layers, then parameters).
  A model so built carries `"fractions_as_means": true`.

The marks tell the tools that pair generated residual names with s-op nodes which graph to pair
them with (docs/format.md).
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.alternatives import Kept
from compiler.fraction_means import fraction_means
from compiler.model import OverParamLimit
from compiler.weighted_counts import sums_counted
from rasp import sops
from rasp.errors import CompileError

Attempt = Callable[[sops.Node], Kept]  # the certified build of one form (raises as keep_proved)


def keep_form(
    sop: sops.Node,
    attempt: Attempt,
    prepared: Callable[..., sops.Node],
    note: Callable[[str], None],
) -> Kept:
    """The kept build of the prepared program `sop` or of another form (module doc); `prepared`
    gives a form (`prepare`'s keyword flags). Raises the default's refusal where no form builds,
    and a user's parameter limit as the default meets it."""
    kept: Kept | None = None
    refusal: CompileError | None = None
    counted = sums_counted(sop)  # sums of whole numbers, which may be kept as means instead
    fractions = fraction_means(sop) is not sop  # counts over the length, which may be means
    try:
        kept = attempt(sop)
    except OverParamLimit:
        raise
    except CompileError as err:
        if not counted and not fractions:
            raise
        refusal = err
    if (kept is None or not kept.certificate.ok) and counted:
        note("build with sums kept as means")
        try:
            other: Kept | None = attempt(prepared(weighted=False))
        except OverParamLimit:
            raise
        except CompileError:
            other = None
        if other is not None and (kept is None or other.certificate.ok):
            kept = other
            other.model.metadata["sums_as_means"] = True
    if fractions:
        note("build with counts over the length as means")
        try:
            other = attempt(prepared(fractions=True))
        except (OverParamLimit, CompileError):
            other = None
        if (
            other is not None
            and other.certificate.ok
            and (kept is None or not kept.certificate.ok or _size(other) < _size(kept))
        ):
            kept = other
            other.model.metadata["fractions_as_means"] = True
    if kept is None:
        assert refusal is not None
        raise refusal from None
    return kept


def _size(kept: Kept) -> tuple[int, int]:
    """What is minimised between two proved builds: layers, then parameters."""
    return len(kept.model.metadata["layers"]), kept.model.param_count()
