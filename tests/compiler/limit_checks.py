"""What the limit tests share: a program's s-op by name, and a model that agrees with the
interpreter on every input."""

from __future__ import annotations

import itertools

import transformer
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import evaluate
from rasp.tools.verify import same_value


def program(text: str, name: str):
    return load_source(Source("<test>", text)).get(name)


def agrees_everywhere(sop, model, vocab, max_len: int) -> None:
    runtime = transformer.from_tensors(model.weights, model.metadata)
    for n in range(1, max_len + 1):
        for tokens in itertools.product(vocab, repeat=n):
            want = list(evaluate(sop, list(tokens)).values)
            got = runtime.run([list(tokens)])[0]
            assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got)
