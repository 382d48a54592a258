"""The operations a compiled model records (`rasp show`'s operation column, the certificate line)
read as program text, never as a generated name no block carries (`rank(_map_3)`), nor as the
text of the tracr library call that built every s-op of a program (`the mean of
(lib.make_shuffle_dyck(pairs=["()"])) - (lib.make_shuffle_dyck(pairs=["()"]))`): a call's s-ops
share its span (rasp.written_text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import compiler
from rasp import sops as S
from rasp.errors import Source, Span
from rasp.written_text import written

GENERATED = re.compile(r"(?<![\w.])_[a-z][a-z0-9_]*_\d+\b")


def _call(text: str) -> Span:
    """The span of a whole line `text`, as a tracr library call made in a program has."""
    return Span(Source("p.py", text), 1, 1, 1, len(text) + 1)


def _operations(model: compiler.CompiledModel) -> dict[str, str]:
    meta: dict[str, Any] = model.metadata
    return {
        block["name"]: block["op"]
        for layer in meta["layers"]
        for block in (*layer["attn"], *layer["mlp"])
    }


def test_a_library_calls_map_is_written_from_its_inputs_not_the_calls_text() -> None:
    call = _call("balanced = lib.make_balance(tokens)")
    tokens = S.TokensSOp()
    opens = S.MapSOp(fn=lambda t: t == "(", inputs=(tokens,), span=call)
    counted = S.MapSOp(fn=lambda x: x, inputs=(opens,), span=call, name="counted")
    reader = S.MapSOp(fn=lambda x: x < 0, inputs=(counted,), text=call.text(), span=call)
    # its span is its input's: the call made both
    assert written(reader) == "map(counted)"
    # a map alone in its call keeps the call's text (a program's own line)
    alone = S.MapSOp(fn=lambda t: t, inputs=(S.TokensSOp(),), span=call)
    assert written(alone) == "balanced = lib.make_balance(tokens)"


def test_show_names_a_sort_keys_digits_by_program_text() -> None:
    from rasp.tracr import lib

    # (programs/tracr/library.py:sort_freq: `digit 1 (base 6) of rank(_map_3)`, where no block
    # of the model is _map_3)
    model = compiler.compile_sop(lib.make_sort_freq(max_seq_len=64), list("abc"), 6)
    digits = [op for op in _operations(model).values() if op.startswith("digit ")]
    assert len(digits) == 2 and len(set(digits)) == 2, digits
    for op in digits:
        assert not GENERATED.search(op), op
        assert "hist" in op and "indices" in op, op


def test_the_vote_form_names_its_means_by_the_programs_names(tmp_path: Path) -> None:
    from rasp.tools.pyprogram import load_python_program

    # (rasp verify programs/tracr/library.py:shuffle_dyck --vocab "()" --max-len 10: every label
    # was the whole call's text, twice)
    program = tmp_path / "dyck.py"
    program.write_text(
        "from rasp import tracr as rasp\nfrom rasp.tracr import lib\n\n"
        'shuffle_dyck = lib.make_shuffle_dyck(pairs=["()"])\n'
    )
    loaded = load_python_program(f"{program}:shuffle_dyck")
    model = compiler.compile_sop(loaded.sop, list("()"), 6)
    meta = model.metadata
    ops = " ".join(_operations(model).values())
    assert "the mean of bools_open - bools_close (for balance_())" in ops, ops
    assert "(balance_() == 0) (a table over the mean of bools_open - bools_close)" in ops, ops
    certificate = " ".join(str(check["op"]) for check in meta["certificate"]["checks"])
    assert "make_shuffle_dyck" not in ops + certificate


def test_operators_inside_a_library_call_name_their_maps(tmp_path: Path) -> None:
    from rasp.tools.pyprogram import load_python_program

    # (shuffle_dyck2: two maps of one balance, `< 0` and `== 0`, read alike as `map(balance_{})`;
    # each now says its operator, so that no two rows read the same)
    program = tmp_path / "dyck2.py"
    program.write_text(
        "from rasp import tracr as rasp\nfrom rasp.tracr import lib\n\n"
        "shuffle_dyck2 = lib.make_shuffle_dyck2()\n"
    )
    loaded = load_python_program(f"{program}:shuffle_dyck2")
    ops = _operations(compiler.compile_sop(loaded.sop, list("(){}"), 6))
    assert "(balance_{} < 0) (a table over the mean of bools_open - bools_close)" in ops.values()
    assert "(balance_{} == 0) (a table over the mean of bools_open - bools_close)" in ops.values()
    assert ops["shuffle_dyck2"] == "last_zero & not_has_neg", ops
    unnamed = [op for name, op in ops.items() if name.startswith("_")]
    assert len(set(unnamed)) == len(unnamed), unnamed
    assert not any(GENERATED.search(op) or "make_shuffle" in op for op in ops.values()), ops
