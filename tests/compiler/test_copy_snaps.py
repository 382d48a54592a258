"""The one-hots that copies copy, snapped first (compiler.copy_snaps): the compile's last build.

Mixed fuzz seed 1820297 (session 68's reduction, `REFUSED`) copies `v1 = load_from_location(w0 +
m, ...)`, w0 a width and m a mean, whose one-hot a step MLP writes with its rounding (bounded by
8.1e-4 per column at N = 7); the copy carries it to a width's select, whose scores then err by
1.4 and whose
decoding MLP has a relu margin of 3 against 202. `REDUCTION` is the same program with v1 a map of
three values of that sum (the step's rounding is the same): refused alike by every other build
(104 against 3), proved with the map's columns snapped before the copy. The 1820297 reduction
itself stays refused: with v1 exact, its output `w * mean(v1)` has a snap margin of 5.67e-5
against 2.7e-4 (the mean's own float32 error times w, and the product's gated units)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compiler import compile_sop
from compiler.build_trials import BuildOptions
from compiler.copy_snaps import COPY_SNAPS, copy_snaps_instead
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_copy_sides import COPY
from tests.compiler.test_position_folds import WIDE

V0 = "v0 = -indicator((indices < 2));\n"
SUM = (
    "selector_width(select(v0, -1, <=) or select(v0, indices, !=))"
    " + aggregate(select(v0, 0.5, <), v0, 0)"
)
WIDTH = 'w = selector_width(not (select(round(v0), v1, <) and select(tokens, "ß", >=)));\n'
REDUCTION = (
    V0
    + f"v1 = load_from_location(round(({SUM}) * 7) % 3, indicator((indices < 2)));\n"
    + WIDTH
    + "res = w * aggregate(select(tokens, tokens, >=), v1, 0.0);"
)
REFUSED = (
    V0
    + f"v1 = load_from_location({SUM}, indicator((indices < 2)));\n"
    + WIDTH
    + "res = w * aggregate(select(tokens, tokens, >=), v1, 0.0);"
)
VOCAB = ["a", "é", " ", "\\"]


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def test_the_option_is_off_by_default() -> None:
    # (every build but the driver's last plans as before: no model proved before changes)
    assert BuildOptions().snapped_copies is False


def test_a_proved_model_is_kept_without_planning() -> None:
    kept = SimpleNamespace(certificate=SimpleNamespace(ok=True))

    def never() -> None:
        raise AssertionError("planned a build for a proved model")

    found = copy_snaps_instead(kept, never, never, lambda stage: None)  # type: ignore[arg-type]
    assert found is kept


@pytest.mark.exactness
def test_a_copy_of_a_noisy_one_hot_is_proved_snapped_first_and_agrees() -> None:
    root = _root(REDUCTION)
    model = compile_sop(root, VOCAB, 7)
    assert model.metadata["certificate"]["ok"]
    residual = model.metadata["residual"]
    # the copied map's columns are snapped (before the copy), not the copy's
    snaps = {label.split(":")[0] for label in residual if "~snap" in label}
    assert snaps and all(label.startswith("_map_") for label in snaps), snaps
    inputs = all_inputs(VOCAB, 4) + random_inputs(VOCAB, 7, 60, 1820297)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_it_proves_a_copy_the_side_builds_prove_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # defs 2044002's reduction (test_copy_sides.COPY): y copies x's one-hot, which x's step MLP
    # writes with its rounding; without the side builds that prove it first, this one does
    monkeypatch.setattr("compiler.side_build.side_copies", lambda graph: frozenset())
    for module in ("side_tables", "selectors", "joint_readings"):
        monkeypatch.setattr(f"compiler.{module}.snapped", lambda built, reading: reading)
    root = _root(COPY)
    model = compile_sop(root, list("012"), 5)
    assert any(label.startswith("x~snap") for label in model.metadata["residual"])
    inputs = all_inputs(list("012"), 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_it_proves_a_copy_read_by_a_mean_that_the_fold_proves_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # test_position_folds.WIDE: a mean of `round(shift(v, 1, False))`, v's one-hot a step MLP
    # writes; without the builds that prove it first (folded, moved), this one does (and then
    # the smaller builds tried on every proved last build keep its maps moved before the copy)
    monkeypatch.setattr("compiler.driver.positions_instead", lambda kept, *rest: kept)
    monkeypatch.setattr("compiler.driver.moved_instead", lambda kept, *rest: kept)
    stages: list[str] = []
    root = _root(WIDE)
    model = compile_sop(
        root, list("ab"), 12, progress=lambda stage, done, total: stages.append(stage)
    )
    assert model.metadata["certificate"]["ok"]
    assert f"compiling: certify {COPY_SNAPS}" in stages
    inputs = all_inputs(list("ab"), 6) + random_inputs(list("ab"), 12, 60, 2155505)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_without_the_build_the_width_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *rest: kept)
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(REDUCTION), VOCAB, 7)
    first = refused.value.diagnostics[0].message
    assert "(layer 3 mlp, w.part1): a relu decision has margin 3" in first, first


@pytest.mark.slow  # (15 to 60 s: every build is tried, each refused)
def test_the_seeds_reduction_stays_refused_by_its_output_snap() -> None:
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(REFUSED), VOCAB, 7)
    text = refused.value.render()
    assert "w.part1): a relu decision has margin 3 but float32 error up to 202" in text
    assert f"also tried {COPY_SNAPS}" in text
    assert "not proved: the output has a snap margin of 5.67e-05 against" in text
