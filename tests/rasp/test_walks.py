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


def test_unwound_runs_a_recursion_in_its_order_far_past_the_limit() -> None:
    from rasp.walks import Steps, unwound

    def recursive(n: int, log: list[int]) -> int:
        log.append(n)
        return 0 if n == 0 else n + recursive(n - 1, log) + (recursive(n - 2, log) if n > 1 else 0)

    def steps(n: int, log: list[int]) -> Steps[int]:
        log.append(n)
        if n == 0:
            return 0
        total = n + (yield steps(n - 1, log))
        return total + ((yield steps(n - 2, log)) if n > 1 else 0)

    old: list[int] = []
    new: list[int] = []
    assert unwound(steps(12, new)) == recursive(12, old)
    assert new == old

    def chain(n: int) -> Steps[int]:
        return 0 if n == 0 else 1 + (yield chain(n - 1))

    assert unwound(chain(10 * sys.getrecursionlimit())) == 10 * sys.getrecursionlimit()


def test_unwound_raises_a_calls_error_at_its_yield() -> None:
    import pytest

    from rasp.walks import Steps, unwound

    def failing(n: int) -> Steps[int]:
        if n == 0:
            raise ValueError("at the bottom")
        return (yield failing(n - 1))

    def caught() -> Steps[str]:
        try:
            yield failing(3)
        except ValueError as exc:
            return f"caught: {exc}"
        return "not raised"

    assert unwound(caught()) == "caught: at the bottom"
    with pytest.raises(ValueError, match="at the bottom"):
        unwound(failing(5))
