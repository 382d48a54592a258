"""The size a vocabulary forces on every model (compiler.vocab_bound): a large vocabulary is
refused before anything is built, and the bound never exceeds the size of a model that builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import build_stages, compile_sop, driver, size_check
from compiler.graph import build_graph
from compiler.vocab_bound import check_vocab_size, lower_bound
from programs import VOCABULARIES
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import load_file
from rasp.tools.model_steps import program_sop
from tests.compiler import sop_builders as B

ROOT = Path(__file__).resolve().parents[2]


def _tokens(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stage after the size checks fails the test: the rewrites (`prepare`, `Forms`) and
    the value analysis, which the size prediction's probes and every build start with."""

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stage after the size checks ran")

    stages = {
        driver: ("infer_values", "Forms", "plan_build"),
        size_check: ("prepare", "plan_build"),
        build_stages: ("infer_values",),
    }
    for module, names in stages.items():
        for stage in names:
            monkeypatch.setattr(module, stage, built)


def test_a_width_over_a_large_vocabulary_is_refused_before_anything_is_built(
    nothing_built: None,
) -> None:
    """hist over 5,000 tokens at max-len 8 planned its 5,000 x 5,000 select for 3.5-9 s and
    0.9-1.5 GB (whatever the machine) before its shape was refused (353,277,045 parameters). Its
    head alone needs a power of 4 at least 5,002 wide over a residual of 5,003."""
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    with pytest.raises(CompileError) as info:
        compile_sop(hist, _tokens(5_000), 8)
    text = info.value.render()
    assert "hist.rasp:5:14: error: with 5,000 tokens the model would be too large" in text
    assert "at least 352,960,773 parameters (1.41 GB of float32 weights)" in text
    assert "16,384 columns" in text and "5,000 classes of tokens" in text
    assert "the limit is 200,000,000 parameters: use fewer tokens" in text
    assert "raise the limit" in text


def test_any_program_over_a_huge_vocabulary_is_refused_before_anything_is_built(
    nothing_built: None,
) -> None:
    """dyck1 reads the tokens only through `tokens == "("`, but every model embeds the token
    one-hot: over 20,000 tokens it was refused after 52 s and 3.2 GB (its 400M-parameter
    embedding), over 100,000 (under a 6 GB ulimit) numpy failed to allocate the 74.5 GiB
    embedding, a traceback."""
    dyck1 = load_file(ROOT / "programs" / "dyck1.rasp").get("dyck1")
    for n, params in ((20_000, "400,120,010"), (100_000, "10,000,600,010")):
        with pytest.raises(CompileError) as info:
            compile_sop(dyck1, _tokens(n), 8)
        text = info.value.render()
        assert f"with {n:,} tokens the model would be too large: at least {params}" in text
        assert "embeds its" in text and "dyck1.rasp:" in text


def test_a_tracr_select_resolved_only_by_prepare_is_bounded_by_the_embedding(
    nothing_built: None,
) -> None:
    """A tracr select of a Python predicate has no graph before `prepare` resolves it: its model
    is bounded by the token embedding alone (building the graph first failed every such compile,
    over any vocabulary)."""
    from rasp import tracr as rasp

    # (an aggregate of the tokens: a program that never reads them has no token one-hot)
    select = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
    copy = rasp.categorical(rasp.Aggregate(select, rasp.tokens))
    with pytest.raises(CompileError, match="with 20,000 tokens .* embeds its 20,000 tokens"):
        compile_sop(copy, _tokens(20_000), 8)


def test_a_program_that_never_reads_the_tokens_is_bounded_by_three_dimensions() -> None:
    """Without the token one-hot (compiler.layout) the embedding is |V| + 2 rows of `one`, `bos`,
    `pad` at least: `length` over 20,000 tokens is not refused by the vocabulary's bound."""
    from compiler.vocab_bound import reads_tokens

    sop = load_file(ROOT / "programs" / "length.rasp").get("seq_length")
    assert not reads_tokens(sop) and reads_tokens(B.hist())
    bound = lower_bound(build_graph(sop), _tokens(20_000), 8, tokens_read=False)
    assert bound.params == 20_002 * 3 + 4 and "embeds its 20,000 tokens:" in bound.why
    check_vocab_size(sop, _tokens(20_000), 8, 10**6)


@pytest.mark.parametrize("n_tokens", [256, 5_000])
def test_the_limit_just_above_the_bound_is_not_refused(n_tokens: int) -> None:
    bound = lower_bound(build_graph(B.hist()), _tokens(n_tokens), 8).params
    check_vocab_size(B.hist(), _tokens(n_tokens), 8, bound)  # at the limit: not refused here
    check_vocab_size(B.hist(), _tokens(n_tokens), 8, None)  # no limit
    with pytest.raises(CompileError):
        check_vocab_size(B.hist(), _tokens(n_tokens), 8, bound - 1)


def test_a_small_vocabulary_is_left_to_the_build_s_exact_refusal() -> None:
    """Under 256 tokens the build is planned quickly and its refusal names its own size (1,121
    parameters for reverse over `abc` at max-len 8), not the vocabulary's bound (37)."""
    assert lower_bound(build_graph(B.reverse()), list("abc"), 8).params == 37
    with pytest.raises(CompileError, match="the model would have 1,121 parameters"):
        compile_sop(B.reverse(), list("abc"), 8, max_params=37)
    with pytest.raises(CompileError, match="with 256 tokens the model would be too large"):
        compile_sop(B.reverse(), _tokens(256), 8, max_params=258 * 259 + 259)


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_the_bound_is_below_every_library_model(name: str) -> None:
    """At its usual vocabulary each library program's model is at least the bound, so the bound
    refuses no compile the build would keep."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    vocab = list(VOCABULARIES[name])
    params = compile_sop(sop, vocab, 4, name=out, source=source).param_count()
    assert lower_bound(build_graph(sop), vocab, 4).params <= params


@pytest.mark.parametrize("comparison", ["==", "!=", "<", "<=", ">", ">="])
@pytest.mark.parametrize(("n_tokens", "max_len"), [(2, 2), (3, 3), (14, 2), (15, 3), (15, 2)])
def test_the_width_bound_is_below_the_model_at_each_power_of_4(
    comparison: str, n_tokens: int, max_len: int, tmp_path: Path
) -> None:
    """A selector_width of the tokens against themselves: 14 tokens take a 16-column head, 15 a
    64-column one (for `<`/`>`, whose least token selects nothing, 15 still take 16); at
    max-len 2 a strict comparison selects one key at most (no power of 4)."""
    program = tmp_path / "w.rasp"
    program.write_text(f"w = selector_width(select(tokens, tokens, {comparison}));\n")
    sop, out, source = program_sop(str(program), None)
    vocab = _tokens(n_tokens)
    bound = lower_bound(build_graph(sop), vocab, max_len).params
    params = compile_sop(sop, vocab, max_len, name=out, source=source).param_count()
    assert bound <= params
    compile_sop(sop, vocab, max_len, name=out, source=source, max_params=params)


@pytest.mark.parametrize(
    ("tokens", "max_len", "size"),
    [
        (3_000, 5, "with 3,000 tokens the model would be too large"),
        (3, 3_000, "at max-len 3,000 compiling would take too long"),
    ],
)
def test_a_size_refusal_of_a_causal_compile_also_names_what_looks_ahead(
    tokens: int, max_len: int, size: str
) -> None:
    """hist with causal=True over 3,000 tokens was refused for its size alone: with fewer tokens
    the user then met its causal refusal, which no vocabulary fixes. Both are reported, the causal
    one (found at a short length, in milliseconds) first."""
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    with pytest.raises(CompileError) as info:
        compile_sop(hist, _tokens(tokens), max_len, causal=True, max_params=1_000_000)
    text = info.value.render()
    assert "may select later positions, which a causal model cannot see" in text
    assert size in text
    assert text.index("causal model cannot see") < text.index(size)


def test_a_size_refusal_of_a_causal_compile_that_looks_only_back_is_the_size_alone() -> None:
    """A program a causal model computes: its size refusal is reported alone."""
    indices = S.IndicesSOp(name="indices")
    earlier = S.Select(keys=indices, queries=indices, comparison=S.Comparison.LEQ)
    prev = S.AggregateSOp(selector=earlier, sop=B.tokens(), default="", name="prev")
    with pytest.raises(CompileError) as info:
        compile_sop(prev, _tokens(3_000), 5, causal=True, max_params=1_000_000)
    assert len(info.value.diagnostics) == 1
    assert "with 3,000 tokens the model would be too large" in info.value.render()


def test_a_causal_compile_of_a_small_vocabulary_is_still_refused() -> None:
    """The causal check split from its refusal (causal_problems) must still refuse: for a moment
    it returned its problems unraised, and hist over "ab" compiled for a causal runtime, certified
    and wrong (it counted only the earlier equal tokens)."""
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    with pytest.raises(CompileError, match="causal model cannot see"):
        compile_sop(hist, list("ab"), 4, causal=True)


def test_the_short_causal_check_skips_python_predicates_over_many_tokens() -> None:
    """tracr's Python predicates are resolved by calling them per pair of tokens: over 900 tokens
    the check took 29 s, to add a note to a refusal made in milliseconds. Over PREDICATE_TOKENS
    such a program is not checked (its size refusal stands alone); below, it is."""
    from compiler.causal import PREDICATE_TOKENS, short_causal_problems
    from rasp import tracr
    from rasp.tracr.lower import to_sops

    earlier = tracr.Select(tracr.tokens, tracr.tokens, lambda k, q: k < q)
    width = to_sops(tracr.SelectorWidth(earlier))
    assert short_causal_problems(width, _tokens(PREDICATE_TOKENS + 1), 5) == []
    assert len(short_causal_problems(width, _tokens(20), 5)) == 1


def test_the_short_causal_check_reads_a_bounded_part_of_a_large_vocabulary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check's analysis is linear in the vocabulary: most_freq over 100,000 tokens was refused
    for its size in 0.6 s, and causal=True spent 10 s more on the note. It analyses the first
    NOTE_TOKENS tokens (their inputs are the model's inputs too), and still finds hist's look-ahead
    over 50,000 tokens."""
    from compiler import causal

    seen: list[int] = []
    analysed = causal.infer_values

    def spy(graph: object, vocab: list[str], n: int) -> object:
        seen.append(len(vocab))
        return analysed(graph, vocab, n)  # type: ignore[arg-type]

    monkeypatch.setattr(causal, "infer_values", spy)
    hist = load_file(ROOT / "programs" / "hist.rasp").get("hist")
    found = causal.short_causal_problems(hist, _tokens(50_000), 5)
    assert len(found) == 1 and "causal model cannot see" in found[0].message
    assert seen and max(seen) <= causal.NOTE_TOKENS
