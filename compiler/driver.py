"""`compile_sop`: the compiler's stages, in order."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from compiler import build_facts
from compiler.addressing import MATCH_MAX_LEN
from compiler.alternatives import keep_proved
from compiler.argument_checks import check_arguments
from compiler.assemble import assemble, sketch_model
from compiler.blocks import Atom, Plan
from compiler.budget import (
    DEFAULT_MAX_PARAMS,
    PROBE_LENGTHS,
    Prediction,
    approximate,
    bytes_text,
    predict,
)
from compiler.build_trials import BuildOptions, Builds
from compiler.causal import check_causal, short_causal_problems
from compiler.constants import fold_constants
from compiler.encode import plan_encodings
from compiler.forms import Forms, prepare
from compiler.fraction_means import fraction_means
from compiler.graph import Graph, Op, build_graph
from compiler.layout import Layout, lay_out
from compiler.model import CompiledModel, Sketch
from compiler.plan_limit import check_output, planning_under
from compiler.program_forms import keep_form
from compiler.refusals import also_tried, header_refusal, refusals
from compiler.schedule import Schedule, schedule_blocks
from compiler.values import ValueSets, infer_values
from compiler.vocab_bound import check_vocab_size
from rasp import sops
from rasp.deep_stack import fallback_note, run_deep
from rasp.errors import CompileError, Diagnostic, Source, option
from rasp.tracr.boxes import marked, marked_problem
from rasp.tracr.lower import is_lowered, is_tracr, to_sops, value_problems


def compile_sop(
    sop: sops.Node,
    vocab: Sequence[Atom],
    max_len: int,
    *,
    name: str | None = None,
    source: Source | None = None,
    causal: bool = False,
    head_masks: bool = True,
    require_certificate: bool = True,
    max_params: int | None = DEFAULT_MAX_PARAMS,
    progress: Callable[[str, int, int], None] | None = None,
) -> CompiledModel:
    """A transformer whose decoded output equals `rasp.sops.evaluate(sop, tokens)` for every input
    over `vocab` of length 1..max_len; CompileError (every reason, located) when that cannot be promised.

    The model's metadata always carries `certificate` (compiler.certify): every decision proved to
    survive any float32 evaluation order. A model that is not proved is refused (CompileError, one
    located reason per weak block); `require_certificate=False` returns it anyway, marked not
    proved, for inspecting why (the command line never writes such a model).

    `head_masks=False` builds no head with a per-head mask (format version 3): a selector's
    `select(indices, indices, op)` is then scored from index readings (N x N), as TransformerLens's
    HookedTransformer, which has no such masks, can run.

    Before building anything for a large `max_len`, the model's size is predicted
    (compiler.budget); above `max_params` parameters (None: no limit) the compile is refused with
    the prediction and the part responsible. `progress(stage, done, total)` is called as each
    stage starts (stage "compiling: <what>", done 0 of 1: a progress bar per stage, with its time).

    `sop` may also be a `rasp.tracr` program (lowered by `rasp.tracr.lower.to_sops`); its Python
    select predicates and tracr means are first resolved for this vocabulary (`compiler.resolve`).
    A map that only counts a positional mean of 0/1 values (`round((indices + 1) * mean)`) is
    compiled as a map of a selector_width (`compiler.counts`), and the width of an order
    (`select(x, y, <)`) over many numbers as widths over their digits (`compiler.order_digits`);
    `prepare` gives the graph compiled.
    """
    # its walks over the s-op graph recurse: a deep chain needs rasp.deep_stack's raised limit
    try:
        return run_deep(
            lambda: _compile_sop(
                sop,
                vocab,
                max_len,
                name=name,
                source=source,
                causal=causal,
                head_masks=head_masks,
                require_certificate=require_certificate,
                max_params=max_params,
                progress=progress,
            )
        )
    except RecursionError:
        span = getattr(sop, "span", None)  # (a tracr program has none)
        raise CompileError(
            [
                Diagnostic(
                    "the program nests too deeply to compile",
                    span,
                    "split it into fewer steps"
                    + (f"\nhint: {note}" if (note := fallback_note()) else ""),
                )
            ]
        ) from None


def _compile_sop(
    sop: sops.Node,
    vocab: Sequence[Atom],
    max_len: int,
    *,
    name: str | None,
    source: Source | None,
    causal: bool,
    head_masks: bool,
    require_certificate: bool,
    max_params: int | None,
    progress: Callable[[str, int, int], None] | None,
) -> CompiledModel:
    if is_tracr(sop):
        sop = to_sops(sop)  # type: ignore[arg-type]
    # a tracr program, given as such or lowered already (`rasp compile prog.py:NAME`, or a graph
    # built on its lowering): its strings that start with the tuple mark are its tuples (the
    # file's `output.tuples` says so)
    tracr = is_lowered(sop)
    flags = {"causal": causal, "head_masks": head_masks, "require_certificate": require_certificate}
    vocab = check_arguments(
        sop, vocab, max_len, name, max_params=max_params, source=source, flags=flags
    )
    if tracr:  # the lowered graph would read such a token as the tuple its text spells
        problems = [marked_problem(t, "the vocabulary token", sop.span) for t in vocab if marked(t)]
        if problems:
            raise CompileError(problems)

    def note(stage: str) -> None:
        if progress is not None:
            progress(f"compiling: {stage}", 0, 1)

    # before `prepare`, whose rewrites follow every length up to max_len too; both can take
    # seconds at a large N (most_freq at N = 300: 3 s), shown as stages of their own
    note("predict the size")
    predicted = _check_size(sop, vocab, max_len, causal, head_masks, max_params)
    note("prepare the program")
    program = sop
    forms = Forms(program, vocab, max_len)  # the program's forms, sharing their rewrites
    sop = forms()

    def builder(sop: sops.Node, limit: int | None) -> Builds:
        """The builds of `sop` under the parameter limit `limit`."""
        planned: dict[BuildOptions, Planned | CompileError] = {}
        # every build of `sop` plans from one value analysis (the options do not change it; at
        # N = 256 it can take 20 s, `c + f` over a prefix mean and its shifted copy)
        analysis: list[ValueSets | CompileError] = []

        def analysed(graph: Graph) -> ValueSets:
            if not analysis:
                try:
                    analysis.append(infer_values(graph, vocab, max_len))
                except CompileError as err:  # no build plans: each says so at once
                    analysis.append(err)
            if isinstance(analysis[0], CompileError):
                raise analysis[0]
            return analysis[0]

        def plan(options: BuildOptions) -> Planned:
            found = planned.get(options)
            if found is None:
                try:
                    # a head that alone puts the build over `limit` stops its plan there
                    # (compiler.plan_limit): check_params would refuse it after planning
                    with planning_under(limit, len(vocab)):
                        found = _plan(
                            sop,
                            vocab,
                            max_len,
                            causal=causal,
                            note=note,
                            options=options,
                            head_masks=head_masks,
                            analyse=analysed,
                        )
                except CompileError as err:  # kept: each build of these options says so at once
                    found = err
                planned[options] = found
            if isinstance(found, CompileError):
                raise found
            return found

        def model(options: BuildOptions) -> tuple[CompiledModel, Graph]:
            planned_build = plan(options)
            compiled, graph = _assemble(
                planned_build,
                vocab,
                max_len,
                name=name,
                source=source,
                note=note,
                max_params=limit,
                tuples=tracr,
            )
            planned.pop(options)  # assembled: its plan is not needed again
            problems = value_problems(
                program, vocab, max_len
            )  # a tracr map gave a value no model holds (a dict)
            if problems:
                raise CompileError(problems)
            return compiled, graph

        @functools.cache  # asked for up to three times per form
        def single_key() -> frozenset[str]:
            graph = build_graph(sop)
            at_most_one = analysed(graph).at_most_one
            return frozenset(
                node.name
                for node in graph.nodes
                if node.op is Op.AGGREGATE and at_most_one[node.inputs[0]]
            )

        return Builds(
            model=model, sketch=lambda options: plan(options).sketch, single_key=single_key
        )

    # the default form, or the first alternative the certifier proves (compiler.alternatives), of
    # the prepared program or another form of it (compiler.program_forms)
    try:
        kept = keep_form(
            sop,
            lambda form, cap: keep_proved(
                builder(form, _lower_limit(max_params, cap)),
                build_graph(form),
                max_len,
                _lower_limit(max_params, cap),
                note,
                users_limit=cap is None or (max_params is not None and max_params <= cap),
            ),
            forms,
            note,
            vocab,
            max_len,
            None if predicted is None else predicted.params,
        )
    except CompileError as err:  # a tracr map's unholdable value may be the reason, said first
        raise _with_value_problems(program, err, vocab, max_len) from None
    model, graph, certificate = kept.model, kept.graph, kept.certificate
    if require_certificate and not certificate.ok:
        unlisted = build_facts.unlisted(model.metadata["output"])
        raise CompileError(
            [
                *refusals(certificate, graph, one_hot=kept.one_hot_note, unlisted=unlisted),
                *also_tried(kept.tried),
            ]
        )
    model.metadata["certificate"] = certificate.to_json()
    # ties the certificate to these weights: a reader names a tensor edited after compiling
    model.metadata["weights_sha256"] = model.tensor_digests()
    model.metadata["fields_sha256"] = model.field_digests()
    if model.metadata.get("program") is not None:
        # what a re-check needs, beside the vocabulary, max_len and output name the file holds,
        # to rebuild the reach from the recorded source (each changes which build is kept)
        model.metadata["program"]["options"] = {
            "causal": causal,
            "head_masks": head_masks,
            "max_params": max_params,
        }
    too_large = header_refusal(model, graph, max_len)
    if too_large is not None:
        raise CompileError([too_large])
    return model


@dataclass(frozen=True)
class Planned:
    """A build planned and laid out, before any weight: its shape is known (`sketch`), and
    `_assemble` turns it into the model."""

    graph: Graph
    plan: Plan
    schedule: Schedule
    layout: Layout
    sketch: Sketch


def _plan(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    *,
    causal: bool,
    note: Callable[[str], None],
    options: BuildOptions,
    head_masks: bool,
    analyse: Callable[[Graph], ValueSets] | None = None,
) -> Planned:
    """The stages before assembly: values, encodings, schedule and layout. `analyse` gives the
    value analysis of the graph (None: `infer_values`)."""
    note("analyse values")
    graph = build_graph(sop)  # IR: typed nodes, deterministic names
    if analyse is None:
        values = infer_values(graph, vocab, max_len)  # what each node can be
    else:
        values = analyse(graph)
    # the output's unembedding alone may put a build under a limit over it (compiler.plan_limit)
    check_output(graph.output, values.of(graph.output))
    folded = fold_constants(graph, values)  # s-ops of one value: constants; widths of all: length
    if causal:
        check_causal(graph, folded, values)
    graph = folded
    note("plan encodings")
    # readings + weight blocks in Dim coordinates
    plan = plan_encodings(
        graph,
        values,
        vocab,
        options.output,
        causal,
        options.matching,
        head_masks,
        options.fractions,
        options.eager_matching,
        options.numeric_copies,
        options.fused_maps,
        options.gates,
        addressed_copies=options.addressed_copies,
        direct_maps=options.direct_maps,
        category_gates=options.category_gates,
        clamped_tables=options.clamped_tables,
    )
    note("schedule")
    schedule = schedule_blocks(plan.heads, plan.mlps)  # blocks -> layers
    # the program's s-ops among them are laid out whole (the tools read them back by name); the
    # classes a select side or a map reads are helpers, laid out where read
    names = {node.name for node in graph.nodes}
    embedded = [dims for name, (_, dims) in plan.embedded.items() if name in names]
    layout = lay_out(schedule, plan.output, vocab, max_len, plan.positional, embedded)
    sketch = sketch_model(schedule, layout, plan, vocab, max_len, causal)
    return Planned(graph, plan, schedule, layout, sketch)


def _assemble(
    planned: Planned,
    vocab: tuple[Atom, ...],
    max_len: int,
    *,
    name: str | None,
    source: Source | None,
    note: Callable[[str], None],
    max_params: int | None,
    tuples: bool = False,
) -> tuple[CompiledModel, Graph]:
    note("assemble")
    graph, plan = planned.graph, planned.plan
    try:
        model = assemble(
            planned.schedule,
            planned.layout,
            plan,
            vocab,
            max_len,
            config=planned.sketch.config,
            name=name or graph.output.name,
            source=source,
            max_params=max_params,
            tuples=tuples,
        )
    except CompileError as err:  # too many parameters: located at the output
        span = graph.output.span
        located = [Diagnostic(d.message, d.span or span, d.hint) for d in err.diagnostics]
        raise type(err)(located) from None
    gated = frozenset(spec.name for spec in plan.mlps if spec.notes.get("kind") == "gated")
    # tables that pass their inputs' error on, for the driver's clamped fallback
    noisy = frozenset(
        spec.name
        for spec in plan.mlps
        if spec.notes.get("kind") == "table"
        and spec.notes.get("noisy_inputs")
        and not spec.notes.get("clamped")
    )
    return replace(model, gated=gated, noisy_tables=noisy), graph


# (position, length) pairs the analysis may follow: max_params / 100 (2M pairs, max-len 2,000, by
# default; the analysis of 12.5M pairs took 5 minutes here)
PAIRS_PER_PARAM = 100
ANALYSIS_BYTES_PER_PAIR = 200  # per pair and per positional s-op: a tuple key and a value tuple


def _check_size(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    causal: bool,
    head_masks: bool,
    max_params: int | None,
) -> Prediction | None:
    """`_check_sizes`; a causal compile it refuses also gets, first, what a causal model could
    not compute (found on short inputs), which no smaller size would fix."""
    try:
        return _check_sizes(sop, vocab, max_len, causal, head_masks, max_params)
    except CompileError as err:
        found = short_causal_problems(sop, vocab, max_len) if causal else []
        if not found:
            raise
        raise CompileError([*found, *err.diagnostics]) from None


def _check_sizes(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    causal: bool,
    head_masks: bool,
    max_params: int | None,
) -> Prediction | None:
    """Refuse, before building it, a model predicted to exceed `max_params` parameters, or a
    max-len whose value analysis would follow too many (position, length) pairs. `sop` is the
    program before `prepare`: each probe prepares it for its own length. Returns the prediction
    for the default form (None: none was made)."""
    if max_params is None:
        return None
    # what the vocabulary alone forces on every build, before the probes analyse any value: a
    # large vocabulary is refused in milliseconds, not after its tables are planned
    check_vocab_size(sop, vocab, max_len, max_params)
    pairs = max_len * (max_len + 1) // 2
    pair_limit = (
        max(max_params, DEFAULT_MAX_PARAMS) // PAIRS_PER_PARAM
    )  # raised with it, never lowered

    def probe(n: int, fractions: bool = False, numeric_copies: bool = False) -> Sketch:
        return _plan(
            prepare(sop, vocab, n, fractions=fractions),
            vocab,
            n,
            causal=causal,
            head_masks=head_masks,
            note=lambda s: None,
            options=BuildOptions(matching=matching, numeric_copies=numeric_copies),
        ).sketch

    # the probes are built as the target will be: matching's exact scores end at MATCH_MAX_LEN
    matching = max_len <= MATCH_MAX_LEN
    try:
        prediction = predict(probe, max_len)
    except CompileError:
        prediction = None  # no compile at the probe lengths: the real compile says why
    default = prediction

    def or_smaller(form: Callable[[int], Sketch]) -> Prediction | None:
        """The smaller of the prediction so far and `form`'s (where its probes compile)."""
        try:
            found = predict(form, max_len)
        except CompileError:
            return prediction
        if found is None or prediction is None:
            return prediction
        return min(prediction, found, key=lambda p: p.params)

    if _too_large(prediction, max_params) and _has_fraction_form(sop, vocab):
        # the compile also builds counts over the length as means (compiler.program_forms),
        # which may be far smaller: the smaller prediction decides
        prediction = or_smaller(lambda n: probe(n, fractions=True))
    if _too_large(prediction, max_params):
        # the compile also copies many numbers of one key as one number (compiler.alternatives),
        # which may be far smaller: the reverse of a prefix mean at max-len 256, 12.1G parameters
        # predicted with the numbers' one-hot
        prediction = or_smaller(lambda n: probe(n, numeric_copies=True))
    if pairs > pair_limit:
        # The value analysis keeps a value set per (position, length) pair: quadratic in N even
        # where the model is linear (numerical addressing), so it is bounded on its own.
        raise CompileError(
            [
                Diagnostic(
                    f"at max-len {max_len:,} compiling would take too long and too much memory: "
                    f"the value analysis follows every s-op at {approximate(pairs)} (position, "
                    f"length) pairs (about {bytes_text(pairs * ANALYSIS_BYTES_PER_PAIR)})"
                    + ("" if prediction is None else f"; the model: {prediction.describe()}"),
                    getattr(sop, "span", None),
                    f"the limit is {pair_limit:,} pairs (max-len {math.isqrt(2 * pair_limit):,}), "
                    f"set with the parameter limit ({max(max_params, DEFAULT_MAX_PARAMS):,} / "
                    f"{PAIRS_PER_PARAM}): use a smaller maximum length, or "
                    f"raise the limit ({option('max_params')}) if the machine can hold it",
                )
            ]
        )
    if _too_large(prediction, max_params):
        assert prediction is not None
        raise CompileError(
            [
                Diagnostic(
                    f"at max-len {max_len:,} the model would be too large: {prediction.describe()}",
                    getattr(sop, "span", None),
                    f"the limit is {max_params:,} parameters: use a smaller maximum length, or "
                    f"raise the limit ({option('max_params')}) if the machine can hold it",
                )
            ]
        )
    return default


def _too_large(prediction: Prediction | None, max_params: int) -> bool:
    return prediction is not None and prediction.params > max_params


def _has_fraction_form(sop: sops.Node, vocab: tuple[Atom, ...]) -> bool:
    """Whether `prepare` writes a different form with `fractions=True` at the first probe length
    (the form the size prediction would probe)."""
    prepared = prepare(sop, vocab, PROBE_LENGTHS[0])
    return fraction_means(prepared, vocab, PROBE_LENGTHS[0]) is not prepared


def _lower_limit(max_params: int | None, cap: int | None) -> int | None:
    """The user's parameter limit, lowered to `cap` (None: no limit)."""
    if cap is None:
        return max_params
    return cap if max_params is None else min(max_params, cap)


def _with_value_problems(
    program: sops.Node, err: CompileError, vocab: Sequence[Atom], max_len: int
) -> CompileError:
    """`err` led by each tracr map of `program` that gave a value no model holds (a dict), whose
    consequences at the same map (its values unknown: "fails on every input") it replaces."""
    found = value_problems(program, vocab, max_len)
    if not found:
        return err
    spans = {p.span for p in found}
    rest = [d for d in err.diagnostics if d not in found and d.span not in spans]
    return type(err)([*found, *rest])
