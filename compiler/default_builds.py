"""The builds `compiler.alternatives.keep_proved` starts from: the default (`shortest`: below
MATCH_MIN_VALUES the eagerly matched one first where it is smaller), the copy builds tried before
it where its sketch copies many numbers as their one-hot (`copies_first`), and the builds tried in
its place where it is refused while planning or over the parameter limit (`fused_instead_of`,
`fused_under_limit`, `copies_instead_of`, `index_gated_instead_of`). Why each is tried, and in
which order: `compiler.alternatives`' docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.addressing import MATCH_MIN_VALUES
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph, Op
from compiler.model import OverParamLimit
from compiler.plan_limit import PlannedOverLimit
from compiler.refusals import refused_why, why_not_proved
from rasp.errors import CompileError

FUSED = "with maps fused through their inputs"  # what a progress note says is certified
COPIES = "with numbers copied as numbers"
CATEGORY_GATES = "with gated units over the index"
EAGER = "with sides of fewer values matched too"


def copies_first(
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
    size: tuple[int, int, int] | None  # the default's cost; None: over the limit, not known
    try:
        default = build.sketch(BuildOptions())
    except PlannedOverLimit:
        # stopped while planned (compiler.plan_limit), where its sketch would have been over
        # the limit: every copy build is tried, as one smaller than it may be
        if not any(node.op is Op.AGGREGATE for node in program.nodes):
            return None
        size = None
    except CompileError:
        return None  # planned once: the default's build raises the same refusal below
    else:
        if not build_facts.copies_many(default.residual, program, build.single_key()):
            return None
        size = default.cost
    found = [
        kept
        for options in copy_variants(BuildOptions(), build.mixed_copies())
        if (
            kept := build_trials.proved(
                build,
                options,
                COPIES,
                note,
                tried,
                worth=lambda sketch: size is None or sketch.cost < size,
                failed=failed,
            )
        )
        is not None
    ]
    return min(found, key=lambda k: k.model.cost) if found else None


def copy_variants(options: BuildOptions, mixed: bool) -> list[BuildOptions]:
    """`options` with single-key copies of many numbers built as numbers: addressed exactly (the
    reverse of a prefix mean: no matched query, one layer fewer) or by the selector's atoms
    (`select(indices, indices, ==)`: fewer parameters); where some copies always select a key and
    others may select none (`mixed`, `Builds.mixed_copies`), each also with the latter one-hots."""
    copies = replace(options, numeric_copies=True)
    variants = [copies, replace(copies, addressed_copies=False)]
    if mixed:
        # (InterpBench's last two tokens equal, `x == y` of the last, always there, and the
        # second to last, None at length 1: a table over one number and a one-hot, 9,112
        # parameters at N = 9, where both as numbers took 14,997)
        variants += [replace(v, empty_copies=False) for v in variants]
    if copies.output is not None:
        # a one-hot output forced where the number copied as a one-hot and then summed into a
        # number was not proved: copied as a number, the planner's own output may be proved
        # (the reverse of a prefix mean at N = 32: 2,704 parameters, not 620,816)
        variants += [replace(v, output=None) for v in variants]
    return variants


def shortest(
    build: Builds,
    max_len: int,
    note: Callable[[str], None],
    tried: list[tuple[str, str]] | None = None,
) -> Kept:
    """The default build, certified; below MATCH_MIN_VALUES the eagerly matched one first where
    it is smaller (sort at N = 10: 7,143 parameters instead of 12,251; double_hist at N = 8 would
    take 3 layers instead of 2). `tried`: where the eagerly matched build was refused, not
    proved, or not certified as not smaller, why (a refusal's notes)."""
    options = BuildOptions()
    eager_why: str | None = None  # why the eagerly matched build was not kept
    try:
        model, graph = build.model(options)
    except OverParamLimit as over:
        # over the limit, where the eagerly matched build may be under it (most_freq at N = 4:
        # 22,484 parameters, refused under a limit of 22,484: the default has 22,817)
        if max_len >= MATCH_MIN_VALUES:
            raise
        try:
            eager_options = replace(options, eager_matching=True)
            eager, eager_graph = build.model(eager_options)
        except CompileError as err:
            if tried is not None:
                tried.append((EAGER, refused_why(err)))
            raise over from None
        model, graph, options = eager, eager_graph, eager_options
    candidates = [(model, graph, options)]
    if max_len < MATCH_MIN_VALUES and not options.eager_matching:
        eager_options = replace(options, eager_matching=True)
        try:
            eager, eager_graph = build.model(eager_options)
        except CompileError as err:
            eager_why = refused_why(err)
        else:
            if eager.cost < model.cost:
                candidates.insert(0, (eager, eager_graph, eager_options))
            elif list(eager.metadata["residual"]) != list(model.metadata["residual"]):
                eager_why = f"{eager.param_count():,} parameters, larger (not certified)"
    note("certify")
    for model, graph, options in candidates:  # the judge: every decision, any float32 order
        certificate = build_trials.certify_model(model)
        if certificate.ok:
            break
        if options.eager_matching:
            why = why_not_proved(certificate, graph)
            eager_why = f"{model.param_count():,} {build_trials.NOT_PROVED} {why}"
    else:
        if not build.refused_weights:  # its refusal reads the metadata alone
            model = model.without_weights()
    if not certificate.ok and eager_why is not None and tried is not None:
        tried.append((EAGER, eager_why))
    return Kept(model, graph, certificate, options)  # else the default's refusal


def fused_instead_of(
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
    fused = build_facts.maps_of_maps(program)
    if not fused or build_facts.fusing_keeps(refusal, program):
        return None
    return build_trials.proved(build, BuildOptions(fused_maps=fused), FUSED, note, tried)


def fused_under_limit(
    build: Builds, program: Graph, note: Callable[[str], None], tried: list[tuple[str, str]]
) -> Kept | None:
    """Where the default build is over the parameter limit, the build with every map of another
    map fused over its sources, if proved: a chain of maps after the last head, each a table in
    a layer of its own, can be far larger than one MLP over the sources (the route below keeps
    the fused build where it is smaller). As there, not where the default's plan has no layer
    after its last head (dyck1 at N = 40: planning the fused build takes 30 s and finds nothing
    smaller); where the plan stopped at a head (compiler.plan_limit), that is not known."""
    fused = build_facts.maps_of_maps(program)
    if not fused:
        return None
    if not _default_maps_after_heads(build):
        return None
    return build_trials.proved(build, BuildOptions(fused_maps=fused), FUSED, note, tried)


def _default_maps_after_heads(build: Builds) -> bool:
    """Whether the default build's plan has a layer after its last head (True where that is not
    known: a plan stopped at a head). Its plan is kept from its refusal: no planning again."""
    try:
        layers = build.sketch(BuildOptions()).config["layers"]
    except CompileError:
        return True
    with_heads = [i for i, layer in enumerate(layers) if layer["n_heads"]]
    return len(layers) - 1 > (with_heads[-1] if with_heads else -1)


def copies_instead_of(
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
    return build_trials.proved(
        build, BuildOptions(numeric_copies=True), COPIES, note, tried, failed=failed
    )


def index_gated_instead_of(
    build: Builds, program: Graph, note: Callable[[str], None], tried: list[tuple[str, str]]
) -> Kept | None:
    """Where the default build is refused while planning (`indices / length` at N = 256: a step
    MLP of 63,252 units over the length), the build gated over the index, if proved."""
    if not build_facts.index_maps(program):
        return None
    return build_trials.proved(
        build, BuildOptions(category_gates=True), CATEGORY_GATES, note, tried
    )
