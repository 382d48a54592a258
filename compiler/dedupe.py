"""One node for each computation a program writes more than once.

A program that writes `(frac_a - frac_b) * (frac_a - frac_b)`, or calls `frac("a")` twice, builds
the same computation twice (the interpreter keeps both: identity matters there). Compiled as they
stand, the copies cost a head or an MLP each, and the value analysis takes them as independent:
the square above becomes a table over every pair of differences (refused at N = 16) instead of a
step MLP over one. `merge_duplicates` keeps one node for each group of nodes that compute the same
thing from the same inputs, which is equal on every input by construction:

- leaves by kind (`tokens` of one kind, `indices`, `length`, a constant by type and value);
- selects by comparison and inputs, `and` / `or` of the same two selectors (either order), `not`,
  aggregates by selector, s-op, default and mean rule, widths by selector;
- maps by inputs and function: a map made by an operator (`rasp.operators.Lifted`) by its
  operation and constants (1, 1.0 and True differ), any other map only with the same function
  object (a tracr `Map` of one lambda written twice).

The node kept is the program's output where it is one of them, else the first named one (so
`verify` and `show` find the name), else the first.
"""

from __future__ import annotations

from collections.abc import Hashable

from compiler.rewrite import rebuilt
from rasp import sops
from rasp.operators import strict_key


def merge_duplicates(root: sops.Node) -> sops.Node:
    """`root`'s graph with each group of equal computations read through one node (`root`
    itself where there are none)."""
    order = list(sops.walk(root))
    group: dict[int, int] = {}  # node id -> its group
    groups: dict[Hashable, int] = {}
    members: list[list[sops.Node]] = []
    for node in order:
        key = _key(node, group)
        g = len(members) if key is None else groups.setdefault(key, len(members))
        if g == len(members):
            members.append([])
        members[g].append(node)
        group[node.id] = g
    if len(members) == len(order):
        return root
    keep = [_kept(nodes, root) for nodes in members]
    built: dict[int, sops.Node] = {}  # group -> its node over the kept children
    for node in order:
        g = group[node.id]
        if g not in built:
            # the kept node's children are in the groups of this node's children, all built
            rep = keep[g]
            built[g] = rebuilt(rep, {c.id: built[group[c.id]] for c in rep.children()})
    return built[group[root.id]]


def _kept(nodes: list[sops.Node], root: sops.Node) -> sops.Node:
    if any(n is root for n in nodes):
        return root
    return next((n for n in nodes if n.name), nodes[0])


def _key(node: sops.Node, group: dict[int, int]) -> Hashable | None:
    """Equal for nodes that compute the same values on every input; None: no other node does."""
    of = [group[c.id] for c in node.children()]
    match node:
        case sops.TokensSOp(kind=kind):
            key: tuple = ("tokens", kind)
        case sops.IndicesSOp():
            key = ("indices",)
        case sops.LengthSOp():
            key = ("length",)
        case sops.ConstSOp(value=value):
            try:
                key = ("const", strict_key(value))
            except TypeError:
                return None
        case sops.MapSOp(fn=fn):
            structure = getattr(fn, "structure", None)
            how = structure() if callable(structure) else ("function", id(fn))
            if how is None:
                return None
            key = ("map", how, tuple(of))
        case sops.Select(comparison=comparison):
            key = ("select", comparison, *of)
        case sops.PredicateSelect(fn=fn):
            key = ("predicate", id(fn), *of)
        case sops.SelectAnd() | sops.SelectOr():
            key = (type(node).__name__, *sorted(of))  # `a and b` is `b and a`
        case sops.SelectNot():
            key = ("not", *of)
        case sops.AggregateSOp(default=default, bools_as_numbers=tracr_mean):
            try:
                key = ("aggregate", strict_key(default), tracr_mean, *of)
            except TypeError:
                return None
        case sops.SelectorWidthSOp():
            key = ("width", *of)
        case _:
            return None
    try:
        hash(key)
    except TypeError:  # a function's structure we cannot key on: this node stays its own
        return None
    return (node.loose, key)
