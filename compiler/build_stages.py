"""One build's stages after the program is prepared: `plan_build` (values, encodings, schedule,
layout: the build's shape, `Planned.sketch`, before any weight) and `assemble_build` (the weights).

The driver (`compiler.driver`) runs them for every build it tries, and the size prediction
(`compiler.size_check`) plans its probes with `plan_build` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from compiler.assemble import assemble, sketch_model
from compiler.blocks import Atom, Plan
from compiler.build_trials import BuildOptions
from compiler.causal import check_causal
from compiler.constants import fold_constants
from compiler.encode import plan_encodings
from compiler.graph import Graph, build_graph
from compiler.layout import Layout, lay_out
from compiler.model import CompiledModel, Sketch
from compiler.moved_maps import move_maps
from compiler.plan_limit import check_output
from compiler.position_folds import fold_positions
from compiler.schedule import Schedule, schedule_blocks
from compiler.values import ValueSets, infer_values
from rasp import sops
from rasp.errors import CompileError, Source
from rasp.tracr.lower import is_lowered


@dataclass(frozen=True)
class Planned:
    """A build planned and laid out, before any weight: its shape is known (`sketch`), and
    `assemble_build` turns it into the model."""

    graph: Graph
    plan: Plan
    schedule: Schedule
    layout: Layout
    sketch: Sketch


def plan_build(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    *,
    causal: bool,
    note: Callable[[str], None],
    options: BuildOptions,
    head_masks: bool,
    analyse: Callable[[Graph], ValueSets] | None = None,
    keep_tokens: bool = True,
    options_read: set[str] | None = None,
    tracr: bool = False,
    move: Callable[[Graph, ValueSets, frozenset[str]], tuple[Graph, ValueSets]] | None = None,
) -> Planned:
    """The stages before assembly: values, encodings, schedule and layout. `analyse` gives the
    value analysis of the graph (None: `infer_values`); `keep_tokens`: lay out the token one-hot
    even where no block reads it (vocab_bound.reads_tokens of the program as written: the size
    bounds count it where the program mentions the tokens, so the layout keeps it there);
    `options_read`: as `plan_encodings`' (the options are read nowhere else); `tracr`: the program
    as given was tracr's (its refusals' hints in tracr's API), which a form rewritten from it may
    no longer show (`is_lowered`). `move`: the graph with `options.moved_maps` moved and its
    value analysis (None: `moved_graph`, analysed afresh)."""
    tracr = tracr or is_lowered(sop)
    note("analyse values")
    graph = build_graph(sop)  # IR: typed nodes, deterministic names
    if analyse is None:
        values = infer_values(graph, vocab, max_len)  # what each node can be
    else:
        values = analyse(graph)
    if options.moved_maps:  # maps of single-key copies before the copy (compiler.moved_maps)
        if move is None:
            graph, values = moved_graph(graph, values, options.moved_maps, vocab, max_len)
        else:
            graph, values = move(graph, values, options.moved_maps)
    # the output's unembedding alone may put a build under a limit over it (compiler.plan_limit)
    check_output(graph.output, values.of(graph.output))
    folded = fold_constants(graph, values)  # s-ops of one value: constants; widths of all: length
    if causal:
        check_causal(graph, folded, values, tracr=tracr)  # (hints in tracr's API)
    graph = folded
    if options.positions:  # (after the causal check: the program as written is checked)
        graph = fold_positions(graph, values)  # s-ops of the position alone: maps of indices
    note("plan encodings")
    # readings + weight blocks in Dim coordinates
    plan = plan_encodings(
        graph,
        values,
        vocab,
        options,
        causal=causal,
        head_masks=head_masks,
        options_read=options_read,
        tracr=tracr,
    )
    note("schedule")
    schedule = schedule_blocks(plan.heads, plan.mlps)  # blocks -> layers
    # the program's s-ops among them are laid out whole (the tools read them back by name); the
    # classes a select side or a map reads are helpers, laid out where read
    names = {node.name for node in graph.nodes}
    embedded = [dims for name, (_, dims) in plan.embedded.items() if name in names]
    layout = lay_out(schedule, plan.output, vocab, max_len, plan.positional, embedded, keep_tokens)
    sketch = sketch_model(schedule, layout, plan, vocab, max_len, causal)
    texts = tuple((node.name, node.text) for node in graph.nodes if not node.named)
    return Planned(graph, plan, schedule, layout, replace(sketch, texts=texts))


def moved_graph(
    graph: Graph, values: ValueSets, names: frozenset[str], vocab: tuple[Atom, ...], max_len: int
) -> tuple[Graph, ValueSets]:
    """`graph` with the maps `names` moved before their copies (`compiler.moved_maps`) and its
    value analysis: `values` where none moves, else the moved graph's own."""
    moved = move_maps(graph, values, names)
    return (graph, values) if moved is graph else (moved, infer_values(moved, vocab, max_len))


def assemble_build(
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
        located = [d if d.span else replace(d, span=span) for d in err.diagnostics]
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
