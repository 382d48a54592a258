"""What `compiler.alternatives.keep_proved` reads off a build (its graph, residual labels, model and
certificate) to decide which other builds are worth trying: maps of maps and the ones the certifier
refused, copies of many numbers as their one-hot, maps of the index, a failed snap, a one-hot output
too large for the limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from compiler.build_trials import Kept
from compiler.certify import Certificate
from compiler.graph import Graph, Op
from compiler.grid import GRID_KEYS, MAX_OUTPUT_VALUES
from compiler.model import CompiledModel
from compiler.plan_context import NUMERIC_COPY_MIN_VALUES
from rasp import sops
from rasp.errors import CompileError


def fusing_keeps(refusal: CompileError, program: Graph) -> bool:
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


def refused_steps_over_maps(kept: Kept) -> frozenset[str]:
    """The maps of other maps whose MLP the certifier refused (`fa * fb > 0.2` stepped over the
    product: the steps' steepness multiplies the product's error)."""
    of_maps = maps_of_maps(kept.graph)
    return frozenset(
        block
        for check in kept.certificate.failures()
        if check.sublayer.endswith("mlp")
        for block in check.block.split(", ")
        if block in of_maps
    )


def untouched_failure(kept: Kept, touched: frozenset[str]) -> bool:
    """Whether some decision the certifier refused in `kept` is computed from none of the nodes
    named in `touched` (those whose blocks another build's options may change): that decision's
    weights and the errors of what it reads are the same in that build, which then fails it too
    and is not proved. (Only decisions checked at all, at blocks of the graph, count.)"""
    graph = kept.graph
    by_name = {node.name: node.index for node in graph.nodes}
    hit = {by_name[name] for name in touched if name in by_name}
    for check in kept.certificate.failures():
        names = check.block.split(", ")
        if not math.isfinite(check.margin) or any(name not in by_name for name in names):
            continue
        if not _upstream(graph, (by_name[name] for name in names)) & hit:
            return True
    return False


def width_nodes(graph: Graph) -> frozenset[str]:
    """The widths (`length`, `selector_width`): what `fractions` off changes is the steps over
    them (each decoded first)."""
    widths = (Op.LENGTH, Op.SELECTOR_WIDTH)
    return frozenset(node.name for node in graph.nodes if node.op in widths)


def matched_nodes(kept: Kept) -> frozenset[str]:
    """What `matching` off may change in `kept`: each matched head's s-ops (a head reading a
    number's square, `NAME^2`), their selectors and everything the selectors read but the token
    and index embeddings (written alike by every build)."""
    meta, graph = kept.model.metadata, kept.graph
    squares = {i for i, label in enumerate(meta["residual"]) if label.endswith("^2")}
    readings = meta["reach"]["readings"]

    def squared(ids: list[int]) -> bool:
        return any(d in squares for r in ids for terms in readings[r]["terms"] for d, _ in terms)

    names = {
        name
        for head in meta["reach"]["heads"]
        if squared(head["query"]) or squared(head["key"])
        for name in head["name"].split(", ")
    }
    found = {node.index for node in graph.nodes if node.name in names}
    selectors = [graph[i].inputs[0] for i in found if graph[i].inputs]
    embedded = (Op.TOKENS, Op.INDICES)
    found |= {i for i in _upstream(graph, selectors) if graph[i].op not in embedded}
    return frozenset(graph[i].name for i in found)


def _upstream(graph: Graph, indices: Iterable[int]) -> set[int]:
    """The nodes at `indices` and every node they are computed from."""
    found: set[int] = set()
    todo = list(indices)
    while todo:
        index = todo.pop()
        if index not in found:
            found.add(index)
            todo.extend(graph[index].inputs)
    return found


def index_maps(graph: Graph) -> bool:
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


def interpolations_read_by_maps(kept: Kept) -> bool:
    """Whether a map of the kept build is an interpolation (a continuous MLP part) that another
    map reads: a form the default build reaches where steps would be refused, whose alternative
    (the reading map fused over the sources) the driver otherwise tries only when not proved."""
    continuous = {m["name"] for m in kept.model.metadata["reach"]["mlps"] if m.get("continuous")}
    read = {kept.graph[i].name for i in kept.graph.read_by_maps()}
    return bool(continuous & read)


def lines_in_chains(kept: Kept) -> bool:
    """Whether the kept build has an interpolation (a continuous MLP part) and a map of a map:
    a line over another map's number may compound its error (`chained_lines`)."""
    mlps = kept.model.metadata["reach"]["mlps"]
    return any(m.get("continuous") for m in mlps) and bool(maps_of_maps(kept.graph))


def maps_of_maps(graph: Graph) -> frozenset[str]:
    """The maps that read another map: with `fused_maps`, each is computed from the sources of
    its input maps, through any chain of them."""
    return frozenset(
        node.name
        for node in graph.nodes
        if node.op is Op.MAP and any(graph[i].op is Op.MAP for i in node.inputs)
    )


def aggregated_maps_of_maps(graph: Graph) -> frozenset[str]:
    """The maps of maps whose value an aggregate reads, directly or through other maps: a mean
    carries their error to every position, where a step over it multiplies it (dyck2's `(b1 < 0)
    or (b2 < 0)`, whose mean a step weighs by 1,500 at N = 256)."""
    of_maps = maps_of_maps(graph)
    found: set[int] = set()
    todo = [node.inputs[1] for node in graph.nodes if node.op is Op.AGGREGATE]
    while todo:
        index = todo.pop()
        node = graph[index]
        if node.op is not Op.MAP or index in found:
            continue
        found.add(index)
        todo.extend(node.inputs)
    return frozenset(graph[i].name for i in found if graph[i].name in of_maps)


def copies_many(residual: Sequence[str], graph: Graph, single_key: frozenset[str]) -> bool:
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


def one_hot_too_large(model: CompiledModel, max_params: int | None) -> str | None:
    """Why a one-hot output for `model`'s listed output values cannot fit `max_params` (None: it
    may): its unembedding alone is n x n, a column per value read from n residual dims."""
    output = model.metadata["output"]
    listed = output.get("values")
    if listed is None and max_params is not None and unlisted(output):
        # more values than an output lists (grid.MAX_OUTPUT_VALUES): planning the one-hot
        # output only to find it too large took 9 s of a refusal's 60 (`v0 * indices`, N = 32)
        least = (MAX_OUTPUT_VALUES + 1) ** 2
        if least > max_params:
            return (
                f"a one-hot output was not built: its values are more than {MAX_OUTPUT_VALUES:,}, "
                f"at least {least:,} parameters, over the limit of {max_params:,}"
            )
    if listed is None or max_params is None or len(listed) ** 2 <= max_params:
        return None
    return (
        f"a one-hot output of its {len(listed):,} values was not built: it needs at least "
        f"{len(listed) ** 2:,} parameters, over the limit of {max_params:,}"
    )


def unlisted(output: dict) -> bool:
    """Whether a model's output metadata is a number with neither a list of values nor a grid:
    it takes more values than an output lists."""
    return output.get("type") == sops.SeqType.FLOATS.value and not any(
        key in output for key in ("values", *GRID_KEYS.values())
    )


def largest_value(output: dict) -> float | None:
    """The largest magnitude among a model's listed output values where they are numbers (bools
    aside), else None (strings, or a grid or float with no list)."""
    numbers = [
        abs(float(v))
        for v in output.get("values", ())
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    return max(numbers) if numbers else None


def snap_failed(certificate: Certificate) -> bool:
    """Whether a numerical output's snap is among the decisions the certifier could not prove."""
    return any(c.sublayer == "decoder" and c.kind == "snap" for c in certificate.failures())
