"""The REPL: golden transcripts driven through `ReplSession`, and the facts they show one at a time
(tests/rasp/test_repl_loop.py has the terminal loop, test_repl_lines.py statements over several
lines, test_repl_values.py the values shown and taken as examples).

A transcript shows the banner, then each input line after its prompt (`>> ` or `.. `) and what the
REPL printed for it. Inputs are `tests/golden/repl/*.in`; expected transcripts the `*.out` next to
them (rewrite with `pytest --update-golden`). Paths of this checkout print as `<root>`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rasp.sops import Evaluator, SOp
from rasp.text_width import line_columns
from rasp.tools.repl import ReplSession
from rasp.tools.repl_terminal import completion_candidates

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "golden" / "repl"
CASES = sorted(p.stem for p in TRANSCRIPTS.glob("*.in"))


def transcript(session: ReplSession, lines: list[str]) -> str:
    out = [session.banner()]
    for line in lines:
        prompt = session.continuation_prompt if session.is_continuing else session.prompt
        out.append(prompt + line)
        printed = session.feed(line)
        if printed:
            out.append(printed)
        if session.finished:
            break
    return "\n".join(out).replace(str(ROOT), "<root>") + "\n"


@pytest.fixture
def in_transcripts(monkeypatch: pytest.MonkeyPatch) -> Path:
    # `load "helper";` finds helper.rasp in the working directory, as in the original.
    monkeypatch.chdir(TRANSCRIPTS)
    return TRANSCRIPTS


def test_there_are_transcripts() -> None:
    assert {
        "basics",
        "selectors",
        "examples",
        "full_seq",
        "multiline",
        "errors",
        "load",
        "commands",
        "loops",
    } <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_transcript(case: str, in_transcripts: Path, golden: Callable[[Path, str], None]) -> None:
    lines = (in_transcripts / f"{case}.in").read_text(encoding="utf-8").splitlines()
    text = transcript(sized_session(case), lines)
    golden(in_transcripts / f"{case}.out", text)
    assert fits_its_terminal(case, text)


def fits_its_terminal(case: str, text: str) -> bool:
    """A `*_60` transcript's output (not the banner, nor the lines typed) fits in 59 terminal
    columns (a tab to its stop, `日` two), but a source line with its caret under it, and a line
    of one word: a value with no space to break at is shown whole, past the edge (docs/repl.md)."""
    if not case.endswith("_60"):
        return True
    lines = text.splitlines()
    return all(
        line_columns(line) <= 59 or lines[k + 1].lstrip().startswith("^") or " " not in line.strip()
        for k, line in enumerate(lines)
        if k >= 2 and not line.startswith((">> ", ".. "))
    )


def sized_session(case: str) -> ReplSession:
    """A session for transcript `case`: one named `*_60` is on a terminal 60 columns wide (its
    messages wrapped to 59, as `console.message_width` gives), the others in a pipe."""
    session = ReplSession()
    if case.endswith("_60"):
        session.width = 59
    return session


# ------------------------------------------------------------------------------------------------
# Behaviour the transcripts show, pinned down one fact at a time


def test_failed_definition_keeps_the_old_binding() -> None:
    session = ReplSession()
    session.feed("x = indices;")
    before = session.interpreter.get("x")
    printed = session.feed("x = tokens_int + 1;")
    assert "error:" in printed and "not bound" in printed
    assert session.interpreter.get("x") is before


def test_a_failed_definition_with_its_own_hint_still_says_it_was_not_bound() -> None:
    session = ReplSession()
    printed = session.feed("m = aggregate(select(indices, indices, <), tokens);")
    hints = [line for line in printed.splitlines() if line.startswith("hint: ")]
    assert hints[0].startswith("hint: position 2 selects positions 0 and 1")  # the error's own
    assert hints[1].startswith('hint: this fails on the running example "hello", so it was not')
    assert "m" not in session.interpreter.user_names()
    assert session.feed("m = aggregate(select(indices, indices, <), tokens);") == printed


def test_failed_new_name_is_not_bound() -> None:
    session = ReplSession()
    session.feed("y = tokens_int;")
    assert "y" not in session.interpreter.names()


def test_a_loop_body_is_checked_as_it_runs() -> None:
    # The original tests every value on the running example as it computes it: the loop stops at
    # the first failing statement, which binds nothing; what ran before it stays bound.
    session = ReplSession()
    printed = session.feed("a = 0; for i in [1, 2] { a = a + i; b = tokens_int + i; c = 1; }")
    assert "error:" in printed and "tokens_int" in printed
    assert session.interpreter.get("a") == 1
    assert {"b", "c"}.isdisjoint(session.interpreter.names())


def test_a_loop_s_iterable_is_checked_before_it_binds_anything() -> None:
    # The original tests the iterable's s-ops as it computes them, so the loop fails at once; it
    # bound `v` to the failing s-op and ran the body (found by gen_diff.py 901000 300).
    session = ReplSession()
    session.feed("set example [1, 2]")
    failing = 'aggregate(select(indices, indices, >=), tokens == "", "")'
    printed = session.feed(f"c = 0; for v in [1, {failing}] {{ c = c + 1; }}")
    assert "error: asked to average multiple values" in printed and "not bound" in printed
    assert session.interpreter.get("c") == 0
    assert "v" not in session.interpreter.names()


def test_a_loop_checks_each_step_without_recomputing_the_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each step's check reuses the values known on the example: 2,000 steps took 38 s (quadratic).
    computed: list[int] = []
    original = Evaluator._compute

    def counting(self: Evaluator, node: Any) -> Any:
        computed.append(node.id)
        return original(self, node)

    monkeypatch.setattr(Evaluator, "_compute", counting)
    session = ReplSession()
    session.feed("x = indices;")
    computed.clear()
    session.feed("for i in range(200) { x = x + 1; }")
    assert len(computed) <= 2 * 200
    assert session.feed("x;").endswith("[200, 201, 202, 203, 204] (ints)")


def test_an_unreadable_input_is_located_at_its_application() -> None:
    # It pointed at the first statement that used tokens_int, an earlier one.
    session = ReplSession()
    assert session.feed("(tokens_int + 1)([1, 2]);") == "\t =  [2, 3] (ints)"
    printed = session.feed('tokens_int("ab");').splitlines()
    assert printed[0].startswith("<repl>:1:1: error: cannot read the input as tokens_int")
    assert printed[1] == '    tokens_int("ab");'


def test_nothing_runs_after_exit() -> None:
    session = ReplSession()
    assert session.feed("quit") == ""
    assert session.finished
    assert session.feed("x = 1;") == ""
    assert "x" not in session.interpreter.names()


@pytest.mark.parametrize("command", ["exit ()", "quit ( )", "exit();"])
def test_exit_may_be_spaced_apart(command: str) -> None:
    # docs/language.md, section 7: an extension (the original's lexer has `exit()` as one token)
    session = ReplSession()
    assert session.feed(command) == ""
    assert session.finished


def test_full_seq_display_may_be_spaced_apart() -> None:
    session = ReplSession()
    assert session.feed("full  seq   display on") == ""
    assert "output:" in session.feed("x = indices + 1;")


def test_errors_are_located_per_statement() -> None:
    session = ReplSession()
    session.feed("a = 1;")
    printed = session.feed("b = a + nope;")
    assert printed.splitlines()[:3] == [
        "<repl>:1:9: error: Undefined variable: nope",
        "    b = a + nope;",
        "            ^~~~",
    ]


def test_draw_hook_receives_the_node_and_tokens() -> None:
    seen: list[tuple[Any, list[Any]]] = []

    def hook(node: Any, tokens: list[Any]) -> str:
        seen.append((node, tokens))
        return "\tdrawn"

    session = ReplSession(draw_hook=hook)
    session.feed("x = indices + 1;")
    printed = session.feed('draw(x, "ab");')
    assert printed.splitlines() == ["\tdrawn", "\t =  [1, 2] (ints)"]
    assert isinstance(seen[0][0], SOp) and seen[0][1] == ["a", "b"]


def test_completion_offers_keywords_and_names() -> None:
    session = ReplSession()
    session.feed("selfish = 1;")
    found = completion_candidates(session, "sel")
    assert {"select", "selector", "selector_width", "selfish"} <= set(found)
    assert found == sorted(found) and all(c.startswith("sel") for c in found)
    assert completion_candidates(session, "selfish") == []  # the word is already complete


def test_failed_definition_does_not_rename_the_node() -> None:
    session = ReplSession()
    assert "error:" in session.feed("tokens = tokens_int;")  # fails on "hello"
    assert session.interpreter.get("tokens_int").name == "tokens_int"
    assert session.interpreter.get("tokens").name == "tokens"


def test_ctrl_c_during_the_running_example_check_binds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the name stayed bound to a value the check never passed (it may fail on the example)
    session = ReplSession()
    session.feed("x = 1;")

    def interrupted(node: object, example: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(session._example_check, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        session.feed("x = indices + 1;")
    with pytest.raises(KeyboardInterrupt):
        session.feed("y = indices;")
    assert session.interpreter.get("x") == 1
    assert "y" not in session.interpreter.names()


def test_a_for_bodys_draw_is_drawn() -> None:
    # the original draws each; they were dropped without a word
    session = ReplSession(draw_hook=lambda node, tokens: f"drew {''.join(map(str, tokens))}")
    session.feed("x = tokens;")
    assert session.feed('for i in ["ab", "cd"] { draw(x, i); }') == "drew ab\ndrew cd"
    out = session.feed('for i in ["pq", 5] { draw(x, i); }').splitlines()
    assert out[:2] == ["drew pq", "<repl>:1:22: error: example not iterable: 5"]


def test_ctrl_c_during_a_for_bodys_check_binds_nothing_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (as for a statement typed alone, 3f66cee) x stayed bound to a value the check never
    # passed; what the body ran before stays bound, as when the check fails
    session = ReplSession()
    session.feed("x = 1;")

    def interrupted(node: object, example: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(session._example_check, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        session.feed("for i in [1] { y = 2; x = indices + 1; }")
    assert session.interpreter.get("x") == 1
    assert session.interpreter.get("y") == 2


def test_an_error_on_the_running_example_inside_a_def_is_shown_at_the_call() -> None:
    # the example is evaluated after the call returned: the error named the def's body alone
    session = ReplSession()
    session.feed("def avg(v) { return aggregate(select(indices, indices, <=), v); }")
    out = session.feed("y = avg(tokens);").splitlines()
    assert out[0].startswith("<repl>:1:21: error: asked to average multiple values")
    assert out[-3:] == [
        "<repl>:1:5: note: in this call of avg",
        "    y = avg(tokens);",
        "        ^~~~~~~~~~~",
    ]


def test_ctrl_c_during_a_load_leaves_no_s_op_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a load that Ctrl-C stops binds nothing, but the names its statements gave shared s-ops
    # stayed: tokens_int was called "tokens" and full_s "myfull" for the rest of the session
    (tmp_path / "slow.rasp").write_text(
        "tokens = tokens_int;\nmyfull = full_s;\nslow = tokens + 1;\n"
    )
    monkeypatch.chdir(tmp_path)
    session = ReplSession()
    session.feed("set example [1, 2]")
    checked = session._check_on_example

    def interrupted(result: Any) -> None:
        if "slow" in result.names:
            raise KeyboardInterrupt
        checked(result)

    monkeypatch.setattr(session, "_check_on_example", interrupted)
    with pytest.raises(KeyboardInterrupt):
        session.feed('load "slow";')
    interpreter = session.interpreter
    assert interpreter.user_names() == []
    assert interpreter.get("tokens_int").name == "tokens_int"
    assert interpreter.get("full_s").name == "full_s"
