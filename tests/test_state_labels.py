"""A generated label in a decision's state (`at query (_map_17=0)`) reads as the program text it
stands for where that is short (`at query (round(v2)=0)`), as an s-op's input does in a label
(compiler.graph, rasp.written_text); else it stays, explained after the place (rasp.named_text).
Mixed fuzz seed 2090033 at N = 10 was refused `(at query (_map_17=0); _map_17: round(v2))`."""

from __future__ import annotations

from rasp.named_text import MessageNames
from rasp.nodes import is_one_term

TEXTS = {
    "_map_17": "round(v2)",
    "_map_3": "v2 < 3",
    "_map_4": "round(_map_3)",  # names another generated label: no reader could look it up
    "_map_5": "aggregate(select(indices, indices, <), tokens_int + length) - 1",  # too long
    "_f_map_2": "x + 1",  # a def's call made it: said where it was made
}


def _names() -> MessageNames:
    return MessageNames({"_f_map_2": "in f, called at p.rasp:3:5"}.get, TEXTS.get)


def _place(where: str) -> str:
    names = _names()
    return names.inline(where) + names.told_in(where)


def test_a_short_generated_label_is_written_as_its_text() -> None:
    assert _place("query (_map_17=0)") == "query (round(v2)=0)"
    # an operation bracketed, as in an s-op's label; each occurrence written so
    assert _place("unit 2 at (_map_3=True, x=1)") == "unit 2 at ((v2 < 3)=True, x=1)"
    assert _place("query (_map_17=0), key (_map_17=1)") == "query (round(v2)=0), key (round(v2)=1)"


def test_other_labels_stay_explained_after_the_place() -> None:
    assert _place("query (_map_4=1)") == "query (_map_4=1); _map_4: round(_map_3)"
    assert _place("query (_map_5=1)").startswith("query (_map_5=1); _map_5: aggregate(")
    # a def's call made it: written as its text too, said where it was made (tests/test_def_state_labels.py)
    assert _place("query (_f_map_2=1)") == "query ((x + 1)=1); (x + 1): in f, called at p.rasp:3:5"
    # a derived dimension keeps its label (`round(v2).frac` is no program text)
    assert _place("unit 0 at (_map_17.frac=0.5)") == (
        "unit 0 at (_map_17.frac=0.5); _map_17: round(v2)"
    )
    # a value is never rewritten, whatever it holds
    assert _place("query (tokens=_map_17=1)") == "query (tokens=_map_17=1)"


def test_one_term_is_public() -> None:
    # (written_text and compiler.graph imported rasp.nodes' private _ONE_TERM)
    assert is_one_term("round(v2)") and is_one_term("d[x]") and is_one_term("x")
    assert is_one_term("lib.make_sort(rasp.tokens, min_key=1)")  # (a dotted call too)
    assert not is_one_term("v2 < 3") and not is_one_term("not x")
