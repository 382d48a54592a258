"""Messages name an s-op that has no source text (a program built in Python, a tracr program run
from a string) as program text rebuilt from its inputs (rasp.written_text), never as a rewrite's
words applied to a generated name: `'round (a function of the position)(indices)'` (the position
functions' table) and `'key is not None(_map_16)'` (tracr's None check of a select's key) were."""

from __future__ import annotations

import re

import pytest

import compiler
from rasp import sops as S
from rasp.errors import CompileError
from rasp.written_text import written

GENERATED = re.compile(r"(?<![\w.])_[a-z]+_\d+")


def _refusal(root: S.SOp, vocab: list, max_len: int) -> str:
    with pytest.raises(CompileError) as info:
        compiler.compile_sop(root, vocab, max_len)
    return info.value.render()


def test_a_function_of_the_position_is_named_as_the_program_built_it() -> None:
    # (fuzz_campaign.py plain 2020030 --max-len 16: a mean of bools, rounded, of the position)
    indices = S.IndicesSOp()
    selector = S.SelectNot(
        inner=S.Select(keys=indices, queries=indices, comparison=S.Comparison.GEQ)
    )
    mean = S.AggregateSOp(selector=selector, sop=indices, default=False)
    root = S.MapSOp(
        fn=lambda x: round(x) if isinstance(x, float) else x, inputs=(mean,), text="round"
    )
    shown = written(root)
    assert shown == "round(aggregate(not select(indices, indices, >=), indices))"
    message = _refusal(root, list("abc"), 16)
    assert f"'{shown}'" in message and "(a function of the position)(" not in message


def test_a_tracr_key_check_is_named_by_the_key_the_program_wrote() -> None:
    from rasp import tracr as rasp
    from rasp.tracr import lib

    # (tracr_lib_campaign.py 780336 43 --deep, #42: a tuple key sorted; text run from a string,
    # as the campaign runs it, so that no s-op has source text)
    namespace = {"rasp": rasp, "lib": lib}
    exec(  # noqa: S102
        "p0 = lib.make_shuffle_dyck2()\n"
        "p1 = lib.detect_pattern(p0, [1.0])\n"
        "p2 = lib.make_nary_sequencemap(lambda x, y, z: (x, z), rasp.indices, p1, rasp.indices)\n"
        "program = lib.make_sort_unique(p2, p2)\n",
        namespace,
    )
    with pytest.raises(CompileError) as info:
        compiler.compile_sop(namespace["program"], [1.0, 7.0, 1.5, 0.3, 3.0], 8)
    message = info.value.render()
    assert "cannot order the key (0, 0)" in message
    assert "is not None(" not in message and not GENERATED.search(message), message
    assert "(as a key)' fails" in message and "where its input = " in message


def test_written_cuts_a_deep_expression_inside_its_outer_calls() -> None:
    node: S.SOp = S.IndicesSOp(name="indices")
    for _ in range(40):
        node = S.MapSOp(fn=lambda x: x + 1, inputs=(node,), text="inc")
    shown = written(node)
    assert len(shown) <= 80 and shown.startswith("inc(inc(") and "..." in shown
