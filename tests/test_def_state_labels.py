"""A label a `def`'s call made, in a decision's state, reads as the program text it stands for,
as one no `def` made does (tests/test_state_labels.py), with where it was made said under that
text: `at query ((x + 1)=1); (x + 1): in f, called at p.rasp:3:5`. It kept the explained form
(`at query (_f_map_2=1); _f_map_2: in f, called at ...`). It stays a label where the message named
it before (the reader met it so), and where two labels of the state have one text (a `def` called
twice): the text alone would not tell them apart."""

from __future__ import annotations

from rasp.named_text import MessageNames

TEXTS = {
    "_f_map_2": "x + 1",
    "_f_map_2_2": "x + 1",  # the second call's
    "_g_map_4": "round(y)",
    "_map_7": "v < 3",
}
ABOUT = {
    "_f_map_2": "in f, called at p.rasp:3:5",
    "_f_map_2_2": "in f, called at p.rasp:4:5",
    "_g_map_4": "in g, called at p.rasp:9:1",
}


def _names() -> MessageNames:
    return MessageNames(ABOUT.get, TEXTS.get)


def _place(where: str, names: MessageNames | None = None) -> str:
    names = names or _names()
    return names.inline(where) + names.told_in(where)


def test_a_defs_label_is_written_as_its_text_and_said_where_made() -> None:
    assert (
        _place("query (_g_map_4=0)") == "query (round(y)=0); round(y): in g, called at p.rasp:9:1"
    )
    # beside a label no def made, and once however often the state names it
    assert _place("unit 1 at (_f_map_2=2, _map_7=True), key (_f_map_2=3)") == (
        "unit 1 at ((x + 1)=2, (v < 3)=True), key ((x + 1)=3); (x + 1): in f, called at p.rasp:3:5"
    )


def test_two_calls_of_one_text_keep_their_labels() -> None:
    assert _place("query (_f_map_2=1, _f_map_2_2=2)") == (
        "query (_f_map_2=1, _f_map_2_2=2); _f_map_2: in f, called at p.rasp:3:5; "
        "_f_map_2_2: in f, called at p.rasp:4:5"
    )
    # (one of them alone is its text)
    assert (
        _place("query (_f_map_2_2=2)") == "query ((x + 1)=2); (x + 1): in f, called at p.rasp:4:5"
    )


def test_a_label_the_message_named_before_stays() -> None:
    names = _names()
    assert names.block("_g_map_4") == "_g_map_4 (in g, called at p.rasp:9:1)"
    assert _place("query (_g_map_4=0)", names) == "query (_g_map_4=0)"
