"""What the limit tests share: a program's s-op by name, a model that agrees with the
interpreter on every input, and the median of two copied prefix means (HALVES)."""

from __future__ import annotations

import itertools

import transformer
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import evaluate
from rasp.tools.verify import same_value

# the median of a prefix mean's two middle copies: a + b's table is too large in the default
# build, and copied as numbers a + b is a free view (`s` is a mean of the tokens at most the
# query's position, up to 282 values at N = 9; a sort's copies, even without a tie-break,
# compile: equal ranks hold equal tokens)
HALVES = """
s = aggregate(select(tokens_int, indices, <=), tokens_int);
lo = round((length - 1) / 2 - 0.25);
hi = round(length / 2 - 0.25);
a = aggregate(select(indices, lo, ==), s);
b = aggregate(select(indices, hi, ==), s);
median = (a + b) / 2;
"""


def program(text: str, name: str):
    return load_source(Source("<test>", text)).get(name)


def agrees_everywhere(sop, model, vocab, max_len: int) -> None:
    runtime = transformer.from_tensors(model.weights, model.metadata)
    for n in range(1, max_len + 1):
        for tokens in itertools.product(vocab, repeat=n):
            want = list(evaluate(sop, list(tokens)).values)
            got = runtime.run([list(tokens)])[0]
            assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got)
