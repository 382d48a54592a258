"""A stated sum of two terms, each a chain of maps, with each term computed from its sources
(compiler.known_sums.fused_terms): the compile's last build, tried where nothing else is proved.

`SUM` is a reduction of defs `--causal` fuzz seed 2156627 at N = 10 (vocab "xab"). Each term
compiles alone; the sum was refused: the default reads `round(c * v1 + n / 2)` as an
interpolation over the product `c * v1` (a number its own MLP writes with error 0.089) plus
`n / 2`, whose 253 kinks carry that error on, up to 45 at the output's snap (margin 0.5). Alone,
the term is computed from c, v1 and n themselves (a table over their one-hots, exact); so here,
each term so, and the sum the line of their numbers."""

from __future__ import annotations

import itertools

import pytest

from compiler import compile_sop
from compiler.forms import Forms
from compiler.graph import build_graph
from compiler.known_sums import fused_terms, sum_maps
from compiler.model import CompiledModel
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs

SUM = """prev_token = shift(tokens, 1, "_");
keys = select(indices, indices, <=) and select(indices, 0, >);
n = selector_width(select(prev_token, tokens, ==) and keys and select(indices, indices, <=));
c = selector_width(select(tokens == "a", True, ==) and select(indices, indices, <=));
v1 = aggregate(select(indices, indices, ==) and select(indices, indices, <=), n + round(indices + 1 + n / 2), 0.5);
res = round(c * v1 + n / 2) + max(shift(v1, 2, 1), n);"""
VOCAB = list("xab")
N = 10


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


@pytest.fixture(scope="module")
def model() -> CompiledModel:
    return compile_sop(_root(SUM), VOCAB, N, causal=True)


def test_the_sum_of_two_terms_compiles_each_term_from_its_sources(model: CompiledModel) -> None:
    assert model.metadata["certificate"]["ok"]
    # the product `c * v1` is no number of its own: the term reads c, n and v1's one-hots
    residual = model.metadata["residual"]
    assert "_map_6" not in residual
    assert {"c:0", "n:0", "v1:1"} <= set(residual)
    inputs = all_inputs(VOCAB, 5) + random_inputs(VOCAB, N, 300, 2156627)
    assert check_inputs(model, _root(SUM), inputs) == len(inputs)


@pytest.mark.slow
@pytest.mark.exactness
def test_the_sum_agrees_on_every_input_of_length_10(model: CompiledModel) -> None:
    # causal: every input of length N runs each shorter one as its prefix
    inputs = [list(t) for t in itertools.product(VOCAB, repeat=N)]
    assert check_inputs(model, _root(SUM), inputs, batch=512) == len(inputs)


def test_without_the_terms_build_the_sum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("compiler.known_sums.fused_terms", lambda *args: frozenset())
    # (nor the one-hot output of its maps of maps fused, tried after it, which proves it)
    monkeypatch.setattr("compiler.driver.fused_output_instead", lambda kept, *args: kept)
    with pytest.raises(CompileError, match="snap decision has margin 0.5"):
        compile_sop(_root(SUM), VOCAB, N, causal=True)


def test_the_terms_are_the_outer_sums_chains_of_maps() -> None:
    # res reads `round(c * v1 + n / 2)` (_map_8, over the sum _map_7 of the maps `c * v1` and
    # `n / 2`) and `max(shift(v1, 2, 1), n)` (_max_map_2, over the map `shift(...) > n`); the
    # sum inside v1's values (`n + round(...)`, read by an aggregate) is outer too, but no
    # decision failed there
    graph = build_graph(Forms(_root(SUM), VOCAB, N)())
    sums = sum_maps(graph)
    assert fused_terms(graph, sums, frozenset({"res"})) == {"_map_8", "_map_7", "_max_map_2"}
    # where no failed decision names an outer sum, every outer sum's terms
    every = fused_terms(graph, sums, frozenset())
    assert every == {"_map_8", "_map_7", "_max_map_2", "_map_4", "_map_3"}


def test_a_term_float32_cannot_hold_stays_refused_located() -> None:
    # the first term near 2.5 million: float32 rounds it by more than the snap allows
    text = SUM.replace("round(c * v1 + n / 2)", "round(c * v1 * 100000 + n / 2)")
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(text), VOCAB, 6, causal=True)
    rendered = refused.value.render()
    assert rendered.startswith("<test>:6:7: error: the output 'res' (decoder): a snap decision")
    assert "also tried with sums' terms each computed from their sources" in rendered
