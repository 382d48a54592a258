"""`rasp show` of a model whose tokens are emoji sequences: each shown as itself (`👨‍👩‍👧`, was
`"👨\\u200d👩\\u200d👧"`), and the certificate table's blocks cut by columns between graphemes
(golden: tests/golden/show/family.txt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rasp.text_width import display_width
from rasp.tools.certificate_text import table_lines
from rasp.tools.inspect import format_summary, printable_file, summarize
from rasp.tools.model_file import read_model_file

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧
RAINBOW = "\U0001f3f3\ufe0f\u200d\U0001f308"  # 🏳️‍🌈
PROGRAM = f'family = tokens == "{FAMILY}";\n'


def test_show_of_emoji_tokens_is_golden(tmp_path: Path, golden: Any) -> None:
    pytest.importorskip("compiler")
    import compiler
    from rasp.errors import Source
    from rasp.interpreter import load_file

    program = tmp_path / "family.rasp"
    program.write_text(PROGRAM, encoding="utf-8")
    sop = load_file(program).get("family")
    vocab = [FAMILY, RAINBOW, "a\u200db"]  # (the last: a joiner between letters stays escaped)
    model = compiler.compile_sop(
        sop, vocab, 3, name="family", source=Source("family.rasp", PROGRAM)
    )
    path = tmp_path / "family.safetensors"
    model.save(path)
    text = format_summary(summarize(printable_file(read_model_file(path))))
    assert f'vocab:       {FAMILY} {RAINBOW} "a\\u200db"' in text  # (bare, as `日` is)
    golden(
        Path(__file__).parent / "golden" / "show" / "family.txt",
        text.replace(str(path), "family.safetensors") + "\n",
    )


def test_the_certificate_tables_blocks_are_cut_between_graphemes() -> None:
    check = {"sublayer": "layer 0 mlp", "kind": "relu", "where": "unit 0", "margin": 1}
    check |= {"bound": 0, "ratio": 9}
    blocks = ["x" + FAMILY * 15, "xy" + FAMILY * 15, "short"]
    lines = table_lines({"ok": True, "checks": [{**check, "block": b} for b in blocks]})[3:]
    assert len({display_width(line[: line.index("relu")]) for line in lines}) == 1, lines
    # 22 columns: x, ten families and the mark; xy, nine and the mark (not half a family)
    assert "x" + FAMILY * 10 + "…  relu" in lines[0]
    assert "xy" + FAMILY * 9 + "…   relu" in lines[1]


def test_verify_and_compile_write_an_emoji_vocabulary_with_its_letters() -> None:
    from rasp.tools.verify_text import show_tokens

    assert show_tokens([FAMILY, "a\u200db", "x\u202e"]) == (
        f'["{FAMILY}", "a\\u200db", "x\\u202e"]'  # (a joiner between letters, a bidi mark: escaped)
    )
