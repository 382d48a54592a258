"""The attention builders, run in float32 with the terms assembly adds: exact outputs, exact weights."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import attention
from compiler.attention import (
    SCORE_UNIT,
    SOFTMAX_GAP,
    aggregate_head,
    merge_heads,
    selector_width_head,
)
from compiler.blocks import BOS, ONE, PAD, Atomic, Dim, Encoded, HeadSpec
from compiler.numeric import PAD_SCORE, mean_error_bound

F32 = np.float32


class Batch:
    """Model positions [batch, 1 + max_len]: BOS, the real positions, then PAD; dims set per s-op."""

    def __init__(self, lengths: Sequence[int], dims: Sequence[Dim]) -> None:
        self.lengths = list(lengths)
        self.max_len = max(lengths)
        self.dims = list(dict.fromkeys([ONE, BOS, PAD, *dims]))
        self.index = {d: i for i, d in enumerate(self.dims)}
        self.r = np.zeros(
            (len(lengths), 1 + self.max_len, len(self.dims)), F32
        )  # [batch, pos, d_model]
        self.real = np.zeros(self.r.shape[:2], bool)
        for b, n in enumerate(lengths):
            self.real[b, 1 : n + 1] = True
        self.r[:, 0, self.index[BOS]] = 1
        self.r[:, 0, self.index[ONE]] = 1
        self.r[..., self.index[ONE]] += self.real
        self.r[..., self.index[PAD]] = ~self.real
        self.r[:, 0, self.index[PAD]] = 0

    def set_categorical(self, enc: Encoded, values: Sequence[Sequence]) -> None:
        """values[b][i] at real position i of sequence b (materialised readings)."""
        lookup = {v: k for k, v in enumerate(enc.values)}
        for k, terms in enumerate(enc.one_hot):
            ((dim, _),) = terms
            for b, seq in enumerate(values):
                self.r[b, 1 : len(seq) + 1, self.index[dim]] = [lookup[v] == k for v in seq]

    def set_number(self, dim: Dim, values: Sequence[Sequence[float]]) -> None:
        for b, seq in enumerate(values):
            self.r[b, 1 : len(seq) + 1, self.index[dim]] = seq

    def garbage_in_pad(self, seed: int = 0) -> None:
        """PAD positions hold arbitrary one-hot-looking values: they must change nothing."""
        rng = np.random.default_rng(seed)
        pad = ~self.real
        pad[:, 0] = False
        keep = [self.index[d] for d in (ONE, BOS, PAD)]
        noise = rng.integers(0, 2, self.r.shape).astype(F32)
        noise[..., keep] = self.r[..., keep]
        self.r[pad] = noise[pad]

    def matrix(self, rows: dict[Dim, np.ndarray], width: int) -> np.ndarray:
        w = np.zeros((len(self.dims), width), F32)
        for d, vec in rows.items():
            w[self.index[d]] = vec
        return w

    def attend(self, head: HeadSpec) -> tuple[np.ndarray, np.ndarray]:
        """(pattern [batch, q, k], output [batch, pos, len(out_dims)]) as the assembled model computes
        them: bos/pad terms added, scores divided by sqrt(d_head) (folded into W_Q), float32 softmax."""
        d_qk = len(next(iter(head.W_Q.values())))
        d_head = d_qk + 3
        scale = F32(np.sqrt(d_head))
        w_q = np.zeros((len(self.dims), d_head), F32)
        w_k = np.zeros((len(self.dims), d_head), F32)
        w_q[:, :d_qk] = self.matrix(head.W_Q, d_qk)
        w_k[:, :d_qk] = self.matrix(head.W_K, d_qk)
        one, bos, pad = (self.index[d] for d in (ONE, BOS, PAD))
        w_q[one, d_qk], w_k[bos, d_qk] = head.bos_score, 1  # every query: BOS key at bos_score
        w_q[one, d_qk + 1], w_k[pad, d_qk + 1] = PAD_SCORE, 1  # PAD keys: far below
        w_q[bos, d_qk + 2], w_k[bos, d_qk + 2] = 1e4 * SCORE_UNIT, 1  # the BOS query sees only BOS
        q = self.r @ (w_q * scale)  # [batch, pos, d_head]
        k = self.r @ w_k
        scores = (q @ k.transpose(0, 2, 1)) / scale  # [batch, q, k]
        scores = scores - scores.max(-1, keepdims=True)
        e = np.exp(scores)
        pattern = e / e.sum(-1, keepdims=True)
        v = self.r @ self.matrix(head.W_V, head.W_O.shape[0])  # [batch, pos, d_v]
        return pattern, (pattern @ v) @ head.W_O.astype(F32)


def cat(name: str, values: Sequence) -> Encoded:
    return Encoded.materialised_categorical(name, tuple(values))


def num(name: str, values: Sequence) -> Encoded:
    return Encoded.materialised_numerical(name, tuple(values))


def atom(query: Encoded, key: Encoded, pred: Callable) -> Atomic:
    """select(key, query, pred): selected iff pred(key value, query value)."""
    table = np.array([[bool(pred(kv, qv)) for kv in key.values] for qv in query.values])
    return Atomic(query, key, table)


def selection(atoms_values: Sequence[tuple[Callable, Sequence, Sequence]]) -> np.ndarray:
    """The conjunction's bool matrix [q, k] from (pred, key values, query values) per atom."""
    sel = None
    for pred, keys, queries in atoms_values:
        m = np.array([[bool(pred(k, q)) for k in keys] for q in queries])
        sel = m if sel is None else sel & m
    return sel


def check_pattern(pattern: np.ndarray, sel: np.ndarray, b: int, n: int) -> None:
    """Selected keys share one weight, others (PAD included) are exactly 0, BOS takes the rest."""
    for i in range(n):
        row = pattern[b, i + 1]
        chosen = sel[i]
        w = chosen.sum()
        if w == 0:
            assert row[0] == 1 and not row[1:].any()
        else:
            assert row[0] == 0
            assert (row[1 : n + 1][chosen] == F32(1) / F32(w)).all()
            assert not row[1 : n + 1][~chosen].any() and not row[n + 1 :].any()


def test_gap_underflows_to_zero_in_float32() -> None:
    assert np.exp(F32(-SOFTMAX_GAP)) == 0
    assert np.exp(-(F32(SCORE_UNIT) / 2 - 8)) == 0
    weights = torch.softmax(torch.tensor([0.0, -SOFTMAX_GAP, -SCORE_UNIT / 2, PAD_SCORE]), dim=0)
    assert weights.tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("max_len", [10, 40])
def test_reverse_copies_exactly_and_pad_changes_nothing(max_len: int) -> None:
    idx = cat("indices", range(max_len))
    opp = cat("opp", range(max_len))
    tokens = cat("tokens", "abc")
    out = cat("reverse", "abc")
    head = aggregate_head(
        [atom(opp, idx, lambda k, q: k == q)], tokens, "a", out, op="reverse", name="reverse"
    )
    lengths = list(range(1, max_len + 1))
    rng = np.random.default_rng(1)
    seqs = [list(rng.choice(list("abc"), n)) for n in lengths]
    batch = Batch(lengths, [*idx.dims(), *opp.dims(), *tokens.dims(), *out.dims()])
    batch.set_categorical(idx, [list(range(n)) for n in lengths])
    batch.set_categorical(opp, [[n - i - 1 for i in range(n)] for n in lengths])
    batch.set_categorical(tokens, seqs)
    _, y = batch.attend(head)
    batch.garbage_in_pad()
    _, y_pad = batch.attend(head)
    for b, (n, seq) in enumerate(zip(lengths, seqs)):
        want = np.eye(3, dtype=F32)[["abc".index(t) for t in reversed(seq)]]
        np.testing.assert_array_equal(y[b, 1 : n + 1], want)
        np.testing.assert_array_equal(y_pad[b, 1 : n + 1], want)


@pytest.mark.parametrize("default", [0, 2.5, -3])
def test_empty_selection_gives_the_default(default: float) -> None:
    """select(tokens, tokens, <) selects nothing for the smallest token: numerical and categorical."""
    toks = cat("tokens", [1, 2, 3])
    seqs = [[3, 1, 2, 1], [1], [2, 2, 3]]
    sel_atom = atom(toks, toks, lambda k, q: k < q)
    out_n = num("agg", [])
    head_n = aggregate_head([sel_atom], toks, default, out_n, op="mean", name="agg")
    out_c = cat("first", [1, 2, 3, default])
    only = atom(toks, toks, lambda k, q: k == q - 1)  # at most one distinct value, but repeats...
    head_c = aggregate_head([only], toks, default, out_c, op="copy", name="first")
    batch = Batch([len(s) for s in seqs], [*toks.dims(), Dim("agg"), *out_c.dims()])
    batch.set_categorical(toks, seqs)
    pattern, y = batch.attend(head_n)
    _, yc = batch.attend(head_c)
    for b, seq in enumerate(seqs):
        sel = selection([(lambda k, q: k < q, seq, seq)])
        check_pattern(pattern, sel, b, len(seq))
        for i, q in enumerate(seq):
            picked = [k for k in seq if k < q]
            want = np.mean(picked, dtype=F32) if picked else F32(default)
            assert abs(y[b, i + 1, 0] - want) <= mean_error_bound(len(seq) + 1, 3)
            if not picked:
                assert y[b, i + 1, 0] == F32(default)
            targets = [k for k in seq if k == q - 1]
            if len(set(targets)) <= 1 and len(targets) <= 1:
                row = np.zeros(4, F32)
                row[out_c.values.index(targets[0] if targets else default)] = 1
                np.testing.assert_array_equal(yc[b, i + 1], row)


@pytest.mark.parametrize("max_len", [10, 64])
def test_numerical_mean_frac_prevs(max_len: int) -> None:
    """frac_prevs: numerical aggregate of (tokens == 'x') over select(indices, indices, <=)."""
    idx = cat("indices", range(max_len))
    is_x = cat("is_x", [False, True])
    out = num("frac", [])
    head = aggregate_head(
        [atom(idx, idx, lambda k, q: k <= q)], is_x, 0, out, op="frac", name="frac"
    )
    rng = np.random.default_rng(2)
    lengths = [max_len, max_len // 2, 1]
    flags = [list(rng.integers(0, 2, n).astype(bool)) for n in lengths]
    batch = Batch(lengths, [*idx.dims(), *is_x.dims(), Dim("frac")])
    batch.set_categorical(idx, [list(range(n)) for n in lengths])
    batch.set_categorical(is_x, flags)
    pattern, y = batch.attend(head)
    for b, (n, f) in enumerate(zip(lengths, flags)):
        check_pattern(pattern, selection([(lambda k, q: k <= q, range(n), range(n))]), b, n)
        want = np.cumsum(f) / np.arange(1, n + 1)
        assert np.abs(y[b, 1 : n + 1, 0] - want).max() <= mean_error_bound(n, 1.0)


@pytest.mark.parametrize("max_len", [10, 64, 256])
def test_selector_width_is_exactly_one_over_w_plus_one(max_len: int) -> None:
    """w = 0..max_len: select(indices, indices, <) gives w = i, select(..., <=) gives i + 1."""
    idx = cat("indices", range(max_len))
    batch = Batch([max_len, max_len // 2 + 1], [*idx.dims(), Dim("sw")])
    batch.set_categorical(idx, [list(range(n)) for n in batch.lengths])
    for pred, offset in ((lambda k, q: k < q, 0), (lambda k, q: k <= q, 1)):
        head = selector_width_head([atom(idx, idx, pred)], Dim("sw"), op="sw", name="sw")
        _, y = batch.attend(head)
        for b, n in enumerate(batch.lengths):
            w = np.arange(n) + offset
            np.testing.assert_array_equal(y[b, 1 : n + 1, 0], F32(1) / (w + 1).astype(F32))


def test_merge_heads_equals_separate_heads() -> None:
    toks = cat("tokens", "abcd")
    idx = cat("indices", range(8))
    atoms = [atom(toks, toks, lambda k, q: k == q), atom(idx, idx, lambda k, q: k < q)]
    first = aggregate_head(atoms, idx, 0, num("prev_mean", []), op="m", name="prev_mean")
    copy_atoms = [atom(toks, toks, lambda k, q: k == q), atom(idx, idx, lambda k, q: k < q)]
    second = aggregate_head(copy_atoms, toks, "a", cat("seen", "abcd"), op="c", name="seen")
    merged = merge_heads([first, second])
    assert merged.out_dims == first.out_dims + second.out_dims
    seqs = [list("abcabdda"), list("aaaa"), list("dcba")]
    batch = Batch([len(s) for s in seqs], [*toks.dims(), *idx.dims(), *merged.out_dims])
    batch.set_categorical(toks, seqs)
    batch.set_categorical(idx, [list(range(len(s))) for s in seqs])
    _, y = batch.attend(merged)
    _, y1 = batch.attend(first)
    _, y2 = batch.attend(second)
    np.testing.assert_array_equal(y, np.concatenate([y1, y2], -1))
    with pytest.raises(ValueError):
        merge_heads([first, selector_width_head(atoms[:1], Dim("w"), op="w", name="w")])


def test_view_readings_fold_into_the_head() -> None:
    """A map view of tokens (vowel or not) as the key, and a numerical value read from two dims."""
    toks = cat("tokens", "abe")
    vowel = Encoded(
        "is_vowel",
        toks.encoding,
        (False, True),
        one_hot=(toks.one_hot[1], toks.one_hot[0] + toks.one_hot[2]),
    )
    a, b = Dim("a"), Dim("b")
    diff = Encoded("a_minus_b", num("x", []).encoding, (), number=((a, 1.0), (b, -1.0)))
    head = aggregate_head(
        [atom(vowel, vowel, lambda k, q: k == q)], diff, 0, num("out", []), op="v", name="out"
    )
    seq = list("abeeba")
    batch = Batch([len(seq)], [*toks.dims(), a, b, Dim("out")])
    batch.set_categorical(toks, [seq])
    av, bv = np.arange(6, dtype=F32), np.full(6, 0.5, F32)
    batch.set_number(a, [av])
    batch.set_number(b, [bv])
    _, y = batch.attend(head)
    vow = np.array([c in "ae" for c in seq])
    for i in range(len(seq)):
        same = vow == vow[i]
        assert abs(y[0, i + 1, 0] - np.mean((av - bv)[same])) <= mean_error_bound(6, 6)


small_tables = st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=3, max_size=3)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.lists(small_tables, min_size=1, max_size=3),
    st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=12), min_size=1, max_size=4),
)
def test_random_conjunctions_select_uniformly(
    tables: list[list[list[bool]]], seqs: list[list[int]]
) -> None:
    """Atom t compares s-op t (key) with s-op t+1 (query); weights must be exact."""
    sops = [cat(f"s{t}", [0, 1, 2]) for t in range(len(tables) + 1)]
    atoms = [Atomic(sops[t + 1], sops[t], np.array(tab)) for t, tab in enumerate(tables)]
    head = aggregate_head(atoms, sops[0], 0, num("mean", []), op="mean", name="mean")
    batch = Batch([len(s) for s in seqs], [d for s in sops for d in s.dims()] + [Dim("mean")])
    rng = np.random.default_rng(len(seqs))
    values = {
        t: [list(np.roll(s, t) if t % 2 else rng.permutation(s)) for s in seqs]
        for t in range(len(sops))
    }
    for t, sop in enumerate(sops):
        batch.set_categorical(sop, values[t])
    pattern, y = batch.attend(head)
    for b, s in enumerate(seqs):
        n = len(s)
        sel = np.ones((n, n), bool)
        for t, tab in enumerate(tables):
            keys, queries = values[t][b], values[t + 1][b]
            sel &= np.array([[tab[q][k] for k in keys] for q in queries])
        check_pattern(pattern, sel, b, n)
        for i in range(n):
            picked = np.array(values[0][b])[sel[i]]
            want = picked.mean() if len(picked) else 0.0
            assert abs(y[b, i + 1, 0] - want) <= mean_error_bound(n, 2)


def test_assembled_bos_value_is_exactly_the_default() -> None:
    """An MLP writes a one-hot at BOS too (its base unit reads `one`); the assembled head must still
    give the BOS key exactly the default as its value, so an empty selection decodes cleanly."""
    from compiler import compile_sop
    from rasp import sops as S
    from tests.runtime_helpers import residuals

    t, idx = S.TokensSOp(name="tokens"), S.IndicesSOp(name="indices")
    m = S.MapSOp(
        fn=lambda a, i: "z" if a == "a" else "xy"[i % 2], inputs=(t, idx), text="m", name="m"
    )
    sel = S.Select(keys=t, queries=t, comparison=S.Comparison.LT)
    agg = S.AggregateSOp(selector=sel, sop=m, default="d", name="agg")
    model = compile_sop(agg, ["a", "b", "c"], 6)
    final = residuals(model, [["a", "b", "a"]])[-1][0]  # [pos, d_model]
    labels = model.metadata["residual"]
    written = {lab: final[:, k] for k, lab in enumerate(labels) if lab.startswith("agg:")}
    # Positions 1 and 3 ("a") select nothing: exactly the default one-hot.
    for pos in (0, 1, 3):
        assert {lab: float(col[pos]) for lab, col in written.items()} == {
            lab: float(lab == "agg:d") for lab in written
        }


def _classes_one_by_one(table: np.ndarray) -> tuple[list[np.ndarray], list[int]]:
    """The distinct non-zero rows in the order they first occur, and each row's class, row by
    row (what `attention._classes` computes at once)."""
    seen: dict[bytes, int] = {}
    reps: list[np.ndarray] = []
    of_row: list[int] = []
    for row in table:
        if not row.any():
            of_row.append(-1)
            continue
        of_row.append(seen.setdefault(row.tobytes(), len(reps)))
        if of_row[-1] == len(reps):
            reps.append(row)
    return reps, of_row


@given(st.integers(0, 9), st.integers(0, 19), st.floats(0, 1), st.integers(0, 2**32 - 1))
@settings(max_examples=300, deadline=None)
def test_row_classes_are_the_rows_in_first_occurrence_order(
    n_rows: int, n_cols: int, density: float, seed: int
) -> None:
    """A head's columns follow its table's row classes: found at once (rows packed 8 cells a
    byte), they are the classes found row by row, in the same order, for a table and its
    transpose (repeated rows included)."""
    rng = np.random.default_rng(seed)
    table = rng.random((n_rows, n_cols)) < density
    if n_rows > 2:
        table[-1] = table[0]
    for t in (table, table.T):
        reps, of_row = attention._classes(t)
        want_reps, want_of_row = _classes_one_by_one(t)
        assert of_row == want_of_row
        assert len(reps) == len(want_reps)
        assert all((a == b).all() for a, b in zip(reps, want_reps, strict=True))
