"""A sort that copies (compiler.ranks.copy_numbers) carries its numbers through the copy as string
tokens: those tokens must be no string the sorted values hold, else a program's own string comes
back as a number."""

from __future__ import annotations

import itertools

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.tracr import lib


def test_a_sorted_string_like_a_number_token_stays_a_string() -> None:
    """Found by review: the number 5 travelled as the token "\\x010", which the value "\\x010"
    already was, and the map back turned that string into 5 (certified, wrong on 270 of 330
    inputs)."""
    for mark in ("\x010", "\x01\x010", "\x011"):
        vals = rasp.Map(lambda t, s=mark: 5 if t == 1 else s, rasp.tokens)
        keys = rasp.SequenceMap(lambda t, i: t * 10 + i, rasp.tokens, rasp.indices)
        program = lib.make_sort_unique(vals, keys)
        assert program([2, 1]) == [5, mark]
        model = compile_sop(program, [1, 2], 4)
        inputs = [list(t) for n in range(1, 5) for t in itertools.product([1, 2], repeat=n)]
        for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
            assert got == program(xs), (mark, xs)
