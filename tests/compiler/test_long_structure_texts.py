"""An s-op built in Python has no source text: the text a message quotes for it is rebuilt from its
inputs, and is cut as a source text is (compiler.graph.TEXT_WIDTH). The compiler fuzz's random
seed 30 (test_random_programs) was refused quoting 130 characters of it on one line."""

from __future__ import annotations

import random
import re

import pytest

from compiler import compile_sop
from compiler.graph import TEXT_WIDTH, build_graph
from rasp import sops as S
from rasp.errors import CompileError


def test_the_random_seed_30_refusal_quotes_a_cut_text() -> None:
    from random_programs import random_program

    rng = random.Random(30)
    int_tokens = rng.random() < 0.5
    root = random_program(rng, rng.randint(1, 4), int_tokens)
    with pytest.raises(CompileError) as caught:
        compile_sop(root, [0, 1, 2] if int_tokens else list("abc"), 4)
    message = caught.value.diagnostics[0].message
    quoted = re.match(r"'(.*)' fails on every input", message)
    assert quoted is not None, message
    assert len(quoted.group(1)) <= TEXT_WIDTH and " ... " in quoted.group(1), message
    assert quoted.group(1).startswith("minus(aggregate(not select(tokens, tokens, ==)"), message


def test_a_short_rebuilt_text_is_whole() -> None:
    tokens = S.TokensSOp()
    sel = S.Select(keys=tokens, queries=tokens, comparison=S.Comparison.EQ)
    mean = S.AggregateSOp(selector=sel, sop=S.IndicesSOp(), default=0)
    graph = build_graph(mean)
    assert graph.output.text == "aggregate(select(tokens, tokens, ==), indices)"
