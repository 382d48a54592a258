"""Which build of a program the compiler keeps: the first form the certifier proves.

The planners decide a few things on estimates; the certifier (`compiler.certify`) has the last
word. `keep_proved` builds the default form, certifies it, and where the certifier refuses it (or,
at short lengths, where another form is smaller) builds the alternatives below, each from the
options of the form kept so far:

- below N = 16 (`MATCH_MIN_VALUES`), sides of 4 values or more matched too (`eager_matching`):
  kept where it is smaller; where it is not proved, the default is certified instead;
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
- a model whose refused MLP computes a map of another map (`fa * fb > 0.2` stepped over the
  product, whose error the steps' slope multiplies): that map computed from the sources of its
  input maps (`fused_maps`; over fa with fb's values as contexts), and every map of a map so,
  through chains; the smaller proved build is kept. Where planning the default fails (the
  product alone too large to plan), the build with every map of a map so, if proved (unless
  each node refused is a map that reads no map and no map reads: fused, it is planned as before);
- a model whose refused MLP still computes a map of another map (`z1 and z2` over two balances'
  `b == 0`, stepped over b1 with z2 as a context, whose error the context's weights multiply):
  that map computed from its input maps, each computed first on its own (`direct_maps`; a table
  over their values), and every map of a map so; the smaller proved build is kept;
- a proved model with an aggregate that copies more than NUMERIC_COPY_MIN_VALUES numbers of one
  key as their one-hot (its own, or its source's where the copy is read as a number): the build
  copying them as one number (`numeric_copies`), kept where it is proved and smaller (the first
  occurrence's position at N = 40: 5,792 parameters instead of 62,258; the token after the first
  "c" at N = 256: 4 layers and 49,418 parameters instead of 3 layers and 1.8M), addressed
  exactly and by the selector's atoms, and also with the planner's own output where a one-hot one was forced (the reverse of a prefix mean at N = 32: 2,704
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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from compiler.addressing import MATCH_MIN_VALUES
from compiler.blocks import Encoding
from compiler.certify import Certificate, recheck
from compiler.graph import Graph, Op
from compiler.model import CompiledModel, OverParamLimit, Sketch
from compiler.plan_context import NUMERIC_COPY_MIN_VALUES
from compiler.refusals import also_tried, why_not_proved
from rasp.errors import CompileError


@dataclass(frozen=True)
class BuildOptions:
    """How one build plans (`compiler.encode.plan_encodings`)."""

    output: Encoding | None = None  # the output's encoding, forced (None: the planner picks)
    matching: bool = True  # compiler.addressing's matching may be used
    fractions: bool = True  # a step MLP may read a width as 1/(w+1)
    eager_matching: bool = False  # sides of fewer values are matched too
    numeric_copies: bool = False  # a single-key aggregate of many numbers copies one number
    addressed_copies: bool = True  # ... addressed exactly (else by the selector's atoms)
    fused_maps: frozenset[str] = frozenset()  # maps computed from their input maps' sources
    direct_maps: frozenset[str] = frozenset()  # maps computed from their inputs, each first
    gates: bool = True  # a map affine in a number per context value may be gated units
    category_gates: bool = False  # ... or over a categorical number (`indices / length`)


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


FUSED = "with maps fused through their inputs"  # what a progress note says is certified
DIRECT = "with maps computed from their inputs"
STEPS = "with steps instead of gated units"
COPIES = "with numbers copied as numbers"
CATEGORY_GATES = "with gated units over the index"


@dataclass(frozen=True)
class Kept:
    model: CompiledModel
    graph: Graph
    certificate: Certificate
    options: BuildOptions
    one_hot_note: str | None = None  # why a one-hot output did not do, for the refusal
    # the other builds tried and not kept: (how, why: refused while planning, or not proved)
    tried: tuple[tuple[str, str], ...] = ()


def certify_model(model: CompiledModel) -> Certificate:
    """The certificate of an assembled model (its weights against the reach in its metadata)."""
    return recheck(model.weights, model.metadata)


def keep_proved(
    build: Builds,
    program: Graph,
    max_len: int,
    max_params: int | None,
    note: Callable[[str], None],
) -> Kept:
    """The form of the program to keep: the first proved (see the module docstring), else the
    default form, with its failed certificate (the caller refuses it, located). `program` is the
    graph every build starts from. A refusal also lists the other builds tried (`Kept.tried`)."""
    tried: list[tuple[str, str]] = []
    failed: set[BuildOptions] = set()  # copy builds refused or not proved: not tried again
    if max_len >= MATCH_MIN_VALUES:  # (below, the eagerly matched build is compared first)
        copied = _copies_first(build, program, note, tried, failed)
        if copied is not None:
            return copied
    try:
        kept = _shortest(build, max_len, note)
    except OverParamLimit:
        # the user's limit: no other build is tried, but for the one the size prediction also
        # considers (compiler.driver), copying many numbers as one number
        kept = _copies_instead_of(build, program, note, tried, failed)
        if kept is None:
            raise
    except CompileError as refusal:
        fused = (
            _fused_instead_of(build, program, refusal, note, tried)
            or _copies_instead_of(build, program, note, tried, failed)
            or _index_gated_instead_of(build, program, note, tried)
        )
        if fused is None:
            raise CompileError(
                [*refusal.diagnostics, *also_tried(tried, refusal.diagnostics[0].message)]
            ) from None
        kept = fused
    if not kept.certificate.ok and kept.model.gated:
        # gated units write a number with its source's error, steps exact values
        options = replace(kept.options, gates=False)
        kept = _instead(build, kept, options, STEPS, note, tried, weights_only=True)
    if (
        not kept.certificate.ok
        and _snap_failed(kept.certificate)
        and _copies_many(kept.model.metadata["residual"], kept.graph, build.single_key())
    ):
        # a copy of many numbers read as a one-hot, whose output is not snapped (the copy of a
        # gated fraction at N = 64: 147M parameters): copied as a number, before a one-hot output
        # of as many (156M) is built
        proved = [
            k
            for k in (
                _proved(build, v, COPIES, note, tried, failed=failed)
                for v in _copy_variants(kept.options)
            )
            if k is not None
        ]
        if proved:
            kept = min(proved, key=lambda k: k.model.cost)
    gate_on_index = _index_maps(program) and not kept.options.category_gates
    if not kept.certificate.ok and _snap_failed(kept.certificate) and gate_on_index:
        # `indices / length` stepped over the length sums activations whose float32 error breaks
        # the snap (a one-hot output of 12M parameters at N = 64): gated over the index instead
        options = replace(kept.options, category_gates=True)
        kept = _instead(build, kept, options, CATEGORY_GATES, note, tried)
    if not kept.certificate.ok and _snap_failed(kept.certificate):
        kept = _one_hot_output(build, kept, max_params, note)
    residual = kept.model.metadata["residual"]
    if not kept.certificate.ok and any(label.endswith("^2") for label in residual):
        kept = _instead(
            build, kept, replace(kept.options, matching=False), "without matching", note, tried
        )
    residual = kept.model.metadata["residual"]
    if not kept.certificate.ok and any(label.endswith(".frac") for label in residual):
        options = replace(kept.options, fractions=False)
        kept = _instead(build, kept, options, "with widths decoded first", note, tried)
    # the refused maps from their input maps' sources, and every map of a map through chains
    # (`fa * fb * 4 > 1` steps over `(fa * fb) * 4`, a view of the product)
    kept = _maps_rebuilt(build, kept, _with_fused, FUSED, note, tried)
    # the refused maps from their input maps, each computed first, and every map of a map so
    # (whose error may feed the refused ones): a step over an input map's source with a context
    # multiplies the context's error by its large weights (`(b1 == 0) and (b2 == 0)` over two
    # bracket balances at N = 256)
    kept = _maps_rebuilt(build, kept, _with_direct, DIRECT, note, tried)
    if (
        kept.certificate.ok
        and not kept.options.numeric_copies
        and _copies_many(kept.model.metadata["residual"], kept.graph, build.single_key())
    ):
        variants = _copy_variants(kept.options)
        found = [
            _instead(build, kept, v, COPIES, note, tried, smaller=True, failed=failed)
            for v in variants
        ]
        kept = min(found, key=lambda k: k.model.cost)  # each is `kept` or smaller
    if kept.certificate.ok and _interpolations_read_by_maps(kept):
        # an interpolation proved where steps were refused, read by another map (`w / length`
        # per length, then `> 0.5`: 16,513 parameters in three layers at N = 32), against the
        # maps fused over their sources (one step of w - 0.5 * length: 3,817 in two)
        options = _with_fused(kept.options, _maps_of_maps(kept.graph))
        kept = _instead(build, kept, options, FUSED, note, tried, smaller=True)
    if kept.certificate.ok and _index_maps(program) and not kept.options.category_gates:
        # gated over the index where that is smaller (a layer more for the length's one-hot:
        # `indices / length` at N = 32, 78,838 parameters in 1 layer stepped, 10,400 in 2)
        options = replace(kept.options, category_gates=True)
        kept = _instead(build, kept, options, CATEGORY_GATES, note, tried, smaller=True)
    return kept if kept.certificate.ok else replace(kept, tried=tuple(tried))


def _maps_rebuilt(
    build: Builds,
    kept: Kept,
    with_maps: Callable[[BuildOptions, frozenset[str]], BuildOptions],
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
) -> Kept:
    """Where `kept` is not proved and the certifier refused steps over maps of maps: the builds
    `with_maps` the refused maps, and every map of a map (`_with_fused`, `_with_direct`); the
    smaller proved one, else `kept`."""
    refused = _refused_steps_over_maps(kept)
    if kept.certificate.ok or not refused:
        return kept
    builds = [
        _instead(build, kept, with_maps(kept.options, names), how, note, tried)
        for names in dict.fromkeys((refused, _maps_of_maps(kept.graph)))
    ]
    proved = [k for k in builds if k.certificate.ok]
    return min(proved, key=lambda k: k.model.cost) if proved else kept


def _with_fused(options: BuildOptions, names: frozenset[str]) -> BuildOptions:
    return replace(options, fused_maps=names)


def _with_direct(options: BuildOptions, names: frozenset[str]) -> BuildOptions:
    return replace(options, direct_maps=names)


def _copies_first(
    build: Builds,
    program: Graph,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    failed: set[BuildOptions],
) -> Kept | None:
    """Where the default build copies many numbers of one key as their one-hot, the smallest
    build copying them as one number that is proved and smaller than the default, found from the
    default's sketch alone: its model is neither assembled nor certified (the copy of a gated
    fraction at N = 64: 147M parameters, 20 s of the compile's 26). Where the default would be
    proved, the route below keeps that build too (the copy it tries last is kept where smaller);
    where its snap would fail, it keeps the smallest proved copy. None: no such build."""
    try:
        default = build.sketch(BuildOptions())
    except CompileError:
        return None  # planned once: the default's build raises the same refusal below
    if not _copies_many(default.residual, program, build.single_key()):
        return None
    size = default.cost
    found = [
        kept
        for options in _copy_variants(BuildOptions())
        if (
            kept := _proved(
                build,
                options,
                COPIES,
                note,
                tried,
                worth=lambda sketch: sketch.cost < size,
                failed=failed,
            )
        )
        is not None
    ]
    return min(found, key=lambda k: k.model.cost) if found else None


def _copy_variants(options: BuildOptions) -> list[BuildOptions]:
    """`options` with single-key copies of many numbers built as numbers: addressed exactly (the
    reverse of a prefix mean: no matched query, one layer fewer) or by the selector's atoms
    (`select(indices, indices, ==)`: fewer parameters)."""
    copies = replace(options, numeric_copies=True)
    variants = [copies, replace(copies, addressed_copies=False)]
    if copies.output is not None:
        # a one-hot output forced where the number copied as a one-hot and then summed into a
        # number was not proved: copied as a number, the planner's own output may be proved
        # (the reverse of a prefix mean at N = 32: 2,704 parameters, not 620,816)
        variants += [replace(v, output=None) for v in variants]
    return variants


def _shortest(build: Builds, max_len: int, note: Callable[[str], None]) -> Kept:
    """The default build, certified; below MATCH_MIN_VALUES the eagerly matched one first where
    it is smaller (sort at N = 10: 7,143 parameters instead of 12,251; double_hist at N = 8 would
    take 3 layers instead of 2)."""
    options = BuildOptions()
    model, graph = build.model(options)
    candidates = [(model, graph, options)]
    if max_len < MATCH_MIN_VALUES:
        eager_options = replace(options, eager_matching=True)
        try:
            eager, eager_graph = build.model(eager_options)
        except CompileError:
            pass
        else:
            if eager.cost < model.cost:
                candidates.insert(0, (eager, eager_graph, eager_options))
    note("certify")
    for model, graph, options in candidates:  # the judge: every decision, any float32 order
        certificate = certify_model(model)
        if certificate.ok:
            break
    return Kept(model, graph, certificate, options)  # else the default's refusal


def _fused_instead_of(
    build: Builds,
    program: Graph,
    refusal: CompileError,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
) -> Kept | None:
    """Where the default build is refused while planning (`fa * fb` at N = 40 needs a step MLP
    over 19,269 pairs of means), the build with every map of another map computed from the
    sources of its input maps (`fa * fb > 0.2`: steps over fa with fb as context), if proved.
    Not where each refused node is a map that reads no map and no map reads (`c + f` over two
    means): fused, it is planned as before (planning it again took 9 s of 30 at N = 128)."""
    fused = _maps_of_maps(program)
    if not fused or _fusing_keeps(refusal, program):
        return None
    return _proved(build, BuildOptions(fused_maps=fused), FUSED, note, tried)


def _fusing_keeps(refusal: CompileError, program: Graph) -> bool:
    """Whether every error of `refusal` is located at maps that read no map and that no map
    reads: with maps fused each is still planned, over the same support (`fa * fb`, which
    `fa * fb > 0.2` reads, is not: fused, the comparison reads fa and fb themselves). An error
    located elsewhere, or at nothing, may be another build's to avoid."""
    read_by_maps = program.read_by_maps()
    errors = [d for d in refusal.diagnostics if d.severity == "error"]
    for diagnostic in errors:
        at = [n for n in program.nodes if n.span is not None and n.span == diagnostic.span]
        if not at or any(
            node.op is not Op.MAP
            or node.index in read_by_maps
            or any(program[i].op is Op.MAP for i in node.inputs)
            for node in at
        ):
            return False
    return bool(errors)


def _copies_instead_of(
    build: Builds,
    program: Graph,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    failed: set[BuildOptions],
) -> Kept | None:
    """Where the default build is refused while planning (the reverse of a prefix mean at
    N = 256: the mean's one-hot, read by the copy, needs a step MLP of 39,897 units), the build
    copying many numbers of one key as one number, if the program aggregates and it is proved."""
    if not any(node.op is Op.AGGREGATE for node in program.nodes):
        return None
    # one build, addressed exactly: a refusal while planning can take a minute (`c + f` over
    # a copied prefix mean at N = 64), and each build tried here adds as much
    return _proved(build, BuildOptions(numeric_copies=True), COPIES, note, tried, failed=failed)


def _one_hot_output(
    build: Builds, kept: Kept, max_params: int | None, note: Callable[[str], None]
) -> Kept:
    """Numbers closer together than the output logit's float32 error (tanh of 0..10) cannot be
    snapped; a one-hot output reads the categorical value instead (an argmax, no closeness)."""
    too_large = _one_hot_too_large(kept.model, max_params)
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
    certificate = _certified(model, "the one-hot output", note)
    if certificate is None:
        why = "a one-hot output was built, and certifying it ran out of memory"
        return replace(kept, one_hot_note=why)
    if not certificate.ok:
        why = "a one-hot output was tried too and is not proved either"
        return replace(kept, one_hot_note=why)
    return Kept(model, graph, certificate, options)


def _instead(
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
) -> Kept:
    """The build with `options` where it differs from `kept` and is proved (and, if `smaller`,
    is smaller), else `kept`. `weights_only`: the options
    may change the blocks' widths only, not the residual (gated units or steps)."""

    def worth_certifying(sketch: Sketch) -> bool:
        same = list(sketch.residual) == kept.model.metadata["residual"]
        if same and (not weights_only or sketch.config == kept.model.config):
            return False  # the same model: the options changed nothing
        return not smaller or sketch.cost < kept.model.cost

    found = _proved(build, options, how, note, tried, worth=worth_certifying, failed=failed)
    return kept if found is None else replace(found, one_hot_note=kept.one_hot_note)


def _proved(
    build: Builds,
    options: BuildOptions,
    how: str,
    note: Callable[[str], None],
    tried: list[tuple[str, str]],
    *,
    worth: Callable[[Sketch], bool] = lambda sketch: True,
    failed: set[BuildOptions] | None = None,
) -> Kept | None:
    """The build with `options` if it is built, `worth` certifying, and proved; else None (a
    refusal, or running out of memory, counts as not proved), and why goes into `tried`.
    `failed`: the options already refused or not proved (none is built again), and where these
    options go if they are."""
    failed = set() if failed is None else failed
    if options in failed:
        return None  # why is in `tried` already
    try:
        if not worth(build.sketch(options)):  # judged before any weight is allocated
            return None
        model, graph = build.model(options)
    except CompileError as err:
        tried.append((how, err.diagnostics[0].message))
        failed.add(options)
        return None
    except MemoryError:
        tried.append((how, "it ran out of memory"))
        failed.add(options)
        return None
    certificate = _certified(model, how, note)
    if certificate is None:
        tried.append((how, "certifying it ran out of memory"))
        failed.add(options)
        return None
    if not certificate.ok:
        failed.add(options)
        tried.append(
            (how, f"{model.param_count():,} parameters, not proved: {why_not_proved(certificate)}")
        )
        return None
    return Kept(model, graph, certificate, options)


def _certified(model: CompiledModel, how: str, note: Callable[[str], None]) -> Certificate | None:
    """An alternative's certificate, or None where certifying it ran out of memory: a build much
    larger than the default (a one-hot output of thousands of values), whose refusal then stands,
    located, instead of the compile failing."""
    note(f"certify {how}")
    try:
        return certify_model(model)
    except MemoryError:
        return None


def _refused_steps_over_maps(kept: Kept) -> frozenset[str]:
    """The maps of other maps whose MLP the certifier refused (`fa * fb > 0.2` stepped over the
    product: the steps' steepness multiplies the product's error)."""
    maps_of_maps = _maps_of_maps(kept.graph)
    return frozenset(
        block
        for check in kept.certificate.failures()
        if check.sublayer.endswith("mlp")
        for block in check.block.split(", ")
        if block in maps_of_maps
    )


def _index_gated_instead_of(
    build: Builds, program: Graph, note: Callable[[str], None], tried: list[tuple[str, str]]
) -> Kept | None:
    """Where the default build is refused while planning (`indices / length` at N = 256: a step
    MLP of 63,252 units over the length), the build gated over the index, if proved."""
    if not _index_maps(program):
        return None
    return _proved(build, BuildOptions(category_gates=True), CATEGORY_GATES, note, tried)


def _index_maps(graph: Graph) -> bool:
    """Whether some map of the index and a number (the length, a width or a mean) is read by no
    map: what `category_gates` may build otherwise (`compiler.maps`)."""
    read_by_maps = graph.read_by_maps()
    numbers = (Op.LENGTH, Op.SELECTOR_WIDTH, Op.AGGREGATE)
    return any(
        node.op is Op.MAP
        and node.index not in read_by_maps
        and len(node.inputs) == 2
        and {graph[i].op for i in node.inputs} & {Op.INDICES}
        and {graph[i].op for i in node.inputs} & set(numbers)
        for node in graph.nodes
    )


def _interpolations_read_by_maps(kept: Kept) -> bool:
    """Whether a map of the kept build is an interpolation (a continuous MLP part) that another
    map reads: a form the default build reaches where steps would be refused, whose alternative
    (the reading map fused over the sources) the driver otherwise tries only when not proved."""
    continuous = {m["name"] for m in kept.model.metadata["reach"]["mlps"] if m.get("continuous")}
    read = {kept.graph[i].name for i in kept.graph.read_by_maps()}
    return bool(continuous & read)


def _maps_of_maps(graph: Graph) -> frozenset[str]:
    """The maps that read another map: with `fused_maps`, each is computed from the sources of
    its input maps, through any chain of them."""
    return frozenset(
        node.name
        for node in graph.nodes
        if node.op is Op.MAP and any(graph[i].op is Op.MAP for i in node.inputs)
    )


def _copies_many(residual: Sequence[str], graph: Graph, single_key: frozenset[str]) -> bool:
    """Whether an aggregate of the build with these residual labels (a model's or its sketch's),
    from `graph`, copies more than NUMERIC_COPY_MIN_VALUES numbers as their one-hot (it selects at
    most one key: its name is in `single_key`), so that `numeric_copies` would build another model.
    A mean of the tokens (`aggregate(full_s, tokens)`) reads their one-hot too, but copies nothing:
    its other builds would be the default's, each planned again (20 s of 36 at N = 256 for
    `tokens > aggregate(full_s, tokens)` over ten numbers)."""
    for node in graph.nodes:
        if node.op is not Op.AGGREGATE or node.name not in single_key:
            continue
        # the copy's own one-hot, or (where the copy is read as a number: the reverse of a
        # fraction, 3.9M parameters at N = 32) the one-hot of the numbers its head reads
        for name in (node.name, graph[node.inputs[1]].name):
            prefix = f"{name}:"
            values = [label[len(prefix) :] for label in residual if label.startswith(prefix)]
            if len(values) > NUMERIC_COPY_MIN_VALUES and all(_is_number(v) for v in values):
                return True
    return False


def _is_number(label: str) -> bool:
    try:
        float(label)
    except ValueError:
        return False
    return True


def _one_hot_too_large(model: CompiledModel, max_params: int | None) -> str | None:
    """Why a one-hot output for `model`'s listed output values cannot fit `max_params` (None: it
    may): its unembedding alone is n x n, a column per value read from n residual dims."""
    listed = model.metadata["output"].get("values")
    if listed is None or max_params is None or len(listed) ** 2 <= max_params:
        return None
    return (
        f"a one-hot output of its {len(listed):,} values was not built: it needs at least "
        f"{len(listed) ** 2:,} parameters, over the limit of {max_params:,}"
    )


def _snap_failed(certificate: Certificate) -> bool:
    """Whether a numerical output's snap is among the decisions the certifier could not prove."""
    return any(c.sublayer == "decoder" and c.kind == "snap" for c in certificate.failures())
