"""The BOS trick's mean compiled as a width (compiler.bos_widths)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from test_compile import check_inputs, exact_outcome

from compiler import compile_sop
from compiler.bos_widths import bos_widths
from rasp.errors import RaspError, Source
from rasp.interpreter import load_file, load_source
from rasp.sops import AggregateSOp, MapSOp, SelectorWidthSOp, walk

PROGRAMS = Path(__file__).resolve().parents[2] / "programs"
BOS_VOCAB = ["§", "a", "b", "c"]


def _sop(text: str, name: str = "x"):
    return load_source(Source("<test>", text)).get(name)


@pytest.mark.parametrize(
    "text",
    [
        # the paper's form, and with a compound sel (what the rewrite is for)
        "x = round(1 / aggregate(select(tokens, tokens, ==) or select(indices, 0, ==), "
        "indicator(indices == 0))) - 1;",
        "s = select(tokens, tokens, ==) and select(indices, indices, <);\n"
        "x = aggregate(s or select(indices, 0, ==), indicator(indices == 0));",
        # K first; a float v0; K's width that varies by position (a second input)
        "x = aggregate(select(indices, 0, ==) or select(tokens, tokens, <), "
        "0.5 * indicator(indices == 0));",
        "x = aggregate(select(tokens, tokens, ==) or select(indices, indices, <=), "
        "2 * indicator(indices == 0));",
    ],
)
def test_the_rewrite_keeps_every_value_and_type(text: str) -> None:
    sop = _sop(text)
    rewritten = bos_widths(sop, list("ab"), 5)
    assert rewritten is not sop
    assert not any(isinstance(n, AggregateSOp) for n in walk(rewritten))
    assert any(isinstance(n, SelectorWidthSOp) for n in walk(rewritten))
    for n in range(1, 6):
        for tokens in itertools.product("ab", repeat=n):
            assert exact_outcome(rewritten, list(tokens)) == exact_outcome(sop, list(tokens))


@pytest.mark.parametrize(
    "text",
    [
        # a value that is not zero past key 0; a K that misses key 0 at some query; no K at all
        "x = aggregate(select(tokens, tokens, ==) or select(indices, 0, ==), "
        "indicator(indices < 2));",
        "x = aggregate(select(tokens, tokens, ==) or select(indices, indices, ==), "
        "indicator(indices == 0));",
        "x = aggregate(select(tokens, tokens, ==), indicator(indices == 0));",
    ],
)
def test_other_means_stay_means(text: str) -> None:
    sop = _sop(text)
    assert bos_widths(sop, list("ab"), 5) is sop


def test_k_of_constant_width_is_folded_into_the_map() -> None:
    sop = _sop(
        "x = aggregate(select(tokens, tokens, ==) or select(indices, 0, ==), "
        "indicator(indices == 0));"
    )
    (mean,) = [n for n in walk(bos_widths(sop, list("ab"), 5)) if isinstance(n, MapSOp)]
    assert len(mean.inputs) == 1 and isinstance(mean.inputs[0], SelectorWidthSOp)


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("name", "n", "limit"),
    [("sort_by_most_freq", 64, 300_000), ("hist2_bos", 64, 50_000), ("hist_bos", 256, 25_000)],
)
def test_the_papers_bos_programs_grow_linearly(name: str, n: int, limit: int) -> None:
    # sort_by_most_freq: 86M parameters at N = 40 (165 s) as a mean over joint readings, 179K
    # at N = 64 with its sort's width over digits (compiler.order_digits, `and not K` kept);
    # hist_bos: 29.5K at N = 256 (3 layers), now 17K (2 layers)
    sop = load_file(PROGRAMS / "paper_examples.rasp").get(name)
    model = compile_sop(sop, BOS_VOCAB, n, name=name)
    assert model.param_count() < limit
    rng = random.Random(n)
    inputs = [["§", *rng.choices("abc", k=rng.randint(0, n - 1))] for _ in range(30)]
    inputs += [["§", *rng.choices("ab", k=n - 1)], rng.choices(BOS_VOCAB, k=n)]
    assert check_inputs(model, sop, inputs) == len(inputs)


# K (a positional side that selects key 0, or one that does not) and the averaged value
KEY0_SIDES = [
    "select(indices, 0, ==)",
    "select(indices, 1, <)",
    "select(indices, indices, <=)",
    "select(0, indices, ==)",
]
VALUES = [
    "indicator(indices == 0)",
    "0.5 * indicator(indices == 0)",
    "-3 * indicator(indices < 1)",
    "indicator(indices < 2)",
]


def _random_bos(seed: int):
    """A random BOS-trick mean (or a near miss: K or the value not the trick's), or None."""
    from random_texts import TextGenerator

    rng = random.Random(seed)
    sel = TextGenerator(rng).select(rng.randint(0, 2))
    k, value = rng.choice(KEY0_SIDES), rng.choice(VALUES)
    mean = f"aggregate(({sel}) or {k}, {value})"
    text = "x = " + rng.choice(["{m}", "round(1 / {m}) - 1", "{m} > 0.3"]).format(m=mean) + ";"
    try:
        return text, _sop(text)
    except RaspError:
        return None


SEEDS = range(80)
VOCAB3 = ["0", "1", "2"]


def test_a_fair_share_of_random_bos_means_is_rewritten() -> None:
    # (K selects key 0, only key 0 holds a value, and sel reads a token: about one in five)
    made = [_random_bos(seed) for seed in SEEDS]
    rewritten = [m for m in made if m is not None and bos_widths(m[1], VOCAB3, 4) is not m[1]]
    assert len(rewritten) >= 10


@pytest.mark.parametrize("seed", SEEDS)
def test_random_bos_means_keep_their_values(seed: int) -> None:
    made = _random_bos(seed)
    if made is None:
        return
    text, sop = made
    rewritten = bos_widths(sop, VOCAB3, 4)
    for n in range(1, 5):
        for tokens in itertools.product(VOCAB3, repeat=n):
            assert exact_outcome(rewritten, list(tokens)) == exact_outcome(sop, list(tokens)), text


def test_a_causal_refusal_names_the_width_by_the_programs_selectors() -> None:
    """The widths share the mean's span, so they were described by generated names: a causal
    compile of hist_bos refused `'selector_width(_and_1)' may select later positions`."""
    from rasp.errors import CompileError

    hist_bos = load_file(PROGRAMS / "hist_bos.rasp").get("hist_bos")
    with pytest.raises(CompileError) as info:
        compile_sop(hist_bos, list("abc"), 6, causal=True)
    text = info.value.render()
    assert "'selector_width(select(tokens, tokens, ==) and not select(indices, 0, ==))'" in text
    assert "_and_" not in text, text
