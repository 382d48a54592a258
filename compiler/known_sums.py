"""The compile's last build: sums and differences of numbers read as lines, where an input is held
as a one-hot (`BuildOptions.known_sums`).

A map whose function states its affine form (`a + b`, `a - 2 * b`: `compiler.known_affine`) over
inputs that are each a numerical source (a mean, a width, the length) is a free numerical view of
their numbers already (`compiler.maps`). Where one input is held as a one-hot instead (a copy of a
few numbers, a count decoded to its values), the planner steps the map over the numerical input
with the one-hot as context, or tables it, and the context's weights multiply the one-hot's error:
`shift(acc, 2, -1) + count(tokens, "1")`, acc a map whose step MLP writes its one-hot with its
rounding, had an output snap margin of 0.125 against 217 at N = 16 (tests/compiler/
test_known_sums.py, reduced from defs fuzz seed 2148200). Each one-hot's number is a free view of
its columns, and a count's number its decoded value, so the map is the line through them: its
error is each input's error times its coefficient, which the certifier bounds as it bounds any
view; a second build snaps those one-hots first (`snap_one_hot`: exact columns, a layer more).

A third build takes a stated sum whose terms are chains of maps, each read as a number: the
default may compute such a term from another map's number (`round(c * v1 + n / 2)` as an
interpolation over `c * v1`, whose error its kinks carry on: 45 at the output's snap of
`round(c * v1 + n / 2) + max(shift(v1, 2, 1), n)` at N = 10, reduced from defs `--causal`
seed 2156627, tests/compiler/test_sum_terms.py); alone, the term is computed from its sources
(`fused_maps`), exact, and so it is here: each term so (`fused_terms`), the sum their line.

Tried after every other build and form (`compiler.driver`), so that no program another build
proves changes; certified as every build is; where it is not proved or is refused while planning,
the refusal is the earlier build's, with this one among what was also tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials, default_builds
from compiler.blocks import ONE, Dim, Encoded, Encoding, all_numbers
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.default_builds import COPIES
from compiler.graph import Graph, IRNode, Op
from compiler.known_affine import states_form
from compiler.map_rows import Fit
from compiler.model import Sketch
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import view_numerical
from compiler.snap_one_hot import snapped, snaps_some

LINES = "with sums of numbers held as one-hots read as lines"
SNAPPED = "with those lines' one-hots snapped first"
TERMS = "with sums' terms each computed from their sources"


def lines_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, or where `graph()` (the prepared default form) has no map that
    states an affine form of two or more s-ops, or where some decision the certifier refused is
    computed from none of them (this build would fail it too); else that form's build with those
    maps read as lines (`known_sums`), or their one-hots snapped, or their terms computed from
    their sources (`fused_terms`), the first proved, or `kept` with why not among its tried."""
    if kept.certificate.ok:
        return kept
    program = graph()
    names = sum_maps(program)
    if not names or build_facts.untouched_failure(kept, names):
        return kept
    residual = kept.model.metadata["residual"]
    build = builds()

    def changed(sketch: Sketch) -> bool:
        # (every such map read as a line by the default already: the model refused before)
        return list(sketch.residual) != residual

    # a term that is a chain of maps (`round(c * v1 + n / 2)`) may be read as a number whose
    # blocks pile error up (an interpolation over the noisy product `c * v1`), where the term
    # alone is proved computed from its sources (`fused_maps`): so each term, the sum a line
    failed = frozenset(b for c in kept.certificate.failures() for b in c.block.split(", "))
    terms = fused_terms(program, names, failed)
    trials: list[tuple[str, BuildOptions, str, Callable[[Sketch], bool]]] = [
        ("sums of numbers read as lines", BuildOptions(known_sums=names), LINES, changed),
        # a line passes on its one-hots' error; snapped, none (where some one-hot is snapped)
        (
            "sums of numbers read as lines, their one-hots snapped",
            BuildOptions(known_sums=names, snapped_sums=True),
            SNAPPED,
            lambda sketch: snaps_some(sketch.residual),
        ),
    ]
    if terms:
        trials.append(
            (
                "sums' terms each computed from their sources",
                BuildOptions(fused_maps=terms, known_sums=names),
                TERMS,
                changed,
            )
        )
    tried: list[tuple[str, str]] = []
    for what, options, label, worth in trials:
        note(f"build with {what}")
        found = build_trials.proved(build, options, label, note, tried, worth=worth)
        if found is not None:
            return _smaller_copies(build, found, note) if label == TERMS else found
    return replace(kept, tried=(*kept.tried, *tried))


def _smaller_copies(build: Builds, found: Kept, note: Callable[[str], None]) -> Kept:
    """`found` (proved), or a smaller proved build of its options with its copies of many
    numbers as numbers (`default_builds.copy_variants`), as the default's proved builds are
    tried: the reduction of defs 2156627, 827,165 parameters in 5 layers, takes 484,684 in 4."""
    if not build_facts.copies_many(
        found.model.metadata["residual"], found.graph, build.single_key()
    ):
        return found
    for options in default_builds.copy_variants(found.options, build.mixed_copies()):
        found = build_trials.instead(build, found, options, COPIES, note, [], smaller=True)
    return found


def sum_maps(program: Graph) -> frozenset[str]:
    """The maps of `program` whose function states an affine form of two or more distinct s-ops
    (constants aside)."""
    return frozenset(node.name for node in program.nodes if _states_sum(program, node))


def fused_terms(program: Graph, sums: frozenset[str], failed: frozenset[str]) -> frozenset[str]:
    """The maps of maps that the outer maps named in `sums` (those no map reads) read, those of
    the outer sums named in `failed` where some are (a decision refused at the sum itself: its
    output snap, its MLP): their terms computed through a chain of maps, with every map of maps
    in those chains (down to the first s-op that is no map). With `fused_maps` each is computed
    from its sources, as it would be alone; never an outer sum itself, which fused would be one
    block over every term's sources."""
    of_maps = {n.index for n in program.nodes if n.op is Op.MAP and _reads_map(program, n)}
    read = program.read_by_maps()
    outer = [n for n in program.nodes if n.name in sums and n.index not in read]
    outer = [n for n in outer if n.name in failed] or outer
    todo = [i for n in outer for i in n.inputs if i in of_maps]
    found: set[int] = set()
    while todo:
        index = todo.pop()
        if index not in found:
            found.add(index)
            todo.extend(i for i in program[index].inputs if i in of_maps)
    return frozenset(program[i].name for i in found)


def _reads_map(program: Graph, node: IRNode) -> bool:
    return any(program[i].op is Op.MAP for i in node.inputs)


def _states_sum(program: Graph, node: IRNode) -> bool:
    if node.op is not Op.MAP:
        return False
    read = {i for i in node.inputs if program[i].op is not Op.CONST}
    return len(read) > 1 and states_form(node.fn, len(node.inputs))


def known_line(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    direct: tuple[int, ...],
    fit_of: Callable[[IRNode, tuple[int, ...]], Fit | None],
) -> Encoded | None:
    """Map `node` of the s-ops `direct` as the line `fit_of` gives it (over their numbers), where
    `known_sums` names it, every input is a number and some is no numerical source (else the
    planner's own affine view reads it): a numerical source's number (a width decoded), or a
    one-hot's columns times their values (with `snapped_sums`, each one-hot of a few values not
    known exact written again exactly first, `snap_one_hot`: a copy of a map's one-hot carries
    that map's step rounding, which the line passes on). None where it is not asked for, or the
    map has no exact affine form."""
    if node.name not in ctx.options.known_sums or len(direct) < 2:
        return None
    if not all(all_numbers(ctx.values(i)) for i in direct):
        return None
    graph = ctx.graph
    if all(ctx.is_numeric_source(i) or graph[i].op is Op.INDICES for i in direct):
        return None
    fit = fit_of(node, direct)
    if fit is None:
        return None
    coef, misfit = fit
    terms: dict[Dim, float] = {}
    for a, s in zip(coef[:-1], direct, strict=True):
        if ctx.is_numeric_source(s):
            source = reader.reading(s, Encoding.NUMERICAL)
        else:
            one_hot = reader.reading(s, Encoding.CATEGORICAL)
            if ctx.options.snapped_sums:
                one_hot = snapped(built, one_hot)
            source = view_numerical(graph[s], one_hot, ctx.values(s))
        for d, c in source.number:
            terms[d] = terms.get(d, 0.0) + float(a) * c
        misfit += abs(float(a)) * source.misfit
    terms[ONE] = terms.get(ONE, 0.0) + float(coef[-1])
    number = tuple((d, c) for d, c in terms.items() if c != 0.0)
    values = ctx.values(node.index)
    return Encoded(node.name, Encoding.NUMERICAL, values, number=number, misfit=misfit)
