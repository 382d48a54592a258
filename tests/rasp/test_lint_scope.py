"""The `indicator(NAME)` warning follows names as the program binds them (rasp.lint_scope), in a
file and in the REPL alike: a statement typed in the REPL is warned as the same statement in a file
after the same earlier ones."""

from __future__ import annotations

import re

import pytest

from rasp.errors import Source
from rasp.lint import lint
from rasp.parser import parse
from rasp.tools.repl import ReplSession

WARNED = "is 1 at every position"


def _warned(text: str) -> list[str]:
    """The lines of the `indicator` warnings of `text` as a file, each as `LINE: MESSAGE`."""
    found = lint(parse(Source("t.rasp", text)).statements)
    return [f"{d.span.line}: {d.message}" for d in found if d.message.startswith("indicator(")]


def _repl_warned(text: str) -> list[str]:
    """The same, each line of `text` typed in the REPL (each statement's line numbered as in the
    file by the line it was typed on)."""
    session = ReplSession()
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for hit in re.finditer(r"<repl>:\d+:\d+: warning: (indicator\(.*)", session.feed(line)):
            found.append(f"{number}: {hit.group(1)}")
    return found


CASES = [
    # (program, the lines warned)
    ("t = tokens;\ny = indicator(t);", [2]),
    ("t = tokens;\nu = t;\ny = indicator(u);", [3]),
    ('tokens = tokens == "a";\ny = indicator(tokens);', []),
    ('y = indicator(tokens);\ntokens = tokens == "a";', [1]),
    ('t = tokens;\nt = t == "a";\ny = indicator(t);', []),
    ("t = length;\ny = indicator(t);", [2]),
    ("a, b = indices, length;\ny = indicator(b);", [2]),
    ("t = tokens;\ny = [indicator(t) for t in [indices == 1]];", []),
    ('t = tokens;\nfor x in [1, 2] { y = indicator(t); t = t == "a"; }', []),
    ("t = tokens;\nfor x in [1, 2] { t = tokens; y = indicator(t); }\nz = indicator(t);", [2, 3]),
    ("def f(tokens) { return indicator(tokens); }", []),
    ("def f(x) { return indicator(tokens); }", [1]),
    ("def f(x) { t = tokens; return indicator(t); }", [1]),
]


@pytest.mark.parametrize(("text", "lines"), CASES)
def test_indicator_follows_the_names_in_a_file_and_in_the_repl_alike(
    text: str, lines: list[int]
) -> None:
    warned = _warned(text)
    assert [int(w.split(":")[0]) for w in warned] == lines
    assert all(WARNED in w or "0 at position 0" in w or "not 0" in w for w in warned)
    assert _repl_warned(text) == warned


def test_an_alias_is_named_with_the_built_in_it_holds() -> None:
    (warning,) = _warned("t = tokens;\ny = indicator(t);")
    assert "and t, which is tokens, holds strings, not bools" in warning


def test_a_def_body_reads_a_built_in_only_where_the_program_never_rebinds_it() -> None:
    # (run when called: after the later assignment, `tokens` in the body is the bool s-op)
    assert not _warned('def f(x) { return indicator(tokens); }\ntokens = tokens == "a";')


def test_the_repl_reads_what_a_loaded_file_bound(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.rasp").write_text('tokens = tokens == "a";\nt = indices;\n', "utf-8")
    session = ReplSession()
    session.feed('load "lib";')
    assert "warning" not in session.feed("y = indicator(tokens);")
    assert "indicator(t) is 0 at position 0" in session.feed("z = indicator(t);")


def test_tokens_str_is_tokens_in_a_file_and_in_the_repl_alike() -> None:
    for text in ("y = indicator(tokens_str);", "t = tokens_str;\ny = indicator(t);"):
        assert _repl_warned(text) == _warned(text)
    assert "and t, which is tokens, holds" in _warned("t = tokens_str;\ny = indicator(t);")[0]
    assert "and tokens_str holds" in _warned("y = indicator(tokens_str);")[0]


def test_the_repl_reads_a_sessions_names_without_an_error_or_a_search() -> None:
    # (the lookup of an unknown name suggested a close one, reading every name: 0.26 s each
    # among 5,000 names, for every parameter of every def typed)
    session = ReplSession()
    session.feed("examples off")
    session.run_text("\n".join(f"n{i} = {i};" for i in range(5000)))
    assert session.interpreter.value("zzzqq") is None
    assert session.interpreter.value("n7") == 7
