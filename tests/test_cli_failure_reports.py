"""How the commands report a failure: under --json one object on stdout (ok false, the error, where,
every diagnostic) beside the stderr line; an OS error names the file and whether reading or writing
failed; an output that is a device, a FIFO or a symlink is refused or written through.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run


@pytest.mark.parametrize(
    ("program", "location", "message"),
    [
        ("x = select(indices, indices, ==;\n", "bad.rasp:1:32", "expected ')'"),
        ("x = selector_width(select(tokens, tokens, ==));\n", "bad.rasp:1:5", "causal"),
        (None, None, "cannot read bad.rasp"),
    ],
)
def test_compile_json_describes_a_refusal_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    program: str | None,
    location: str | None,
    message: str,
) -> None:
    """`compile --json` printed nothing on stdout when it failed: a JSON consumer read empty
    output. It prints one object (ok false, the first error, where, every diagnostic) and still
    exits 1, the located error on stderr as before."""
    monkeypatch.chdir(tmp_path)
    if program is not None:
        Path("bad.rasp").write_text(program)
    argv = ["compile", "bad.rasp", "--vocab", "ab", "--max-len", "4", "-o", "m.safetensors"]
    code, out, err = run(capsys, *argv, "--causal", "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and message in data["error"]
    assert data["location"] == location and data["output"] == "m.safetensors"
    assert data["refused"][0]["message"] == data["error"]
    assert data["refused"][0]["severity"] == "error"
    assert message in err and not Path("m.safetensors").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "bad.rasp", "--input", "abab"],
        ["verify", "bad.rasp", "--vocab", "ab", "--max-len", "3"],
        ["show", "bad.rasp"],
        ["export", "bad.rasp", "--to", "transformer-lens", "-o", "tl"],
        ["draw", "bad.rasp", "--input", "ab", "-o", "d.png"],
    ],
)
def test_every_json_command_describes_its_error_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    """With --json an error (exit 1) printed nothing on stdout but for compile's and verify's
    refusals: each command prints `{ok: false, error, location, refused}`, once."""
    monkeypatch.chdir(tmp_path)
    Path("bad.rasp").write_text("x = select(indices, indices, ==;\n")
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)  # (one object: two would not parse)
    assert code == 1 and data["ok"] is False and data["error"] in err
    if argv[0] in ("show", "export"):  # (they read the program as a model file: not located)
        assert data["location"] is None and "a RASP program, not a compiled model" in data["error"]
    else:
        assert data["location"] == "bad.rasp:1:32" and "expected ')'" in data["error"]
    assert data["refused"][0]["message"] == data["error"]


def test_compile_refuses_to_replace_a_device_or_fifo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, reverse_file: Path
) -> None:
    """safetensors writes by renaming a new file into place: `-o /dev/null` run as root replaced
    the device with a model file. An existing path that is not a regular file is refused first."""
    fifo = tmp_path / "out.safetensors"
    os.mkfifo(fifo)
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(fifo)]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 1 and "not a regular file" in json.loads(out)["error"]
    assert "not a regular file" in err and fifo.is_fifo()


def test_compile_writes_through_a_symlink(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, reverse_file: Path
) -> None:
    """safetensors renames its new file into place: `-o LINK` replaced the symlink with a plain
    file and left its target as it was. The model is written to the target, the link kept."""
    target = tmp_path / "models" / "reverse.safetensors"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "latest.safetensors"
    link.symlink_to(target)
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(link)]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_bytes()[:8] != b"old" and target.stat().st_size > 100


def test_draw_json_describes_a_failed_write_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
) -> None:
    """An OSError while writing (a full disk: `draw -o /dev/full`) printed `error: [Errno 28] No
    space left on device` and nothing on stdout under --json; it names the file, and --json
    prints its object."""
    pytest.importorskip("matplotlib")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    out_png, out_dot = tmp_path / "d.png", tmp_path / "d.dot"
    argv = ["draw", str(prev_model), "--input", "ab", "-o", str(out_png), "--json"]
    monkeypatch.setattr("rasp.tools.draw_graph.Path.write_text", full)  # the --dot file's
    code, out, err = run(capsys, *argv, "--dot", str(out_dot))
    data = json.loads(out)
    assert code == 1 and data["error"] == f"cannot write {out_dot}: No space left on device"
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", full)
    code, out, err = run(capsys, *argv)
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert data["error"] == f"cannot write {out_png}: No space left on device"
    assert data["error"] in err


@pytest.mark.parametrize(
    ("raised", "line"),
    [
        (
            OSError(5, "Input/output error", "x.rasp"),  # (not show's file: no read or write)
            "error: x.rasp: Input/output error",
        ),
        (MemoryError("30 GB"), "error: not enough memory: 30 GB"),
        (KeyError("k"), "internal error: KeyError: 'k' (a bug in rasp-forge"),
    ],
)
def test_json_describes_every_failure_on_stdout(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
    raised: Exception,
    line: str,
) -> None:
    """An OSError, MemoryError or internal error that reaches the CLI's entry point printed only
    its stderr line under --json (exit 1): the JSON consumer read empty output."""

    def failing(*args: object) -> int:
        raise raised

    monkeypatch.setattr("rasp.tools.cli._dispatch", failing)
    code, out, err = run(capsys, "show", str(prev_model), "--json")
    data = json.loads(out)  # (one object: two would not parse)
    text = line.split(": ", 1)[1]
    assert code == 1 and data["ok"] is False and data["error"].startswith(text)
    assert data["location"] is None and data["refused"][0]["message"] == data["error"]
    assert err.startswith(line) and len(err.splitlines()) == 1
    code, out, err = run(capsys, "show", str(prev_model))
    assert code == 1 and out == "" and err.startswith(line)


@pytest.mark.parametrize(
    ("command", "failed", "line"),
    [
        # a write failure said "cannot read": it names the file written now
        (("compile", "IN", "--vocab", "ab", "--max-len", "3", "-o", "OUT"), "OUT", "cannot write"),
        (("draw", "MODEL", "--input", "ab", "-o", "OUT"), "OUT", "cannot write"),
        (("draw", "MODEL", "--input", "ab", "-o", "x.png", "--dot", "OUT"), "OUT", "cannot write"),
        (
            ("export", "MODEL", "--to", "transformer-lens", "-o", "OUT"),
            "OUT/config.json",
            "cannot write",
        ),
        (("show", "MODEL"), "MODEL", "cannot read"),
        (("compile", "IN", "--vocab", "ab", "--max-len", "3", "-o", "OUT"), "IN", "cannot read"),
        (("draw", "IN:x", "--input", "ab", "-o", "OUT"), "IN", "cannot read"),
        # a file that is neither (a temporary one): named, with no guess at what failed
        (("show", "MODEL"), "/tmp/elsewhere", ""),
    ],
)
def test_an_os_error_says_whether_reading_or_writing_failed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
    tmp_path: Path,
    command: tuple[str, ...],
    failed: str,
    line: str,
) -> None:
    paths = {"IN": str(tmp_path / "p.py"), "MODEL": str(prev_model), "OUT": str(tmp_path / "o")}
    argv = [paths.get(word, word).replace("IN:", paths["IN"] + ":") for word in command]
    path = failed.replace("OUT", paths["OUT"]).replace("IN", paths["IN"])
    path = path.replace("MODEL", paths["MODEL"])

    def failing(*args: object) -> int:
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr("rasp.tools.cli._dispatch", failing)
    code, out, err = run(capsys, *argv, "--json")
    said = f"{line} {path}: No space left on device" if line else f"{path}: No space left on device"
    assert code == 1 and json.loads(out)["error"] == said
    assert err == f"error: {said}\n"


def test_compile_json_describes_a_failed_save_as_its_refusals(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reverse_file: Path,
) -> None:
    """A save that fails (a full disk) printed the generic object, without compile's `output`."""
    from compiler.model import CompiledModel

    def full(self: object, path: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(CompiledModel, "save", full)
    out_path = tmp_path / "m.safetensors"
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(out_path)]
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)  # (one object: two would not parse)
    assert code == 1 and data["ok"] is False and data["output"] == str(out_path)
    assert data["error"] == f"cannot write {out_path}: No space left on device" in err
