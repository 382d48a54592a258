"""A build stopped while planned at the first head that alone puts it over the parameter limit
(compiler.plan_limit): sort and most_freq over thousands of tokens are refused before any head's
weights are filled, and no build that fits its limit is stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler import attention, build_stages, compile_sop, plan_limit
from compiler.graph import Op
from compiler.vocab_bound import output_columns
from programs import VOCABULARIES
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.tools.model_steps import program_sop

ROOT = Path(__file__).resolve().parents[2]


def _tokens(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


@pytest.fixture
def no_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """Filling a head's rows, sketching a plan and assembling fail the test: where the time went
    (sort over 5,000 tokens: 15 s and a GB per plan, then its sketch)."""

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a head's weights, a sketch or a model was built")

    monkeypatch.setattr(attention, "_atom_block", built)
    monkeypatch.setattr(build_stages, "sketch_model", built)
    monkeypatch.setattr(build_stages, "assemble", built)


@pytest.mark.parametrize(
    ("name", "params", "columns"),
    [("sort", "352,960,773", "16,384"), ("most_freq", "352,960,773", "16,384")],
)
def test_a_head_over_the_limit_stops_the_plan_before_its_weights(
    name: str, params: str, columns: str, no_weights: None
) -> None:
    """Their selects of the tokens sit inside an `or` or read maps of them, so the vocabulary's
    bound does not apply: sort over 5,000 tokens was refused by check_params after two plans
    (45 s and 3.5 GB), most_freq after 43 s and 2.9 GB."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    with pytest.raises(CompileError) as info:
        compile_sop(sop, _tokens(5_000), 8, name=out, source=source)
    text = info.value.render()
    assert "with 5,000 tokens the model would be too large: at least" in text
    assert f"{params} parameters" in text and f"a head of {columns} columns" in text
    assert "found while planning this head" in text
    assert "prelude.rasp:" in text or f"{name}.rasp:" in text  # located at a select, not nowhere
    assert "the limit is 200,000,000 parameters: use fewer tokens" in text


@pytest.fixture
def nothing_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning any reading or block fails the test: no select's table is built."""

    def planned(*args: object, **kwargs: object) -> None:
        raise AssertionError("a build was planned")

    monkeypatch.setattr(build_stages, "plan_encodings", planned)


@pytest.mark.parametrize(
    ("name", "params", "strings"),
    [("sort", "200,090,006", "10,000"), ("most_freq", "200,100,010", "10,001")],
)
def test_an_output_over_the_limit_stops_every_build_before_it_is_planned(
    name: str, params: str, strings: str, nothing_planned: None
) -> None:
    """Over 10,000 tokens the output's unembedding (a column per string it takes) and the
    token embedding alone are over the default limit: sort and most_freq over 14,000 tokens
    built two 14,000 x 14,000 select tables per build before their width head stopped them
    (20-47 s and 1.2-1.9 GB)."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    with pytest.raises(plan_limit.PlannedOverLimit) as info:
        compile_sop(sop, _tokens(10_000), 8, name=out, source=source)
    text = info.value.render()
    assert f"with 10,000 tokens the model would be too large: at least {params} parameters" in text
    assert f"counted from the values of the output '{out}' before anything is planned" in text
    assert f"it takes {strings} strings, an unembedding of {strings} columns" in text
    assert "prelude.rasp:89:9: error:" in text  # at sort's aggregate, the output
    assert "the limit is 200,000,000 parameters: use fewer tokens" in text


def test_an_output_at_its_own_size_is_not_stopped() -> None:
    """reverse over 300 tokens builds under a limit of exactly its size (the output's bound is
    at most the model), and is stopped before planning one parameter under that bound."""
    sop, out, source = program_sop(str(ROOT / "programs" / "reverse.rasp"), None)
    vocab = _tokens(300)
    params = compile_sop(sop, vocab, 2, name=out, source=source, max_params=None).param_count()
    assert compile_sop(sop, vocab, 2, name=out, source=source, max_params=params).param_count() == (
        params
    )
    # the output takes the 300 tokens: 300 columns of 304 (d_model + 1) beside 302 x 303
    bound = plan_limit.embedding_params(300, 300)
    assert bound == 302 * 303 + 304 * 300 <= params
    with pytest.raises(plan_limit.PlannedOverLimit, match="before anything is planned"):
        compile_sop(sop, vocab, 2, name=out, source=source, max_params=bound - 1)
    # at the bound itself the build is planned, and stopped at its copy head (below)
    with pytest.raises(plan_limit.PlannedOverLimit, match="its value copies a one-hot of 300"):
        compile_sop(sop, vocab, 2, name=out, source=source, max_params=bound)


def test_a_copy_head_at_its_own_size_is_not_stopped() -> None:
    """reverse's copy head over 300 tokens: a value one-hot of 300 columns (its layer's d_head at
    least that) written into 300 dimensions of its own beside the token one-hot. One parameter
    under that bound the plan stops at the head; at the bound the build is planned, and refused
    from its shape."""
    sop, out, source = program_sop(str(ROOT / "programs" / "reverse.rasp"), None)
    vocab = _tokens(300)
    params = compile_sop(sop, vocab, 2, name=out, source=source, max_params=None).param_count()
    d_model = 303 + 300
    bound = plan_limit.embedding_params(300, d_model=d_model) + plan_limit.head_params(d_model, 300)
    assert bound == 907_813 <= params == 2_872_676
    with pytest.raises(plan_limit.PlannedOverLimit) as info:
        compile_sop(sop, vocab, 2, name=out, source=source, max_params=bound - 1)
    text = info.value.render()
    assert "at least 907,813 parameters" in text and "found while planning this head" in text
    assert "its value copies a one-hot of 300 columns into 300 dimensions of its own" in text
    assert "a residual of at least 603 dimensions (the token one-hot and those)" in text
    assert "reverse.rasp:6:11: error:" in text  # at the aggregate
    with pytest.raises(CompileError, match="the model would have 2,872,676 parameters"):
        compile_sop(sop, vocab, 2, name=out, source=source, max_params=bound)


def test_a_copy_head_over_the_limit_stops_the_plan_before_its_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """reverse over 5,000 tokens: each build filled its copy head's 5,000 value rows and its
    5,000 x 5,000 W_O (2.6 s and 200 MB each on a loaded machine), then its sketch built the
    5,002 x 10,007 token embedding (400 MB), and check_params refused it after 18 s."""

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a sketch or a model was built")

    add = attention._add

    def rows(*args: Any) -> None:  # (length's width head fills its few columns)
        assert args[-1] < 5_000, "the copy head's value rows were filled"
        add(*args)

    monkeypatch.setattr(attention, "_add", rows)
    monkeypatch.setattr(build_stages, "sketch_model", built)
    monkeypatch.setattr(build_stages, "assemble", built)
    sop, out, source = program_sop(str(ROOT / "programs" / "reverse.rasp"), None)
    with pytest.raises(plan_limit.PlannedOverLimit) as info:
        compile_sop(sop, _tokens(5_000), 8, name=out, source=source)
    text = info.value.render()
    assert "with 5,000 tokens the model would be too large: at least 250,130,013" in text
    assert "its value copies a one-hot of 5,000 columns" in text


def test_a_build_at_its_own_size_is_not_stopped() -> None:
    """sort over 256 tokens (where the stop starts) builds under a limit of exactly its size,
    and is stopped while planned one parameter under the bound of its widest head."""
    sop, out, source = program_sop(str(ROOT / "programs" / "sort.rasp"), None)
    vocab = _tokens(256)
    params = compile_sop(sop, vocab, 4, name=out, source=source, max_params=None).param_count()
    assert compile_sop(sop, vocab, 4, name=out, source=source, max_params=params).param_count() == (
        params
    )
    # the width head's 256 classes: 4 ** 5 = 1,024 columns over 259 dimensions
    bound = plan_limit.embedding_params(256) + plan_limit.head_params(259, 1_024)
    assert bound <= params
    with pytest.raises(plan_limit.PlannedOverLimit, match="found while planning this head"):
        compile_sop(sop, vocab, 4, name=out, source=source, max_params=bound - 1)


# library programs whose models copy no one-hot (their aggregates are means, or none)
_NO_COPY = ("double_hist", "dyck1", "frac_prevs", "hist", "hist_bos", "length")


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_no_library_model_is_stopped_at_its_own_size(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the stops applied at any vocabulary, each library program at its usual vocabulary
    still builds under a limit of exactly its own size: every head's bound, and the output's,
    is at most the model."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    vocab = list(VOCABULARIES[name])
    params = compile_sop(sop, vocab, 4, name=out, source=source).param_count()
    checked: list[int] = []
    check = plan_limit.check_head
    monkeypatch.setattr(plan_limit, "BOUND_FROM", 0)
    monkeypatch.setattr(
        attention.plan_limit, "check_head", lambda w, avg: (checked.append(w), check(w, avg))
    )
    copied: list[int] = []
    check_value = plan_limit.check_value_head
    monkeypatch.setattr(
        attention.plan_limit,
        "check_value_head",
        lambda w, avg, dims: (copied.append(w), check_value(w, avg, dims)),
    )
    outputs: list[int] = []
    check_output = plan_limit.check_output
    monkeypatch.setattr(
        build_stages, "check_output", lambda *a: (outputs.append(len(a[1])), check_output(*a))
    )
    model = compile_sop(sop, vocab, 4, name=out, source=source, max_params=params)
    assert model.param_count() == params
    # the stops were consulted, the copy heads' where the program copies a one-hot
    assert checked and outputs and (copied or name in _NO_COPY)


def test_a_limit_of_the_kept_model_s_size_keeps_it() -> None:
    """Below N = 16 the eagerly matched build is kept where smaller (most_freq at N = 4: 21,609
    parameters, the default 21,958; 22,484 and 22,817 while its hist could be 0); under a limit
    of the kept size the default's refusal was raised
    before the eager build was tried, so a limit of the model's own size refused it."""
    sop, out, source = program_sop(str(ROOT / "programs" / "most_freq.rasp"), None)
    vocab = list(VOCABULARIES["most_freq"])
    params = compile_sop(sop, vocab, 4, name=out, source=source).param_count()
    assert params == 21_609
    assert compile_sop(sop, vocab, 4, name=out, source=source, max_params=params).param_count() == (
        params
    )
    with pytest.raises(CompileError, match="the model would have 21,958 parameters"):
        compile_sop(sop, vocab, 4, name=out, source=source, max_params=params - 1)


# outputs whose one-hot could list fewer columns than their analysed strings, were the bound
# wrong: a default no key writes, strings no input reaches, a constant, bools, equal numbers
_ODD_OUTPUTS = [
    ("res = aggregate(select(indices, indices, <), tokens);", list("abcdef")),
    ("res = aggregate(select(tokens, tokens, ==), tokens);", list("abcdef")),
    ('res = aggregate(select(tokens, "z", ==), tokens);', list("abcdef")),
    ('res = aggregate(select(indices, indices, ==), tokens == "a");', list("abcdef")),
    (
        "a = aggregate(select(indices, indices, ==), tokens);\nres = aggregate(select(indices, 0, ==), tokens + a);",
        list("abcdef"),
    ),
    ("res = aggregate(select(indices, 0, ==), tokens_asis);", [1, 1.0, 2, "1"]),
    ("res = tokens;", [1, "1", 2.5, "x"]),
]


@pytest.mark.parametrize(("text", "vocab"), _ODD_OUTPUTS)
@pytest.mark.parametrize("options", [{}, {"causal": True}, {"head_masks": False}])
def test_the_output_bound_is_at_most_each_odd_output_s_model(
    text: str, vocab: list, options: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check_output's count (a column per string the output's analysis lists) is at most the
    model's unembedding, and with the embedding at most its size: applied at any vocabulary, a
    limit of the model's own size keeps it."""
    sop = load_source(Source("<test>", text)).get("res")
    try:
        model = compile_sop(sop, vocab, 4, **options)
    except CompileError as err:  # (a causal model cannot see later positions)
        assert "causal" in options and "causal model cannot" in err.render()
        return
    columns: list[int] = []
    check_output = plan_limit.check_output

    def counted(output: Any, values: Any) -> None:
        if output.op in (Op.TOKENS, Op.AGGREGATE):
            columns.append(output_columns(values))
        check_output(output, values)

    monkeypatch.setattr(plan_limit, "BOUND_FROM", 0)
    monkeypatch.setattr(build_stages, "check_output", counted)
    params = model.param_count()
    again = compile_sop(sop, vocab, 4, max_params=params, **options)
    assert again.param_count() == params
    assert columns and max(columns) <= model.weights["unembed.W_U"].shape[1]
    assert plan_limit.embedding_params(len(vocab), max(columns)) <= params
