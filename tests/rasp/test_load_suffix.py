"""`load "prog.rasp";` of a missing file names the file as typed: it said "cannot find
'prog.rasp.rasp'", and suggested a typo's fix without the suffix typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.errors import RaspError
from rasp.interpreter import Interpreter
from rasp.parser import parse


@pytest.mark.parametrize(
    ("typed", "missing", "meant"),
    [
        ("revers.rasp", "revers.rasp", '"reverse.rasp"'),
        ("revers", "revers.rasp", '"reverse"'),
        ("nowhere.rasp", "nowhere.rasp", None),
    ],
)
def test_a_missing_file_is_named_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str, missing: str, meant: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reverse.rasp").write_text("r = tokens;\n", encoding="utf-8")
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse(f'load "{typed}";', "t.rasp"))
    assert str(info.value) == f"cannot find '{missing}'"
    hint = info.value.hint or ""
    assert hint.startswith(f"did you mean {meant}? ") if meant else hint.startswith("looked in")
