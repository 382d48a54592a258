"""One build of a program tried: its options (`BuildOptions`), built, certified, and why it was not
kept (`compiler.alternatives.keep_proved` decides which builds to try, and in which order).

A build is judged by its sketch before any weight is allocated; one refused while planning, not
proved, or that ran out of memory goes into the caller's `tried` list (the refusal's notes) and its
`failed` set (not built again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from compiler.blocks import Encoding
from compiler.certify import Certificate, recheck
from compiler.graph import Graph
from compiler.model import CompiledModel, Sketch
from compiler.refusals import refused_why, why_not_proved
from compiler.same_models import Certified, model_key
from rasp.errors import CompileError, Diagnostic

# what `proved` says of a build that was built and not proved (after its parameter count)
NOT_PROVED = "parameters, not proved:"


@dataclass(frozen=True)
class BuildOptions:
    """How one build plans: `compiler.encode.plan_encodings` takes them whole, and the planners read
    them as `PlanContext.options` (those of `plan_context.TRACKED_OPTIONS` through
    `PlanContext.option` alone). A new option is one new field here, read where it decides."""

    output: Encoding | None = None  # the output's encoding, forced (None: the planner picks)
    # the driver's fallback: off (compiler.addressing.plan_match)
    matching: bool = True  # compiler.addressing's matching may be used
    # a step MLP may read a width as its head's 1/(w+1) (the driver's fallback: off, each width
    # decoded to its whole number first, which costs an MLP but is exact)
    fractions: bool = True  # a step MLP may read a width as 1/(w+1)
    # how few: compiler.addressing.EAGER_MATCH_MIN_VALUES
    eager_matching: bool = False  # sides of fewer values are matched too
    # as a mean does (compiler.alternatives: kept where smaller and proved), not as their one-hot
    numeric_copies: bool = False  # a single-key aggregate of many numbers copies one number
    # as a categorical copy is (compiler.addressing.plan_address: no matched query, which can cost
    # a layer); off, by the selector's atoms (matching), fewer parameters where the query's number
    # is already there
    addressed_copies: bool = True  # ... addressed exactly (else by the selector's atoms)
    # `numeric_copies` of copies that may select no key too (their default given there: tracr's
    # None, a number standing in for it, compiler.resolve); off, only of those that always select
    # one: two copies read by `x == y` are cheaper as one-hots where one of them may be empty
    empty_copies: bool = True  # ... also those that may select no key (else only the others)
    # support expanded through every input map (compiler.alternatives, where the default build is
    # refused: `fa * fb > 0.2` stepped over fa and fb, not over the product)
    fused_maps: frozenset[str] = frozenset()  # maps computed from their input maps' sources
    # compiler.alternatives, where a map's step over a fused input map's source with a context is
    # refused: the context's error times its weights; the inputs first, a table over their values
    direct_maps: frozenset[str] = frozenset()  # maps computed from their inputs, each first
    # a few per context value (compiler.gates; the driver's fallback: off, steps)
    gates: bool = True  # a map affine in a number per context value may be gated units
    # a map of a number and a categorical number, affine in the latter for each value of the
    # former, read by no map: gated units over the categorical one, the number read as a one-hot
    # (compiler.alternatives: kept where smaller, or where the default's output snap is not proved)
    category_gates: bool = False  # ... or over a categorical number (`indices / length`)
    # over inputs not known exact: the output carries none of their error (compiler.mlp.table_mlp;
    # compiler.alternatives' fallback where a build with such tables is not proved: dyck2's
    # `(b1 < 0) or (b2 < 0)` at N = 256)
    clamped_tables: bool = False  # tables over noisy inputs write each row with a saturating pair
    # read as the view of one term per mean (compiler.decoded_sums; the driver's last build where
    # the output's snap of the plain sum is not proved: `0.5 * m0 + 2 * m1` over selects of tokens)
    decoded_sums: frozenset[str] = frozenset()  # affine maps of means: each mean decoded first
    # not its own rounding alone (compiler.map_steps; compiler.alternatives' build where the
    # default is not proved and a map reads an interpolation: chained lines compound)
    chained_lines: bool = False  # an interpolation takes its input's written error (map_steps)
    # the driver's last build where none is proved (compiler.written_sums): a step over a sum of
    # two numbers whose inputs carry error from the maps that wrote them (a recursion's chain)
    written_sums: bool = False  # a step over x - y takes its inputs' written error (linear_steps)
    # maps a select reads, computed from means, as a table over their inputs' one-hots (each mean
    # decoded first), clamped: the side's one-hot exact
    table_sides: frozenset[str] = frozenset()  # select sides from means: tables (side_tables)
    # each of those tables' inputs that is a one-hot of two values not known exact (a head's)
    # written again by a step over one column first (compiler.side_tables.snapped): exact
    snapped_sides: bool = False  # ... over their noisy two-valued one-hots snapped first
    # select sides of a mean and an exact s-op: steps per value of that s-op (threshold_sides)
    threshold_sides: frozenset[str] = frozenset()
    # maps whose function states an affine form (`a + b`), read as that line of their inputs'
    # numbers where an input is a one-hot too (a copy's values, a decoded count): a free view
    # (the driver's last build, where every other is not proved)
    known_sums: frozenset[str] = frozenset()  # stated sums of numbers: lines (compiler.known_sums)
    # compiler.snap_one_hot: a copy of a map's one-hot carries that map's step rounding
    snapped_sums: bool = False  # ... their one-hot inputs snapped first
    # s-ops the value analysis finds of the position alone: maps of indices (position_folds)
    positions: bool = False
    # maps read both as a number and as a one-hot whose number is the free view of the one-hot
    # (no step MLP of its own; compiler.smaller_builds: kept where no larger)
    shared_readings: frozenset[str] = frozenset()
    # maps of a single-key copy moved before the copy: `round(shift(x, 1, d))` as
    # `shift(round(x), 1, round(d))` (compiler.moved_maps; kept where no larger)
    moved_maps: frozenset[str] = frozenset()
    # the copies (single-key aggregates of many numbers) a stated sum reads, each as one number
    # (`numeric_copies` for these alone: the sum a line of numbers; compiler.sum_inputs)
    sum_copies: frozenset[str] = frozenset()
    # compiler.snap_one_hot: a single-key copy of a one-hot a step MLP wrote carries its rounding
    # to every reader (a select's scores, a mean's values); snapped before the copy, exact
    snapped_copies: bool = False  # one-hots that copies copy snapped first (copy_snaps)
    # maps stepped over a mean with a context (`length * mean`), the mean read as the number of
    # its decoded one-hot: the context's weights multiply no head's error (the driver's last
    # build, where nothing else is proved: compiler.decoded_factors)
    decoded_factors: frozenset[str] = frozenset()  # maps of a mean: the mean decoded first


@dataclass(frozen=True)
class Builds:
    """The builds of one program that keep_proved chooses between, by their options: a build's
    model (assembled, not certified), or its sketch (planned only). Both raise the build's
    refusal; a build sketched first is planned once."""

    model: Callable[[BuildOptions], tuple[CompiledModel, Graph]]
    sketch: Callable[[BuildOptions], Sketch]
    # the names of the aggregates whose selector selects at most one key (the value analysis
    # every build shares): only those copy, so only they give `numeric_copies` anything to change
    single_key: Callable[[], frozenset[str]]
    # whether some of those always select a key and others may select none: only then does
    # `empty_copies` build another model
    mixed_copies: Callable[[], bool]
    # the s-ops of the prepared default form that `positions` folds (of the position alone,
    # reading more than indices and constants: compiler.position_folds); none, it changes nothing
    folds: Callable[[], frozenset[str]] = lambda: frozenset()
    # the maps of the prepared default form that `moved_maps` moves before their single-key
    # copies (compiler.moved_maps); none, it changes nothing
    moves: Callable[[], frozenset[str]] = lambda: frozenset()
    # of those, the maps that read the form's copies themselves (`moved_maps.innermost`: no map
    # of a chain after its first), moved first: a chain moved is kept only where smaller again
    first_moves: Callable[[], frozenset[str]] = lambda: frozenset()
    # whether a build kept for its refusal keeps its weights (`compile_sop(...,
    # require_certificate=False)` returns it); else they are released once it is certified
    # (`CompiledModel.without_weights`), before the other builds are tried
    refused_weights: bool = True
    # the certificates of the compile's models so far, by what certifying reads (compiler.
    # same_models): a build that assembles one of them again is not certified again
    certified: Certified | None = None


# `Kept.one_hot_note` where the one-hot output was built and certified and is not proved
# (compiler.alternatives), the one note that says its size fit (compiler.fused_output reads it)
ONE_HOT_NOT_PROVED = "a one-hot output was tried too and is not proved either"


@dataclass(frozen=True)
class Kept:
    model: CompiledModel
    graph: Graph
    certificate: Certificate
    options: BuildOptions
    one_hot_note: str | None = None  # why a one-hot output did not do, for the refusal
    # the other builds tried and not kept: (how, why: refused while planning, or not proved)
    tried: tuple[tuple[str, str], ...] = ()
    # located notes for its refusal where it is not proved (compiler.vote_form)
    notes: tuple[Diagnostic, ...] = ()
    # its smaller builds were tried (compiler.smaller_builds.smaller_instead): not again, as a
    # last build kept by `keep_proved` (which tries them) would be by the driver
    smaller_tried: bool = False


def certify_model(model: CompiledModel) -> Certificate:
    """The certificate of an assembled model (its weights against the reach in its metadata)."""
    return recheck(model.weights, model.metadata)


def instead(
    build: Builds,
    kept: Kept,
    options: BuildOptions,
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    *,
    smaller: bool = False,
    weights_only: bool = False,
    failed: set[BuildOptions] | None = None,
    noisy: list[BuildOptions] | None = None,
) -> Kept:
    """The build with `options` where it differs from `kept` and is proved (and, if `smaller`,
    is smaller), else `kept`. `weights_only`: the options
    may change the blocks' widths only, not the residual (gated units or steps). `noisy`: as
    `proved`'s."""

    def worth_certifying(sketch: Sketch) -> bool:
        same = list(sketch.residual) == kept.model.metadata["residual"]
        if same and (not weights_only or sketch.config == kept.model.config):
            return False  # the same model: the options changed nothing
        return not smaller or sketch.cost < kept.model.cost

    found = proved(
        build, options, how, note, tried, worth=worth_certifying, failed=failed, noisy=noisy
    )
    return kept if found is None else replace(found, one_hot_note=kept.one_hot_note)


def proved(
    build: Builds,
    options: BuildOptions,
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    *,
    worth: Callable[[Sketch], bool] = lambda sketch: True,
    failed: set[BuildOptions] | None = None,
    noisy: list[BuildOptions] | None = None,
) -> Kept | None:
    """The build with `options` if it is built, `worth` certifying, and proved; else None (a
    refusal, or running out of memory, counts as not proved), and why goes into `tried`.
    `failed`: the options already refused or not proved (none is built again), and where these
    options go if they are. `noisy`: where these options go if they are built, not proved, and
    have tables that pass their inputs' error on (the clamped fallback's candidates)."""
    failed = set() if failed is None else failed
    if options in failed:
        return None  # why is in `tried` already
    try:
        if not worth(build.sketch(options)):  # judged before any weight is allocated
            return None
        model, graph = build.model(options)
    except CompileError as err:
        tried.append((how, refused_why(err)))
        failed.add(options)
        return None
    except MemoryError:
        tried.append((how, "it ran out of memory"))
        failed.add(options)
        return None
    key = None if build.certified is None else model_key(model)
    earlier = None if build.certified is None else build.certified.get(key)
    if earlier is not None:
        certificate = earlier[1]  # the same model, certified before in this compile
    else:
        certificate = certified(model, how, note)
        if certificate is None:
            tried.append((how, "certifying it ran out of memory"))
            failed.add(options)
            return None
        if build.certified is not None:
            build.certified.add(key, how, certificate)
    if not certificate.ok:
        failed.add(options)
        if noisy is not None and model.noisy_tables:
            noisy.append(options)
        if earlier is not None and earlier[0] != how:  # (its failure is noted with it)
            why = f"the same model as the build {earlier[0]} ({model.param_count():,} parameters)"
        else:
            why = f"{model.param_count():,} {NOT_PROVED} " + why_not_proved(certificate, graph)
        tried.append((how, why))
        return None
    return Kept(model, graph, certificate, options)


def certified(model: CompiledModel, how: str, note: Callable[[str], None]) -> Certificate | None:
    """An alternative's certificate, or None where certifying it ran out of memory: a build much
    larger than the default (a one-hot output of thousands of values), whose refusal then stands,
    located, instead of the compile failing."""
    note(f"certify {how}")
    try:
        return certify_model(model)
    except MemoryError:
        return None
