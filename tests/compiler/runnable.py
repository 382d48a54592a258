"""Whether the interpreter runs a generated program, for the fuzz generators and their campaign.

A program the interpreter runs on no input (a text it cannot load, `res = 0`, `indicator(True)`,
a select ordering strings against numbers) tests nothing but a refusal: a fifth to a third of
the graph flavours' draws and a quarter of the `texts` flavour's were such. The generators draw
again (`redraw`, from the same random stream) until the interpreter runs the program on some
probe input: a seed whose first draw runs keeps its program, one that did not gets another. What
still runs no input (twenty draws in a row, or a causal rewrite) the campaign counts as an
invalid program, apart from the compiler's refusals.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from rasp import sops as S
from rasp.errors import RaspError, Source
from rasp.interpreter import load_source

T = TypeVar("T")
TRIES = 20


def probe_inputs(vocab: Sequence) -> list[list]:
    """Every input of length 1 and 2 and a few to length 6 (a program reading `indices[3]` runs
    only from length 4): small enough to try on every draw."""
    short = [list(t) for n in (1, 2) for t in itertools.product(vocab, repeat=n)]
    longer = [[vocab[(i * step) % len(vocab)] for i in range(n)] for n, step in ((4, 1), (6, 2))]
    return short + longer


def interpreter_error(root: S.SOp, inputs: list[list]) -> str | None:
    """None where the interpreter runs `root` on one of `inputs`, else its first error's first
    line (why it runs none)."""
    first = "no input to run"
    for tokens in inputs:
        try:
            S.evaluate(root, tokens)
        except RaspError as err:
            first = first if first != "no input to run" else _first_line(err)
            continue
        return None
    return first


def text_error(text: str, vocab: Sequence, search_dirs: Sequence[Path] = ()) -> str | None:
    """None where `text` loads, binds `res` to an s-op and runs on a probe input; else why not."""
    try:
        root = load_source(Source("<generated>", text), search_dirs=list(search_dirs)).get("res")
    except RaspError as err:
        return _first_line(err)
    except RecursionError:  # (a text nested past the parser's depth)
        return "nested too deeply to load"
    if not isinstance(root, S.SOp):
        return "res is not an s-op"
    return interpreter_error(root, probe_inputs(vocab))


def redraw(draw: Callable[[], T], error: Callable[[T], str | None], tries: int = TRIES) -> T:
    """`draw()` until `error` finds nothing wrong with what it drew, at most `tries` times (the
    last draw kept whatever it is): the first draw is what `draw()` always gave."""
    for _ in range(tries - 1):
        drawn = draw()
        if error(drawn) is None:
            return drawn
    return draw()


D = TypeVar("D", bound=tuple)


def redraw_text(
    draw: Callable[[], D], rewrite: Callable[[str], str] | None, search_dirs: Sequence[Path] = ()
) -> D:
    """`redraw` of a text generator's draws, (text, vocabulary, ...): drawn again while the
    interpreter cannot run the text, or its `rewrite` (the text the campaign compiles)."""
    change = rewrite or (lambda text: text)
    return redraw(draw, lambda drawn: text_error(change(drawn[0]), drawn[1], search_dirs))


def _first_line(err: RaspError) -> str:
    lines = str(err).splitlines() or [type(err).__name__]
    return lines[0][:300]
