"""`rasp.tools.verify`: input plans, output comparison, and locating the first divergence.

The logic is tested here against a fake runtime that builds the residual stream from the interpreter's
own values (so a corruption injected at one checkpoint must be found exactly there); the end-to-end
tests with a real compiled model whose weight is corrupted are in test_verify_compiled.py and test_verify_diagnosis.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

from rasp.sops import (
    AggregateSOp,
    Comparison,
    Evaluator,
    IndicesSOp,
    MapSOp,
    Select,
    SOp,
    TokensSOp,
)
from rasp.tools.residuals import Unclear, residual_variables
from rasp.tools.verify import (
    Divergence,
    default_exhaustive_len,
    diagnose,
    nodes_by_name,
    plan_inputs,
    same_value,
    verify,
)
from rasp.tools.verify_json import report_json
from rasp.tools.verify_text import format_failure, format_success


def test_default_exhaustive_len_stays_under_budget() -> None:
    assert default_exhaustive_len(3, 64) == 8  # 3+9+...+3^8 = 9840; adding 3^9 exceeds 20k
    assert default_exhaustive_len(3, 5) == 5
    assert default_exhaustive_len(1, 10) == 10
    assert default_exhaustive_len(30000, 10) == 0


def test_plan_covers_every_short_input_then_samples_longer_ones() -> None:
    plan = plan_inputs(["a", "b", "a"], max_len=6, exhaustive_len=2, samples=50, seed=3)
    inputs = list(plan.inputs())
    assert inputs[:6] == [["a"], ["b"], ["a", "a"], ["a", "b"], ["b", "a"], ["b", "b"]]
    assert len(inputs) == plan.total == 56
    assert all(3 <= len(x) <= 6 for x in inputs[6:])
    assert inputs == list(plan_inputs(["a", "b"], 6, 2, 50, 3).inputs())  # seeded
    assert (
        plan_inputs("ab", 3, 5, 10, 0).sample_count == 0
    )  # exhaustive already covers every length


def test_same_value_keeps_types_apart() -> None:
    assert same_value(1, 1) and same_value(0.5, 0.5 + 1e-9) and same_value(2, 2.0000001)
    assert not same_value(True, 1) and not same_value(1, "1") and not same_value(0.5, 0.51)


def test_residual_variables_group_labels() -> None:
    found = residual_variables(["one", "bos", "tokens:a", "x", "tokens:b", "pad"])
    assert found["tokens"].dims == (2, 4) and found["tokens"].values == ("a", "b")
    assert found["x"].values is None and set(found) == {"tokens", "x"}


def test_a_partial_one_hot_and_a_number_are_read_as_the_number() -> None:
    # the compiler lays out the index one-hot columns something reads (here 0 and 3) beside the
    # number `indices`: decoding takes the number, complete at every position
    labels = ["one", "indices:0", "indices:3", "indices", "indices^2"]
    var = residual_variables(labels)["indices"]
    assert var.dims == (3,) and var.values is None
    resid = np.array([[1, 1, 0, 0, 0], [1, 0, 0, 1, 1], [1, 0, 0, 2, 4], [1, 0, 1, 3, 9]], float)
    assert var.decode(resid) == [0.0, 1.0, 2.0, 3.0]


def test_no_hot_column_agrees_only_with_a_value_that_has_none() -> None:
    var = residual_variables(["classes:0", "classes:2", "flag:True"])["classes"]
    assert var.agrees(None, 1) and var.agrees(None, 5)  # no column: none is hot
    assert not var.agrees(None, 0) and not var.agrees(None, 2.0)  # 2.0 has the column "2"
    assert var.agrees("2", 2.0) and not var.agrees("2", 0)
    flag = residual_variables(["flag:True"])["flag"]
    assert flag.agrees(None, False) and not flag.agrees(None, True)


# ------------------------------------------------------------------------------------------------
# A fake runtime: residual stream = one-hot / numerical encoding of the interpreter's values


def program() -> tuple[SOp, dict[str, Any]]:
    tokens = TokensSOp(name="tokens")
    flag = MapSOp(fn=lambda t: t == "a", inputs=(tokens,), text='tokens == "a"', name="flag")
    prev = AggregateSOp(
        selector=Select(
            keys=IndicesSOp(name="indices"),
            queries=MapSOp(fn=lambda i: i - 1, inputs=(IndicesSOp(),), text="indices - 1"),
            comparison=Comparison.EQ,
        ),
        sop=MapSOp(fn=int, inputs=(flag,), text="indicator(flag)"),
        default=0,
        name="prev",
    )
    meta = {
        "residual": ["one", "bos", "tokens:a", "tokens:b", "flag:False", "flag:True", "prev"],
        "layers": [
            {"attn": [], "mlp": [{"name": "flag", "op": 'tokens == "a"'}]},
            {"attn": [{"head": 0, "name": "prev", "op": "aggregate(...)"}], "mlp": []},
        ],
        "output": {"name": "prev"},
    }
    return prev, meta


class FakeModel:
    """Writes each variable at its checkpoint; `corrupt` = (hook, dim, position, value) from there on."""

    def __init__(
        self, sop: SOp, meta: dict[str, Any], corrupt: tuple[str, int, int, float] | None = None
    ):
        self.sop, self.meta, self.corrupt = sop, meta, corrupt
        self.nodes = nodes_by_name(sop)

    def encode(self, inputs: Sequence[Sequence[Any]]) -> tuple[list[list[Any]], list[int]]:
        return [list(x) for x in inputs], [len(x) for x in inputs]

    def run_with_cache(self, ids: list[list[Any]]) -> tuple[None, dict[str, np.ndarray]]:
        tokens = ids[0]
        ev = Evaluator(tokens)
        labels = self.meta["residual"]
        resid = np.zeros((1, len(tokens) + 1, len(labels)))
        resid[0, :, labels.index("one")] = 1.0  # as a compiled model's embedding writes it
        resid[0, 0, labels.index("bos")] = 1.0
        order = [
            ("blocks.0.hook_resid_pre", ["tokens"]),
            ("blocks.0.hook_resid_mid", []),
            ("blocks.0.hook_resid_post", ["flag"]),
            ("blocks.1.hook_resid_pre", []),
            ("blocks.1.hook_resid_mid", ["prev"]),
            ("blocks.1.hook_resid_post", []),
        ]
        cache, corrupted = {}, False
        for hook, names in order:
            for name in names:
                values = ev.value(self.nodes[name]).values
                for p, v in enumerate(values):
                    for d, label in enumerate(labels):
                        if label == name:
                            resid[0, p + 1, d] = float(v)
                        elif label == f"{name}:{v}":
                            resid[0, p + 1, d] = 1.0
            if self.corrupt and self.corrupt[0] == hook:
                corrupted = True
            if corrupted and self.corrupt[2] < len(tokens):  # type: ignore[index]
                _, dim, pos, value = self.corrupt  # type: ignore[misc]
                resid[0, pos + 1, dim] = value
            cache[hook] = resid.copy()
        return None, cache

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
        out = []
        for tokens in inputs:
            _, cache = self.run_with_cache([list(tokens)])
            last = cache["blocks.1.hook_resid_post"][0, 1:, 6]
            out.append([round(v) for v in last])
        return out


def test_verify_passes_on_a_faithful_model() -> None:
    sop, meta = program()
    report = verify(
        sop, FakeModel(sop, meta), plan_inputs("ab", 4, samples=20, seed=1), batch_size=7
    )
    assert report.ok and report.checked == 2 + 4 + 8 + 16 and report.lengths == {1, 2, 3, 4}
    text = format_success(report, "prev")
    assert "30 inputs" in text and "every input of length 1..4 over 2 tokens" in text
    assert report_json(report)["ok"] is True


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        # flag's one-hot blurred at position 1 by layer 0's MLP (False at 5 beside True at 1):
        # found there, not later in `prev`
        (
            ("blocks.0.hook_resid_post", 4, 1, 5.0),
            ("flag", 0, "mlp", 1, Unclear((("False", 5.0), ("True", 1.0))), True, 'tokens == "a"'),
        ),
        # prev (numerical) wrong at position 2 after layer 1's attention
        (("blocks.1.hook_resid_mid", 6, 2, 7.0), ("prev", 1, "attn", 2, 7.0, 1, "aggregate(...)")),
        # the tokens themselves wrong after the embedding
        (
            ("blocks.0.hook_resid_pre", 3, 0, 9.0),
            ("tokens", None, "embedding", 0, Unclear((("a", 1.0), ("b", 9.0))), "a"),
        ),
    ],
)
def test_diagnose_finds_the_first_wrong_variable(
    corrupt: tuple[str, int, int, float], expected: tuple[Any, ...]
) -> None:
    sop, meta = program()
    model = FakeModel(sop, meta, corrupt)
    div = diagnose(sop, model, list("aab"), nodes_by_name(sop))
    assert div == Divergence(*expected)


def test_failing_report_names_input_variable_layer_and_position() -> None:
    sop, meta = program()
    model = FakeModel(sop, meta, ("blocks.1.hook_resid_mid", 6, 2, 7.0))
    report = verify(sop, model, plan_inputs("ab", 3, samples=0))
    assert not report.ok and report.first_failure is not None
    assert report.first_failure.tokens == ("a", "a", "a") and report.first_failure.position == 2
    text = format_failure(report, "prev")
    assert 'first failing input: "aaa"' in text
    assert "first divergence: variable `prev` = aggregate(...), layer 1 attn, position 2" in text
    data = report_json(report)
    assert data["divergence"]["variable"] == "prev" and data["divergence"]["layer"] == 1


def test_inputs_the_interpreter_rejects_are_skipped_and_counted() -> None:
    tokens = TokensSOp(name="tokens")
    inv = MapSOp(
        fn=lambda t: 1 / (t == "a"), inputs=(tokens,), text="1 / (tokens == a)", name="inv"
    )

    class Echo:
        meta: ClassVar[dict[str, Any]] = {"residual": [], "layers": []}

        def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
            return [[1.0] * len(x) for x in inputs]

    report = verify(inv, Echo(), plan_inputs("ab", 2, samples=0))  # type: ignore[arg-type]
    assert report.ok and report.checked == 2 and report.skipped == 4
    assert report.skipped_example is not None and report.skipped_example[0] == ("b",)
    assert "4 inputs where the interpreter fails" in format_success(report, "inv")


def test_a_plan_the_interpreter_fails_on_everywhere_verifies_nothing() -> None:
    tokens = TokensSOp(name="tokens")
    inv = MapSOp(fn=lambda t: 1 / 0, inputs=(tokens,), text="1 / 0", name="inv")

    class Echo:
        meta: ClassVar[dict[str, Any]] = {"residual": [], "layers": []}

        def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
            return [[1.0] * len(x) for x in inputs]

    report = verify(inv, Echo(), plan_inputs("ab", 2, samples=0))  # type: ignore[arg-type]
    assert report.checked == 0 and report.skipped == 6 and report.failures == 0
    assert report.nothing_compared and not report.ok
    text = format_failure(report, "inv")
    assert text.startswith(
        "error: verification failed for inv: the interpreter fails on every one of the 6 "
        'inputs, so the model was compared on none\n  first failing input: "a" (length 1): '
    )
    assert "verified" not in text and "skipped:" not in text
    assert report_json(report)["ok"] is False


def test_whole_numbers_of_the_other_type_are_counted_not_failed() -> None:
    # a model that gives 0 where the interpreter's mean gives 0.0: values agree, types do not
    tokens = TokensSOp(name="tokens")
    half = MapSOp(fn=lambda t: 0.0 if t == "a" else 0, inputs=(tokens,), text="h", name="h")

    class Ints:
        meta: ClassVar[dict[str, Any]] = {"residual": [], "layers": []}

        def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
            return [[0] * len(x) for x in inputs]

    report = verify(half, Ints(), plan_inputs("ab", 2, samples=0))  # type: ignore[arg-type]
    assert report.ok and report.checked == 6 and report.type_only == 4  # every input with an "a"
    text = format_success(report, "h")
    assert (
        "types:      on 4 inputs a whole number is an int where the interpreter gives a float"
        in text
    )
    assert 'e.g. "a" at position 0: model 0, interpreter 0.0' in text
    assert report_json(report)["type_only"] == 4


def test_non_finite_outputs_are_failures_not_crashes() -> None:
    import json

    tokens = TokensSOp(name="tokens")
    flag = MapSOp(fn=lambda t: t == "a", inputs=(tokens,), text='tokens == "a"', name="flag")

    class Broken:
        """Computes NaN whenever the input holds a "b" (the runtime raises ArithmeticError then)."""

        meta: ClassVar[dict[str, Any]] = {
            "residual": ["flag"],
            "layers": [],
            "output": {"name": "flag"},
        }

        def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
            if any("b" in x for x in inputs):
                raise ArithmeticError("the model computed nan for output 'flag'")
            return [[t == "a" for t in x] for x in inputs]

        def encode(self, inputs: Sequence[Sequence[Any]]) -> tuple[Any, list[int]]:
            return inputs, [len(x) for x in inputs]

        def run_with_cache(self, ids: Any) -> tuple[None, dict[str, np.ndarray]]:
            n = len(ids[0])
            return None, {"blocks.0.hook_resid_pre": np.full((1, n + 1, 1), np.nan)}

    report = verify(flag, Broken(), plan_inputs("ab", 2, samples=0))  # type: ignore[arg-type]
    assert report.checked == 6 and report.failures == 4  # every input with a "b"
    assert report.first_failure is not None and report.first_failure.tokens == ("b",)
    assert report.first_failure.model == ("<non-finite>",)
    div = report.divergence
    assert div is not None and (div.variable, div.layer, div.sublayer, div.position) == (
        "flag",
        None,
        "embedding",
        0,
    )
    assert np.isnan(div.model) and div.interpreter is False
    json.dumps(report_json(report), allow_nan=False)


def test_lengths_left_unchecked_without_samples_are_said() -> None:
    sop, meta = program()
    model = FakeModel(sop, meta)
    report = verify(sop, model, plan_inputs("ab", 5, exhaustive_len=2, samples=0))
    text = format_success(report, "prev")
    assert "  unchecked:  no input of lengths 3..5 was checked (no samples)" in text.splitlines()
    report = verify(sop, model, plan_inputs("ab", 3, exhaustive_len=2, samples=0))
    assert "  unchecked:  no input of length 3 was checked (no samples)" in format_success(
        report, "prev"
    )
    report = verify(sop, model, plan_inputs("ab", 3, exhaustive_len=3, samples=0))
    assert "unchecked" not in format_success(report, "prev")


def test_nan_in_a_one_hot_or_a_fixed_dim_is_never_read_as_right() -> None:
    # NaN compares false with everything: `x > tol` never flagged it, so it read as 0
    from rasp.tools.residuals import ResidualVariable, _strays

    var = ResidualVariable("t", (0, 1), ("a", "b"))
    got = var.decode(np.array([[1.0, np.nan], [np.nan, 0.0]]))
    assert all(isinstance(g, Unclear) for g in got) and not var.agrees(got[0], "a")
    rows = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, np.nan]])  # BOS, then one real position
    (stray,) = _strays(rows, ["one", "bos", "pad"], 0, {}, [])
    assert (stray.label, stray.position, stray.expected) == ("pad", 0, 0.0)
