"""What a certificate's refusal says beside the failed decision's numbers: which of the program's
expressions a block computes where the compiler rewrote it, what a generated label (`_map_1`)
computes, and, for a step of one number, the two values it had to tell apart.

A select one side of which is the same at every position is compiled through a bool of the other
side (compiler.constant_sides): `select(m, 0, >)` becomes the map `m > 0`, labelled `_map_1`. A
refusal of that map named only `'m > (0)' (layer 0 mlp, _map_1)`, which the program never wrote;
it now quotes the select, and says what `_map_1` is. Where the failed relu decides between two
values of one number that lie closer than its float32 error lets it resolve (means of 0, 1e-7
and 1 at N = 4 are 2.5e-8 apart), it says so, as the step planner's own refusal does
(compiler.numeric.check_resolvable): "values 2.5e-08 apart cannot be told apart exactly in
float32"."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from compiler.certificate import Check
from compiler.constant_sides import Compared, ComparedWith
from compiler.graph import Graph, IRNode, Op
from rasp.named_text import is_generated

# the step planner's hint for values closer than float32 resolves (compiler.numeric)
CLOSE_VALUES_HINT = (
    "use a smaller maximum length or numbers of smaller magnitude (float32 keeps about 7 "
    "significant digits), or compute it from s-ops with fewer values (e.g. compare counts "
    "instead of fractions; in a tracr program, rasp.categorical ones) (docs/compiler.md, 'The "
    "certificate')"
)
# Two values are "closer than float32 resolves" where their gap is at most this fraction of the
# largest value the step reads: float32 keeps 2^-24 of it, and the errors of the sums and means
# before the step are many such roundings. A wider gap that fails has another cause (a count's
# noisy 1/(w+1): refusals' own hint), which the message leaves to its hint.
CLOSE_FRACTION = 1e-4
# a relu's place with one number in its state: `unit 0 at (m=0)`
_ONE_NUMBER = re.compile(r"unit \d+ at \((?P<name>[^\s=(),]+)=(?P<value>[^\s,()]+)\)")


def through_select(node: IRNode) -> str | None:
    """The program's select that `node`, a bool constant_sides made for it, is computed for
    (`select(m, 0, >)`), None for any other node."""
    if node.op is not Op.MAP or not isinstance(node.fn, Compared | ComparedWith):
        return None
    return None if node.span is None else node.span.shown_text()


def graph_texts(graph: Graph) -> Callable[[str], str | None]:
    """What each generated label of `graph` no program variable names computes, for
    rasp.named_text.MessageNames: its text (`indices < tokens_int`), and for a bool that
    constant_sides made, that it is the select's (`m > 0 at each position, which select(m, 0, >)
    is computed through: one of its sides holds one value at every position`)."""
    by_name = {node.name: node for node in graph.nodes if not node.named}

    def text(label: str) -> str | None:
        node = by_name.get(label)
        if node is None or not is_generated(label):
            return None
        select = through_select(node)
        if select is None:
            return node.text
        return (
            f"{node.text} at each position, which {select} is computed through: one of its "
            "sides holds one value at every position"
        )

    return text


def close_values(check: Check, reach: Mapping[str, Any] | None) -> str | None:
    """`values 2.5e-08 apart cannot be told apart exactly in float32 (it must tell m = 0 from
    m = 2.5e-08)` where `check` is a failed relu of an MLP of one number whose reachable point
    named in its place has a neighbour the MLP maps to another output, closer than float32
    resolves among the values it reads (CLOSE_FRACTION); else None."""
    if check.kind != "relu" or reach is None:
        return None
    match = _ONE_NUMBER.fullmatch(check.where)
    if match is None:
        return None
    try:
        value = float(match.group("value"))
    except ValueError:
        return None
    entry = next((e for e in reach.get("mlps", ()) if e.get("name") == check.block), None)
    if entry is None or len(entry.get("points", ())) != 1:
        return None
    pairs = _numbers(entry["points"][0], entry.get("outputs", ()))
    if pairs is None or not math.isfinite(value):
        return None
    pairs.sort(key=lambda pair: pair[0])
    at = min(range(len(pairs)), key=lambda i: abs(pairs[i][0] - value))
    neighbours = [
        pairs[j] for j in (at - 1, at + 1) if 0 <= j < len(pairs) and pairs[j][1] != pairs[at][1]
    ]
    if not neighbours:
        return None
    here = pairs[at][0]
    other = min((n[0] for n in neighbours), key=lambda x: abs(x - here))
    gap = abs(other - here)
    if gap <= 0 or gap > CLOSE_FRACTION * max(abs(p[0]) for p in pairs):
        return None
    name = match.group("name")
    return (
        f"values {gap:.3g} apart cannot be told apart exactly in float32 (it must tell "
        f"{name} = {here:.8g} from {name} = {other:.8g})"
    )


def _numbers(points: Any, outputs: Any) -> list[tuple[float, Any]] | None:
    """(point, output) pairs of an MLP of one number, None where they are not that."""
    if not isinstance(points, list) or not isinstance(outputs, list):
        return None
    if len(points) != len(outputs) or len(points) < 2:
        return None
    pairs = []
    for point, output in zip(points, outputs, strict=True):
        if isinstance(point, bool) or not isinstance(point, int | float):
            return None
        if not math.isfinite(point):
            return None
        pairs.append((float(point), repr(output)))
    return pairs
