"""A long operation's text, as the file's layer map records it (`rasp show`, `draw`, the REPL),
is its source elided in the middle, never cut inside a name: the count of earlier matches read
`selector_width(select(prev, prev, ==) and ... lect(indices, 0, >))`."""

from __future__ import annotations

from pathlib import Path

from compiler import compile_sop
from rasp.interpreter import load_file

PROGRAM = """\
prev = shift(tokens, 1, "_");
n_before = selector_width(select(prev, prev, ==) and select(indices, indices, <) and select(indices, 0, >));
first = n_before == 0 and indices > 0;
"""


def test_an_elided_operation_starts_its_tail_at_a_name(tmp_path: Path) -> None:
    program = tmp_path / "first.rasp"
    program.write_text(PROGRAM)
    compiled = compile_sop(load_file(str(program)).get("first"), list("ab"), 4)
    ops = {op["name"]: op["op"] for layer in compiled.metadata["layers"] for op in layer["attn"]}
    assert ops["n_before"] == (
        "selector_width(select(prev, prev, ==) and ... select(indices, 0, >))"
    )
