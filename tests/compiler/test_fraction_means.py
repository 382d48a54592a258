"""Key-only counts over the length compiled as means over every key (compiler.fraction_means)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from compiler import compile_sop
from compiler.fraction_means import _Holds, fraction_means
from compiler.picks import MAX_PICKED
from rasp import sops as S
from rasp.errors import CompileError
from tests.compiler.loose_sums import count_every_weight
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_total_orders import _program  # the program's `res`
from tests.runtime_helpers import as_runtime


def assert_same_typed_values(root: S.Node, rewritten: S.Node, max_len: int = 6) -> None:
    """`rewritten` gives `root`'s values, of the same types, on every input over abc up to
    `max_len` tokens."""
    for tokens in all_inputs("abc", max_len):
        want = S.evaluate(root, tokens).values
        got = S.evaluate(rewritten, tokens).values
        assert [(type(v), v) for v in got] == [(type(v), v) for v in want], tokens


@pytest.mark.parametrize(
    "count",
    [
        'select(tokens, "a", ==)',
        'select(tokens, "b", !=)',
        'select(tokens, "b", <)',
        'select(tokens, "a", >=)',
        'select(tokens == "c", True, ==)',
        # the query's own value: a pick among one mean per query value (compiler.picks)
        "select(tokens, tokens, ==)",
        "select(tokens, tokens, <)",
        "select(tokens, tokens, !=)",
        'select(tokens == "a", tokens == "b", ==)',
    ],
)
@pytest.mark.parametrize("scaled", ["{w}", "100 * {w}", "{w} * 3", "-2 * {w}", "{w} + {w}"])
def test_the_rewrite_gives_the_same_values_of_the_same_types(count: str, scaled: str) -> None:
    width = f"selector_width({count})"
    root = _program(f"res = {scaled.format(w=width)} / length;")
    rewritten = fraction_means(root, list("abc"), 6)
    assert rewritten is not root
    assert any(isinstance(node, S.AggregateSOp) for node in S.walk(rewritten))
    for n in range(1, 7):
        for tokens in itertools.product("abc", repeat=n):
            want = S.evaluate(root, list(tokens)).values
            got = S.evaluate(rewritten, list(tokens)).values
            assert [(type(v), v) for v in got] == [(type(v), v) for v in want], tokens


@pytest.mark.parametrize(
    "text",
    [
        # the query is a map of the position: the count is one, embedded
        "res = selector_width(select(indices, indices, <=)) / length;",
        # `str < int` raises: a mean per query value would compare what the original never does
        'res = selector_width(select(tokens, indicator(tokens == "a"), <)) / length;',
        'res = length / selector_width(select(tokens, "a", ==));',
        'res = selector_width(select(tokens, "a", ==)) / (length + 1);',
        'res = selector_width(select(tokens, "a", ==) and select(indices, 2, <)) / length;',
        # not a whole multiple of the count at every count up to max_len
        'res = (selector_width(select(tokens, "a", ==)) + 1) / length;',
        'res = (selector_width(select(tokens, "a", ==)) % 5) / length;',
    ],
)
def test_other_divisions_are_left_as_they_are(text: str) -> None:
    root = _program(text)
    assert fraction_means(root, list("abc"), 6) is root


_SO_FAR = "select(indices, indices, <=)"  # a positional scope: the keys up to the query


@pytest.mark.parametrize(
    "text",
    [
        # the fraction of the tokens so far that are "a" (tracr's make_frac_prevs), either order
        f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR}) / (indices + 1);',
        f'res = selector_width({_SO_FAR} and select(tokens, "b", <)) / (1 + indices);',
        f'res = 100 * selector_width(select(tokens, "a", ==) and {_SO_FAR}) / (indices + 1);',
        f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR}) / (indices + 1.0);',
        # the keys from the query on: the denominator reads the length too
        'res = selector_width(select(tokens, "c", !=) and select(indices, indices, >=))'
        " / (length - indices);",
        # the query's own token among the tokens so far: a pick among means over the scope
        f"res = selector_width(select(tokens, tokens, ==) and {_SO_FAR}) / (indices + 1);",
        # a scope of two keys, the first and the last
        'res = selector_width(select(tokens, "a", ==) and (select(indices, 0, ==)'
        " or select(indices, length - 1, ==))) / (2 if length > 1 else 1);",
    ],
)
def test_a_count_over_its_scopes_width_is_the_mean_over_that_scope(text: str) -> None:
    root = _program(text)
    rewritten = fraction_means(root, list("abc"), 6)
    assert rewritten is not root
    means = [n for n in S.walk(rewritten) if isinstance(n, S.AggregateSOp)]
    assert means and all(isinstance(m.selector, S.Selector) for m in means)
    assert not any(isinstance(n, S.SelectorWidthSOp) for n in S.walk(rewritten))
    assert_same_typed_values(root, rewritten)


@pytest.mark.parametrize(
    "text",
    [
        # the scope's width is i + 1, not i + 2
        f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR}) / (indices + 2);',
        # the scope is empty at position 0, where the division raises
        'res = selector_width(select(tokens, "a", ==) and select(indices, indices, <)) / indices;',
        # the denominator reads the tokens
        f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR})'
        " / (indices + 1 + 0 * tokens_int);",
        # both sides read the tokens: no positional scope
        'res = selector_width(select(tokens, "a", ==) and select(tokens, "b", !=)) / length;',
        # right for every length up to 5 only
        f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR})'
        " / (indices + 1 if length < 6 else 1);",
    ],
)
def test_a_count_over_anything_but_its_scopes_width_is_left_as_it_is(text: str) -> None:
    root = _program(text)
    assert fraction_means(root, list("abc") if "tokens_int" not in text else list("123"), 6) is root


@pytest.mark.exactness
@pytest.mark.parametrize("n", [64, 256])
def test_the_fraction_so_far_is_one_head_where_it_was_50m_parameters(n: int) -> None:
    root = _program(f'res = selector_width(select(tokens, "a", ==) and {_SO_FAR}) / (indices + 1);')
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.metadata["fractions_as_means"] is True
    # 181 parameters, as tracr's make_frac_prevs (49,550,708 at N = 64 stepped over the count
    # and the position, with a one-hot output)
    assert model.param_count() < 1_000 and len(model.metadata["layers"]) == 1
    inputs = all_inputs("abc", 4) + random_inputs("abc", n, 40, seed=7)
    inputs += [["a"] * n, ["b"] * n, ["a"] + ["b"] * (n - 1), ["c"] * (n - 1) + ["a"]]
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.parametrize(
    "text",
    [
        'res = 0.5 * selector_width(select(tokens, "a", ==)) / length;',
        'res = 0 * selector_width(select(tokens, "a", ==)) / length;',
        # votes of 3^38 (over 2^53) would not sum exactly in the interpreter's float64 mean
        f'res = {3**38} * selector_width(select(tokens, "a", ==)) / length;',
    ],
)
def test_divisions_no_vote_weight_gives_are_maps_of_the_fraction(text: str) -> None:
    """No whole multiple of the count: no weighted mean; but a function of c / n alone (the same
    float at every (c, n) of one ratio), so a table over the plain fraction (compiler.ratio_maps)."""
    root = _program(text)
    rewritten = fraction_means(root, list("abc"), 6)
    weights = {n.fn.weight for n in S.walk(rewritten) if isinstance(getattr(n, "fn", None), _Holds)}
    assert weights == {1}
    for tokens in all_inputs("abc", 6):
        want = S.evaluate(root, tokens).values
        assert [(type(v), v) for v in S.evaluate(rewritten, tokens).values] == [
            (type(v), v) for v in want
        ]


@pytest.mark.exactness
def test_the_fraction_of_as_is_one_head_where_it_was_50m_parameters(tmp_path: Path) -> None:
    import transformer
    from rasp.tools.model_steps import nodes_by_residual_name
    from rasp.tools.verify import diagnose, plan_inputs

    root = _program('res = selector_width(select(tokens, "a", ==)) / length;')
    model = compile_sop(root, list("abc"), 64, name="res")
    assert model.metadata["fractions_as_means"] is True
    assert model.param_count() < 1_000  # 181 (50,106,511 stepped over the count and length)
    inputs = all_inputs("abc", 5) + random_inputs("abc", 64, 80, seed=4)
    inputs += [["a"] * 64, ["b"] * 64, ["a"] + ["b"] * 63]
    assert check_inputs(model, root, inputs) == len(inputs)
    # the tools pair its generated names with the graph it was built from: no false alarm
    path = tmp_path / "m.safetensors"
    model.save(path)
    runtime = transformer.load(path)
    nodes = nodes_by_residual_name(root, list("abc"), 64, model.metadata)
    for tokens in plan_inputs("abc", 64, exhaustive_len=2, samples=10, seed=1).inputs():
        assert diagnose(root, runtime, tokens, nodes) is None, tokens


def test_a_query_with_too_many_values_is_left_as_it_is() -> None:
    root = _program("res = selector_width(select(tokens, tokens, ==)) / length;")
    vocab = [f"t{k}" for k in range(MAX_PICKED + 1)]
    assert fraction_means(root, vocab, 6) is root
    assert fraction_means(root, vocab[:MAX_PICKED], 6) is not root


@pytest.mark.exactness
@pytest.mark.parametrize("n", [64, 256])
def test_the_fraction_of_the_own_token_is_one_layer_where_it_was_50m_parameters(n: int) -> None:
    from rasp.tools.model_steps import nodes_by_residual_name
    from rasp.tools.verify import diagnose, plan_inputs

    root = _program("res = selector_width(select(tokens, tokens, ==)) / length;")
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.metadata["fractions_as_means"] is True
    # 376 parameters, one layer (50,355,415 at N = 64 stepped over the count and the length)
    assert model.param_count() < 1_000 and len(model.metadata["layers"]) == 1
    inputs = all_inputs("abc", 4) + random_inputs("abc", n, 40, seed=6)
    inputs += [["a"] * n, ["a"] + ["b"] * (n - 1), ["c"] * (n - 1) + ["a"]]
    assert check_inputs(model, root, inputs) == len(inputs)
    runtime = as_runtime(model)
    nodes = nodes_by_residual_name(root, list("abc"), n, model.metadata)
    for tokens in plan_inputs("abc", n, exhaustive_len=2, samples=6, seed=1).inputs():
        assert diagnose(root, runtime, tokens, nodes) is None, tokens


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("text", "before"),
    [
        # a step at 0.5 over the mean's values, one layer: 3,817 parameters in two layers stepped
        # over the count and the length
        ('res = selector_width(select(tokens, "a", ==)) / length > 0.5;', 3_817),
        # refused before the interpolations (a snap over differences of fractions of two
        # lengths' steps); each fraction a line per length now (compiler.interpolate)
        (
            'res = selector_width(select(tokens, "a", ==)) / length'
            ' - selector_width(select(tokens, "b", ==)) / length;',
            26_034,
        ),
    ],
)
def test_maps_of_fractions_keep_the_smaller_proved_build(
    monkeypatch: pytest.MonkeyPatch, text: str, before: int
) -> None:
    import compiler.program_forms

    root = _program(text)
    model = compile_sop(root, list("abc"), 32, name="res")
    assert model.metadata["fractions_as_means"] is True
    inputs = all_inputs("abc", 5) + random_inputs("abc", 32, 60, seed=5)
    assert check_inputs(model, root, inputs) == len(inputs)
    monkeypatch.setattr(
        compiler.program_forms, "fraction_means", lambda sop, vocab, max_len: sop
    )  # no other
    # with every weight of an output sum counted (the bound before session 70): with the live
    # terms counted, the difference's earlier build is proved without the fraction means, and
    # larger (191,756 parameters; the model compiled above is the same, 205)
    count_every_weight(monkeypatch)
    assert compile_sop(root, list("abc"), 32, name="res").param_count() == before
    assert model.param_count() < before


@pytest.mark.exactness
def test_a_pick_read_as_a_number_and_as_a_one_hot_is_built_once() -> None:
    # g reads the fraction f (a pick) as a number, `round(10 * g)` (fused) as a one-hot: each
    # reading built the pick's parts, whose dimensions were then written twice, and the certifier
    # refused every build that read both (1,997,430 parameters kept at N = 8; at N = 32 the
    # refusal's note ended in an IndexError)
    root = _program(
        "f = selector_width(select(tokens, tokens, ==)) / length;\n"
        "h = (f) if indices < 3 else f;\n"
        'g = (h + 1) if tokens != "b" else ((0) if indices > 0 else h);\n'
        "res = round(10 * g);"
    )
    model = compile_sop(root, list("abc"), 8, name="res")
    assert model.param_count() < 50_000  # 18,341
    picks = [label for label in model.metadata["residual"] if ".pick" in label]
    assert len(picks) == len(set(picks)) == 3
    inputs = all_inputs("abc", 5) + random_inputs("abc", 8, 60, seed=8)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_the_fraction_form_is_built_first_and_bounds_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The default (50M parameters at N = 64) is built only under the proved fraction form's
    parameter count: refused from its shape, before its weights exist. A user's limit below the
    default's size keeps the fraction form instead of refusing."""
    import compiler.assemble
    from compiler.model import config_params

    sizes: list[tuple[int, int | None]] = []
    check = compiler.assemble.check_params

    def spy(config: dict, plan: object, max_params: int | None) -> None:
        sizes.append((config_params(config), max_params))
        check(config, plan, max_params)

    monkeypatch.setattr(compiler.assemble, "check_params", spy)
    root = _program('res = selector_width(select(tokens, "a", ==)) / length;')
    model = compile_sop(root, list("abc"), 64, name="res", max_params=10_000)
    assert model.metadata["fractions_as_means"] is True and model.param_count() == 181
    assert sizes[0] == (181, 10_000)  # the fraction form first, under the user's limit
    assert all(limit == 181 for _, limit in sizes[1:]) and len(sizes) > 1  # then capped
    # the default: refused unbuilt (633,280 parameters from its shape, each fraction a line per
    # length; 50M built)
    assert any(params > 100_000 for params, _ in sizes[1:])
    # without the fraction form, the user's limit refuses the program
    monkeypatch.setattr(compiler.program_forms, "fraction_means", lambda sop, vocab, max_len: sop)
    with pytest.raises(CompileError, match="the model would have"):
        compile_sop(root, list("abc"), 64, name="res", max_params=10_000)


def test_the_size_prediction_takes_the_fraction_form() -> None:
    """At N = 1024 the default is predicted over the limit; the fraction form, predicted from the
    same probes, is not, so the compile goes on (and keeps that form)."""
    from compiler.budget import DEFAULT_MAX_PARAMS
    from compiler.size_check import check_size

    for text in [
        'res = selector_width(select(tokens, "a", ==)) / length;',
        "res = selector_width(select(tokens, tokens, ==)) / length;",  # a pick
    ]:
        check_size(_program(text), ("a", "b", "c"), 1024, False, True, DEFAULT_MAX_PARAMS)
    # no whole multiple of the count: no other form
    other = _program("res = (selector_width(select(tokens, tokens, ==)) + 1) / length;")
    with pytest.raises(CompileError, match="the model would be too large"):
        check_size(other, ("a", "b", "c"), 1024, False, True, DEFAULT_MAX_PARAMS)


@pytest.mark.exactness
def test_a_percentage_is_one_head_at_n_256() -> None:
    root = _program('res = 100 * selector_width(select(tokens, "a", ==)) / length;')
    model = compile_sop(root, list("ab"), 256, name="res")
    assert model.metadata["fractions_as_means"] is True and model.param_count() < 1_000
    assert "length_denominators" in model.metadata["output"]
    inputs = all_inputs("ab", 5) + random_inputs("ab", 256, 40, seed=8)
    inputs += [["a"] * 256, ["b"] * 256, ["a"] * 255 + ["b"]]
    assert check_inputs(model, root, inputs) == len(inputs)


def _keep_stubbed(
    fraction: tuple[int, int], default: tuple[int, int], default_size: int | None = None
) -> tuple[Any, S.Node, list[tuple[object, int | None]]]:
    """keep_form over stub builds, proved, of (parameters, layers) `fraction` for the fraction
    form and `default` for the program itself: the kept build, the program, and each attempt's
    (form, parameter cap)."""
    from types import SimpleNamespace

    from compiler.program_forms import keep_form

    root = _program('res = selector_width(select(tokens, "a", ==)) / length;')
    tried: list[tuple[object, int | None]] = []

    def attempt(form: S.Node, cap: int | None) -> SimpleNamespace:
        tried.append((form, cap))
        params, layers = fraction if form is not root else default
        model = SimpleNamespace(metadata={"layers": [{}] * layers}, param_count=lambda: params)
        return SimpleNamespace(model=model, certificate=SimpleNamespace(ok=True))

    kept = keep_form(
        root,
        attempt,  # type: ignore[arg-type]
        lambda **flags: fraction_means(root, list("abc"), 8) if flags.get("fractions") else root,
        lambda note: None,
        list("abc"),
        8,
        default_size,
    )
    return kept, root, tried


@pytest.mark.parametrize(("default_size", "builds"), [(None, 2), (100, 2), (50_000_000, 1)])
def test_a_default_predicted_larger_than_the_fraction_form_is_not_built(
    default_size: int | None, builds: int
) -> None:
    kept, root, tried = _keep_stubbed((181, 1), (1_000, 1), default_size)
    assert kept.model.param_count() == 181 and kept.model.metadata["fractions_as_means"]
    assert len(tried) == builds and tried[0][1] is None  # the fraction form, uncapped, first
    if builds == 2:
        assert tried[1] == (root, 181)  # then the default, under the fraction form's size


def test_a_default_with_fewer_layers_is_built_up_to_a_layers_worth_more() -> None:
    # the fraction form in 2 layers and 181 parameters; a default in 1 layer is smaller
    # (compiler.model.build_cost) up to 4 x 181 parameters, so it is built under that cap, and
    # kept at 500
    kept, root, tried = _keep_stubbed((181, 2), (500, 1))
    assert tried[1] == (root, 4 * 181)
    assert kept.model.param_count() == 500 and "fractions_as_means" not in kept.model.metadata


def test_a_refusal_says_why_the_fraction_form_was_not_kept() -> None:
    # `100 * w / length` over the own token's width at N = 256: the pick's snap is not proved
    # (margin 0.00198, error 0.00505) and the default's step MLP is too large. The refusal was the
    # default's alone; it now says why the one-head form did not do either.
    from types import SimpleNamespace

    from compiler.build_trials import Kept
    from compiler.certificate import Certificate, Check
    from compiler.program_forms import keep_form
    from rasp.errors import Diagnostic

    root = _program('res = selector_width(select(tokens, "a", ==)) / length;')
    failed = Certificate((Check("decoder", "res", "res", "snap", 0.00198, 0.00505, "output 1"),))
    default_refusal = CompileError([Diagnostic("the default is too large")])

    def attempt(form: S.Node, cap: int | None, default_builds: bool) -> Kept:
        model = SimpleNamespace(metadata={"layers": [{}]}, param_count=lambda: 376)
        if form is not root:
            return Kept(model, None, failed, None)  # type: ignore[arg-type]
        if not default_builds:
            raise default_refusal
        return Kept(model, None, Certificate(failed.checks), None)  # type: ignore[arg-type]

    def keep(default_builds: bool) -> Kept:
        return keep_form(
            root,
            lambda form, cap: attempt(form, cap, default_builds),
            lambda **flags: fraction_means(root, list("ab"), 8) if flags.get("fractions") else root,
            lambda note: None,
            list("ab"),
            8,
        )

    note = (
        "also tried with counts over the length as means: 376 parameters, not proved: the output "
        "has a snap margin of 0.00198 against a float32 error of 0.00505"
    )
    with pytest.raises(CompileError) as refused:
        keep(default_builds=False)
    assert [d.message for d in refused.value.diagnostics] == ["the default is too large", note]
    # a refusal of another kind keeps its kind (the user's parameter limit is final)
    from compiler.model import OverParamLimit

    default_refusal = OverParamLimit([Diagnostic("the model would have 29,290 parameters")])
    with pytest.raises(OverParamLimit) as refused:
        keep(default_builds=False)
    assert len(refused.value.diagnostics) == 2
    # a default that builds but is not proved carries the note to the driver's refusal
    kept = keep(default_builds=True)
    assert kept.tried == (("with counts over the length as means", note.split(": ", 1)[1]),)
