"""The command line's output modes (issue 11): `--quiet` leaves only results, `--verbose` prints the
steps and an internal error's traceback, running out of memory is one error line, and `--json`
wherever a command prints a result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.cli_parser import build_parser
from tests.cli_helpers import has_matplotlib, run

ROOT = Path(__file__).resolve().parents[1]


def test_quiet_leaves_only_results(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    program = str(ROOT / "programs" / "reverse.rasp")
    out_path = str(tmp_path / "q.safetensors")
    assert run(
        capsys, "compile", program, "--vocab", "ab", "--max-len", "3", "-o", out_path, "-q"
    ) == (0, "", "")
    assert run(
        capsys,
        "verify",
        program,
        "--vocab",
        "abc",
        "--max-len",
        "4",
        "--model",
        str(reverse_model),
        "-q",
    ) == (0, "", "")
    assert run(
        capsys,
        "export",
        str(reverse_model),
        "--to",
        "transformer-lens",
        "-o",
        str(tmp_path / "tl"),
        "--quiet",
    ) == (0, "", "")
    # A result is still printed: it is what the command is for.
    assert run(capsys, "run", "--model", str(reverse_model), "--input", "abc", "-q") == (
        0,
        "[c, b, a] (strings)\n",
        "",
    )


def test_verbose_prints_the_steps_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "run", str(ROOT / "programs" / "reverse.rasp"), "--input", "abc", "-v"
    )
    assert (code, out) == (0, "[c, b, a] (strings)\n")
    assert "reverse.rasp: 5" in err or "read " in err
    assert all(line.startswith("[") and "s] " in line for line in err.splitlines())


def test_verbose_compile_steps_through_its_stages_where_no_bar_is_drawn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # stderr piped to a log: a refusal that took a minute printed no line between its
    # "compiling" step and the error (the stages drew bars on a terminal only)
    out_file = tmp_path / "m.safetensors"
    program = str(ROOT / "programs" / "reverse.rasp")
    code, _, err = run(
        capsys, "compile", program, "--vocab", "ab", "--max-len", "4", "-o", str(out_file), "-v"
    )
    assert code == 0
    stages = [line.split("s] ", 1)[1] for line in err.splitlines() if "s] compiling: " in line]
    assert stages[:3] == [
        "compiling: predict the size",
        "compiling: prepare the program",
        "compiling: analyse values",
    ]
    assert "compiling: certify" in stages


def test_quiet_and_verbose_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "x.rasp", "--input", "a", "-q", "-v")
    assert code == 2 and "not allowed with argument" in err


def test_verbose_shows_the_traceback_of_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rasp.tools import cli

    def boom(args: Any) -> int:
        raise ValueError("boom")

    monkeypatch.setattr(cli, "_cmd_run_program", boom)
    monkeypatch.delenv("RASP_DEBUG", raising=False)
    assert "Traceback" not in run(capsys, "run", "x.rasp", "--input", "a")[2]
    code, _, err = run(capsys, "run", "x.rasp", "--input", "a", "--verbose")
    assert code == 1 and "Traceback" in err and "internal error: ValueError: boom" in err


def test_running_out_of_memory_is_an_error_line_not_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `rasp export` of a file without W_pos whose header says max_len 10**9 pads a 30 GB W_pos:
    # numpy's MemoryError was reported as "internal error: ... (a bug in rasp-forge ...)"
    from rasp.tools import cli

    def too_large(args: Any) -> int:
        raise MemoryError("Unable to allocate 29.8 GiB for an array with shape (1000000001, 8)")

    monkeypatch.setattr(cli, "_cmd_run_program", too_large)
    code, out, err = run(capsys, "run", "x.rasp", "--input", "a")
    assert (code, out) == (1, "")
    assert err == (
        "error: not enough memory: Unable to allocate 29.8 GiB for an array with shape "
        "(1000000001, 8)\n"
    )


@pytest.mark.parametrize(
    ("raised", "shown"),
    [
        (
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 40000000000000 bytes. Error code 12",
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 40000000000000 bytes. Error code 12",
        ),
        (
            "CUDA out of memory. Tried to allocate 30.00 GiB\nmore",
            "CUDA out of memory. Tried to allocate 30.00 GiB",
        ),
    ],
)
def test_torch_running_out_of_memory_is_an_error_line_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, raised: str, shown: str
) -> None:
    """torch's CPU allocator raises a RuntimeError and CUDA's a torch.OutOfMemoryError (a
    RuntimeError), not MemoryError: both were 'internal error: ... (a bug in rasp-forge ...)'.
    Another RuntimeError stays an internal error."""
    from rasp.tools import cli

    class OutOfMemoryError(RuntimeError):  # torch.OutOfMemoryError's name, without torch
        pass

    error = RuntimeError(raised) if "alloc_cpu" in raised else OutOfMemoryError(raised)

    def too_large(args: Any) -> int:
        raise error

    monkeypatch.setattr(cli, "_cmd_run_program", too_large)
    code, out, err = run(capsys, "run", "x.rasp", "--input", "a")
    assert (code, out, err) == (1, "", f"error: not enough memory: {shown}\n")

    def broken(args: Any) -> int:
        raise RuntimeError("a shape mismatch")

    monkeypatch.setattr(cli, "_cmd_run_program", broken)
    code, _, err = run(capsys, "run", "x.rasp", "--input", "a")
    assert code == 1 and err.startswith("internal error: RuntimeError: a shape mismatch")


def test_every_command_that_prints_a_result_has_json(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    program = str(ROOT / "programs" / "reverse.rasp")
    commands = {
        "run": ["run", program, "--input", "abc"],
        "run --model": ["run", "--model", str(reverse_model), "--input", "abc"],
        "compile": [
            "compile",
            program,
            "--vocab",
            "ab",
            "--max-len",
            "3",
            "-o",
            str(tmp_path / "c.safetensors"),
        ],
        "verify": ["verify", program, "--vocab", "ab", "--max-len", "3"],
        "show": ["show", str(reverse_model)],
        "export": [
            "export",
            str(reverse_model),
            "--to",
            "transformer-lens",
            "-o",
            str(tmp_path / "tl"),
        ],
    }
    if has_matplotlib():
        commands["draw"] = [
            "draw",
            str(reverse_model),
            "--input",
            "abc",
            "-o",
            str(tmp_path / "d.png"),
        ]
    for what, argv in commands.items():
        code, out, err = run(capsys, *argv, "--json")
        assert (code, err) == (0, ""), what
        assert out.count("\n") == 1 or what == "show", what  # one JSON value (show's is indented)
        json.loads(out)
    written = json.loads(run(capsys, *commands["export"], "--json")[1])
    assert [Path(p).name for p in written["files"]] == [
        "config.json",
        "rasp_forge.json",
        "model.safetensors",
    ]
    compiled = json.loads(run(capsys, *commands["compile"], "--json")[1])
    assert compiled["output"].endswith("c.safetensors") and compiled["parameters"] > 0
    assert compiled["certificate"].startswith("certificate:")


def test_only_repl_lacks_json() -> None:
    parser = build_parser()
    commands = parser.subcommand_parsers  # type: ignore[attr-defined]
    without = [name for name, sub in commands.items() if "--json" not in sub.format_help()]
    assert without == ["repl"]  # interactive: it prints no one result
