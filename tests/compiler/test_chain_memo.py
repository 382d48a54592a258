"""A chain's maps are memoised by the values of the sources each reads (`compiler.chain_walk`): an
inner map is called once per distinct combination of its own sources, and a chain called on many
combinations gives the tree walk's values and failures, with 1, 1.0 and True, 0.0 and -0.0, NaN
and strings among the sources (values a map can tell apart, kept apart by the memo)."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from test_chain_walk import _context, _node, tree_value

from compiler.graph import Op


def test_an_inner_map_is_called_once_per_value_of_what_it_reads() -> None:
    calls = {"inner": 0, "outer": 0}

    def inner(x: Any) -> Any:
        calls["inner"] += 1
        return x * 3

    def outer(y: Any, z: Any) -> Any:
        calls["outer"] += 1
        return y + z

    # node 2 reads source 0 alone; node 3 reads node 2 and source 1
    nodes = [_node(Op.TOKENS), _node(Op.INDICES), _node(Op.MAP, (0,), inner)]
    nodes.append(_node(Op.MAP, (2, 1), outer))
    chain = _context(nodes).chain_function(3, [0, 1])
    combos = list(itertools.product(range(4), range(10)))
    assert [chain(list(c)) for c in combos] == [(True, 3 * a + b) for a, b in combos]
    assert calls == {"inner": 4, "outer": 40}


def _tell(x: Any) -> Any:
    """A map that tells apart what a memo must not merge: type, the sign of zero, NaN."""
    if isinstance(x, float) and x == 0.0:
        return f"float {math.copysign(1.0, x)}"
    if isinstance(x, float) and x != x:
        return "nan"
    return f"{type(x).__name__} {x!r}"


def test_memoised_chains_give_the_tree_walks_values_for_values_a_map_tells_apart() -> None:
    rng = random.Random(11)
    atoms = [1, 1.0, True, 0, 0.0, -0.0, False, float("nan"), "1", 2, 2.5, None, (1, 2)]
    fns = [
        lambda x: _tell(x),
        lambda x, y: _tell(x) + "|" + _tell(y),
        lambda x: 1 / x,  # fails at 0, -0.0 -> -inf
        lambda x, y: (x, y)[0] if isinstance(x, int) else y,
        lambda x: len(x),  # fails on numbers
    ]
    for trial in range(30):
        nodes = [_node(Op.TOKENS), _node(Op.INDICES), _node(Op.CONST, value=2)]
        for index in range(3, 12):
            fn = rng.choice(fns)
            arity = fn.__code__.co_argcount
            nodes.append(_node(Op.MAP, tuple(rng.randrange(index) for _ in range(arity)), fn))
        ctx = _context(nodes)
        sources = [0, 1]
        for index in (11, 7, 5):
            chain = ctx.chain_function(index, sources)
            combos = [[rng.choice(atoms), rng.choice(atoms)] for _ in range(60)]
            for combo in combos + combos:  # the second time from the memo
                env = dict(zip(sources, combo, strict=True))
                want = tree_value(nodes, index, env)
                for got in (chain(combo), ctx.chain_value(index, env)):
                    assert got[0] == want[0], (trial, index, combo)
                    assert repr(got[1]) == repr(want[1]) and type(got[1]) is type(want[1])
