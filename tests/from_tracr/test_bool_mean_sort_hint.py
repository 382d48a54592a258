"""A sort's copy of a tracr mean of bools holds one selected False (True) and a mean's 0.0 (1.0)
as one number: the refusal of a function that tells them apart names that case, shows the bool
the function reads, and says what to do (sort float(x) of the mean), which compiles."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib


def _sorted(frac: rasp.SOp) -> rasp.SOp:
    return lib.make_sort(frac, lib.make_hist(), max_seq_len=3, min_key=1)


def test_the_refusal_names_the_mean_of_bools_and_what_to_do() -> None:
    frac = lib.make_frac_prevs(rasp.tokens == "a")
    program = rasp.Map(lambda x: str(x), _sorted(frac))
    with pytest.raises(CompileError) as caught:
        compile_sop(program, ["a", "b"], 3)
    (problem,) = caught.value.diagnostics
    # the function reads one selected False, not the int 0 the copy holds for it
    assert "gives 'False' for False but '0.0' for 0.0" in problem.message
    assert "a tracr mean of bools" in problem.message
    assert problem.hint is not None and "Map(float" in problem.hint
    assert "False and 0.0" in problem.hint and "int(x)" not in problem.hint


def test_the_hint_s_remedy_compiles() -> None:
    frac = lib.make_frac_prevs(rasp.tokens == "a")
    program = rasp.Map(lambda x: str(x), _sorted(rasp.numerical(rasp.Map(float, frac))))
    assert program(["a", "b"]) == ["1.0", "0.5"]
    compile_sop(program, ["a", "b"], 3)


def test_a_copy_of_ints_and_floats_keeps_its_hint() -> None:
    values = rasp.Map(lambda t: 1 if t == 2 else (1.0 if t == 3 else 5), rasp.tokens)
    ordered = lib.make_sort(values, rasp.tokens, max_seq_len=3, min_key=1)
    with pytest.raises(CompileError) as caught:
        compile_sop(rasp.Map(lambda v: str(v), ordered, simplify=False), [1, 2, 3], 3)
    (problem,) = caught.value.diagnostics
    assert "for 1 but '1.0' for 1.0" in problem.message and "bools" not in problem.message
    assert problem.hint == "give the sorted values one type (float(x) or int(x))"
