"""Which build of a program the compiler keeps: the first form the certifier proves.

The planners decide a few things on estimates; the certifier (`compiler.certify`) has the last
word. `keep_proved` builds the default form, certifies it, and where the certifier refuses it (or,
at short lengths, where another form is smaller) builds the alternatives below, each from the
options of the form kept so far:

- below N = 16 (`MATCH_MIN_VALUES`), sides of 4 values or more matched too (`eager_matching`):
  kept where it is smaller, or where the default is over the parameter limit; where it is not
  proved, the default is certified instead;
- a model with maps built as gated units (compiler.gates), which write a number with its
  source's error: steps instead, exact values;
- a numerical output whose snap is not proved (values closer than the output's float32 error):
  where the model copies many numbers of one key as their one-hot (below), the builds copying
  them as one number first, the smaller proved one kept; else a one-hot output, an argmax that
  needs no closeness;
- a model with matching heads: one-hot readings instead (matching's BOS margin is estimated when
  it is planned);
- a model whose step MLPs read widths as their heads' 1/(w+1): every width decoded to its whole
  number first (steep steps over a fraction can sum to more rounding than the output's margin);
  neither of these two where a refused decision is computed from nothing they change
  (`build_facts.untouched_failure`: that build would fail it too);
- a model whose refused MLP computes a map of another map (`fa * fb > 0.2` stepped over the
  product, whose error the steps' slope multiplies): that map computed from the sources of its
  input maps (`fused_maps`; over fa with fb's values as contexts), and every map of a map so,
  through chains; the smaller proved build is kept. Where planning the default fails (the
  product alone too large to plan), the build with every map of a map so, if proved (unless
  each node refused is a map that reads no map and no map reads: fused, it is planned as before);
- a proved model whose maps of maps take a layer of their own after its last head: every map of
  a map fused over its sources (`fused_maps`), kept where smaller (a map of a conditional over a
  prefix mean and the length at N = 16: 3,557 parameters in 2 layers instead of 2.5M in 3),
  with the planner's own output first where a one-hot one was forced (`max(width, mean)` at
  N = 16: 7,087 parameters, not a one-hot of 97 values in 83,732); also where the default is
  over the user's parameter limit, as is the build gated over the index (below);
- a model whose refused MLP still computes a map of another map (`z1 and z2` over two balances'
  `b == 0`, stepped over b1 with z2 as a context, whose error the context's weights multiply):
  that map computed from its input maps, each computed first on its own (`direct_maps`; a table
  over their values), and every map of a map so; the smaller proved build is kept;
- a model still not proved, where it or one of those builds has tables over inputs that carry
  error (which they pass on): those tables clamped (`clamped_tables`: a saturating pair per row),
  first over the default with the maps of maps an aggregate reads computed from their inputs (in
  the default's layers: dyck2 at N = 256, 3 layers and 45,610 parameters), the smaller proved kept;
- a proved model with an aggregate that copies more than NUMERIC_COPY_MIN_VALUES numbers of one
  key as their one-hot (its own, or its source's where the copy is read as a number): the build
  copying them as one number (`numeric_copies`), kept where it is proved and smaller (the first
  occurrence's position at N = 40: 5,792 parameters instead of 62,258; the token after the first
  "c" at N = 256: 4 layers and 49,418 parameters instead of 3 layers and 1.8M), addressed
  exactly and by the selector's atoms (where some copies always select a key and others may
  select none, each also with only the former as numbers: `empty_copies`), and also with the planner's own output where a one-hot one was forced (the reverse of a prefix mean at N = 32: 2,704
  instead of 3.9M). Where the default build is refused while planning or over the parameter
  limit, the addressed one too, if proved.

Smaller is `compiler.model.build_cost`: fewer layers, but a layer more for under a quarter of the
parameters. Builds are compared by their sketches (`compiler.model.Sketch`: the shape a build's
plan gives, before any weight), so a build that would change nothing, or is not smaller where it
must be, is never assembled. Where the default's sketch copies many numbers as their one-hot, the copy builds
come first: the smallest proved one that is smaller than the default is kept without the default
being assembled or certified (the route above would keep it too where the default is proved or
its snap is not; the copy of a gated fraction at N = 64: 1.4 s instead of 24, its default 147M
parameters). A build refused or not proved is not built twice.

The default and the builds tried before it or in its place are `compiler.default_builds`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials, default_builds
from compiler.addressing import MATCH_MIN_VALUES
from compiler.blocks import Encoding
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.default_builds import CATEGORY_GATES, COPIES, FUSED
from compiler.graph import Graph
from compiler.model import OverParamLimit
from compiler.plan_limit import PlannedOverLimit
from compiler.refusals import also_tried, refused_why, why_not_proved
from compiler.smaller_builds import smaller_instead
from rasp.errors import CompileError

DIRECT = "with maps computed from their inputs"
STEPS = "with steps instead of gated units"
CLAMPED = "with tables clamped"
LINES = "with interpolations taking their inputs' written error"


def keep_proved(
    build: Builds,
    program: Graph,
    max_len: int,
    max_params: int | None,
    note: Callable[[str], None],
    users_limit: bool = True,
) -> Kept:
    """The form of the program to keep: the first proved (see the module docstring), else the
    default form, with its failed certificate (the caller refuses it, located). `program` is the
    graph every build starts from. A refusal also lists the other builds tried (`Kept.tried`).
    `users_limit`: `max_params` is the user's limit, not only a cap under which another form of
    the program is smaller (compiler.program_forms), where no other build is worth planning."""
    tried: list[tuple[str, str]] = []
    failed: set[BuildOptions] = set()  # copy builds refused or not proved: not tried again
    if max_len >= MATCH_MIN_VALUES:  # (below, the eagerly matched build is compared first)
        copied = default_builds.copies_first(build, program, note, tried, failed)
        if copied is not None:
            return copied
    try:
        kept = default_builds.shortest(build, max_len, note, tried)
    except OverParamLimit as over:
        # the default is over the limit: numbers copied as one number (which the size
        # prediction also considers, compiler.driver); under the user's limit also the builds
        # kept below where smaller, which may be under it (the fused chain at N = 8: 1,671
        # parameters, its default 85,792, was refused under any limit between them); and where
        # the plan stopped (compiler.plan_limit), a refusal while planning that would have come
        # later (most_freq over 5,000 tokens: a step MLP too wide) was not found, so the builds
        # such a refusal gets. Not under a cap alone: the other form is kept, and planning these
        # builds of the default can take long (dyck1 at N = 40: 30 s, for a 0.4 s compile)
        kept = default_builds.copies_instead_of(build, program, note, tried, failed)
        if kept is None and (users_limit or isinstance(over, PlannedOverLimit)):
            kept = default_builds.fused_under_limit(build, program, note, tried) or (
                default_builds.index_gated_instead_of(build, program, note, tried)
            )
        if kept is None:
            # with the size of each build tried under the limit too (the fused chain at N = 8
            # under 1,000: its 1,671 parameters, where 2,000 would do)
            notes = also_tried(tried, over.diagnostics[0].message)
            if not notes:
                raise
            raise type(over)([*over.diagnostics, *notes]) from None
    except CompileError as refusal:
        fused = (
            default_builds.fused_instead_of(build, program, refusal, note, tried)
            or default_builds.copies_instead_of(build, program, note, tried, failed)
            or default_builds.index_gated_instead_of(build, program, note, tried)
        )
        if fused is None:
            raise CompileError(
                [*refusal.diagnostics, *also_tried(tried, refusal.diagnostics[0].message)]
            ) from None
        kept = fused
    if not kept.certificate.ok and kept.model.gated:
        # gated units write a number with its source's error, steps exact values
        options = replace(kept.options, gates=False)
        kept = build_trials.instead(build, kept, options, STEPS, note, tried, weights_only=True)
    if (
        not kept.certificate.ok
        and build_facts.snap_failed(kept.certificate)
        and build_facts.copies_many(kept.model.metadata["residual"], kept.graph, build.single_key())
    ):
        # a copy of many numbers read as a one-hot, whose output is not snapped (the copy of a
        # gated fraction at N = 64: 147M parameters): copied as a number, before a one-hot output
        # of as many (156M) is built
        proved = [
            k
            for k in (
                build_trials.proved(build, v, COPIES, note, tried, failed=failed)
                for v in default_builds.copy_variants(kept.options, build.mixed_copies())
            )
            if k is not None
        ]
        if proved:
            kept = min(proved, key=lambda k: k.model.cost)
    gate_on_index = build_facts.index_maps(program) and not kept.options.category_gates
    if not kept.certificate.ok and build_facts.snap_failed(kept.certificate) and gate_on_index:
        # `indices / length` stepped over the length sums activations whose float32 error breaks
        # the snap (a one-hot output of 12M parameters at N = 64): gated over the index instead
        options = replace(kept.options, category_gates=True)
        kept = build_trials.instead(build, kept, options, CATEGORY_GATES, note, tried)
    if not kept.certificate.ok and build_facts.snap_failed(kept.certificate):
        kept = _one_hot_output(build, kept, max_params, note)
    # (not where a refused decision reads nothing these options change: planning each build of
    # dyck2 at N = 256 again took 16 s, to find the same model)
    residual = kept.model.metadata["residual"]
    if (
        not kept.certificate.ok
        and any(label.endswith("^2") for label in residual)
        and not build_facts.untouched_failure(kept, build_facts.matched_nodes(kept))
    ):
        kept = build_trials.instead(
            build, kept, replace(kept.options, matching=False), "without matching", note, tried
        )
    residual = kept.model.metadata["residual"]
    if (
        not kept.certificate.ok
        and any(label.endswith(".frac") for label in residual)
        and not build_facts.untouched_failure(kept, build_facts.width_nodes(kept.graph))
    ):
        options = replace(kept.options, fractions=False)
        kept = build_trials.instead(build, kept, options, "with widths decoded first", note, tried)
    if not kept.certificate.ok and build_facts.lines_in_chains(kept):
        # a line passes its input's error on times its slope; one over another line's output,
        # whose error the planner took for that number's rounding alone, compounds it
        # (`(x * t + n) % 4` five times over a width: 0.003 grew to 7,330), where steps write
        # each value afresh
        options = replace(kept.options, chained_lines=True)
        kept = build_trials.instead(build, kept, options, LINES, note, tried, weights_only=True)
    # the refused maps from their input maps' sources, and every map of a map through chains
    # (`fa * fb * 4 > 1` steps over `(fa * fb) * 4`, a view of the product)
    kept = _maps_rebuilt(build, kept, _with_fused, FUSED, note, tried)
    # the refused maps from their input maps, each computed first, and every map of a map so
    # (whose error may feed the refused ones): a step over an input map's source with a context
    # multiplies the context's error by its large weights (`(b1 == 0) and (b2 == 0)` over two
    # bracket balances at N = 256)
    noisy: list[BuildOptions] = []  # direct builds not proved that have noisy tables
    kept = _maps_rebuilt(build, kept, _with_direct, DIRECT, note, tried, noisy)
    # a table over maps each computed first passes their error on (dyck2's `(b1 < 0) or (b2 <
    # 0)` at N = 256, which a step over its mean multiplies by 1,500): clamped, it passes none
    kept = _clamped(build, kept, noisy, note, tried)
    if (
        kept.certificate.ok
        and not kept.options.numeric_copies
        and build_facts.copies_many(kept.model.metadata["residual"], kept.graph, build.single_key())
    ):
        variants = default_builds.copy_variants(kept.options, build.mixed_copies())
        found = [
            build_trials.instead(build, kept, v, COPIES, note, tried, smaller=True, failed=failed)
            for v in variants
        ]
        kept = min(found, key=lambda k: k.model.cost)  # each is `kept` or smaller
    interpolated = kept.certificate.ok and build_facts.interpolations_read_by_maps(kept)
    if interpolated:
        # an interpolation proved where steps were refused, read by another map (`w / length`
        # per length, then `> 0.5`: 16,513 parameters in three layers at N = 32), against the
        # maps fused over their sources (one step of w - 0.5 * length: 3,817 in two)
        options = _with_fused(kept.options, build_facts.maps_of_maps(kept.graph))
        kept = build_trials.instead(build, kept, options, FUSED, note, tried, smaller=True)
    fusable = build_facts.maps_of_maps(kept.graph)
    if (
        kept.certificate.ok
        and fusable
        and not kept.options.fused_maps
        and not interpolated  # tried just above
        and _layers_after_heads(kept.model.metadata["layers"]) >= 1
    ):
        # a proved model may compute a chain of maps in layers of their own after its last head,
        # each over a large table, where the maps fused over their sources are one MLP (`v0 if
        # length > 3 else v0 + 3`, then a map of it, at N = 16: 2.5M parameters in 3 layers,
        # fused 3,557 in 2; at N = 32 the default is not proved and the fused build was kept).
        # Only where the last layer has no head: planning the fused maps of dyck2 at N = 40,
        # whose maps feed its heads, costs 12 s (of 13) and finds nothing smaller.
        fused = _with_fused(kept.options, fusable)
        # with the planner's own output too, where a one-hot one was forced: the default's snap
        # failed over its table of the maps, not over the fused maps' (`max(width, mean)` at
        # N = 16: a one-hot of 97 values, 83,732 parameters, where the number takes 7,087); the
        # number first, so that a larger one-hot is judged on its sketch alone
        for options in reversed(_output_variants(fused)):
            kept = build_trials.instead(build, kept, options, FUSED, note, tried, smaller=True)
    if kept.certificate.ok and build_facts.index_maps(program) and not kept.options.category_gates:
        # gated over the index where that is smaller (a layer more for the length's one-hot:
        # `indices / length` at N = 32, 78,838 parameters in 1 layer stepped, 10,400 in 2)
        options = replace(kept.options, category_gates=True)
        kept = build_trials.instead(build, kept, options, CATEGORY_GATES, note, tried, smaller=True)
    # maps moved before single-key copies, maps read two ways from one one-hot: where no larger
    kept = smaller_instead(build, kept, note, tried)
    return kept if kept.certificate.ok else replace(kept, tried=tuple(tried))


def form_instead(
    kept: Kept,
    build: Builds,
    program: Graph,
    change: Callable[[BuildOptions], BuildOptions],
    how: str,
    max_len: int,
    max_params: int | None,
    note: Callable[[str], None],
) -> Kept:
    """The build `keep_proved` keeps among `build`'s builds (its alternatives too) with `change`
    applied to each one's options, with those options, where it is proved; else `kept` with why
    not (as `how`) among its tried: the driver's last builds of a changed form (s-ops of the
    position folded, maps moved before their copies)."""
    note(f"build {how}")
    changed = replace(
        build,
        model=lambda options: build.model(change(options)),
        sketch=lambda options: build.sketch(change(options)),
    )
    try:
        found = keep_proved(changed, program, max_len, max_params, note)
    except CompileError as err:
        return replace(kept, tried=(*kept.tried, (how, refused_why(err))))
    if found.certificate.ok:
        return replace(found, options=change(found.options))
    model = found.model
    why = f"{model.param_count():,} {build_trials.NOT_PROVED} "
    why += why_not_proved(found.certificate, found.graph)
    return replace(kept, tried=(*kept.tried, (how, why)))


def _maps_rebuilt(
    build: Builds,
    kept: Kept,
    with_maps: Callable[[BuildOptions, frozenset[str]], BuildOptions],
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    noisy: list[BuildOptions] | None = None,
) -> Kept:
    """Where `kept` is not proved and the certifier refused steps over maps of maps: the builds
    `with_maps` the refused maps, and every map of a map (`_with_fused`, `_with_direct`); the
    smaller proved one, else `kept`. `noisy`: as `build_trials.proved`'s."""
    refused = build_facts.refused_steps_over_maps(kept)
    if kept.certificate.ok or not refused:
        return kept
    builds = [
        build_trials.instead(
            build, kept, with_maps(kept.options, names), how, note, tried, noisy=noisy
        )
        for names in dict.fromkeys((refused, build_facts.maps_of_maps(kept.graph)))
    ]
    proved = [k for k in builds if k.certificate.ok]
    return min(proved, key=lambda k: k.model.cost) if proved else kept


def _clamped(
    build: Builds,
    kept: Kept,
    noisy: list[BuildOptions],
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
) -> Kept:
    """Where `kept` is not proved: it and the builds in `noisy` (each built, not proved, with
    tables over inputs not known exact), each with those tables clamped (`clamped_tables`: a
    saturating pair per row, whose output carries none of the inputs' error); the smaller proved
    one, else `kept`. Never where no table passes an error on: the pairs would change nothing.
    Also the build with the maps of maps an aggregate reads computed from their inputs, each
    first (`direct_maps`), a table over them clamped: the maps after the heads stay fused, in
    the default's layers (dyck2 at N = 256: 3 layers, where every map of a map so takes 4)."""
    if kept.certificate.ok:
        return kept
    bases = ([kept.options] if kept.model.noisy_tables else []) + noisy
    aggregated = build_facts.aggregated_maps_of_maps(kept.graph)
    if noisy and aggregated:  # (the direct builds had tables over noisy maps)
        bases.insert(0, _with_direct(kept.options, aggregated))
    best = kept
    for options in dict.fromkeys(bases):
        # once one is proved, the others only where smaller (judged on their sketches)
        best = build_trials.instead(
            build,
            best,
            replace(options, clamped_tables=True),
            CLAMPED,
            note,
            tried,
            weights_only=True,
            smaller=best.certificate.ok,
        )
    return best


def _layers_after_heads(layers: list[dict]) -> int:
    """How many layers (each a metadata `layers` entry) follow the last one with a head: layers
    only for maps."""
    with_heads = [i for i, layer in enumerate(layers) if layer["attn"]]
    return len(layers) - 1 - (with_heads[-1] if with_heads else -1)


def _with_fused(options: BuildOptions, names: frozenset[str]) -> BuildOptions:
    return replace(options, fused_maps=names)


def _with_direct(options: BuildOptions, names: frozenset[str]) -> BuildOptions:
    return replace(options, direct_maps=names)


def _output_variants(options: BuildOptions) -> list[BuildOptions]:
    """`options`, and where they force a one-hot output (the default's snap was not proved),
    `options` with the planner's own output: another build may snap its number."""
    if options.output is None:
        return [options]
    return [options, replace(options, output=None)]


def _one_hot_output(
    build: Builds, kept: Kept, max_params: int | None, note: Callable[[str], None]
) -> Kept:
    """Numbers closer together than the output logit's float32 error (tanh of 0..10) cannot be
    snapped; a one-hot output reads the categorical value instead (an argmax, no closeness)."""
    too_large = build_facts.one_hot_too_large(kept.model, max_params)
    if too_large is not None:
        return replace(kept, one_hot_note=too_large)
    options = replace(kept.options, output=Encoding.CATEGORICAL)
    try:
        model, graph = build.model(options)
    except CompileError as err:
        why = f"a one-hot output was not built either: {err.diagnostics[0].message}"
        return replace(kept, one_hot_note=why)
    except MemoryError:
        return replace(kept, one_hot_note="a one-hot output was tried and ran out of memory")
    certificate = build_trials.certified(model, "the one-hot output", note)
    if certificate is None:
        why = "a one-hot output was built, and certifying it ran out of memory"
        return replace(kept, one_hot_note=why)
    if not certificate.ok:
        return replace(kept, one_hot_note=build_trials.ONE_HOT_NOT_PROVED)
    return Kept(model, graph, certificate, options)
