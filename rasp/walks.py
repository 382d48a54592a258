"""A graph walked children first without recursion: a chain of maps or s-ops built by a loop may be
thousands deep, past Python's recursion limit (rasp.deep_stack raises it for what still recurses).
One walk for the graphs of `rasp.nodes`, `rasp.tracr` and the compiler's IR, and `unwound` for a
recursion that must keep its own order of work (a fold with short cuts and caches)."""

from __future__ import annotations

from collections.abc import Callable, Container, Generator, Hashable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

# a recursive function written as a generator: `(yield steps)` is a call of `steps`, giving its value
Steps = Generator["Steps[Any]", Any, T]


def first_visits(
    root: T,
    inputs: Callable[[T], Iterable[T]],
    key: Callable[[T], Hashable],
    skip: Container[Hashable] = (),
) -> Iterator[T]:
    """`root` and what it reads through `inputs`, each once (by `key`) and after its inputs, in
    the order a depth-first walk of the inputs (left to right) first finishes them. A node whose
    key is in `skip` (read as each node is reached: a caller may add to it meanwhile) is left
    out, with what only it reads."""
    seen: set[Hashable] = set()
    stack: list[tuple[T, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        k = key(node)
        if k in seen or k in skip:
            continue
        seen.add(k)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(inputs(node))))


def unwound(steps: Steps[T]) -> T:
    """The value of a recursion written as generators, run on a list instead of Python's stack:
    each `value = yield sub_steps` in a generator is the recursive call, run to its end before
    the generator resumes, so the work is done in exactly the order the recursion does it (an
    exception raised by a call is raised at its `yield`, as at the call)."""
    stack: list[Steps[Any]] = [steps]
    value: Any = None
    error: BaseException | None = None
    while True:
        top = stack[-1]
        try:
            if error is None:
                call = top.send(value)
            else:
                failed, error = error, None
                call = top.throw(failed)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value  # type: ignore[no-any-return]
            value = done.value
            continue
        except BaseException as exc:  # (passed to the caller's `yield`, or raised from here)
            stack.pop()
            if not stack:
                raise
            error = exc
            continue
        stack.append(call)
        value = None
