"""The REPL's compiled view (`:compile`, `:layers`, `:residual`, `:verify`, `:draw`) and `draw(...)`.

Transcripts are `tests/golden/repl/compiled/*.in` with the expected `*.out` next to them (rewrite
with `pytest --update-golden`); they run in a temporary working directory, so pictures never land
in the checkout and every path in them is relative.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rasp.tools.repl import ReplSession
from rasp.tools.repl_terminal import completion_candidates, draw_hook
from tests.rasp.test_repl import (  # the same transcript format as the other goldens
    fits_its_terminal,
    sized_session,
    transcript,
)

pytest.importorskip("compiler")
pytest.importorskip("transformer")

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "golden" / "repl" / "compiled"
CASES = sorted(p.stem for p in TRANSCRIPTS.glob("*.in"))
REVERSE = "r = aggregate(select(indices, length - indices - 1, ==), tokens);"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_there_are_transcripts() -> None:
    assert {"view", "errors", "draw"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_transcript(
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    golden: Callable[[Path, str], None],
) -> None:
    if case == "draw":
        pytest.importorskip("matplotlib")
    lines = (TRANSCRIPTS / f"{case}.in").read_text(encoding="utf-8").splitlines()
    monkeypatch.chdir(tmp_path)
    # the transcripts are a machine's without a GPU (`:verify` adds CUDA runs where there is one)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    text = transcript(sized_session(case), lines)
    assert str(tmp_path) not in text and "Traceback" not in text
    golden(TRANSCRIPTS / f"{case}.out", text)
    assert fits_its_terminal(case, text)
    for line in text.splitlines():  # every picture the transcript reports is a PNG file
        if line.startswith("wrote "):
            written = tmp_path / line.split()[1]
            assert written.read_bytes()[:8] == PNG_MAGIC


def _compiled(*lines: str) -> ReplSession:
    session = ReplSession()
    for line in (REVERSE, *lines):
        assert "error" not in session.feed(line)
    return session


def test_a_corrupted_weight_shows_where_the_model_goes_wrong() -> None:
    import torch

    session = _compiled(":compile r hel 5")
    state = session.compiled.current
    assert state is not None
    # `length` is the number r addresses its key by (`length - indices - 1` is a view of it)
    dim = state.meta["residual"].index("length")
    params = dict(state.model.model.named_parameters())
    with torch.no_grad():  # `length` now reads 5 more than it is
        params["blocks.0.mlp.b_out"][dim] += 5.0
    printed = session.feed(":residual hell")
    rows = printed.splitlines()
    assert (
        "  X* length       [9, 9, 9, 9]" in rows[rows.index("after layer 0 mlp (mlp: length)") + 1]
    )
    assert any(row.startswith("  X  r ") for row in rows)  # the output is wrong too
    assert rows[-1] == "first divergence: variable `length`, after layer 0 mlp, position 0"
    assert session.feed(":verify 1").startswith("error: verification failed for `r`")


def test_the_model_survives_rebinding_its_name() -> None:
    session = _compiled(":compile r hel 5", "r = indices;")
    assert session.feed(":residual hel").splitlines()[-1] == (
        "the model agrees with the interpreter everywhere on this input"
    )
    assert "compiled r:" in session.feed(":compile r hel 5")  # now the new r


def test_a_rebound_name_is_noted_until_it_is_compiled_again() -> None:
    # `:verify` after `r = ...` checks the model of the old r: it says so rather than letting it
    # read as a verification of the new r
    session = _compiled(":compile r hel 5")
    assert not session.feed(":layers").startswith("note:")
    session.feed("r = indices;")
    note = (
        "note: `r` has been rebound since it was compiled; this model is of its earlier value "
        "(:compile r to compile the new one)"
    )
    for command in (":layers", ":residual hel", ":verify 1"):
        assert session.feed(command).splitlines()[0] == note
    assert session.feed(":residual xyz").startswith("error: cannot run `r`")  # errors: no note
    assert "compiled r:" in session.feed(":compile r hel 5")
    assert not session.feed(":layers").startswith("note:")


def test_a_head_that_writes_only_a_helper_shows_what_it_wrote() -> None:
    # it read "no decoded variable is new or changed", as if the count's head did nothing
    import torch

    session = _compiled("n = selector_width(select(tokens, tokens, ==));", ":compile n abc 5")
    rows = session.feed(":residual aab").splitlines()
    at = rows.index(
        "after layer 0 attn (head 0: n): only helper dims are new (a later sublayer reads them)"
    )
    assert rows[at + 1].split() == "n.frac [1/3, 1/3, 1/2] 1/(n + 1) = [1/3, 1/3, 1/2]".split()
    assert rows[at + 2] == "after layer 0 mlp (mlp: n)"
    # a wrong frac is marked where the head wrote it
    state = session.compiled.current
    assert state is not None
    dim = state.meta["residual"].index("n.frac")
    params = dict(state.model.model.named_parameters())
    with torch.no_grad():
        params["blocks.0.attn.b_O"][dim] += 0.25
    rows = session.feed(":residual aab").splitlines()
    assert rows[at + 1].startswith("  X  n.frac")
    # a layer that computes nothing stays one line
    assert "after layer 1 mlp (no operation): no decoded variable is new or changed" in (
        session.feed(":compile r hel 5") and session.feed(":residual hel")
    )


def test_residual_columns_line_up_for_wide_tokens() -> None:
    # `[日, 本]` is 8 characters but 10 terminal columns: padded by characters, the interpreter
    # column of a row of CJK tokens stood 2 columns right of the others
    from rasp.text_width import display_width

    session = _compiled(":compile r 日本語 4")
    printed = session.feed(":residual 日本").splitlines()
    rows = [line for line in printed if "[" in line and ".frac" not in line]  # (not a helper's)
    starts = {display_width(row[: row.rindex("[")]) for row in rows}
    assert len(rows) > 5 and len(starts) == 1, rows
    assert "   * tokens       [日, 本]                         [日, 本]" in rows


def test_a_vocabulary_of_words_shows_its_letters() -> None:
    # JSON's default escapes wrote ["\u65e5\u672c", ...]; a control or format character is
    # still escaped (a token cannot reorder the line), and an ASCII list is as it was
    from rasp.tools.verify_text import show_tokens

    assert show_tokens(["日本", "語", "a\u202eb", "\U000e0067"]) == (
        '["日本", "語", "a\\u202eb", "\\udb40\\udc67"]'
    )
    assert show_tokens(["ab", "c\x1b", 1, True]) == '["ab", "c\\u001b", 1, true]'
    session = _compiled('set example ["日本", "語"]', ":compile r")
    assert session.feed(":residual").startswith('r(["日本", "語"]) in the compiled model')


def test_draw_defaults_to_comp_flows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    session = _compiled(":compile r hel 5")
    printed = session.feed(":draw hel")
    assert printed.startswith("wrote comp_flows/r_hel.png")
    assert (tmp_path / "comp_flows" / "r_hel.png").read_bytes()[:8] == PNG_MAGIC
    assert (tmp_path / "comp_flows" / "r_hel.dot").read_text().startswith("digraph")


def test_draw_where_comp_flows_cannot_be_made_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file named comp_flows (or a directory without write access): mkdir's FileExistsError
    # was an internal error that ended the session, for :draw and draw(...) alike
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "comp_flows").write_text("not a folder")
    session = _compiled(":compile r hel 5")
    assert session.feed(":draw hel") == "error: cannot write comp_flows/: File exists"
    session = ReplSession(draw_hook=draw_hook)
    session.feed(REVERSE)
    assert session.feed('draw(r, "ab");').splitlines() == [
        "\tdraw cannot write comp_flows: File exists",
        "\t =  [b, a] (strings)",
    ]


def test_draw_without_matplotlib_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    session = _compiled(":compile r hel 5")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    printed = session.feed(":draw hel -o x.png")
    assert printed == (
        "error: :draw needs matplotlib, which is not installed (pip install 'rasp-forge[viz]')"
    )


def test_a_missing_runtime_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    session = ReplSession()
    session.feed(REVERSE)
    monkeypatch.setitem(sys.modules, "transformer", None)
    assert session.feed(":compile r") == (
        "error: :compile needs the Python package 'transformer', which is not installed"
    )


def test_running_out_of_memory_is_one_line_and_keeps_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `:compile r [100,000 tokens] 4` allocated a 100,000 x 100,000 matrix while planning (the size
    # check predicts from MAX_LEN only): numpy's MemoryError escaped the session (a traceback
    # from feed; "internal error ... a bug" at the terminal)
    from rasp.tools import model_steps

    session = _compiled(":compile r hel 5")

    def too_big(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 74.5 GiB for an array with shape (100000, 100000)")

    monkeypatch.setattr(model_steps, "compile_sop", too_big)
    assert session.feed(":compile r [1, 2] 4") == (
        "error: :compile ran out of memory (Unable to allocate 74.5 GiB for an array with shape "
        "(100000, 100000)); try a smaller VOCAB or MAX_LEN"
    )
    assert session.feed(":layers").startswith('r: vocab "hel", max_len 5')


def test_ctrl_c_during_a_compile_keeps_the_model_and_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rasp.tools import model_steps
    from rasp.tools.repl_terminal import run_loop

    session = _compiled(":compile r hel 5")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(model_steps, "compile_sop", interrupted)
    lines = iter([":compile r abc 4", ":layers", "x = 1;"])

    def read(prompt: str) -> str:
        line = next(lines, None)
        if line is None:
            raise EOFError
        return line

    out = io.StringIO()
    assert run_loop(session, read, out) == 0
    printed = out.getvalue().splitlines()
    assert printed[0] == "interrupted"
    assert printed[1] == 'r: vocab "hel", max_len 5; output r (categorical, strings)'
    assert printed[-1] == "    value: x =  1"


def test_rasps_booleans_in_a_vocab_or_input_list_are_json_booleans() -> None:
    # `set example [1.5, 2, True]` compiled the vocab [1.5, 2, true], and `:residual [1.5, 2,
    # True]`, the same list as RASP writes it, was refused as invalid JSON
    session = ReplSession()
    session.feed("set example [1.5, 2, True]")
    session.feed("r = aggregate(select(indices, length - indices - 1, ==), tokens);")
    assert session.feed(":compile r [1.5, 2, True] 4").startswith("compiled r:")
    assert session.compiled.current is not None
    assert session.compiled.current.vocab == (1.5, 2, True)
    out = session.feed(":residual [1.5, True, 2]")
    assert out.endswith("the model agrees with the interpreter everywhere on this input"), out


def test_terminal_draw_statement_writes_a_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    session = ReplSession(draw_hook=draw_hook)
    session.feed(REVERSE)
    printed = session.feed('draw(r, "ab");')
    assert printed.startswith("wrote comp_flows/r_ab.png")
    assert printed.splitlines()[-1] == "\t =  [b, a] (strings)"
    assert (tmp_path / "comp_flows" / "r_ab.png").read_bytes()[:8] == PNG_MAGIC
    session.feed("sel = select(indices, indices, <);")
    assert "error: draw expects an s-op" in session.feed("draw(sel);")


def test_terminal_draw_without_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "compiler", None)
    monkeypatch.chdir(tmp_path)
    session = ReplSession(draw_hook=draw_hook)
    session.feed(REVERSE)
    assert session.feed('draw(r, "ab");').splitlines() == [
        "\tdraw needs the Python package 'compiler', which is not installed",
        "\t =  [b, a] (strings)",
    ]
    assert not (tmp_path / "comp_flows").exists()  # nothing drawn, no empty folder left


def test_terminal_draw_of_a_selector_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    session = ReplSession(draw_hook=draw_hook)
    session.feed("sel = select(indices, indices, <);")
    assert "error: draw expects an s-op" in session.feed('draw(sel, "ab");')
    assert not (tmp_path / "comp_flows").exists()


def test_colon_commands_complete() -> None:
    session = ReplSession()
    assert completion_candidates(session, ":c") == [":compile"]
    assert {":layers", ":residual", ":verify", ":draw", ":help"} <= set(
        completion_candidates(session, ":")
    )
    assert ":compile" not in completion_candidates(session, "c")


def test_characters_for_a_model_of_numbers_get_the_list_to_write() -> None:
    # `:residual 21` read the characters "2" and "1" and said token "2" was not in [3, 1, 2]
    session = _compiled("set example [1, 2]", "x = tokens_int + 1;", ":compile x [3, 1, 2] 4")
    expected = "error: the model's tokens are not strings: write the input as a list, {} [2, 1]"
    assert session.feed(":residual 21") == expected.format(":residual")
    assert session.feed(":draw 21").startswith(expected.format(":draw"))
    assert session.feed(":residual [2, 1]").splitlines()[-1] == (
        "the model agrees with the interpreter everywhere on this input"
    )


def test_a_dim_written_before_its_variable_is_shown_as_the_first_divergence() -> None:
    import torch

    session = _compiled(":compile r hel 5")
    state = session.compiled.current
    assert state is not None
    # the embedding writes 0.5 into `r:e`, which only layer 1's head should write
    dim = state.meta["residual"].index("r:e")
    params = dict(state.model.model.named_parameters())
    with torch.no_grad():
        params["embed.W_E"][0, dim] += 0.5
    rows = session.feed(":residual hel").splitlines()
    assert "  X  r:e          0.5 at position 0" in "\n".join(rows)
    assert rows[-1] == (
        "first divergence: variable `r` = aggregate(select(indices, length - indices - 1, ==), "
        "tokens) before it is written, "
        "after the embedding, position 0"
    )


def test_a_boolean_word_inside_a_json_string_stays_a_string() -> None:
    from rasp.tools.repl_arguments import parse_tokens_text

    assert parse_tokens_text('["True", False, "a\\" True"]', "VOCAB") == ["True", False, 'a" True']
    assert parse_tokens_text("True", "INPUT") == list("True")  # (characters, as the CLI's)


def test_the_embedded_tokens_are_compared_with_the_input_as_given() -> None:
    # The token one-hot holds the input's atoms: 1 beside 1.5 and "1.5" is the number 1, which
    # was compared with `tokens` as the program reads it ("1") and marked X at the embedding.
    session = ReplSession()
    session.feed("r = aggregate(select(indices, length - indices - 1, ==), tokens);")
    session.feed(':compile r [1, 1.5, "1.5"] 3')
    out = session.feed(':residual [1, 1.5, "1.5"]')
    assert 'tokens       [1, 1.5, "1.5"]                  [1, 1.5, "1.5"]' in out
    assert "the model agrees with the interpreter everywhere on this input" in out


@pytest.mark.parametrize("command", [":residual", ":draw"])
def test_a_running_example_the_model_cannot_take_is_named(command: str) -> None:
    # Without INPUT these run on the running example, which the error did not show ("the input
    # has 5 tokens", of an input no one typed).
    session = _compiled(":compile r abc 4")
    assert session.feed(command) == (
        'error: cannot run `r` on the running example "hello": the input has 5 tokens; this '
        "model was compiled for at most 4\n"
        f"hint: give {command} an INPUT, or set example to one the model takes"
    )
    assert session.feed('set example "abz"') == ""
    assert session.feed(command).startswith(
        'error: cannot run `r` on the running example "abz": token "z" at position 2'
    )
    # a typed INPUT is named as before
    assert session.feed(f"{command} abcab").startswith("error: cannot run `r` on this input:")


def test_a_helper_beside_a_new_variable_gets_its_row_too() -> None:
    # most_freq's layer 0: head 1 completes `_selector_width_1`, head 0 writes only `hist.frac`
    from rasp.tools.repl_residual import _checkpoint_rows
    from rasp.tools.residual_helpers import HelperDim
    from rasp.tools.residuals import Checkpoint, DecodedVariable

    meta = {"layers": [{"attn": [{"head": 0, "name": "hist"}, {"head": 1, "name": "w"}]}]}
    tokens = DecodedVariable("tokens", ("a", "b"), ("a", "b"), (), True)
    width = DecodedVariable("w", (0, 1), (0, 1), (), True)
    frac = HelperDim("hist.frac", (0.5, 1 / 3), "1/(hist + 1)", (0.5, 0.5))
    points = [
        Checkpoint("blocks.0.hook_resid_pre", None, "embedding", (tokens,)),
        Checkpoint("blocks.0.hook_resid_mid", 0, "attn", (width, tokens), helpers=(frac,)),
    ]
    rows = _checkpoint_rows(points, meta)
    assert rows[-1] == ("X ", "hist.frac", "[1/2, 1/3]", "1/(hist + 1) = [1/2, 1/2]")
    assert rows[-2][1] == "tokens"
