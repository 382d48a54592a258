"""`rasp.tools.verify_orders`: the evaluation-order sweep of `rasp verify` (threads, batch sizes, dtypes,
devices), its decoder margins, and how the report shows them.

The sweep's detection is tested on a real model made order-sensitive on purpose (one config gets
different logits), so the test does not depend on a compiler bug being present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformer = pytest.importorskip("transformer")
pytest.importorskip("compiler")

from rasp.interpreter import load_file  # noqa: E402
from rasp.tools.verify import plan_inputs  # noqa: E402
from rasp.tools.verify_json import report_json  # noqa: E402
from rasp.tools.verify_orders import (  # noqa: E402
    BATCH_SIZES,
    THREADS,
    RunConfig,
    _margins,
    check_model,
    margin_kind,
    run_configs,
    sweep_inputs,
    sweep_orders,
)
from rasp.tools.verify_text import format_failure, format_success  # noqa: E402
from tests.runtime_helpers import as_runtime  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = RunConfig("cpu", "float32", 1, 1)
# how the runs line names the devices and thread counts, without and with CUDA (16 or 24 runs)
RUNS_TEXT = {False: ("cpu", "{1, 2 threads}"), True: ("{cpu, cuda}", "{1, 2 CPU threads}")}


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    """As `rasp verify` runs: torch single-threaded, except in the sweep's multi-thread runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def program(name: str) -> Any:
    interp = load_file(ROOT / "programs" / f"{name}.rasp")
    return interp.get(interp.last_assigned)


def compiled(name: str, vocab: str, max_len: int) -> tuple[Any, Any]:
    import compiler

    sop = program(name)
    return sop, as_runtime(compiler.compile_sop(sop, list(vocab), max_len, name=name))


class OrderSensitive(transformer.CompiledTransformer):
    """A real model whose logits change at position `pos` of unbatched float32 CPU runs under 2
    threads: what a float32 reduction that rounds differently per thread count looks like from
    outside."""

    pos = 2

    def forward(self, ids: Any) -> Any:
        logits = super().forward(ids)
        if (
            torch.get_num_threads() == 2
            and ids.shape[0] == 1
            and self.dtype == torch.float32
            and self.device.type == "cpu"  # CUDA runs keep the last CPU run's thread count
        ):
            logits = logits.clone()
            if ids.shape[1] > self.pos:
                logits[0, self.pos] = logits[0, self.pos].flip(-1)  # another value wins the argmax
        return logits

    def to(self, device: Any = None, dtype: Any = None) -> OrderSensitive:
        copy = super().to(device, dtype)
        return OrderSensitive(copy.model, copy.meta)


def test_the_sweep_covers_every_config_on_a_bounded_seeded_subset() -> None:
    plan = plan_inputs("abc", 6, samples=50, seed=4)
    inputs, first, sampled = sweep_inputs(plan, first=20, sampled=30)
    everything = list(plan.inputs())
    assert (first, sampled) == (20, 30) and inputs[:20] == everything[:20]
    assert all(x in everything[20:] for x in inputs[20:]) and len(inputs) == 50
    assert sweep_inputs(plan, 20, 30)[0] == inputs  # seeded
    small = plan_inputs("ab", 3, samples=0)
    assert sweep_inputs(small, 4, 100)[0] == list(small.inputs())  # a small plan: every input
    configs = run_configs(cuda=False)
    assert configs[0] == REFERENCE and len(configs) == 2 * len(THREADS) * len(BATCH_SIZES)
    assert (
        {c.dtype for c in configs} == {"float32", "float64"} and 1 in THREADS and max(THREADS) > 1
    )
    cuda = run_configs(cuda=True)[len(configs) :]
    assert {(c.device, c.threads) for c in cuda} == {("cuda", None)}
    assert len(cuda) == 2 * len(BATCH_SIZES)


def test_a_correct_model_passes_with_its_margin_and_settings_are_restored() -> None:
    sop, model = compiled("reverse", "abc", 5)
    threads = torch.get_num_threads()
    assert threads == 1
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        report = check_model(sop, model, plan_inputs("abc", 5, samples=0))
        assert torch.backends.cuda.matmul.allow_tf32 is True
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    assert torch.get_num_threads() == threads
    orders = report.orders
    assert report.ok and orders is not None and orders.ok and orders.inputs == 256
    assert orders.configs == run_configs(torch.cuda.is_available())
    runs, (devices, threads) = len(orders.configs), RUNS_TEXT[torch.cuda.is_available()]
    assert orders.margin is not None and orders.margin.value == pytest.approx(1.0, abs=1e-4)
    assert orders.margin.config == REFERENCE and orders.margin.tokens == ("a",)
    text = format_success(report, "reverse").splitlines()
    assert text[4].startswith(
        f"  orders:     {runs} runs agree with each other and with the interpreter on "
        "256 of the 363 inputs (first 128, then 128 sampled with seed 0)"
    )
    assert text[5] == (
        f"              runs: {devices} x {{float32, float64}} x {threads} x "
        "{unbatched, batches of 3, 16, 128 (mixed lengths)}"
    )
    assert text[6] == (
        '  margin:     1 (top logit - second logit), the smallest in any run: input "a", '
        "position 0, cpu float32, 1 thread, unbatched"
    )
    data = report_json(report)["orders"]
    assert data["ok"] and data["runs"][0] == {
        "device": "cpu",
        "dtype": "float32",
        "threads": 1,
        "batch_size": 1,
    }
    assert (
        data["margin"]["input"] == ["a"] and data["margin"]["measure"] == "top logit - second logit"
    )


def test_an_order_dependent_model_fails_naming_the_run_input_and_position() -> None:
    sop, model = compiled("reverse", "abc", 5)
    sensitive = OrderSensitive(model.model, model.meta)
    report = check_model(sop, sensitive, plan_inputs("abc", 5, samples=0))
    assert report.failures == 0  # the batched comparison alone would have passed
    orders = report.orders
    # unbatched, and batches of 3 whose last batch holds one input (256 = 85 * 3 + 1)
    assert not report.ok and orders is not None and not orders.ok and orders.runs_disagreeing == 2
    bad = orders.first_mismatch
    assert bad is not None and bad.config == RunConfig("cpu", "float32", 2, 1)
    assert len(bad.tokens) >= OrderSensitive.pos and bad.position == OrderSensitive.pos - 1
    assert bad.reference == bad.interpreter == bad.tokens[::-1][bad.position] != bad.got
    lines = format_failure(report, "reverse").splitlines()
    runs = len(orders.configs)
    assert lines[0] == (
        "error: verification failed for reverse: the model decodes differently under "
        f"other evaluation orders (2 of {runs} runs, on {orders.inputs_disagreeing} of 256 inputs)"
    )
    assert lines[1] == (
        f"  first disagreement: input {json.dumps(''.join(bad.tokens))} (length "
        f"{len(bad.tokens)}), position 1, in the run cpu float32, 2 threads, unbatched"
    )
    assert lines[3] == f"    reference:   {bad.reference} (cpu float32, 1 thread, unbatched)"
    assert any(line.startswith(f"  orders:     2 of {runs} runs disagree") for line in lines)
    data = report_json(report)
    assert data["ok"] is False and data["failures"] == 0
    assert data["orders"]["first_mismatch"]["run"] == {
        "device": "cpu",
        "dtype": "float32",
        "threads": 2,
        "batch_size": 1,
    }


def test_a_float64_run_is_one_of_the_orders() -> None:
    """A model whose float64 copy decodes differently (here: broken on purpose) fails too."""

    class Float64Differs(OrderSensitive):
        def forward(self, ids: Any) -> Any:
            logits = transformer.CompiledTransformer.forward(self, ids)
            return -logits if self.dtype == torch.float64 else logits

        def to(self, device: Any = None, dtype: Any = None) -> Float64Differs:
            copy = transformer.CompiledTransformer.to(self, device, dtype)
            return Float64Differs(copy.model, copy.meta)

    sop, model = compiled("reverse", "abc", 4)
    orders = sweep_orders(
        sop, Float64Differs(model.model, model.meta), plan_inputs("abc", 4, samples=0), cuda=False
    )
    assert orders.runs_disagreeing == len(orders.configs) // 2
    assert orders.first_mismatch is not None and orders.first_mismatch.config.dtype == "float64"


def _spec(encoding: str, kind: str, values: list[Any] | None) -> dict[str, Any]:
    return {"encoding": encoding, "type": kind, "values": values}


def test_decoder_margins() -> None:
    categorical = _margins(
        _spec("categorical", "strings", ["a", "b", "c"]),
        np.array([[3.0, 1.0, 0.5], [0.0, 0.2, 0.1]]),
        ["a", "b"],
    )
    np.testing.assert_allclose(categorical, [2.0, 0.1])
    listed = _spec("numerical", "floats", [0, 0.0, 0.5, 2])  # 0 and 0.0 are one point
    x = np.array([[0.1], [0.5], [1.9], [0.0]])
    np.testing.assert_allclose(
        _margins(listed, x, [0, 0.5, 2, 0.0]), [0.25 - 0.1, 0.25, 0.75 - 0.1, 0.25]
    )
    ints = _margins(_spec("numerical", "ints", None), np.array([[2.9], [-1.2], [4.0]]), [3, -1, 4])
    np.testing.assert_allclose(ints, [0.4, 0.3, 0.5])
    bools = _margins(_spec("numerical", "bools", None), np.array([[0.9], [0.2]]), [True, False])
    np.testing.assert_allclose(bools, [0.4, 0.3])
    assert _margins(_spec("numerical", "floats", None), np.array([[0.3]]), [0.3]) is None
    assert _margins(_spec("numerical", "ints", [7]), np.array([[7.2]]), [7]) is None  # one value
    assert _margins(_spec("categorical", "strings", ["a"]), np.array([[1.0]]), ["a"]) is None
    # per-position grids: position i decodes round(x * d_i) / d_i, half a step 1/(2 d_i) away
    grid = {"encoding": "numerical", "type": "floats", "denominators": [1, 2, 4]}
    decoded = [1, 0.5, 0.75]
    at = np.array([[0.9], [0.5], [0.8]])
    np.testing.assert_allclose(_margins(grid, at, decoded), [0.5 - 0.1, 0.25, 0.125 - 0.05])
    assert margin_kind(grid) == "half the position's grid step 1/d - distance to the decoded value"


def test_cli_verify_reports_the_sweep_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rasp.tools.cli import main

    path = tmp_path / "hist.rasp"
    path.write_text((ROOT / "programs" / "hist.rasp").read_text())
    assert main(["verify", str(path), "--vocab", "ab", "--max-len", "4"]) == 0
    out = capsys.readouterr().out
    runs = len(run_configs(torch.cuda.is_available()))
    assert (
        f"  orders:     {runs} runs agree with each other and with the interpreter on every one of "
        "the 30 inputs" in out
    )
    assert (
        "  margin:     0.5 (half the gap to the nearest other listed value - distance to the snapped one)"
        in out
    )
    assert main(["verify", str(path), "--vocab", "ab", "--max-len", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (
        data["ok"]
        and data["orders"]["inputs"] == 30
        and data["orders"]["margin"]["value"] == pytest.approx(0.5)
    )
    assert "certificate" in data  # null, or the certificate re-check (not this module's concern)


# ------------------------------------------------------------------------------------------------
# Inputs the interpreter fails on have no output to measure


def test_an_output_of_one_value_has_no_margin_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`reverse` over one token outputs that token everywhere: one logit, no second to measure a
    margin against. The report says so (it used to call it 'a float output without listed
    values', of a string output)."""
    from rasp.tools.cli import main

    argv = ["verify", str(ROOT / "programs" / "reverse.rasp"), "--vocab", "a", "--max-len", "3"]
    assert main(argv) == 0
    assert (
        "  margin:     none (the output has one possible value: no decision boundary)"
        in capsys.readouterr().out.splitlines()
    )


DIV = "x = 10 / (indices - 2);\n"  # fails at position 2: on every input of 3 tokens or more


def test_the_margin_leaves_out_inputs_the_interpreter_fails_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the program fails the model's output is unspecified (verify skips those inputs), so
    its margin there says nothing: this model's is -2.5 at position 2 of "aaa"."""
    from rasp.tools.cli import main

    path = tmp_path / "div.rasp"
    path.write_text(DIV)
    argv = ["verify", str(path), "--vocab", "ab", "--max-len", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        "  margin:     2.5 (half the gap to the nearest other listed value - distance to the "
        "snapped one), the smallest in any run on the 6 inputs the interpreter gives a value for: "
        'input "a", position 0, cpu float32, 1 thread, unbatched'
    ) in out.splitlines()
    assert out.rstrip().endswith("; smallest observed 2.5")  # the certificate's decoder line
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    orders = data["orders"]
    assert orders["uninterpreted"] == 24 and data["skipped"] == 24
    assert orders["margin"]["value"] == pytest.approx(2.5) and orders["margin"]["input"] == ["a"]
    assert data["certificate"]["lines"][-1].endswith("; smallest observed 2.5")


def test_no_margin_and_no_verification_where_the_interpreter_fails_on_every_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing was compared, so nothing is verified: exit 1, naming the first failing input and
    where the program fails on it (it used to print 'verified ... on 0 inputs' and exit 0)."""
    from rasp.tools.cli import main

    path, model = tmp_path / "tok.rasp", tmp_path / "tok.safetensors"
    path.write_text('x = 6 / (tokens == "a");\n')  # fails wherever a token is not "a"
    compile_argv = ["compile", str(path), "--vocab", "ab", "--max-len", "3", "-q"]
    assert main([*compile_argv, "-o", str(model)]) == 0
    argv = ["verify", str(path), "--model", str(model), "--vocab", "b"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and "verified" not in err
    lines = err.splitlines()
    assert lines[:7] == [
        f"error: verification failed for {path} `x`: the interpreter fails on every one of the 3 "
        "inputs, so the model was compared on none",
        '  first failing input: "b" (length 1)',
        f"    {path}:1:5: error: division by zero",
        '        x = 6 / (tokens == "a");',
        "            ^~~~~~~~~~~~~~~~~~~",
        '    hint: it failed at position 0, where (tokens == "a") = False (a boolean)',
        "  hint:       verify an s-op that gives a value on some input of this vocabulary and "
        "these lengths",
    ]
    runs = len(run_configs(torch.cuda.is_available()))  # 16, or 24 with CUDA
    assert (
        f"  orders:     {runs} runs agree with each other (the interpreter gives a value for none "
        "of the inputs) on every one of the 3 inputs"
    ) in lines
    assert (
        "  margin:     none (the interpreter fails on every swept input: no output to measure)"
        in lines
    )
    assert "smallest observed" not in err
    assert main([*argv, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["checked"] == 0 and data["skipped"] == 3
    assert data["skipped_example"] == {
        "input": ["b"],
        "error": "division by zero",
        "location": f"{path}:1:5",
    }
    orders = data["orders"]
    assert orders["margin"] is None and orders["uninterpreted"] == orders["inputs"] == 3
