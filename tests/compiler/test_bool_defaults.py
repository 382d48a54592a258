"""A mean's bool default read only by maps that give the same for the bool and its int
(compiler.bool_defaults): written as the int, the program computes the same values and types;
anything that could tell them apart keeps the bool. The driver tries that form last, where no
other build is proved (compiler.int_defaults): the program then compiles as with the int default
and agrees with the interpreter."""

from __future__ import annotations

from types import SimpleNamespace

import fuzz_campaign
import pytest
from test_compile import all_inputs, random_inputs

from compiler import compile_sop
from compiler.bool_defaults import bool_defaults
from compiler.build_trials import Kept
from compiler.forms import Forms, prepare
from compiler.int_defaults import INT_DEFAULTS, int_defaults_instead
from rasp import sops
from rasp.atoms import same_value
from rasp.errors import CompileError, Diagnostic, Source
from rasp.interpreter import load_source

VOCAB = ["a", "é", " ", "\\"]
# mixed 2202354's reduction: refused at N = 9 with `True` (a relu margin of 3 against 15.7; the
# table build's one-hot of the mean could not tell True from the 1 a length of 1 gives), compiled
# with `1` (64,095 parameters)
REDUCTION = """v1 = selector_width(select(tokens, tokens, !=) and select(indices, indices, <=));
res = selector_width(select(selector_width(select(length, v1, !=) or select(v1, v1, !=))
    + aggregate(select(tokens, "#", >=), length, {default}), v1, <));"""
# the default taken at some positions only (`indices > 0`): `w - agg` is w - 0 either way
FALSE_DEFAULT = """w = selector_width(select(tokens, tokens, ==));
res = w - aggregate(select(indices, indices, <) and select(tokens, "a", ==), length, False);"""


def _root(text: str, name: str = "res") -> sops.SOp:
    root = load_source(Source("<test>", text)).get(name)
    assert isinstance(root, sops.SOp)
    return root


def _defaults(root: sops.Node) -> list[object]:
    return [n.default for n in sops.walk(root) if isinstance(n, sops.AggregateSOp)]


def _same_everywhere(a: sops.SOp, b: sops.SOp, inputs: list[list]) -> None:
    for tokens in inputs:
        got, want = sops.evaluate(a, tokens).values, sops.evaluate(b, tokens).values
        assert all(map(same_value, got, want)) and list(map(type, got)) == list(map(type, want))


def test_the_reduction_compiles_as_with_the_int_default_and_agrees() -> None:
    root = _root(REDUCTION.format(default="True"))
    model = compile_sop(root, VOCAB, 9)
    assert model.metadata["certificate"]["ok"]
    plain = compile_sop(_root(REDUCTION.format(default="1")), VOCAB, 9)
    assert model.param_count() == plain.param_count() == 64_095
    assert model.metadata["weights_sha256"] == plain.metadata["weights_sha256"]
    inputs = all_inputs(VOCAB, 3) + random_inputs(VOCAB, 9, 60, 2202354)
    assert fuzz_campaign.check_exactly(model, root, inputs) == len(inputs)


def test_the_rewrite_keeps_every_value_and_type() -> None:
    for text, n in ((REDUCTION.format(default="True"), 5), (FALSE_DEFAULT, 5)):
        root = _root(text)
        # the compile's own forms keep the bool; the last build's write the int
        assert [type(d) for d in _defaults(prepare(root, VOCAB, n))] == [bool]
        ints = Forms(root, VOCAB, n).with_int_defaults()
        assert ints is not None
        prepared = ints()
        assert [type(d) for d in _defaults(prepared)] == [int]
        _same_everywhere(prepared, root, all_inputs(VOCAB, n))


def test_a_false_default_compiles_and_agrees() -> None:
    root = _root(FALSE_DEFAULT)
    model = compile_sop(root, VOCAB, 5)
    inputs = all_inputs(VOCAB, 4)
    assert fuzz_campaign.check_exactly(model, root, inputs) == len(inputs)


def test_the_seed_compiles_and_agrees() -> None:
    # mixed 2202354 was refused at every N from 4 to 9
    root, vocab, n, inputs = fuzz_campaign._mixed(2202354, 9)
    model = compile_sop(root, vocab, n)
    assert fuzz_campaign.check_exactly(model, root, inputs) > 0


def _mean(default: object, over: sops.SOp | None = None) -> sops.AggregateSOp:
    tokens = sops.TokensSOp(name="tokens")
    select = sops.Select(keys=tokens, queries=tokens, comparison=sops.Comparison.LT)
    return sops.AggregateSOp(
        selector=select, sop=over or sops.LengthSOp(name="length"), default=default
    )


def _plus_one(x: object) -> object:
    return x + 1  # type: ignore[operator]


def test_a_bool_that_something_tells_from_the_int_is_kept() -> None:
    # a map whose result has the argument's type; the mean as the output; a select reading it;
    # a bool among the averaged values (one key selected: `indices == indices`)
    agg = _mean(True)
    cases = [
        sops.MapSOp(fn=lambda x: type(x).__name__, inputs=(agg,)),
        agg,
        sops.SelectorWidthSOp(
            selector=sops.Select(keys=agg, queries=agg, comparison=sops.Comparison.EQ)
        ),
    ]
    indices = sops.IndicesSOp(name="indices")
    tokens = sops.TokensSOp(name="tokens")
    one = sops.AggregateSOp(
        selector=sops.Select(keys=indices, queries=indices, comparison=sops.Comparison.EQ),
        sop=sops.MapSOp(fn=lambda t: t == "a", inputs=(tokens,)),
        default=True,
    )
    cases.append(sops.MapSOp(fn=_plus_one, inputs=(one,)))
    for root in cases:
        assert bool_defaults(root, VOCAB, 4) is root


def test_a_map_that_reads_them_alike_is_rewritten() -> None:
    root = sops.MapSOp(fn=_plus_one, inputs=(_mean(True),))
    rewritten = bool_defaults(root, VOCAB, 4)
    assert rewritten is not root and _defaults(rewritten) == [1]
    assert type(_defaults(rewritten)[0]) is int
    _same_everywhere(rewritten, root, all_inputs(VOCAB, 4))


def test_it_is_the_last_build_and_only_where_nothing_else_is_proved() -> None:
    stages: list[str] = []
    compile_sop(
        _root(REDUCTION.format(default="True")), VOCAB, 5, progress=lambda s, *_: stages.append(s)
    )
    assert "compiling: build with the bool defaults that maps read as their ints" in stages
    # proved by the compile's own builds: the last build is not tried
    stages.clear()
    compile_sop(_root(FALSE_DEFAULT), VOCAB, 5, progress=lambda s, *_: stages.append(s))
    assert not any("bool defaults" in s for s in stages)


def _never(*args: object) -> Kept:
    raise AssertionError("built the rewritten forms")


def test_a_proved_build_or_a_planning_refusal_passes_through() -> None:
    forms = Forms(_root(REDUCTION.format(default="True")), VOCAB, 5)
    kept = SimpleNamespace(certificate=SimpleNamespace(ok=True))
    assert int_defaults_instead(kept, forms, _never, lambda stage: None) is kept  # type: ignore[arg-type]
    refusal = CompileError([Diagnostic("a table too large", None)])
    with pytest.raises(CompileError) as raised:
        int_defaults_instead(refusal, forms, _never, lambda stage: None)
    assert raised.value is refusal  # as the builds before raised it: no form analysed again


def test_a_rewrite_not_proved_is_among_what_was_also_tried() -> None:
    # at N = 9 with a limit under the int form's 64,095 parameters: the kept build is refused
    # for its margin, and the rewritten forms' builds are over the limit
    root = _root(REDUCTION.format(default="True"))
    with pytest.raises(CompileError) as refusal:
        compile_sop(root, VOCAB, 9, max_params=60_000)
    assert f"also tried {INT_DEFAULTS}" in refusal.value.render()
