"""`rasp.walks.first_visits`, the one iterative walk of rasp's, tracr's and the compiler's graphs:
the order of a recursive depth-first walk (inputs left to right, each node once, after its
inputs), a `skip` read as nodes are reached, and no recursion on a chain far past the limit."""

from __future__ import annotations

import random
import sys

from rasp.walks import first_visits


def _recursive(root: int, inputs: dict[int, list[int]], skip: set[int]) -> list[int]:
    order: list[int] = []
    seen: set[int] = set()

    def visit(n: int) -> None:
        if n in seen or n in skip:
            return
        seen.add(n)
        for c in inputs[n]:
            visit(c)
        order.append(n)

    visit(root)
    return order


def test_the_order_of_a_recursive_walk_on_random_graphs() -> None:
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randrange(1, 25)
        inputs = {
            i: [rng.randrange(i) for _ in range(rng.randrange(4))] if i else [] for i in range(n)
        }
        skip = {i for i in range(n) if rng.random() < 0.1}
        root = n - 1
        got = list(first_visits(root, inputs.__getitem__, int, skip))
        assert got == _recursive(root, inputs, skip)


def test_skip_is_read_as_the_walk_goes() -> None:
    # (rasp.sops.Evaluator skips what it has computed meanwhile)
    inputs = {0: [], 1: [0], 2: [0], 3: [1, 2]}
    known: set[int] = set()
    order = []
    for node in first_visits(3, inputs.__getitem__, int, known):
        order.append(node)
        known.add(node)
    assert order == [0, 1, 2, 3]


def test_a_chain_far_deeper_than_the_recursion_limit() -> None:
    depth = 10 * sys.getrecursionlimit()
    chain = list(first_visits(depth, lambda i: [i - 1] if i else [], int))
    assert chain == list(range(depth + 1))
