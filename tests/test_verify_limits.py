"""`rasp verify`'s size limit: a plan of more than `MAX_INPUTS` inputs is refused before anything
runs (3 tokens up to length 30 would be 3 * 10^14 inputs: years), with the count and a plan that
fits. The CLI and the REPL's `:verify K` both refuse; neither compiles or runs anything first.
A plan within the limit may still hold a million inputs: the order sweep keeps only its 256.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rasp.errors import RaspError
from rasp.tools.verify import MAX_INPUTS, check_plan_size, count_up_to, plan_inputs

ROOT = Path(__file__).resolve().parents[1]
REVERSE = ROOT / "programs" / "reverse.rasp"
# what the tester ran: every input of 1..30 tokens over abc
HUGE = ["verify", str(REVERSE), "--vocab", "abc", "--max-len", "30", "--exhaustive-len", "30"]


def test_count_up_to_sums_every_length() -> None:
    assert count_up_to(3, 0) == 0 and count_up_to(3, 2) == 3 + 9
    assert count_up_to(3, 30) == 308_836_698_141_972
    assert plan_inputs("abc", 30, 30).exhaustive_count == count_up_to(3, 30)


def test_a_plan_over_the_limit_is_refused_with_one_that_fits() -> None:
    with pytest.raises(RaspError) as caught:
        check_plan_size(plan_inputs("abc", 30, 30))
    assert caught.value.message == (
        "--exhaustive-len 30: every input of length 1..30 over 3 tokens is 308,836,698,141,972 "
        f"inputs, more than verify checks ({MAX_INPUTS:,})"
    )
    assert caught.value.hint == (
        "use --exhaustive-len 12 or less (797,160 inputs); longer inputs are sampled (--samples S)"
    )
    assert count_up_to(3, 12) <= MAX_INPUTS < count_up_to(3, 13)


def test_plans_within_the_limit_pass() -> None:
    check_plan_size(plan_inputs("abc", 30))  # the default K: at most 20,000 inputs
    check_plan_size(plan_inputs("abc", 30, 12))  # 797,160 + 1,000 samples
    check_plan_size(plan_inputs("a", 10**6, 10**6, samples=0))  # exactly the limit
    with pytest.raises(RaspError, match=r"^--samples 202,841: .* 1,000,001 inputs"):
        check_plan_size(plan_inputs("abc", 30, 12, samples=MAX_INPUTS - 797_160 + 1))
    samples = MAX_INPUTS - 797_160
    check_plan_size(plan_inputs("abc", 30, 12, samples=samples))
    check_plan_size(plan_inputs("abc", 12, 12, samples=10**9))  # K = N: no sample is drawn


def test_the_cli_refuses_before_compiling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rasp.tools.cli import main

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compiled a program verify should have refused")

    monkeypatch.setattr("rasp.tools.model_steps.compile_sop", never)
    for extra in ([], ["--json"]):
        assert main([*HUGE, *extra]) == 1
        out, err = capsys.readouterr()
        # (with --json, stdout has the error as one object: docs/inspect.md)
        assert (json.loads(out)["ok"] is False) if extra else out == ""
        assert err.splitlines() == [
            "error: --exhaustive-len 30: every input of length 1..30 over 3 tokens is "
            f"308,836,698,141,972 inputs, more than verify checks ({MAX_INPUTS:,})",
            "hint: use --exhaustive-len 12 or less (797,160 inputs); longer inputs are sampled "
            "(--samples S)",
        ]
    assert main([*HUGE[:-1], "12", "--samples", "300000"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: --samples 300,000: with the 797,160 exhaustive inputs, 1,097,160 inputs, more "
        f"than verify checks ({MAX_INPUTS:,})",
        "hint: use --samples 202,840 or less",
    ]


def test_the_help_states_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    from rasp.tools.cli import main

    assert main(["verify", "--help"]) == 0
    assert "refuses more than 1,000,000 inputs" in " ".join(capsys.readouterr().out.split())


def test_the_repl_refuses_a_k_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    from rasp.tools.repl import ReplSession

    session = ReplSession()
    session.feed("r = aggregate(select(indices, length - indices - 1, ==), tokens);")
    assert session.feed(":compile r abc 14").startswith("compiled r:")

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("ran a check the REPL should have refused")

    monkeypatch.setattr("rasp.tools.verify_orders.check_model", never)
    assert session.feed(":verify 14").splitlines() == [
        "error: :verify 14: every input of length 1..14 over 3 tokens is 7,174,452 inputs, more than "
        f"verify checks ({MAX_INPUTS:,})",
        "hint: use :verify 12 or less (797,160 inputs); longer inputs are sampled",
    ]


def test_a_k_past_the_maximum_length_is_echoed_as_asked_and_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `:verify 1000000000000000000000000` was refused as `:verify 30: ...`, and on a small model
    # reported only 1..4, as if that K had been asked for
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    from rasp.tools.repl import ReplSession

    huge = 10**24
    with pytest.raises(RaspError) as caught:
        check_plan_size(plan_inputs("abc", 30, huge))
    assert caught.value.message.startswith(
        f"--exhaustive-len {huge} (capped at the maximum length 30): every input of length 1..30 "
    )
    assert plan_inputs("abc", 30, 31).asked_len == 31
    assert plan_inputs("abc", 30, 30).asked_len is None and plan_inputs("abc", 30).asked_len is None

    session = ReplSession()
    session.feed("r = aggregate(select(indices, length - indices - 1, ==), tokens);")
    assert session.feed(":compile r abc 14").startswith("compiled r:")
    assert session.feed(f":verify {huge}").splitlines()[0] == (
        f"error: :verify {huge} (capped at the maximum length 14): every input of length 1..14 "
        f"over 3 tokens is 7,174,452 inputs, more than verify checks ({MAX_INPUTS:,})"
    )
    assert session.feed(":compile r abc 3").startswith("compiled r:")
    lines = session.feed(f":verify {huge}").splitlines()
    assert lines[1] == (
        "  exhaustive: every input of length 1..3 over 3 tokens (39 inputs; "
        "1..1,000,000,000,000,000,000,000,000 was asked for, capped at the maximum length 3)"
    )
    assert session.feed(":verify 3").splitlines()[1] == (
        "  exhaustive: every input of length 1..3 over 3 tokens (39 inputs)"
    )


def test_the_sweep_keeps_only_its_inputs_of_a_large_plan() -> None:
    """The order sweep picks 256 inputs from the plan; a plan near the limit streams past it."""
    import random
    import tracemalloc

    pytest.importorskip("torch")
    from rasp.tools.verify_orders import sweep_inputs

    for plan in (plan_inputs("abc", 6, samples=50, seed=4), plan_inputs("ab", 9, 4, 300, 2)):
        everything = list(plan.inputs())  # what the sweep drew from before it streamed
        rest = everything[20:]
        picked = sorted(random.Random(plan.seed).sample(range(len(rest)), 30))
        assert sweep_inputs(plan, 20, 30) == (everything[:20] + [rest[i] for i in picked], 20, 30)
    plan = plan_inputs("abc", 10, 10)  # 88,572 inputs: some 15 MB as lists
    tracemalloc.start()
    try:
        inputs, first, sampled = sweep_inputs(plan)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (len(inputs), first, sampled) == (256, 128, 128) and peak < 2_000_000


@pytest.fixture(scope="module")
def wide_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """reverse over 10 tokens up to length 8: every input of length 1..8 is 111,111,110 inputs."""
    pytest.importorskip("compiler")
    from rasp.tools.cli import main

    path = tmp_path_factory.mktemp("wide") / "reverse10.safetensors"
    argv = ["compile", str(REVERSE), "--vocab", "abcdefghij", "--max-len", "8", "-q"]
    assert main([*argv, "-o", str(path)]) == 0
    return path


def test_verify_model_refuses_from_the_header_before_loading_the_model(
    wide_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's size, a --vocab token and a --max-len the model cannot take are all known from the
    file's header: refused before the model (and torch, seconds) is loaded."""
    from rasp.tools.cli import main

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("loaded a model verify should have refused from its header")

    monkeypatch.setattr("rasp.tools.model_steps.load_model", never)
    argv = ["verify", str(REVERSE), "--model", str(wide_model)]
    assert main([*argv, "--exhaustive-len", "8"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: --exhaustive-len 8: every input of length 1..8 over 10 tokens is 111,111,110 "
        f"inputs, more than verify checks ({MAX_INPUTS:,})",
        "hint: use --exhaustive-len 5 or less (111,110 inputs); longer inputs are sampled "
        "(--samples S)",
    ]
    assert main([*argv, "--samples", "2000000"]) == 1
    assert capsys.readouterr().err.startswith("error: --samples 2,000,000: with the 11,110")
    assert main([*argv, "--max-len", "9"]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument --max-len 9: longer than {wide_model} accepts (8)\n"
    )
    assert main([*argv, "--vocab", "ax"]) == 2
    assert "argument --vocab: the token x is not in the vocabulary of" in capsys.readouterr().err
    assert main([*argv, "--exhaustive-len", "0", "--samples", "0"]) == 2
    assert "leaves no input to check" in capsys.readouterr().err


def test_verify_model_refuses_an_oversized_plan_without_importing_torch(wide_model: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from rasp.tools.cli import main\n"
        f"rc = main(['verify', {str(REVERSE)!r}, '--model', {str(wide_model)!r}, "
        "'--exhaustive-len', '8'])\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.split() == ["1", "False"], done.stderr
    assert "111,111,110 inputs" in done.stderr


def test_a_refused_compile_is_a_json_report_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    # `verify --json` printed nothing on stdout when the compiler refused the program: a tool
    # reading the report got no JSON at all. It gets one object saying nothing was checked and why.
    pytest.importorskip("compiler")
    import json

    from rasp.tools.cli import main

    argv = ["verify", str(REVERSE), "--vocab", "abc", "--max-len", "100000", "--json"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert {k: report[k] for k in ("ok", "checked", "vocab", "max_len")} == {
        "ok": False,
        "checked": 0,
        "vocab": ["a", "b", "c"],
        "max_len": 100_000,
    }
    (refused,) = report["refused"]
    line = (
        REVERSE.read_text(encoding="utf-8").splitlines().index("reverse = aggregate(flip, tokens);")
    )
    where = f"{REVERSE}:{line + 1}:11"  # the output's aggregate
    assert refused["severity"] == "error" and refused["location"] == where
    assert refused["message"].startswith("at max-len 100,000 compiling would take too long")
    assert "(--max-params / max_params=)" in refused["hint"]
    assert err.startswith(f"{where}: error: at max-len 100,000")  # stderr says it too
    assert main(argv[:-1]) == 1 and capsys.readouterr().out == ""  # without --json: stderr only
