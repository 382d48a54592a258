"""Maps computed by step MLPs over one numerical reading (`step_mlp.numeric_mlp`).

- `map_steps`: a map of one numerical source, with at most one categorical context (thresholds per
  context value); exactly affine in the source, it is a free numerical view instead.
- `coarse_steps`: a map of two numerical sources where one matters only through a few classes of its
  values (`indicator(width > 0) * length`): a step MLP sorts that one into classes, and the map is a
  step MLP over the other with the class as context.

`rows` are the map's reachable points, (support values, value), from `maps.MapPlanner`.
"""

from __future__ import annotations

from typing import Any

from compiler import step_mlp
from compiler.blocks import (
    ONE,
    Atom,
    Encoded,
    Encoding,
    is_number,
    sort_values,
    value_key,
)
from compiler.fits import affine_points, merge_points
from compiler.graph import IRNode
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric, materialise

# A numerical s-op that matters to a map only through this many classes of its values is classified.
MAX_CLASSES = 8

Rows = list[tuple[tuple[Atom, ...], Atom]]


def map_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    x_src: int,
    rows: Rows,
    encoding: Encoding,
) -> Encoded:
    """A map of one numerical source (and at most one categorical context): one step MLP."""
    x = reader.number(x_src)
    xi = support.index(x_src)
    if len(support) == 1:
        points = [(reader.x_of(x_src, c[0]), v) for c, v in rows]
        affine = affine_points(points) if encoding is Encoding.NUMERICAL else None
        if affine is not None:  # e.g. 2 * mean: a free numerical view
            a, b = affine
            number = tuple((d, a * c) for d, c in x.number) + ((ONE, b),)
            return Encoded(node.name, Encoding.NUMERICAL, ctx.values(node.index), number=number)
        return decode_numeric(built, node, x, points, encoding, ctx.x_error(x_src))
    ci = 1 - xi
    context = reader.reading(support[ci], Encoding.CATEGORICAL)
    per_context: dict[tuple[str, Any], tuple[Atom, list[tuple[float, Atom]]]] = {}
    for combo, v in rows:
        c = combo[ci]
        per_context.setdefault(value_key(c), (c, []))[1].append((reader.x_of(x_src, combo[xi]), v))
    context_points = [(c, merge_points(node, pts)) for c, pts in per_context.values()]
    out = materialise(built, node, encoding, ctx.values(node.index))
    spec = step_mlp.numeric_mlp(
        x,
        [],
        out,
        op=node.text,
        name=node.name,
        context=context,
        context_points=context_points,
        x_error=ctx.x_error(x_src),
        exact=built.exact,
    )
    built.add_mlp(spec)
    return out


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
    if not all(is_number(v) or isinstance(v, bool) for combo, _ in rows for v in combo):
        return None
    g = ctx.graph
    for k in (0, 1):
        source, other = support[k], support[1 - k]
        tables: dict[tuple, dict[tuple, tuple]] = {}
        members: dict[tuple, Atom] = {}
        for combo, out in rows:
            tables.setdefault(value_key(combo[k]), {})[value_key(combo[1 - k])] = value_key(out)
            members[value_key(combo[k])] = combo[k]
        representative: dict[frozenset, Atom] = {}
        class_of = {
            v: representative.setdefault(frozenset(t.items()), members[v])
            for v, t in tables.items()
        }
        if len(representative) > MAX_CLASSES or len(representative) == len(tables):
            continue
        name = f"{g[source].name}~{node.name}"
        classes = Encoded.materialised_categorical(name, sort_values(representative.values()))
        built.bound_one_hot(classes)
        points = [(reader.x_of(source, members[v]), c) for v, c in class_of.items()]
        built.add_mlp(
            step_mlp.numeric_mlp(
                reader.number(source),
                merge_points(node, points),
                classes,
                op=f"classes of {g[source].text} for {node.text}",
                name=name,
                x_error=ctx.x_error(source),
                exact=built.exact,
            )
        )
        per_class: dict[tuple, tuple[Atom, list[tuple[float, Atom]]]] = {}
        for combo, out in rows:
            c = class_of[value_key(combo[k])]
            x = reader.x_of(other, combo[1 - k])
            per_class.setdefault(value_key(c), (c, []))[1].append((x, out))
        out_enc = materialise(built, node, encoding, ctx.values(node.index))
        built.add_mlp(
            step_mlp.numeric_mlp(
                reader.number(other),
                [],
                out_enc,
                op=node.text,
                name=node.name,
                context=classes,
                context_points=[(c, merge_points(node, p)) for c, p in per_class.values()],
                x_error=ctx.x_error(other),
                exact=built.exact,
            )
        )
        return out_enc
    return None
