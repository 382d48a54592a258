"""`compile_sop`: the compiler's stages, in order."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence

from compiler import build_facts, certify_memo
from compiler.alternatives import keep_proved
from compiler.argument_checks import check_arguments
from compiler.blocks import Atom
from compiler.budget import DEFAULT_MAX_PARAMS
from compiler.build_memo import sharing
from compiler.build_stages import Planned, assemble_build, moved_graph, plan_build
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.causal import short_causal_problems
from compiler.copy_snaps import copy_snaps_instead
from compiler.decoded_build import decoded_instead
from compiler.decoded_factors import factors_instead
from compiler.forms import Forms
from compiler.fused_output import fused_output_instead
from compiler.graph import Graph, Op, build_graph
from compiler.int_defaults import int_defaults_instead
from compiler.known_sums import lines_instead
from compiler.model import CompiledModel, Sketch
from compiler.moved_build import moved_instead
from compiler.moved_maps import innermost, movable
from compiler.plan_limit import planning_under
from compiler.plan_reuse import PlanRefusal, repeated
from compiler.position_folds import foldable, positions_instead
from compiler.program_forms import keep_form
from compiler.refusals import also_tried, header_refusal, refusals
from compiler.same_models import Certified
from compiler.side_build import sides_instead
from compiler.size_check import check_size
from compiler.smaller_builds import smaller_instead
from compiler.sum_inputs import sum_inputs_instead
from compiler.values import ValueSets, infer_values
from compiler.vocab_bound import reads_tokens
from compiler.vote_form import or_votes
from compiler.written_sums import written_instead
from rasp import sops
from rasp.deep_stack import fallback_note, run_deep
from rasp.errors import CompileError, Diagnostic, Source
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
    # some walks over the s-op graph recurse (the planners' readings, a selector's cases): a deep
    # one needs rasp.deep_stack's raised limit (a chain of maps is walked iteratively)
    try:
        return run_deep(
            lambda: _checked_once(
                _compile_sop,
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


def _checked_once(
    compile_: Callable[..., CompiledModel], *args: object, **kw: object
) -> CompiledModel:
    """`compile_(...)` with one memo for all its builds' checks of MLP parts: a part checked in
    one build is not checked again where every input of its check is the same
    (compiler.certify_memo)."""
    with certify_memo.sharing({}):
        return compile_(*args, **kw)


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
    predicted = check_size(sop, vocab, max_len, causal, head_masks, max_params)
    note("prepare the program")
    program = sop
    # whether the residual holds the token one-hot: where the program as written mentions the
    # tokens (what the size bounds count), never where it does not (compiler.layout)
    tokens_read = reads_tokens(program)
    forms = Forms(program, vocab, max_len)  # the program's forms, sharing their rewrites

    @functools.cache  # (one short analysis however many forms are refused)
    def short_causal() -> tuple[Diagnostic, ...]:
        return tuple(short_causal_problems(program, vocab, max_len)) if causal else ()

    def causal_noted(err: CompileError) -> CompileError:
        """`err`, a refusal before the causal check runs (the rewrites, the value analysis: a
        map's table too large), led by what a causal model could not compute, as the size
        checks' refusals are."""
        found = short_causal()
        return type(err)([*found, *err.diagnostics]) if found else err

    try:
        sop = forms()
    except CompileError as err:
        raise causal_noted(err) from None

    # every build's certificate by its model (compiler.same_models): another build of any form
    # that assembles the same model is not certified again
    certified = Certified()

    # the builder of the form last sketched (`sketch`), by (its form, limit): the vote form is
    # sketched and then, where smaller, built (compiler.vote_form), from the one plan
    sketched: list[tuple[sops.Node, int | None, Builds]] = []

    def builder(sop: sops.Node, limit: int | None) -> Builds:
        """The builds of `sop` under the parameter limit `limit`."""
        if sketched and sketched[0][0] is sop and sketched[0][1] == limit:
            return sketched[0][2]
        return _builder(sop, limit)

    # the last form built (by identity, kept alive beside): its value analysis and the step MLPs
    # its builds share, for every builder of it: under each parameter limit, and the decoded and
    # sides builds tried after the forms (neither depends on the limit; numeric 2070534 at N = 8
    # analysed and planned the same form twice, 27 s and 200 s). One form only: an analysis at a
    # large N can take hundreds of MB, and a form no longer built would keep its own alive.
    last_form: list[tuple[sops.Node, list[ValueSets | CompileError], dict[Hashable, object]]] = []

    def _builder(sop: sops.Node, limit: int | None) -> Builds:
        planned: dict[BuildOptions, Planned | CompileError] = {}
        # every build of `sop` plans from one value analysis (the options do not change it; at
        # N = 256 it can take 20 s, `c + f` over a prefix mean and its shifted copy)
        if not last_form or last_form[0][0] is not sop:
            last_form[:] = [(sop, [], {})]
        _, analysis, memo = last_form[0]

        def analysed(graph: Graph) -> ValueSets:
            if not analysis:
                try:
                    analysis.append(infer_values(graph, vocab, max_len))
                except CompileError as err:  # no build plans: each says so at once
                    analysis.append(causal_noted(err))
            if isinstance(analysis[0], CompileError):
                raise analysis[0]
            return analysis[0]

        # the builds refused while planning, for the builds that would repeat their refusal
        # (compiler.plan_reuse: numbers copied as numbers where no number is copied)
        refused: list[PlanRefusal] = []
        # (`memo`: the step MLPs its builds would build alike, built once, compiler.build_memo)

        def plan(options: BuildOptions) -> Planned:
            found = planned.get(options)
            if found is None:
                found = repeated(refused, options)
            if found is None:
                read: set[str] = set()
                try:
                    # a head that alone puts the build over `limit` stops its plan there
                    # (compiler.plan_limit): check_params would refuse it after planning
                    with planning_under(limit, len(vocab), tokens_read), sharing(memo):
                        found = plan_build(
                            sop,
                            vocab,
                            max_len,
                            causal=causal,
                            note=note,
                            options=options,
                            head_masks=head_masks,
                            analyse=analysed,
                            keep_tokens=tokens_read,
                            options_read=read,
                            tracr=tracr,
                            move=moved,
                        )
                except CompileError as err:  # kept: each build of these options says so at once
                    found = err
                    refused.append(PlanRefusal(options, frozenset(read), err))
                planned[options] = found
            if isinstance(found, CompileError):
                raise found
            return found

        def model(options: BuildOptions) -> tuple[CompiledModel, Graph]:
            planned_build = plan(options)
            compiled, graph = assemble_build(
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
        def copies() -> tuple[frozenset[str], bool]:
            graph = build_graph(sop)
            sets = analysed(graph)
            single = [
                node
                for node in graph.nodes
                if node.op is Op.AGGREGATE and sets.at_most_one[node.inputs[0]]
            ]
            kinds = {sets.never_empty[node.inputs[0]] for node in single}
            return frozenset(node.name for node in single), len(kinds) == 2

        @functools.cache  # (the last build's question alone)
        def folds() -> frozenset[str]:
            graph = build_graph(sop)
            return foldable(graph, analysed(graph))

        # the moved graphs and their analyses, by the maps moved: the moved build and the shared
        # one over it plan from one (every graph and analysis here is the form's)
        moved_graphs: dict[frozenset[str], tuple[Graph, ValueSets]] = {}

        def moved(
            graph: Graph, values: ValueSets, names: frozenset[str]
        ) -> tuple[Graph, ValueSets]:
            if names not in moved_graphs:
                moved_graphs[names] = moved_graph(graph, values, names, vocab, max_len)
            return moved_graphs[names]

        @functools.cache  # (asked where a build is proved)
        def moves() -> frozenset[str]:
            graph = build_graph(sop)
            return movable(graph, analysed(graph))

        @functools.cache
        def first_moves() -> frozenset[str]:
            return innermost(build_graph(sop), moves())

        return Builds(
            model=model,
            sketch=lambda options: plan(options).sketch,
            single_key=lambda: copies()[0],
            mixed_copies=lambda: copies()[1],
            folds=folds,
            moves=moves,
            first_moves=first_moves,
            refused_weights=not require_certificate,  # (else a refused model is never returned)
            certified=certified,
        )

    def keep(
        form: sops.Node, prepared: Callable[..., sops.Node], default: bool, most: int | None = None
    ) -> Kept:
        """The kept build of `form` (`keep_form`), under `most` parameters too (None: the user's
        limit alone)."""

        def attempt(form: sops.Node, cap: int | None) -> Kept:
            cap = _lower_limit(most, cap)
            return keep_proved(
                builder(form, _lower_limit(max_params, cap)),
                build_graph(form),
                max_len,
                _lower_limit(max_params, cap),
                note,
                users_limit=cap is None or (max_params is not None and max_params <= cap),
            )

        return keep_form(
            form,
            attempt,
            prepared,
            note,
            vocab,
            max_len,
            None if predicted is None or not default else predicted.params,
        )

    def sketch(form: sops.Node, most: int) -> Sketch:
        """The default build's sketch of `form` under `most` parameters (raises its refusal);
        a build of `form` under `most` then starts from its plan."""
        limit = _lower_limit(max_params, most)
        builds = builder(form, limit)
        sketched[:] = [(form, limit, builds)]
        return builds.sketch(BuildOptions())

    # the default form, or the first alternative the certifier proves (compiler.alternatives), of
    # the prepared program or another form of it (compiler.program_forms); the form with
    # differences of means read as votes where none is proved, or where it is predicted smaller
    # and is (compiler.vote_form)
    def built(forms: Forms, sop: sops.Node) -> Kept:
        """The build kept of `forms`, whose default form is `sop`."""
        kept = or_votes(sop, keep, forms, note, sketch)
        formed = kept  # (its form's builds tried smaller ones already: keep_proved)
        sketched.clear()  # (its plans, where not built)
        # last, where none of those snapped the output: its means decoded first (so that no
        # program those prove changes)
        kept = decoded_instead(
            kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note
        )
        # after that, where still not proved: select sides read from means as tables over
        # their inputs' one-hots (compiler.side_build; no model proved before changes)
        kept = sides_instead(kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note)
        # last: sums of numbers held as one-hots read as lines (compiler.known_sums)
        kept = lines_instead(kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note)
        # last: s-ops the value analysis finds of the position alone as maps of indices
        # (compiler.position_folds)
        kept = positions_instead(
            kept,
            lambda: build_graph(sop),
            lambda: builder(sop, max_params),
            max_len,
            max_params,
            note,
        )
        # last: steps over sums judged with their inputs' written error (compiler.written_sums)
        kept = written_instead(kept, lambda: builder(sop, max_params), note)
        # last: stated sums' inputs built for their lines: the copies they read copied as
        # numbers, or the sums that maps read computed first (compiler.sum_inputs)
        kept = sum_inputs_instead(
            kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note
        )
        # last: maps of single-key copies moved before the copy (compiler.moved_build)
        kept = moved_instead(
            kept,
            lambda: build_graph(sop),
            lambda: builder(sop, max_params),
            max_len,
            max_params,
            note,
        )
        # last: the one-hots that copies copy snapped first (compiler.copy_snaps)
        kept = copy_snaps_instead(
            kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note
        )
        # then a one-hot output with the maps of maps fused over their sources, where the
        # output's snap and its one-hot output were refused (compiler.fused_output)
        kept = fused_output_instead(
            kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note
        )
        # last: maps stepped over a mean with a context, the mean decoded first
        # (compiler.decoded_factors)
        kept = factors_instead(
            kept, lambda: build_graph(sop), lambda: builder(sop, max_params), note
        )
        if kept is not formed:  # one of these last builds of the prepared form, where no larger:
            # maps moved before their copies, maps read two ways from one one-hot (not again
            # where keep_proved kept it, the fold's and the moved maps': `Kept.smaller_tried`)
            kept = smaller_instead(builder(sop, max_params), kept, note, [])
        return kept

    try:
        outcome: Kept | CompileError
        try:
            outcome = built(forms, sop)
        except CompileError as err:
            outcome = err
        # last, where nothing above is proved: all of it again over the forms with a mean's bool
        # default that only maps read written as its int (compiler.int_defaults)
        kept = int_defaults_instead(outcome, forms, lambda other: built(other, other()), note)
    except CompileError as err:  # a tracr map's unholdable value may be the reason, said first
        raise _with_value_problems(program, err, vocab, max_len) from None
    model, graph, certificate = kept.model, kept.graph, kept.certificate
    if require_certificate and not certificate.ok:
        unlisted = build_facts.unlisted(model.metadata["output"])
        raise CompileError(
            [
                *refusals(
                    certificate,
                    graph,
                    one_hot=kept.one_hot_note,
                    unlisted=unlisted,
                    reach=model.metadata.get("reach"),
                    largest=build_facts.largest_value(model.metadata["output"]),
                ),
                *also_tried(kept.tried),
                *kept.notes,
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
