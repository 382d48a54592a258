"""Golden files of messages about what a `def` called twice made (tests/golden/def_names/): a
refusal's notes on the other builds tried, its hint, and compile's certificate line name each
label a call made with its local and the calls (`count_2 (count in count_below, called at ...)`),
as the refusal itself does. Rewrite them with `UPDATE_GOLDEN=1`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler import compile_sop
from compiler.forms import Forms
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from tests.cli_helpers import run

GOLDEN = Path(__file__).parent / "golden" / "def_names"


@pytest.fixture
def no_vote_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default form's refusal: the counts of a balance these programs make compile through
    one mean of votes (compiler.vote_form), or their sides as tables (compiler.side_build),
    which these messages are not about."""
    monkeypatch.setattr(Forms, "votes_differ", lambda self: False)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)


def _refusal(name: str, vocab: str, max_len: int) -> str:
    path = GOLDEN / f"{name}.rasp"
    root = load_source(Source(path.name, path.read_text(encoding="utf-8"))).get("res")
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list(vocab), max_len)
    return refused.value.render() + "\n"


@pytest.mark.usefixtures("no_vote_form")
def test_the_notes_on_other_builds_name_a_second_calls_local(
    golden: Callable[[Path, str], None],
) -> None:
    text = _refusal("also_tried", "abc", 10)
    # (was `not proved: layer 1 mlp (count_2) has ...`)
    assert "not proved: layer 1 mlp (count_2 (count in count_below, called at" in text
    golden(GOLDEN / "also_tried.txt", text)


@pytest.mark.usefixtures("no_vote_form")
def test_a_noisy_counts_hint_names_what_its_select_reads_by_call(
    golden: Callable[[Path, str], None],
) -> None:
    text = _refusal("noisy_count", "abc", 10)
    # (was `its select reads 'balance_2', computed from the means 'closes' and 'closes_2'`)
    assert "its select reads 'balance_2' (balance in count_below, called at" in text
    golden(GOLDEN / "noisy_count.txt", text)


def test_compiles_certificate_line_names_the_weakest_blocks_labels(
    capsys: pytest.CaptureFixture[str],
    golden: Callable[[Path, str], None],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(GOLDEN)  # (messages locate the program as it was named: no tmp path)
    out_path = tmp_path / "certificate.safetensors"
    argv = ["compile", "certificate.rasp", "--vocab", "0123", "--max-len", "8", "-o"]
    code, out, err = run(capsys, *argv, str(out_path))
    assert code == 0, err
    golden(GOLDEN / "certificate.txt", out.replace(str(tmp_path), "TMP"))
    # the model file's labels are the compiler's as before: only messages explain them
    from rasp.tools.model_file import read_model_file

    residual = read_model_file(out_path).meta["residual"]
    names = {label.split(":")[0] for label in residual}
    assert {"q_2", "v1_2"} <= names and not any("called at" in label for label in residual)
    # verify's re-check of the file names them so too, from the recorded program
    code, out, err = run(
        capsys, "verify", "certificate.rasp", "--model", str(out_path), "--max-len", "3"
    )
    assert code == 0, out + err
    assert (
        "weakest margin/bound 2.98: layer 0 mlp (q_2 (q in last_big, called at certificate.rasp:"
        "9:36)), relu at unit 25 at (_last_big_map_1=True, v1_2=7): margin 3 vs float32 error "
        "bound 1.01; _last_big_map_1: in last_big, called at certificate.rasp:9:7; v1_2: v1 in "
        "last_big, called at certificate.rasp:9:36) (re-checked from the weights)"
    ) in out + err


def test_a_message_explains_each_label_once_where_it_first_names_it() -> None:
    from rasp.named_text import MessageNames

    told = {"got_2": "got in pick, called at p.rasp:7:25", "v": "in f, called at p.rasp:3:1"}
    names = MessageNames(told.get)
    assert names.block("got_2, x") == "got_2 (got in pick, called at p.rasp:7:25), x"
    # said once: a derived dimension of it (`.frac`) is not explained again, nor is `x` at all
    assert names.told_in("unit 3 at (got_2.frac=0.5, x=a, v~sel=1)") == (
        "; v: in f, called at p.rasp:3:1"
    )
    assert names.quoted("v") == "'v'" and names.label("got_2") == "got_2"
    # a name holding a `.` (a Python program's `re.v`) is its own s-op's, not `re`'s
    dotted = MessageNames({"re.v": "in f, called at p.py:2:1"}.get)
    assert dotted.told_in("unit 0 at (re.v=1)") == "; re.v: in f, called at p.py:2:1"
    # a value is never read as a label, and a state naming no def's s-op adds nothing
    assert MessageNames(told.get).told_in("query (tokens=got_2=1, indices=2)") == ""
