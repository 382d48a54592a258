"""Coarse steps: a map of two numerical sources where one matters only through a few classes of
its values (`indicator(width > 0) * length`): a step MLP sorts that one into classes (the
positional embedding, where it is the index), and the map is a step MLP over the other with the
class as context (compiler.map_steps' step MLPs over one numerical reading)."""

from __future__ import annotations

import itertools

from compiler import positional, step_mlp
from compiler.blocks import Atom, Encoded, Encoding, is_number, sort_values, value_key
from compiler.fits import merge_per_context, merge_points
from compiler.graph import IRNode, Op
from compiler.map_steps import Rows, XView, fraction_then_decoded, view_of
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import materialise
from compiler.row_memo import derived

# A numerical s-op that matters to a map only through this many classes of its values is classified.
MAX_CLASSES = 8


def coarse_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    rows: Rows,
    encoding: Encoding,
) -> Encoded | None:
    """A map of two numerical s-ops where one matters only through a few classes of its values:
    classes by one step MLP, the map by another with them as context. None when neither has few
    classes."""
    # the classes depend on the rows alone: found once per value analysis (compiler.row_memo;
    # `m * indices` at N = 32: 1.6 s in each of three builds, to find none)
    indices_first = tuple(ctx.graph[s].op is Op.INDICES for s in support)
    found = derived(rows, ("coarse classes", indices_first), lambda: _classes(indices_first, rows))
    if found is None:
        return None
    k, representative, class_of, members = found
    source, other = support[k], support[1 - k]

    def build(decoded: bool) -> Encoded:
        views = (view_of(ctx, reader, source, decoded), view_of(ctx, reader, other, decoded))
        classes = list(representative.values())
        return _coarse(
            ctx, built, node, source, k, rows, class_of, members, classes, views, encoding
        )

    return fraction_then_decoded(ctx, reader, support, build)


def _classes(
    indices: tuple[bool, ...], rows: Rows
) -> tuple[int, dict[frozenset, Atom], dict[tuple, Atom], dict[tuple, Atom]] | None:
    """(k, representatives, class of each value, each value) where support position k matters
    only through a few classes of its values (`indices`: which positions are the index), or None."""
    if not all(is_number(v) or isinstance(v, bool) for combo, _ in rows for v in combo):
        return None
    # each value keyed once, not once per pass (322K rows of `m * indices` at N = 32)
    keys = [(value_key(c[0]), value_key(c[1]), value_key(out)) for c, out in rows]
    # the index first: the positional embedding writes its classes, where a number's take an MLP
    for k in sorted((0, 1), key=lambda k: not indices[k]):
        tables: dict[tuple, dict[tuple, tuple]] = {}
        members: dict[tuple, Atom] = {}
        for (combo, _), key in zip(rows, keys, strict=True):
            tables.setdefault(key[k], {})[key[1 - k]] = key[2]
            members[key[k]] = combo[k]
        representative: dict[frozenset, Atom] = {}
        class_of = {
            v: representative.setdefault(frozenset(t.items()), members[v])
            for v, t in tables.items()
        }
        if len(representative) > MAX_CLASSES or len(representative) == len(tables):
            continue
        if _twins_split(members, class_of):
            continue  # a step MLP reads the number: 2 and 2.0 cannot be told apart
        return k, representative, class_of, members
    return None


def _twins_split(members: dict[tuple, Atom], class_of: dict[tuple, Atom]) -> bool:
    """Whether two values that are the same number (the int 2 and the float 2.0, whose rows
    differ in type: 0 % 2 is 0, 0 % 2.0 is 0.0) fall into different classes."""
    seen: dict[float, tuple] = {}
    for key, v in members.items():
        c = value_key(class_of[key])
        if seen.setdefault(float(v), c) != c:
            return True
    return False


def _coarse(
    ctx: PlanContext,
    built: Built,
    node: IRNode,
    source: int,
    k: int,
    rows: Rows,
    class_of: dict[tuple, Atom],
    members: dict[tuple, Atom],
    class_values: list[Atom],
    views: tuple[XView, XView],
    encoding: Encoding,
) -> Encoded:
    """`coarse_steps` with support[k] = `source` sorted into `class_of`'s classes, the map stepped
    on the other; both MLPs are added once both are built."""
    view, other_view = views
    # Planned once per reading of the map (a number and a one-hot): built twice, the class MLP
    # wrote its columns twice, which the certifier cannot read. The same classes are shared;
    # other ones (on the decoded width, or rows merged since) get columns of their own.
    key = (source, node.index, view.x, frozenset((v, value_key(c)) for v, c in class_of.items()))
    shared = built.classes.get(key)
    classes = shared or _new_classes(built, f"{ctx.graph[source].name}~{node.name}", class_values)
    op = f"classes of {ctx.graph[source].text} for {node.text}"
    class_mlp = None
    if shared is not None:
        pass  # built by the other reading's plan
    elif ctx.graph[source].op is Op.INDICES:  # a class of the position: the embedding writes it
        at = [(value_key(i) in class_of, class_of.get(value_key(i))) for i in range(ctx.max_len)]
        classes = positional.embed_one_hot(built, classes, at, op)
    else:
        built.bound_one_hot(classes)
        points = [(view.at(members[v]), c) for v, c in class_of.items()]
        class_mlp = step_mlp.numeric_mlp(
            view.x,
            merge_points(node, points),
            classes,
            op=op,
            name=classes.name,
            x_error=view.error,
            exact=built.exact,
        )
    per_class: dict[tuple, tuple[Atom, list[tuple[float, Atom]]]] = {}
    for combo, out in rows:
        c = class_of[value_key(combo[k])]
        per_class.setdefault(value_key(c), (c, []))[1].append((other_view.at(combo[1 - k]), out))
    out_enc = materialise(built, node, encoding, ctx.values(node.index))
    listed = out_enc.values if out_enc.is_categorical else None
    merged, canon = merge_per_context(node, list(per_class.values()), listed)
    map_mlp = step_mlp.numeric_mlp(
        other_view.x,
        [],
        out_enc,
        op=node.text,
        name=node.name,
        context=classes,
        context_points=merged,
        x_error=other_view.error,
        exact=built.exact,
    )
    if class_mlp is not None:
        built.add_mlp(class_mlp)
    built.classes[key] = classes
    built.add_mlp(map_mlp)
    if canon is not None:  # the values its one-hot uses, for the maps that read it
        built.canon[node.index] = canon
    return out_enc


def _new_classes(built: Built, name: str, class_values: list[Atom]) -> Encoded:
    """A one-hot of `class_values` on columns of its own: `name`, or `name~2`... where other
    classes have it."""
    taken = {c.name for c in built.classes.values()}
    if name in taken:
        name = next(f"{name}~{k}" for k in itertools.count(2) if f"{name}~{k}" not in taken)
    return Encoded.materialised_categorical(name, sort_values(class_values))
