"""`MeanValues.means_of` remembers where a value set's sums overflow: an aggregate asks once per
(position, width), and each ask used to enumerate the sums again up to the overflow (twins seed 268
at N = 24: 80 s of set updates for one refusal)."""

from __future__ import annotations

from types import SimpleNamespace

import compiler.means as means_module
from compiler.means import MAX_VALUES, MeanValues


class _Known:
    """What `means_of` reads of the value analysis."""

    def __init__(self) -> None:
        self.problems: list = []
        self.n_max = 24

    def intern(self, vals: object) -> tuple:
        return tuple(sorted(set(vals)))  # type: ignore[call-overload]


def _node() -> SimpleNamespace:
    # a problem names its node by the span's identity (`already_reported`)
    return SimpleNamespace(text="aggregate(s, x)", span=object())


def test_an_overflow_is_enumerated_once_and_reported_alike(monkeypatch) -> None:
    numbers = [0.5**k for k in range(40)]  # sums of 4 of these exceed MAX_VALUES (3: 10,739)
    known = _Known()
    mv = MeanValues(known)  # type: ignore[arg-type]
    node = _node()
    assert len(mv.means_of(numbers, 2, node)) > 1
    assert mv.means_of(numbers, 5, node) == ()
    assert len(known.problems) == 1
    assert f"more than {MAX_VALUES} values" in known.problems[0].message
    # every later ask for as many values or more answers at once, without enumerating
    # an enumeration now would stop at once, as too much work (another message)
    monkeypatch.setattr(means_module, "MAX_SUM_WORK", -1)
    for w in range(5, 25):
        assert mv.means_of(numbers, w, node) == ()
    assert len(known.problems) == 1  # the same node's problem, reported once
    other = SimpleNamespace(text="aggregate(t, x)", span=object())
    assert mv.means_of(numbers, 9, other) == ()
    assert [p.message for p in known.problems[1:]] == [
        known.problems[0].message.replace("aggregate(s, x)", "aggregate(t, x)")
    ]
    assert len(mv.means_of(numbers, 2, node)) > 1  # fewer values still have their sums
