"""An interpolation over another map's number takes that number's written error.

`(x * t1 + n) % 4` five times over a width (the defs flavour's recursion `g2_r`, defs seed 2044093
found by fuzz62): each map was an interpolation, chosen over steps because its input's error was
taken for that number's own rounding, while the line before it had passed its own input's error
on times its slope. The errors compounded (0.003 to 7,330 at N = 8) against an output snap of
0.001. Where the default is not proved, the driver builds the program again with each line
taking its input's written error (`chained_lines`), so steps write those values afresh: at
N = 5 that build is proved (the default's snap error was 1.2e4 against a margin of 0.016)."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

pytestmark = pytest.mark.exactness

TEXT = """def r(x, n) { return x if n == 0 else r((x * t1 + n) % 4, n - 1); }
b = shift(indicator(tokens == "x") - indices, 2, 0);
t1 = length + {0: -0.5, 1: 0, 2: 1}[round(b) % 3];
res = r(selector_width(select(indices, indices, !=)), 6);"""


def test_chained_lines_are_stepped_where_the_default_is_not_proved() -> None:
    root = load_source(Source("<test>", TEXT)).get("res")
    assert isinstance(root, SOp)
    model = compile_sop(root, list("xab"), 5)
    inputs = all_inputs(list("xab"), 5)
    assert check_inputs(model, root, inputs) == len(inputs)
