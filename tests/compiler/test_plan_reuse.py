"""A build refused while planning gives its refusal to the builds that differ from it only in
options its plan never read (compiler.plan_reuse): they are not planned again, and a build whose
options the refused plan did read still is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler import compile_sop, driver
from compiler.build_trials import BuildOptions
from compiler.plan_context import TRACKED_OPTIONS
from compiler.plan_reuse import PlanRefusal, repeated
from rasp.errors import CompileError, Diagnostic
from tests.compiler.limit_checks import HALVES, program

# numeric fuzz seed 1480029 at N = 16, shortened: the table of `res` over a prefix count, the
# index and a rounded mean is too large in the default build, and the program copies no number
# of one key, so the build copying numbers as numbers plans the same table. (`m` over
# `select(tokens, tokens, <=)`: the seed's `==` makes m 0 or 1, and the output then decodes on a
# grid per position and length without a table, compiler.grid)
TABLE = """
v1 = aggregate(select(indices, indices, <), indicator(tokens == "0"), 0);
m = aggregate(select(tokens, tokens, <=), indicator(tokens == "3"));
res = v1 if indices < 1 else ((v1 % 2) / (round(length * m) + 2)) / 2;
"""


def _planned(monkeypatch: pytest.MonkeyPatch) -> list[BuildOptions]:
    """The options of every build the driver plans from now on."""
    planned: list[BuildOptions] = []
    plan = driver.plan_build

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(kwargs["options"])
        return plan(*args, **kwargs)

    monkeypatch.setattr(driver, "plan_build", recorded)
    return planned


def test_a_refusal_that_copying_numbers_cannot_change_is_planned_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planned = _planned(monkeypatch)
    with pytest.raises(CompileError) as refused:
        compile_sop(program(TABLE, "res"), list("0123"), 16)
    first, *notes = refused.value.diagnostics
    assert "needs a table MLP of" in first.message
    assert first.span is not None and first.span.text().startswith("v1 if indices < 1")
    # the default and the build with maps fused (which changes the table); the copy build was
    # planned too before, to find the same refusal (0.6 s of 1.9 at the seed's N = 16)
    assert not any(options.numeric_copies for options in planned)
    assert BuildOptions() in planned and len(planned) == 2
    # (the copy build named too, given the default's refusal without being planned)
    assert [n.message.split(":")[0] for n in notes] == [
        "also tried with maps fused through their inputs",
        "also tried with numbers copied as numbers",
    ]
    assert notes[1].message.endswith(": refused for the same reason")


def test_a_refusal_that_copying_numbers_may_change_still_tries_the_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planned = _planned(monkeypatch)
    model = compile_sop(program(HALVES, "median"), list(range(11)), 9)
    assert model.param_count() < 10_000  # copied as numbers: 7,020
    assert planned[0] == BuildOptions() and any(options.numeric_copies for options in planned)


_REFUSAL = CompileError([Diagnostic("too large", None)])


@pytest.mark.parametrize(
    ("read", "options", "repeats"),
    [
        (frozenset(), BuildOptions(numeric_copies=True), True),
        (frozenset(), BuildOptions(numeric_copies=True, addressed_copies=False), True),
        (frozenset(), BuildOptions(category_gates=True), True),
        (frozenset({"numeric_copies"}), BuildOptions(numeric_copies=True), False),
        (frozenset({"numeric_copies"}), BuildOptions(category_gates=True), True),
        (frozenset({"category_gates"}), BuildOptions(category_gates=True), False),
        # options that are not tracked are always planned
        (frozenset(), BuildOptions(fused_maps=frozenset({"x"})), False),
        (frozenset(), BuildOptions(numeric_copies=True, gates=False), False),
    ],
)
def test_only_options_the_refused_plan_did_not_read_repeat_it(
    read: frozenset[str], options: BuildOptions, repeats: bool
) -> None:
    known = [PlanRefusal(BuildOptions(), read, _REFUSAL)]
    assert (repeated(known, options) is _REFUSAL) is repeats


def test_the_tracked_options_are_read_only_through_plan_context_option() -> None:
    """A planner reading a tracked option directly would let a refusal stand for a build whose
    plan that option changes."""
    compiler_dir = Path(__file__).resolve().parents[2] / "compiler"
    names = "|".join(sorted(TRACKED_OPTIONS))
    direct = re.compile(rf"\b(?:ctx|self|context)\.({names})\b")
    found = [
        f"{path.name}:{number}"
        for path in sorted(compiler_dir.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if direct.search(line.split("#")[0]) and "`" not in line
    ]
    assert found == []
