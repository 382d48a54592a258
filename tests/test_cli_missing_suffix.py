"""A path typed without its suffix (`rasp run programs/reverse`, `rasp show reverse`), as a new
user types it, names the file that exists with the suffix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import has_matplotlib, run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "reverse.rasp").write_text((ROOT / "programs" / "reverse.rasp").read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "reverse", "--input", "abc"),
        ("compile", "reverse", "--vocab", "abc", "--max-len", "3", "-o", "r.safetensors"),
        ("verify", "reverse", "--vocab", "abc", "--max-len", "3"),
    ],
)
def test_a_program_without_its_suffix(
    capsys: pytest.CaptureFixture[str], here: Path, argv: tuple[str, ...]
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert err.splitlines() == [
        "error: cannot read reverse: No such file or directory",
        "hint: did you mean reverse.rasp?",
    ]


def test_a_model_without_its_suffix(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    argv = ("compile", "reverse.rasp", "--vocab", "abc", "--max-len", "3", "-q")
    assert run(capsys, *argv, "-o", "reverse.safetensors")[0] == 0
    for command in (("show", "reverse"), ("run", "--model", "reverse", "--input", "ab")):
        code, _, err = run(capsys, *command)
        assert code == 1
        assert err.splitlines() == [
            "error: reverse: no such file",
            "hint: did you mean reverse.safetensors?",
        ]
    code, _, err = run(capsys, "draw", "reverse", "--input", "ab", "-o", "r.png")
    assert code == 2 and "(did you mean reverse.rasp?)" in err


def test_no_guess_where_no_such_file_exists(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    code, _, err = run(capsys, "run", "nothing", "--input", "abc")
    assert code == 1 and err.splitlines() == [
        "error: cannot read nothing: No such file or directory"
    ]


@pytest.mark.parametrize("command", ["run", "repl"])
def test_a_typo_of_a_program_beside_it_is_named(
    capsys: pytest.CaptureFixture[str], here: Path, command: str
) -> None:
    # a class typing `revers.rasp` got "No such file or directory" alone
    argv = (command, "revers.rasp") + (("--input", "abc") if command == "run" else ())
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert err.splitlines() == [
        "error: cannot read revers.rasp: No such file or directory",
        "hint: did you mean reverse.rasp?",
    ]


@pytest.mark.parametrize("typed", ["programs/sort.rasp", "sort.rasp", "sort"])
@pytest.mark.parametrize("command", ["run", "repl"])
def test_a_library_program_typed_from_another_directory_is_found(
    capsys: pytest.CaptureFixture[str], here: Path, typed: str, command: str
) -> None:
    # the README's `rasp run programs/sort.rasp`, typed outside the repository
    argv = (command, typed) + (("--input", "abc") if command == "run" else ())
    code, _, err = run(capsys, *argv)
    assert code == 1
    shipped = ROOT / "programs" / "sort.rasp"
    assert err.splitlines() == [
        f"error: cannot read {typed}: No such file or directory",
        f"hint: the program library shipped with rasp-forge has it: {shipped}",
    ]


def test_a_model_written_without_its_suffix_is_written_as_named_with_a_note(
    capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    # `-o reverse` wrote the file silently, and `rasp draw reverse` then refused it
    argv = ("compile", "reverse.rasp", "--vocab", "abc", "--max-len", "3", "-o")
    code, out, _ = run(capsys, *argv, "reverse")
    assert code == 0 and (here / "reverse").is_file()
    assert not (here / "reverse.safetensors").exists()  # written as named, as draw's -o is
    assert out.splitlines()[-1] == (
        "note: reverse is named without .safetensors: rasp's commands read it as it is; other "
        "tools look for the suffix (-o reverse.safetensors)"
    )
    assert out.startswith("wrote reverse: ")
    code, out, _ = run(capsys, *argv, "reverse.v2")  # (a dot in the name: the suffix added)
    assert code == 0 and out.splitlines()[-1].endswith("(-o reverse.v2.safetensors)")
    for quiet in ("-q", "--json"):  # no note where no summary is printed either
        code, out, _ = run(capsys, *argv, "reverse", quiet)
        assert code == 0 and "note:" not in out
    assert json.loads(out)["output"] == "reverse"
    code, out, _ = run(capsys, *argv, "r.safetensors")
    assert code == 0 and "note:" not in out
    # every command that reads a model reads it as it is
    assert run(capsys, "show", "reverse")[0] == 0
    assert run(capsys, "run", "--model", "reverse", "--input", "ab") == (
        0,
        "[b, a] (strings)\n",
        "",
    )
    if has_matplotlib():
        code, out, _ = run(capsys, "draw", "reverse", "--input", "ab", "-o", "r.png")
        assert code == 0 and (here / "r.png").is_file(), out
        code, _, err = run(
            capsys, "draw", "reverse", "--input", "ab", "--vocab", "ab", "-o", "r.png"
        )
        assert code == 2 and "--vocab applies only to a .rasp program" in err


def test_draw_still_refuses_a_target_without_a_suffix_that_is_no_model(
    capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    (here / "notes").write_text("not a model\n")
    for target in ("notes", "missing", str(here)):
        code, _, err = run(capsys, "draw", target, "--input", "ab", "-o", "r.png")
        assert code == 2, err
        assert "TARGET must be a .rasp program, PROG.py:NAME or a .safetensors model" in err
