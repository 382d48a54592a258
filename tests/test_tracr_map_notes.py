"""A map a tracr library call built reads as the operation it computes: a lambda's by its body over
its inputs' program text (rasp.tracr.lambda_text; `lib.make_sort`'s unique keys read
`map(-1 * hist, indices) (as a key)`), and the map the compiler puts before a tracr mean of bools
by tracr's word, `numerical(any_negative)` (compiler.mean_markers; it read `map(any_negative)`)."""

from __future__ import annotations

import compiler
from rasp import sops as S
from rasp.errors import Source, Span
from rasp.nodes import walk
from rasp.tracr import lib
from rasp.tracr.lambda_text import lambda_note
from rasp.tracr.lower import to_sops


def _scaled(k: int, name: str):  # type: ignore[no-untyped-def]
    return lambda x, i: x + k * i / 4 if name else x


def test_a_lambdas_body_is_written_over_its_inputs() -> None:
    hist = S.MapSOp(fn=abs, inputs=(S.TokensSOp(),), name="hist")
    # parameters as the inputs' text, closure atoms as their values (a string's name unknown)
    assert lambda_note(_scaled(2, "n"), [hist, S.IndicesSOp()]) == (
        "hist + 2 * indices / 4 if 'n' else hist"
    )
    line = Source("p.rasp", "hist + 1")
    summed = S.MapSOp(fn=abs, inputs=(hist,), span=Span(line, 1, 1, 1, 9))
    assert lambda_note(lambda x: x * 2, [summed]) == "(hist + 1) * 2"  # an operation bracketed


def test_no_text_where_the_lambda_is_unsure() -> None:
    hist = S.MapSOp(fn=abs, inputs=(S.TokensSOp(),), name="hist")
    assert lambda_note(lambda x: x, [hist]) is None  # (it says nothing the input does not)
    a, b = (lambda x: x + 1), (lambda x: x + 2)  # two of one parameter on one line
    assert lambda_note(a, [hist]) is None and lambda_note(b, [hist]) is None
    made: dict = {}
    exec("f = lambda x: x + 1", made)  # no file to read it from
    assert lambda_note(made["f"], [hist]) is None
    assert lambda_note(abs, [hist]) is None


def test_a_library_sorts_keys_read_as_the_lambdas_operation() -> None:
    root = to_sops(lib.make_sort_freq(max_seq_len=64))
    notes = [n.note for n in walk(root) if isinstance(n, S.MapSOp) and n.note]
    assert "((-1 * hist) + 1 * indices / 64) (as a key)" in notes, notes


def test_a_tracr_mean_of_bools_reads_its_values_as_numerical() -> None:
    model = compiler.compile_sop(lib.make_shuffle_dyck(pairs=["()"]), list("()"), 4)
    ops = [b["op"] for layer in model.metadata["layers"] for b in (*layer["attn"], *layer["mlp"])]
    assert "numerical(any_negative)" in ops, ops
    assert not any(op.startswith("map(") for op in ops), ops


def test_a_lambda_of_a_given_function_is_left_to_the_name() -> None:
    def wrap(f):  # type: ignore[no-untyped-def]
        return lambda args: f(*args)

    hist = S.MapSOp(fn=abs, inputs=(S.TokensSOp(),), name="hist")
    # (make_nary_sequencemap's `nary_concat` read `f(*sequence_map(..., tokens_asis))`)
    assert lambda_note(wrap(print), [hist]) is None
