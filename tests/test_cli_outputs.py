"""Where the model commands write: an output they cannot write is one `cannot write PATH: why`
line (exit 1) before any work, never an internal error or a `cannot read`; `draw`'s -o names its
picture's format, and --dot may not land on it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformer")

from rasp.tools.cli import main
from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]
REVERSE = str(ROOT / "programs" / "reverse.rasp")
# a directory that exists but takes no new file, whoever runs the tests (root included)
UNWRITABLE = Path("/proc")
needs_proc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not UNWRITABLE.is_dir(), reason="needs Linux /proc"
)


@pytest.fixture(scope="module")
def reverse_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outputs") / "reverse.safetensors"
    argv = ["compile", REVERSE, "--vocab", "abc", "--max-len", "4", "-q", "-o", str(path)]
    assert main(argv) == 0
    return path


@needs_proc
def test_an_unwritable_output_is_refused_before_compiling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compiled for an output that cannot be written")

    monkeypatch.setattr("rasp.tools.model_steps.compile_sop", never)
    out_path = UNWRITABLE / "m.safetensors"
    argv = ["compile", REVERSE, "--vocab", "abc", "--max-len", "3", "-o", str(out_path)]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.startswith(f"error: cannot write {out_path}: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("link_to", ["missing/m.safetensors", "UNWRITABLE", "loop"])
def test_an_output_link_is_checked_where_it_points_before_compiling(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    link_to: str,
) -> None:
    """compile -o LINK writes LINK's target, but only the link's own directory was checked: a link
    into a missing or unwritable directory was refused after the compile (minutes), and a link to
    itself was an internal error (`RuntimeError: Symlink loop`)."""

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compiled for an output that cannot be written")

    monkeypatch.setattr("rasp.tools.model_steps.compile_sop", never)
    link = tmp_path / "l.safetensors"
    target = {"UNWRITABLE": UNWRITABLE / "m.safetensors", "loop": link}.get(
        link_to, tmp_path / link_to
    )
    if link_to == "UNWRITABLE" and not UNWRITABLE.is_dir():
        pytest.skip("needs Linux /proc")
    link.symlink_to(target)
    argv = ["compile", REVERSE, "--vocab", "abc", "--max-len", "3", "-o", str(link)]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.startswith(f"error: cannot write {link}"), err
    assert len(err.splitlines()) == 1 and link.is_symlink()


def test_draw_refuses_an_output_link_loop(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    """A link to itself as -o or --dot with both given was an internal error (RuntimeError:
    Symlink loop, from Path.resolve)."""
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    draw = ["draw", str(reverse_model), "--input", "abc"]
    for extra in (
        ["-o", str(loop), "--dot", str(tmp_path / "x.dot")],
        ["-o", str(tmp_path / "x.png"), "--dot", str(loop)],
    ):
        code, _, err = run(capsys, *draw, *extra)
        assert code == 1 and err.startswith(f"error: cannot write {loop}: "), err


@pytest.mark.parametrize("target", ["missing", "loop"])
def test_export_to_a_link_to_no_directory_says_so(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path, target: str
) -> None:
    """-o LINK, a link to a missing directory or to itself, said 'cannot write LINK: File exists'
    (mkdir's error)."""
    link = tmp_path / "tl"
    link.symlink_to(tmp_path / ("tl" if target == "loop" else target))
    code, out, err = run(
        capsys, "export", str(reverse_model), "--to", "transformer-lens", "-o", str(link)
    )
    assert code == 1 and out == "" and "File exists" not in err
    assert err.startswith(f"error: cannot write {link}: it is a link to no directory"), err


def test_a_failed_save_is_one_cannot_write_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """safetensors reports its own I/O errors with its own type (it was an internal error)."""
    from safetensors import SafetensorError

    def failing(self: Any, path: Any) -> None:
        raise SafetensorError("Error while serializing: I/O error: No space left on device")

    monkeypatch.setattr("compiler.model.CompiledModel.save", failing)
    out_path = tmp_path / "m.safetensors"
    argv = ["compile", REVERSE, "--vocab", "ab", "--max-len", "3", "-o", str(out_path)]
    code, _, err = run(capsys, *argv)
    assert code == 1 and err == (
        f"error: cannot write {out_path}: Error while serializing: I/O error: No space left on "
        "device\n"
    )


@needs_proc
def test_export_and_draw_say_cannot_write(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "export", str(reverse_model), "--to", "transformer-lens", "-o", "/proc/tl"
    )
    assert code == 1 and err.startswith("error: cannot write /proc/tl: "), err
    picture = str(tmp_path / "p.png")
    for extra in (["-o", "/proc/p.png"], ["-o", picture, "--dot", "/proc/p.dot"]):
        code, _, err = run(capsys, "draw", str(reverse_model), "--input", "abc", *extra)
        assert code == 1 and err.startswith("error: cannot write /proc/p."), err


def test_draw_writes_the_format_its_output_names(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    draw = ["draw", str(reverse_model), "--input", "abc"]
    bare = tmp_path / "picture"  # no suffix: a PNG at exactly this path (matplotlib added .png)
    code, out, _ = run(capsys, *draw, "-o", str(bare))
    assert code == 0 and out.startswith(f"wrote {bare} (")
    assert bare.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not bare.with_suffix(".png").exists()
    svg = tmp_path / "p.SVG"
    assert run(capsys, *draw, "-o", str(svg))[0] == 0 and b"<svg" in svg.read_bytes()[:500]
    text = tmp_path / "p.txt"
    code, out, err = run(capsys, *draw, "-o", str(text))
    assert code == 2 and out == "" and not text.exists()
    assert err.splitlines()[-1].startswith(
        f"rasp draw: error: argument -o/--output: {text}: matplotlib writes no 'txt' pictures "
        "(it writes "
    )


def test_draw_refuses_a_dot_file_that_lands_on_the_picture(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    draw = ["draw", str(reverse_model), "--input", "abc"]
    png = str(tmp_path / "g.png")
    code, _, err = run(capsys, *draw, "-o", png, "--dot", png)
    assert code == 2 and err.endswith(f"rasp draw: error: --dot {png}: the same file as -o {png}\n")
    dot, rendered = tmp_path / "g.dot", tmp_path / "g.dot.png"
    code, _, err = run(capsys, *draw, "-o", str(rendered), "--dot", str(dot))
    assert code == 2 and f"graphviz renders it to {rendered}, the picture -o {rendered}" in err
    assert not dot.exists() and not rendered.exists()


def test_compile_never_writes_over_its_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "p.rasp"
    program.write_text("x = indices;\n")
    for out_path in (program, tmp_path / "." / "p.rasp"):
        argv = ["compile", str(program), "--vocab", "ab", "--max-len", "2", "-o", str(out_path)]
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.endswith(
            f"rasp compile: error: -o {out_path} is the program itself; write the model to "
            "another file\n"
        )
    assert program.read_text() == "x = indices;\n"


@pytest.mark.parametrize("name", ["other.rasp", "lib.py", "new.RASP"])
def test_compile_never_writes_a_model_over_a_program_source(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """`-o other.rasp` (a slip for other.safetensors) replaced another program's source with
    binary weights; a name with a source's suffix is refused, existing or not."""
    program, out_path = tmp_path / "p.rasp", tmp_path / name
    program.write_text("x = indices;\n")
    if name != "new.RASP":
        out_path.write_text("y = tokens;\n")
    argv = ["compile", str(program), "--vocab", "ab", "--max-len", "2", "-o", str(out_path)]
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.endswith(
        f"rasp compile: error: -o {out_path} names a program source ({out_path.suffix}); write "
        "the model to a .safetensors file\n"
    )
    assert name == "new.RASP" and not out_path.exists() or out_path.read_text() == "y = tokens;\n"


def test_compile_never_writes_a_model_through_a_link_to_a_program_source(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """-o LINK.safetensors, a link to another program's source (a file the program loads), wrote
    the weights over that source: the suffix was checked on the name given only."""
    program, lib = tmp_path / "p.rasp", tmp_path / "lib.rasp"
    program.write_text("x = indices;\n")
    lib.write_text("y = tokens;\n")
    link = tmp_path / "m.safetensors"
    link.symlink_to(lib)
    argv = ["compile", str(program), "--vocab", "ab", "--max-len", "2", "-o", str(link)]
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.endswith(
        f"rasp compile: error: -o {link} names a program source (a link to {lib}); write the "
        "model to a .safetensors file\n"
    )
    assert lib.read_text() == "y = tokens;\n"


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "rasp_forge.json"])
def test_export_never_writes_over_the_model_it_reads(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path, name: str
) -> None:
    """A model named as any of the three files the export writes (only model.safetensors was
    checked: a model named config.json was overwritten by the config, and lost)."""
    model = tmp_path / name
    model.write_bytes(reverse_model.read_bytes())
    code, out, err = run(
        capsys, "export", str(model), "--to", "transformer-lens", "-o", str(tmp_path)
    )
    assert (
        code == 1
        and out == ""
        and err.splitlines()
        == [
            f"error: exporting to {tmp_path} would replace {model} itself with {model}",
            "hint: pass another directory with -o",
        ]
    )
    assert model.read_bytes() == reverse_model.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [name]  # nothing written


def test_draw_never_writes_over_its_target(
    capsys: pytest.CaptureFixture[str], reverse_model: Path, tmp_path: Path
) -> None:
    model = tmp_path / "m.safetensors"
    model.write_bytes(reverse_model.read_bytes())
    picture = str(tmp_path / "p.png")
    code, _, err = run(
        capsys, "draw", str(model), "--input", "ab", "-o", picture, "--dot", str(model)
    )
    assert code == 2 and err.endswith(f"--dot {model} is TARGET itself; name another file\n")
    assert model.read_bytes() == reverse_model.read_bytes()


def test_a_python_programs_source_is_never_written_over(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`PROG.py:NAME` was not compared with the outputs: `draw p.py:x --dot p.py`, and -o through
    a link to p.py (compile's and draw's), replaced the program's source with a graph, weights or
    a picture. Refused as for a .rasp program."""
    pytest.importorskip("matplotlib")
    program = tmp_path / "p.py"
    source = "from rasp import tracr as rasp\nx = rasp.Map(lambda t: t, rasp.tokens)\n"
    program.write_text(source)
    target = f"{program}:x"
    link_model, link_png = tmp_path / "l.safetensors", tmp_path / "l.png"
    link_model.symlink_to(program)
    link_png.symlink_to(program)
    png = str(tmp_path / "d.png")
    compile_argv = ["compile", target, "--vocab", "ab", "--max-len", "2", "-o", str(link_model)]
    code, _, err = run(capsys, *compile_argv)
    assert code == 2 and err.endswith(
        f"rasp compile: error: -o {link_model} is the program itself; write the model to "
        "another file\n"
    )
    for option, out in (("-o", str(link_png)), ("--dot", str(program))):
        argv = ["draw", target, "--input", "ab", "-o", png, option, out]
        if option == "-o":
            argv = ["draw", target, "--input", "ab", "-o", out]
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.endswith(f"{option} {out} is TARGET itself; name another file\n")
    assert program.read_text() == source


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--json"], "error: cannot write standard output: No space left on device"),
        ([], "error: cannot write standard output: No space left on device"),
        (["--json", "BAD"], "error: {bad}: not a safetensors file"),
    ],
)
def test_a_full_standard_output_is_one_error_line(
    reverse_model: Path, tmp_path: Path, extra: list[str], error: str
) -> None:
    """`rasp show M --json > /dev/full` printed two tracebacks (the result's print, then the
    failure object's in the handler); without --json, `error: [Errno 28] ...` naming nothing."""
    import os
    import subprocess

    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"garbage")
    model = str(bad) if "BAD" in extra else str(reverse_model)
    argv = [sys.executable, "-m", "rasp", "show", model, *(e for e in extra if e != "BAD")]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            argv,
            stdout=full,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            timeout=120,
            check=False,
        )
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err and "Exception ignored" not in err
    assert err.startswith(error.format(bad=bad)), err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["--version"], ["help", "run"]])
def test_help_and_version_say_a_standard_output_they_cannot_write(argv: list[str]) -> None:
    """argparse drops a failed write of the help or the version: `rasp --version > /dev/full` and
    `rasp help run | head -0` exited 0 with nothing written. A full stdout is the one error line
    (exit 1), a reader that left is 141, as for every other command."""
    import os
    import subprocess

    command = [sys.executable, "-m", "rasp", *argv]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            command, stdout=full, stderr=subprocess.PIPE, env=env, timeout=120, check=False
        )
    assert (done.returncode, done.stderr.decode()) == (
        1,
        "error: cannot write standard output: No space left on device\n",
    )
    read, write = os.pipe()
    os.close(read)  # the reader left before anything was written
    try:
        done = subprocess.run(
            command, stdout=write, stderr=subprocess.PIPE, env=env, timeout=120, check=False
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (141, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_the_repl_says_its_standard_output_is_full() -> None:
    """`rasp repl > /dev/full` said `error: [Errno 28] No space left on device`, naming nothing."""
    import os
    import subprocess

    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "rasp", "repl"],
            input=b"x = 1;\n",
            stdout=full,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            timeout=120,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "error: cannot write standard output: No space left on device\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "P", "--input", "ab", "--json"],
        ["compile", "P", "--vocab", "ab", "--max-len", "2", "-o", "OUT", "--json"],
        ["verify", "P", "--vocab", "ab", "--max-len", "2", "--json"],
        ["run", "P", "--input", "ab"],
    ],
)
def test_what_a_python_programs_functions_print_goes_to_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    """A tracr Map's function that prints ran while the command computed, after the program's
    load (whose prints went to stderr): `seen a` lines came before the JSON on stdout."""
    import json

    program = tmp_path / "noisy.py"
    program.write_text(
        "from rasp import tracr as rasp\n"
        "def f(t):\n"
        "    print('seen', t)\n"
        "    return t\n"
        "x = rasp.Map(f, rasp.tokens)\n"
    )
    words = [{"P": f"{program}:x", "OUT": str(tmp_path / "n.safetensors")}.get(w, w) for w in argv]
    code, out, err = run(capsys, *words)
    assert code == 0 and "seen" not in out and "seen a" in err
    if "--json" in words:
        json.loads(out)
    else:
        assert out == "[a, b] (strings)\n"
