"""A step MLP is built once for every build of a program that needs it with the same inputs
(`compiler.build_memo`), and never shared where any input differs."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from compiler import compile_sop, step_mlp
from compiler.blocks import Dim, Encoded, Encoding
from compiler.build_memo import plain, shared, sharing
from compiler.step_mlp import numeric_mlp
from rasp.errors import CompileError, Diagnostic, Source
from rasp.interpreter import load_source
from rasp.sops import SOp

# fuzz mixed seed 1820297: a width times a mean, stepped over 4 contexts at N = 3; each build
# of the program stepped it again (16 contexts built, 4 builds)
WIDTH_TIMES_MEAN = """
v0 = -indicator((indices < 2));
v1 = load_from_location(selector_width(select(v0, -1, <=) or select(v0, indices, !=)) + aggregate(select(v0, 0.5, <), v0, 0), indicator((indices < 2)));
v2 = {0: -1, 1: 1.0, 2: 2}[indicator((indices < 2)) % 3];
v3 = (tokens == " ");
res = selector_width(not (select(round(v0), v1, <) and select(tokens, "ß", >=))) * aggregate(select(selector_width(select("//", tokens, <=) or select(tokens, tokens, >=)), v1, >), (v2 if v3 else v1), 0.0) / 4;
"""  # noqa: E501


def _num(name: str, values: list) -> Encoded:
    return Encoded(name, Encoding.NUMERICAL, tuple(values), number=((Dim(name), 1.0),))


def _cat(name: str, values: list) -> Encoded:
    dims = [Dim.categorical(name, v) for v in values]
    return Encoded(
        name, Encoding.CATEGORICAL, tuple(values), one_hot=tuple(((d, 1.0),) for d in dims)
    )


def test_keys_tell_apart_what_python_calls_equal() -> None:
    """A build is shared only where its inputs' reprs are equal: 1, 1.0 and True differ, and so
    do 0.0 and -0.0; values that are not plain atoms are not shared at all."""
    built: list[object] = []

    def build(value: object) -> object:
        built.append(value)
        return value

    with sharing({}):
        for value in (1, 1.0, True, 0.0, -0.0, (1, "a"), [1, "a"], 1, (1, "a")):
            assert shared("f", (value,), lambda v=value: build(v), lambda v=value: [[v]]) == value
        assert built == [1, 1.0, True, 0.0, -0.0, (1, "a"), [1, "a"]]
        odd = np.float64(1.0)
        for _ in range(2):
            shared("f", (odd,), lambda: build(odd), lambda: [[odd]])
    assert len(built) == 9
    assert not plain([np.int64(1)]) and plain([("a", 1), None])


def test_identical_step_mlps_are_built_once_within_a_scope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, out = _num("x", [0, 1, 2, 3]), _num("y", [0, 1])
    points = [(0.0, 0), (1.0, 0), (2.0, 1), (3.0, 1)]
    alone = numeric_mlp(x, points, out, op="x > 1", name="y")
    again = numeric_mlp(x, points, out, op="x > 1", name="y")
    assert alone is not again  # no scope: nothing kept
    with sharing({}):  # too small to keep
        small = numeric_mlp(x, points, out, op="x > 1", name="y")
        assert numeric_mlp(x, points, out, op="x > 1", name="y") is not small
    monkeypatch.setattr(step_mlp, "SHARED_MIN_UNITS", 1)
    with sharing({}):
        first = numeric_mlp(x, points, out, op="x > 1", name="y")
        assert numeric_mlp(x, list(points), out, op="x > 1", name="y") is first
        assert not first.b_in.flags.writeable  # shared: read-only
        # any input that differs builds anew: an int 1 for a float, the error, the name
        floats = [(p, float(v)) for p, v in points]
        assert numeric_mlp(x, floats, _num("y", [0.0, 1.0]), op="x > 1", name="y") is not first
        assert numeric_mlp(x, points, out, op="x > 1", name="y", x_error=0.01) is not first
        assert numeric_mlp(x, points, out, op="x > 1", name="z") is not first
    np.testing.assert_array_equal(first.b_in, alone.b_in)


def test_a_shared_build_still_marks_its_exact_dims(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dims a step MLP proves exact (the integer band over an embedded context) go into the
    caller's set on every call, the shared ones too."""
    monkeypatch.setattr(step_mlp, "SHARED_MIN_UNITS", 1)
    x = _num("indices", [0, 1, 2, 3])
    ctx = _cat("tokens", ["a", "b"])
    out = _num("y", [0, 1, 2])
    pts = [
        ("a", [(float(i), int(i > 1)) for i in range(4)]),
        ("b", [(float(i), 2) for i in range(4)]),
    ]
    with sharing({}):
        sets = [set(), set()]
        specs = [
            numeric_mlp(x, [], out, op="f", name="y", context=ctx, context_points=pts, exact=s)
            for s in sets
        ]
    assert specs[0] is specs[1]
    assert sets[0] == sets[1] == set(specs[0].out_dims)


def test_each_build_of_a_program_shares_its_step_mlp(monkeypatch: pytest.MonkeyPatch) -> None:
    built: collections.Counter[str] = collections.Counter()
    real = step_mlp._context_of

    def counted(terms, points, writer, what):  # type: ignore[no-untyped-def]
        built[what] += 1
        return real(terms, points, writer, what)

    monkeypatch.setattr(step_mlp, "_context_of", counted)
    # the builds that refuse it; the side build's snapped sides prove it (36,504 parameters, agreeing
    # on every input up to 3: tests/compiler/test_copy_sides.py has such programs)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *args: kept)
    sop = load_source(Source("<test>", WIDTH_TIMES_MEAN)).get("res")
    assert isinstance(sop, SOp)
    with pytest.raises(CompileError, match="snap decision"):  # (its values are too close at N = 3)
        compile_sop(sop, ["a", "é", " ", "\\"], 3)
    assert built["_map_7"] == 4  # 4 contexts, once


def test_a_refused_build_is_kept_and_raised_again_word_for_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step MLP past the pair limit is refused once per scope: every later call with the same
    inputs raises a new CompileError with the same diagnostics (mixed seed 1820297 at N = 7
    refused its 100,594-unit step MLP in 18 builds, 0.5 s each); another class is not kept."""
    monkeypatch.setattr(step_mlp, "check_size", _tiny_limit)
    calls: list[str] = []
    real = step_mlp._context_of

    def counted(terms, points, writer, what):  # type: ignore[no-untyped-def]
        calls.append(what)
        return real(terms, points, writer, what)

    monkeypatch.setattr(step_mlp, "_context_of", counted)
    x, out = _num("x", [0, 1, 2, 3]), _num("y", [0, 1])
    points = [(0.0, 0), (1.0, 0), (2.0, 1), (3.0, 1)]
    with pytest.raises(CompileError) as alone:
        numeric_mlp(x, points, out, op="x > 1", name="y")
    with sharing({}):
        errors = []
        for _ in range(3):
            with pytest.raises(CompileError) as refused:
                numeric_mlp(x, points, out, op="x > 1", name="y")
            errors.append(refused.value)
        assert len(calls) == 2  # outside the scope once, inside once
        assert errors[0] is not errors[1] and type(errors[1]) is CompileError
        assert [e.diagnostics for e in errors] == [alone.value.diagnostics] * 3
        assert str(errors[2]) == str(alone.value)
    built: list[int] = []

    class Odd(CompileError):
        pass

    def odd() -> object:
        built.append(1)
        raise Odd([])

    with sharing({}):
        for _ in range(2):
            with pytest.raises(Odd):
                shared("f", (1,), odd)
    assert len(built) == 2


def _tiny_limit(op: str, kind: str, points: int, units: int, width: int) -> None:
    raise CompileError([Diagnostic(f"'{op}': {kind} MLP of {units} units over {points} inputs")])


def test_group_count_is_the_number_of_groups_made() -> None:
    """The pair limit's count (before the groups are made): as many groups of a kind as its most
    steps in one context."""
    kinds = [[("a", 0), ("a", 0), ("b", 1)], [("a", 0), ("b", 1), ("b", 1), ("c", 2)], []]
    groups: set[tuple[object, ...]] = set()
    for per_context in kinds:
        seen: collections.Counter[tuple[object, ...]] = collections.Counter()
        for kind in per_context:
            groups.add((*kind, seen[kind]))
            seen[kind] += 1
    assert step_mlp._group_count(kinds) == len(groups) == 5


def test_a_key_is_spelled_once_per_call() -> None:
    """The key (the inputs' repr) is spelled at most once per call, on a miss after a kept build
    too (it was spelled for the look-up and again to keep the build), and a hit returns the build
    kept under it."""
    spelled: list[int] = []

    class Counted:
        def __init__(self, n: int) -> None:
            self.n = n

        def __repr__(self) -> str:
            spelled.append(self.n)
            return f"Counted({self.n})"

    with sharing({}):
        first = shared("f", (Counted(1),), lambda: [1])
        assert spelled == [1]
        assert shared("f", (Counted(2),), lambda: [2]) == [2]  # a miss, then kept
        assert spelled == [1, 2]
        assert shared("f", (Counted(1),), lambda: [3]) is first
        assert spelled == [1, 2, 1]
