"""A map of another map's number that the certifier refuses, or that is too large to plan, is built
again from the sources of its input maps (compiler.alternatives, `BuildOptions.fused_maps`)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

import compiler.map_steps
from compiler import build_facts, build_trials, compile_sop, default_builds
from compiler.refusals import why_not_proved
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.compiler.loose_sums import count_every_weight
from tests.runtime_helpers import run_compiled

MEANS = """
fa = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
fb = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
wa = selector_width(select(tokens, "a", ==));
"""


@pytest.fixture(autouse=True)
def _steps_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the builds tried where the default is refused: maps of two means
    stepped as before the interpolations (compiler.interpolate), which would now prove the
    default (`fa * fb` a line per value of fb; tests/compiler/test_interpolate.py)."""
    monkeypatch.setattr(compiler.map_steps, "interpolation_mlp", lambda *a, **k: None)
    monkeypatch.setattr(compiler.map_steps, "context_interpolation_mlp", lambda *a, **k: None)


def _program(expression: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(f"{MEANS}res = {expression};\n", "<test>"))
    return interp.get("res")


def _agrees(root: S.Node, model: object, n: int) -> None:
    rng = random.Random(n)
    inputs = [list(t) for k in range(1, 6) for t in itertools.product("abc", repeat=k) if k <= n]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(1, n))] for _ in range(100)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("expression", "n", "most"),
    [
        # the step over the product reads its error times the steps' steepness: refused (relu
        # margin 3 against an error of 3.03 at N = 8); over fa, with fb's values as contexts, proved
        ("fa * fb > 0.2", 8, 5_000),
        ("fa * fb > 0.2", 16, 40_000),
        # the step reads `(fa * fb) * 4`, a view of the product: fused through the chain
        ("fa * fb * 4 > 1", 16, 40_000),
        # the refused map alone fused (over fa + fb and wa): 3,909 parameters, where fusing the
        # product too would step over three sources (1.9M)
        pytest.param("(fa + fb) * wa > 2", 16, 10_000, marks=pytest.mark.slow),  # 2 builds, 5 s
    ],
)
def test_a_refused_step_over_a_mapped_number_is_stepped_over_its_sources(
    expression: str, n: int, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _program(expression)
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.metadata["certificate"]["errors"] == []
    assert model.param_count() <= most
    _agrees(root, model, n)
    # the first three are proved without fusing since the output sums count the units that can
    # be on: with every weight counted, the bound before, the step over the product is refused
    count_every_weight(monkeypatch)
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.metadata["certificate"]["errors"] == []
    assert model.param_count() <= most
    monkeypatch.setattr(build_facts, "refused_steps_over_maps", lambda kept: frozenset())
    with pytest.raises(CompileError, match="a relu decision has margin"):
        compile_sop(root, list("abc"), n, name="res")


@pytest.mark.exactness
def test_a_map_too_large_to_plan_is_fused_through_instead() -> None:
    # At N = 40 the product alone needs a step MLP over 19,269 pairs of means (more than the
    # compiler builds); the comparison over fa with fb's values as contexts does not.
    root = _program("fa * fb > 0.2")
    model = compile_sop(root, list("abc"), 40, name="res")
    assert model.metadata["certificate"]["errors"] == []
    assert len(model.metadata["layers"]) == 2
    _agrees(root, model, 40)


def test_without_the_fused_build_the_default_builds_refusal_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the message is the default build's, located at the map it could not plan
    monkeypatch.setattr(build_facts, "maps_of_maps", lambda graph: frozenset())
    with pytest.raises(CompileError, match="'fa \\* fb' needs a step MLP"):
        compile_sop(_program("fa * fb > 0.2"), list("abc"), 40, name="res")


def test_a_refused_map_that_fusing_leaves_alone_is_not_built_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `fa * fb` reads no map and no map reads it: fused, it is planned over the same rows and
    # refused again. (The means' `indicator(tokens == "a")` are maps of maps, so it was built.)
    # As the output it is gated now (1,487,486 parameters): steps over fa are what is refused.
    monkeypatch.setattr(compiler.map_steps, "gated_affine", lambda *args, **kwargs: None)
    tried: list[build_trials.BuildOptions] = []
    proved = build_trials.proved

    def counted(build: Any, options: build_trials.BuildOptions, *args: Any, **kw: Any) -> Any:
        tried.append(options)
        return proved(build, options, *args, **kw)

    monkeypatch.setattr(build_trials, "proved", counted)
    with pytest.raises(CompileError, match="'fa \\* fb' needs a step MLP"):
        compile_sop(_program("fa * fb"), list("abc"), 40, name="res")
    assert tried and not any(options.fused_maps for options in tried)  # the copy build only


def test_a_refusal_after_fused_builds_not_proved_notes_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the fused builds not proved (here their certificates ran out of memory): the default's
    # refusal stands, with a note for them. (The list of builds tried was once replaced by the
    # fused builds themselves, and the refusal ended in a TypeError.)
    certified = build_trials.certified

    def no_fused(model: Any, how: str, note: Any) -> Any:
        return None if how == default_builds.FUSED else certified(model, how, note)

    monkeypatch.setattr(build_trials, "certified", no_fused)
    count_every_weight(monkeypatch)  # (the bound before: the default build is refused)
    with pytest.raises(CompileError) as info:
        compile_sop(_program("fa * fb > 0.2"), list("abc"), 8, name="res")
    messages = [d.message for d in info.value.diagnostics]
    assert "relu decision has margin" in messages[0]
    fused = "also tried with maps fused through their inputs: certifying it ran out of memory"
    assert fused in messages


def test_a_build_the_certifier_could_not_read_is_noted_with_its_reason() -> None:
    # a certificate with no decisions, only the reason it could not check the model (a block
    # writing another's dimension): the note once took its first failed decision, and there was
    # none (an IndexError)
    from compiler.certificate import Certificate

    unread = Certificate(
        (), ("MLP 'x' writes residual dimension 'x', which MLP 'y' wrote already",)
    )
    assert why_not_proved(unread) == (
        "the certifier could not check it (MLP 'x' writes residual dimension 'x', which MLP 'y' "
        "wrote already)"
    )


def test_over_the_parameter_limit_the_default_s_refusal_stands() -> None:
    # a default over max_params gets the builds that may be smaller (copies, and here maps
    # fused: its map takes a layer after the last head); none is under 1,000 either, and the
    # refusal is the default's
    from compiler.model import OverParamLimit

    with pytest.raises(OverParamLimit, match="the model would have"):
        compile_sop(_program("fa * fb > 0.2"), list("abc"), 8, name="res", max_params=1000)


def test_over_the_limit_no_fused_build_is_planned_where_no_map_follows_the_heads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # dyck1 at N = 40 under 500 parameters (its default about 7,200, its last layer a head): planning
    # the fused build took 30 s, to be refused by the same limit
    from compiler.model import OverParamLimit
    from rasp.tools.model_steps import program_sop

    def not_tried(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fused build was tried")

    monkeypatch.setattr(default_builds, "fused_instead_of", not_tried)
    real = build_trials.proved

    def proved(build: Any, options: Any, how: str, *args: Any, **kwargs: Any) -> Any:
        assert how != default_builds.FUSED, "a fused build was tried"
        return real(build, options, how, *args, **kwargs)

    monkeypatch.setattr(build_trials, "proved", proved)
    root = Path(__file__).resolve().parents[2] / "programs" / "dyck1.rasp"
    sop, out, source = program_sop(str(root), None)
    with pytest.raises(OverParamLimit, match="the model would have"):
        compile_sop(sop, list("()x"), 40, name=out, source=source, max_params=500)
