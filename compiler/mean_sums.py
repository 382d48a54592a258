"""Why a numerical output that adds two means cannot be snapped, for its refusal's hint
(compiler.refusals).

tracr's `LinearSequenceMap(m0, m1, a, b)` (RASP's `a * m0 + b * m1`) of two means is a*k/w +
b*k'/w' for counts k, k' of widths w, w'. Where both widths are fixed by the position and the
length (`select(indices, indices, <)`, a count over the length), the output decodes on a grid per
(position, length) (compiler.grid), and certifies. Where a select reads the tokens, any widths up
to n meet at length n: the sums of two such fractions lie as close as about 1/n^4 (7.4e-6 apart at
N = 20), closer than the float32 error of reading two means and adding them, and no grid of the
position or length holds them. The compiler's last build then decodes each mean to its values
first and adds exact terms (compiler.decoded_sums: `0.5 * m0 + 2 * m1` certified up to N = 27);
where that is not proved either, the sums lie closer than a few float32 steps. The hint says which
mean's select that is, and where both means average over one selector, the one mean that replaces
them (a*v0 + b*v1 per key: its values k/w over one w are 1/(w w') apart at worst, which float32
resolves: certified at N = 40).
"""

from __future__ import annotations

from compiler.graph import Graph, Op
from compiler.noisy_sides import affine_vote

_SELECTORS = (Op.SELECT, Op.AND, Op.OR, Op.NOT)


def mean_sum_hint(graph: Graph) -> str | None:
    """The hint's reason where the output is an affine map of two means and a select of one
    reads more than positions; None elsewhere."""
    node = graph.output
    if node.op is not Op.MAP or len(node.inputs) != 2:
        return None
    means = [graph[i] for i in node.inputs]
    if not all(m.op is Op.AGGREGATE for m in means):
        return None
    vote = affine_vote(graph, node.index)
    if vote is not None:
        return (
            f"'{vote[0]}' adds two means over one selector, each read with its own float32 "
            f"error: one mean over that selector of {vote[1]} per key reads the same values as "
            "one number, with one rounding (write it so)"
        )
    decided = [m for m in means if _reads_more_than_positions(graph, m.inputs[0])]
    if not decided:
        return None
    names = " and ".join(f"'{_label(graph, m.index)}'" for m in decided)
    whose = f"the selects of {names} read" if len(decided) > 1 else f"the select of {names} reads"
    return (
        f"it adds two means, and {whose} more than the positions: at length "
        "n their widths may be any up to n, so the sums of two fractions lie as close as about "
        "1/n^4, and no grid per position and length holds them (two means over selects of "
        "positions alone are decoded on such a grid)"
    )


def _reads_more_than_positions(graph: Graph, selector: int) -> bool:
    """Whether the selector's keys or queries read an s-op other than the position, the length
    and constants (through maps): its width then depends on the input's tokens."""
    stack = [selector]
    seen: set[int] = set()
    while stack:
        index = stack.pop()
        if index in seen:
            continue
        seen.add(index)
        node = graph[index]
        if node.op in _SELECTORS or node.op is Op.MAP:
            stack.extend(node.inputs)
        elif node.op not in (Op.INDICES, Op.LENGTH, Op.CONST):
            return True
    return False


def _label(graph: Graph, index: int) -> str:
    node = graph[index]
    return node.name if node.named else node.text
