"""Reading program text (issue 11): bytes that are not UTF-8 are located, a long line is cut
around the caret, and a large program is parsed and run in time linear in its size, with
progress reports when the caller asks."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from rasp.errors import MAX_SHOWN_COLUMNS, RaspError, RaspSyntaxError, Source, Span
from rasp.interpreter import load_file, load_source
from rasp.parser import parse
from rasp.sources import decode_source, read_source

PROGRAMS = sorted((Path(__file__).resolve().parents[2] / "programs").glob("*.rasp"))


def test_bytes_that_are_not_utf8_are_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.rasp"
    path.write_bytes(b'x = 1;\ny = "caf\xe9";\n')
    with pytest.raises(RaspError) as info:
        load_file(path)
    lines = info.value.render().splitlines()
    assert (
        lines[0]
        == f"{path}:2:9: error: the program is not UTF-8 text: byte 0xe9 cannot be read here"
    )
    assert lines[1] == '    y = "caf\ufffd";'
    assert lines[2] == "            ^"
    assert lines[3] == "hint: save the file as UTF-8"


def test_a_column_counts_characters_not_bytes() -> None:
    with pytest.raises(RaspError) as info:
        decode_source('s = "§§";'.encode() + b"\xff", "<stdin>")
    assert info.value.span is not None
    assert (info.value.span.line, info.value.span.col) == (1, 10)


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bom.rasp"
    path.write_bytes(b"\xef\xbb\xbfres = tokens;\n")
    assert read_source(path).text == "res = tokens;\n"
    assert load_file(path).last_assigned == "res"


def test_a_loaded_file_that_is_not_utf8_is_located_in_that_file(tmp_path: Path) -> None:
    (tmp_path / "lib.rasp").write_bytes(b"a = 1;\n\xff\n")
    main = tmp_path / "main.rasp"
    main.write_text('load "lib";\nb = tokens;\n')
    with pytest.raises(RaspError) as info:
        load_file(main)
    assert info.value.render().startswith(
        f"{tmp_path / 'lib.rasp'}:2:1: error: the program is not UTF-8"
    )


def test_unreadable_files_are_one_line(tmp_path: Path) -> None:
    cases = ((tmp_path / "nope.rasp", "No such file or directory"), (tmp_path, "it is a directory"))
    for path, words in cases:
        with pytest.raises(RaspError) as info:
            read_source(path)
        assert info.value.render() == f"error: cannot read {path}: {words}"


def test_a_long_line_is_cut_around_the_caret() -> None:
    """An error on a 20 KB line shows about MAX_SHOWN_COLUMNS characters, the caret still under
    the character it points at."""
    text = "x = " + " + ".join(["1"] * 2000) + ' + "a" ' + " + ".join(["1"] * 3000) + ";"
    with pytest.raises(RaspSyntaxError) as info:
        parse(text, "long.rasp")
    lines = info.value.render().splitlines()
    assert lines[0].startswith("long.rasp:1:")
    shown, caret = lines[1], lines[2]
    assert (
        len(shown) <= 4 + MAX_SHOWN_COLUMNS + 6
        and shown.startswith("    ...")
        and shown.endswith("...")
    )
    column = caret.index("^")
    assert shown[column - 3 : column] == '"a"'  # the ';' belongs right after the string


def test_a_short_line_is_shown_whole() -> None:
    source = Source("s.rasp", "x = select(indices, indices, ==;\n")
    rendered = RaspError("boom", Span(source, 1, 32, 1, 33)).render().splitlines()
    assert rendered[1:] == ["    x = select(indices, indices, ==;", " " * 35 + "^"]


def test_source_lines_are_split_once() -> None:
    source = Source("s.rasp", "a\r\nb\nc")
    assert source.lines is source.lines
    assert source.lines == ("a", "b", "c")
    assert Span(source, 1, 1, 3, 2).text() == "a\nb\nc"


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_parsing_with_progress_gives_the_same_program(path: Path) -> None:
    source = read_source(path)
    calls: list[tuple[str, int, int]] = []
    with_progress = parse(source, progress=lambda *c: calls.append(c))
    assert with_progress.statements == parse(source.text, str(path)).statements
    assert calls[-1] == ("parsing", calls[-1][2], calls[-1][2])


@pytest.mark.parametrize(
    "text", ["x = select(indices, indices, ==;", "x = (1 + ;", "x = 1;\ny = = 2;", "x = 'a';"]
)
def test_parsing_with_progress_gives_the_same_errors(text: str) -> None:
    errors = []
    for progress in (None, lambda *c: None):
        with pytest.raises(RaspSyntaxError) as info:
            parse(text, "e.rasp", progress=progress)
        errors.append((info.value.render(), info.value.incomplete))
    assert errors[0] == errors[1]


def _program(statements: int) -> Source:
    lines = ["a0 = tokens;"] + [
        f"a{i} = a{i - 1} + 1 if indices > {i % 7} else a{i - 1};" for i in range(1, statements)
    ]
    return Source("big.rasp", "\n".join(lines) + "\n")


def test_progress_reports_parsing_then_running() -> None:
    calls: list[tuple[str, int, int]] = []
    interp = load_source(_program(5000), progress=lambda *c: calls.append(c))
    assert interp.last_assigned == "a4999"
    stages = list(dict.fromkeys(stage for stage, _, _ in calls))
    assert stages == ["parsing", "running"]
    for stage in stages:
        done = [d for s, d, _ in calls if s == stage]
        assert done == sorted(done) and done[-1] == next(t for s, _, t in calls if s == stage)
    assert (
        len([c for c in calls if c[0] == "parsing"]) > 5
    )  # reported along the way, not only at the end


@pytest.mark.slow
def test_reading_a_program_takes_time_linear_in_its_size() -> None:
    """Four times the statements take about four times as long (it was quadratic: every span's
    text split the whole source again). CPU time, best of two, so a busy machine matters less."""

    def cost(statements: int) -> float:
        source = _program(statements)
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            load_source(Source(source.name, source.text))
            best = min(best, time.process_time() - start)
        return best

    # The objects earlier tests left alive are frozen out of the garbage collector's passes,
    # which would otherwise traverse them while the large program is read (run after the slow
    # compiler tests, the ratio was 7.9 with the reading itself unchanged).
    gc.collect()
    gc.freeze()
    try:
        small, large = cost(1500), cost(6000)
    finally:
        gc.unfreeze()
    assert large / small < 7, (small, large)
