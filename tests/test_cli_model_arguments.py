"""Programs and models in each other's places: `verify --model` against a program without the
model's output, `--name` another s-op than the model's, and a model file given as the program."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from rasp.tools.cli import main
from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]
REVERSE = str(ROOT / "programs" / "reverse.rasp")
SORT = str(ROOT / "programs" / "sort.rasp")


@pytest.fixture(scope="module")
def reverse_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("names") / "reverse.safetensors"
    argv = ["compile", REVERSE, "--vocab", "ab", "--max-len", "3", "-q", "-o", str(path)]
    assert main(argv) == 0
    return path


def test_a_program_without_the_models_output_is_named_as_such(
    capsys: pytest.CaptureFixture[str], reverse_model: Path
) -> None:
    """It used to say `argument --name 'reverse': ... defines no name`, of an option never given."""
    code, out, err = run(capsys, "verify", SORT, "--model", str(reverse_model))
    assert (
        code == 1
        and out == ""
        and err.splitlines()
        == [
            f"error: {reverse_model} computes `reverse`, which {SORT} does not define",
            f"hint: verify {reverse_model} against the program it was compiled from, or pass --name "
            "with the s-op of this program that computes it",
        ]
    )


def test_another_s_op_than_the_models_output_is_verified_with_a_warning(
    capsys: pytest.CaptureFixture[str], reverse_model: Path
) -> None:
    argv = ["verify", REVERSE, "--model", str(reverse_model)]
    code, _, err = run(capsys, *argv, "--name", "length")
    assert code == 1 and err.splitlines()[0] == (
        f"warning: {reverse_model} computes `reverse`; verifying `length` of {REVERSE} against it"
    )
    code, out, err = run(capsys, *argv, "--name", "reverse")
    assert code == 0 and err == "" and out.startswith(f"verified {REVERSE} `reverse`")


def test_a_program_from_standard_input_is_reported_as_stdin(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = Path(REVERSE).read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, _ = run(capsys, "verify", "-", "--model", str(reverse_model))
    assert code == 0 and out.startswith("verified <stdin> `reverse`: ")


def test_a_model_given_as_the_program_is_named_as_a_model(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    """Not `...:1:7756: error: the program is not UTF-8 text` over a line of binary."""
    model = str(reverse_model)
    expected = [
        f"error: {model} is a compiled model (a safetensors file), not a RASP program",
        # `rasp verify --model M` alone, the check a model received alone needs, was not named
        f"hint: a model goes after --model: `rasp run --model {model} --input INPUT`, `rasp verify "
        f"--model {model}` (against the program it records; or `rasp verify PROGRAM.rasp --model "
        f"{model}`); `rasp show {model}` summarises it",
    ]
    out_path = str(tmp_path / "m.safetensors")
    for argv in (
        ["run", model, "--input", "ab"],
        ["verify", model, "--model", model],
        ["verify", model],  # before "--vocab is required"
        ["compile", model, "--vocab", "ab", "--max-len", "2", "-o", out_path],
        ["repl", model],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.splitlines() == expected, argv


def test_a_python_target_of_another_s_op_warns_too(
    capsys: pytest.CaptureFixture[str], reverse_model: Path
) -> None:
    target = str(ROOT / "programs" / "tracr" / "library.py") + ":length"
    code, _, err = run(capsys, "verify", target, "--model", str(reverse_model))
    assert code == 1 and err.splitlines()[0] == (
        f"warning: {reverse_model} computes `reverse`; verifying `length` of "
        f"{target.split(':')[0]} against it"
    )


def test_verify_and_draw_take_the_parameter_limit_their_refusals_name(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    """A refusal for size says `raise the limit (--max-params ...)`: verify and draw, which compile
    too, had no such option."""
    code, _, err = run(
        capsys, "verify", REVERSE, "--vocab", "ab", "--max-len", "4", "--max-params", "10"
    )
    assert code == 1 and "the limit is 10 parameters" in err
    picture = str(tmp_path / "p.png")
    code, _, err = run(
        capsys, "draw", REVERSE, "--input", "ab", "-o", picture, "--max-params", "10"
    )
    assert code == 1 and "the limit is 10 parameters" in err
    code, _, err = run(
        capsys, "verify", REVERSE, "--model", str(reverse_model), "--max-params", "9"
    )
    assert code == 2 and err.endswith(
        "rasp verify: error: --max-params applies only without --model (verify compiles the "
        "program)\n"
    )
    code, _, err = run(
        capsys, "draw", str(reverse_model), "--input", "ab", "-o", picture, "--max-params", "9"
    )
    assert code == 2 and "--max-params applies only to a .rasp program" in err


def test_the_parameter_limit_may_group_its_digits_as_the_help_writes_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The help writes the default as 200,000,000, and the REPL's :compile took that spelling; the
    command line refused it ('not an integer')."""
    for spelling in ("1,000,000", "1_000_000", "1000000"):
        code, out, err = run(
            capsys, "verify", REVERSE, "--vocab", "ab", "--max-len", "4", "--max-params", spelling
        )
        assert code == 0 and "verified" in out + err, spelling
    code, _, err = run(
        capsys, "verify", REVERSE, "--vocab", "ab", "--max-len", "4", "--max-params", "1_0"
    )
    assert code == 1 and "the limit is 10 parameters" in err
    for spelling in ("1,00", "0", "-5", "2e8", "1,000_000"):
        code, _, err = run(
            capsys, "verify", REVERSE, "--vocab", "ab", "--max-len", "4", "--max-params", spelling
        )
        assert code == 2 and f"argument --max-params: not a whole number >= 1: {spelling!r}" in err


def test_verify_refuses_a_missing_cuda_device_before_compiling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled before finding that --device cuda cannot run it")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("rasp.tools.model_steps.compile_sop", never)
    argv = ["verify", REVERSE, "--vocab", "ab", "--max-len", "3", "--device", "cuda"]
    code, _, err = run(capsys, *argv)
    assert code == 1 and err.splitlines() == [
        "error: --device cuda: no CUDA device is available here",
        "hint: use --device cpu",
    ]
