"""Pictures and DOT graphs of a model on one input (`rasp.tools.draw`)."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest

transformer = pytest.importorskip("transformer")

from rasp.errors import RaspError
from rasp.tools.draw import (
    computation_dot,
    draw_model_file,
    draw_trace,
    flow_stem,
    trace_figure,
    trace_model,
)
from tests.transformer.handmade_models import mean_of_a, previous_token

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def prev_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return previous_token().save(tmp_path_factory.mktemp("draw") / "prev.safetensors")


def test_trace_holds_patterns_and_residuals(prev_model: Path) -> None:
    trace = trace_model(transformer.load(prev_model), list("abca"))
    assert trace.positions == ("BOS", "a", "b", "c", "a")
    assert [t for t, _ in trace.residuals] == ["embedding", "after layer 0"]
    (head,) = trace.heads
    assert head.pattern.shape == (5, 5)
    # query p attends to key p - 1 (rows = queries); BOS (row 0) has no earlier key
    assert np.allclose(head.pattern[1:, :4], np.eye(4))
    assert trace.output == ("-", "a", "b", "c")
    assert trace.residuals[1][1].shape == (5, len(trace.labels))


def test_draw_writes_a_png_and_dot(prev_model: Path, tmp_path: Path) -> None:
    png, dot = tmp_path / "prev.png", tmp_path / "prev.dot"
    lines = draw_model_file(prev_model, list("abca"), png, dot)
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
    assert lines[0] == f"wrote {png} (1 attention head, 2 residual snapshots)"  # not "1 ... heads"
    text = dot.read_text()
    assert text.startswith("digraph computation {") and text.count("rank=same") == 2
    assert (
        '"tokens" -> "L0:H0" [label="v"];' in text and '"indices" -> "L0:H0" [label="q"];' in text
    )


def test_dot_edges_come_from_the_weights() -> None:
    model = mean_of_a()
    meta = dict(model.metadata)
    meta["layers"] = [
        {
            "attn": [{"head": 0, "name": "frac_a", "op": "mean of tokens == a"}],
            "mlp": [{"name": "out", "op": "2 * frac_a"}],
        }
    ]
    meta["output"] = dict(meta["output"], name="out")
    dot = computation_dot(meta, model.tensors)
    assert '"tokens" -> "L0:H0" [label="v"];' in dot  # V reads tokens:a
    assert (
        '"L0:H0" -> "L0:MLP0";' in dot
    )  # the MLP unit writing `out` reads frac_a, which the head wrote
    assert '"one"' not in dot and '"pad" ->' not in dot  # special dims are not variables
    assert '"frac_a" [label="frac_a"' not in dot  # written by the head, so not an embedding input
    assert "peripheries=2" in dot.split('"L0:MLP0" [')[1].split("\n")[0]  # the output is marked
    rows = [line for line in dot.splitlines() if "rank=same" in line]
    assert [r.split('label="')[1].split('"')[0] for r in rows] == [
        "embedding",
        "layer 0 attn",
        "layer 0 mlp",
    ]


def test_missing_matplotlib_is_a_clear_error(
    prev_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = trace_model(transformer.load(prev_model), list("ab"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(RaspError) as info:
        draw_trace(trace, tmp_path / "x.png")
    assert "matplotlib" in info.value.message and "viz" in (info.value.hint or "")


def test_helper_dimensions_lead_back_to_their_operation() -> None:
    """A head named `length` that writes `length.frac`: readers of `length.frac` depend on `length`."""
    model = mean_of_a()
    meta = dict(model.metadata)
    meta["residual"] = [label.replace("frac_a", "count.frac") for label in meta["residual"]]
    meta["layers"] = [
        {
            "attn": [{"head": 0, "name": "count", "op": "selector_width(...)"}],
            "mlp": [{"name": "out", "op": "f(count)"}],
        }
    ]
    dot = computation_dot(meta, model.tensors)
    assert '"L0:H0" -> "L0:MLP0";' in dot and '"count.frac"' not in dot


def test_an_operation_split_over_a_head_and_an_mlp_gives_two_nodes(tmp_path: Path) -> None:
    """selector_width is a head (writing hist.frac) and an MLP (writing hist), both named `hist`."""
    compiler = pytest.importorskip("compiler")
    from safetensors.numpy import load_file

    from rasp.interpreter import load_file as load_program
    from rasp.tools.model_file import read_model_file

    sop = load_program(Path(__file__).resolve().parents[1] / "programs" / "hist.rasp").get("hist")
    compiler.compile_sop(sop, list("ab"), 4, name="hist").save(tmp_path / "h.safetensors")
    meta = read_model_file(tmp_path / "h.safetensors").meta
    dot = computation_dot(meta, load_file(str(tmp_path / "h.safetensors")))
    assert dot.count('[label="hist\\n') == 2 and '"L0:H0" -> "L0:MLP0";' in dot
    assert '"tokens" -> "L0:H0" [label="q"];' in dot


def test_draw_for_repl_compiles_for_the_input(tmp_path: Path) -> None:
    pytest.importorskip("compiler")
    from rasp.sops import (
        AggregateSOp,
        Comparison,
        IndicesSOp,
        MapSOp,
        Select,
        TokensSOp,
    )
    from rasp.tools.draw import draw_for_repl

    indices = IndicesSOp(name="indices")
    prev = MapSOp(fn=lambda i: i - 1, inputs=(indices,), text="indices - 1", name="before")
    shifted = AggregateSOp(
        selector=Select(keys=indices, queries=prev, comparison=Comparison.EQ),
        sop=TokensSOp(name="tokens"),
        default="_",
        name="shifted",
    )
    message = draw_for_repl(shifted, list("abc"), tmp_path / "s.png")
    assert message.startswith(f"wrote {tmp_path / 's.png'}")
    assert (tmp_path / "s.png").read_bytes()[:8] == PNG_MAGIC


def test_repl_hook_writes_into_comp_flows(tmp_path: Path) -> None:
    pytest.importorskip("compiler")
    from rasp.sops import Select, SelectorWidthSOp, TokensSOp
    from rasp.tools.draw import repl_draw_hook

    tokens = TokensSOp(name="tokens")
    same = Select(keys=tokens, queries=tokens, name="same")
    hist = SelectorWidthSOp(selector=same, name="hist")
    message = repl_draw_hook(hist, list("a/b"), tmp_path / "comp_flows")
    stem = flow_stem("hist", list("a/b"))
    assert stem.startswith("hist_a_b-") and re.fullmatch(r"[A-Za-z0-9_.,+=-]+", stem)
    assert (tmp_path / "comp_flows" / f"{stem}.png").is_file()
    assert (tmp_path / "comp_flows" / f"{stem}.dot").is_file()
    assert f"{stem}.png" in message
    with pytest.raises(RaspError, match="needs an s-op"):
        repl_draw_hook(same, list("ab"), tmp_path / "comp_flows")


def test_dot_is_rendered_only_when_graphviz_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rasp.tools.draw import write_dot

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert write_dot("digraph g {}\n", tmp_path / "a.dot") is None
    assert (tmp_path / "a.dot").read_text() == "digraph g {}\n"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"  # records its arguments and writes the -o file, like graphviz would
    fake.write_text(
        '#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\nshift 2\n[ "$1" = -o ] && echo png > "$2"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # ours first; the shell needs the others
    rendered = write_dot("digraph g {}\n", tmp_path / "b.dot")
    # b.dot.png, not b.png: a picture drawn beside the graph (the REPL's NAME_INPUT.png and
    # NAME_INPUT.dot) would be overwritten
    assert rendered == tmp_path / "b.dot.png" and rendered.read_text() == "png\n"
    assert (bin_dir / "args").read_text().split() == [
        "-Tpng",
        str(tmp_path / "b.dot"),
        "-o",
        str(rendered),
    ]


def test_a_model_without_blocks_draws_its_embedding(tmp_path: Path) -> None:
    from tests.transformer.handmade_models import identity

    path = identity(["a", "b"]).save(tmp_path / "id.safetensors")
    trace = trace_model(transformer.load(path), list("ab"))
    assert [title for title, _ in trace.residuals] == ["embedding"] and not trace.heads
    assert trace.output == ("a", "b")
    lines = draw_model_file(path, list("ab"), tmp_path / "id.png", tmp_path / "id.dot")
    assert lines[0] == f"wrote {tmp_path / 'id.png'} (0 attention heads, 1 residual snapshot)"


@pytest.mark.parametrize(
    ("tokens", "stem"),
    [
        (list("abca"), "r_abca"),
        (["the", "cat"], "r_the-cat"),
        ([1, 2], "r_1-2"),
    ],
)
def test_flow_stems_need_no_quoting_in_a_shell(tokens: list, stem: str) -> None:
    assert flow_stem("r", tokens) == stem
    brackets = [flow_stem("dyck1", list(text)) for text in ("(())", "()()", "((((")]
    assert len(set(brackets)) == 3  # made safe, yet still apart
    assert all(re.fullmatch(r"[A-Za-z0-9_.,+=-]+", s) and len(s) <= 100 for s in brackets)
    assert len(flow_stem("long", list("ab" * 200))) <= 100


def _text_boxes(fig: object) -> list[tuple[str, object]]:
    from matplotlib.text import Text

    fig.canvas.draw()  # type: ignore[attr-defined]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]  # type: ignore[attr-defined]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in dict.fromkeys(texts)]


def test_the_most_freq_drawing_has_no_overlapping_titles_or_cut_labels() -> None:
    """Issue 11: the main title overlapped a head's three-line title, and a long row label was cut.
    Every text lies inside the figure, and no two titles (figure and heads) overlap."""
    pytest.importorskip("matplotlib")
    compiler = pytest.importorskip("compiler")
    from rasp.interpreter import load_file

    root = Path(__file__).resolve().parents[1]
    sop = load_file(root / "programs" / "most_freq.rasp").get("most_freq")
    tokens = list("abbccc")
    compiled = compiler.compile_sop(sop, list("abc"), len(tokens), name="most_freq")
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    fig = trace_figure(trace_model(model, tokens))
    boxes = _text_boxes(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for text, box in boxes:
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, text
    titles = [(t, b) for t, b in boxes if t.startswith(("layer ", "most_freq("))]
    assert len(titles) >= 7  # the figure's title and one per head
    for (a, box_a), (b, box_b) in itertools.combinations(titles, 2):
        assert not box_a.overlaps(box_b), (a, b)
    longest = max(compiled.metadata["residual"], key=len)
    assert any(text == longest for text, _ in boxes)  # shown whole, not cut


def test_a_tracr_models_tuples_are_drawn_as_tuples(tmp_path: Path) -> None:
    # `rasp run --model` and `TracrModel.apply` unbox a file's tuples (`output.tuples`); the
    # trace gave their marked strings ("\x00('a', 0)", a NUL in the picture's title)
    from compiler import compile_sop
    from rasp import tracr as rasp
    from rasp.tools.draw import token_text

    pairs = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices)
    path = tmp_path / "pairs.safetensors"
    compile_sop(pairs, list("ab"), 3).save(path)
    trace = trace_model(transformer.load(path), list("ba"))
    assert trace.output == (("b", 0), ("a", 1))
    assert [token_text(v) for v in trace.output] == ["('b', 0)", "('a', 1)"]


def test_dot_quotes_variable_names_in_node_ids_and_edges(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a tracr label may hold `"` or `\`: an embedded input's node id and its edges were written
    # unescaped (`"p"q\" -> "L0:MLP0"`), which graphviz cannot read
    from tests.cli_helpers import run

    program = tmp_path / "q.py"
    program.write_text(
        "from rasp import tracr as rasp\n"
        "parity = rasp.Map(lambda i: i % 2, rasp.indices).named('p\"q\\\\')\n"
        "both = rasp.SequenceMap(lambda a, b: str(a) + b, parity, rasp.tokens).named('both')\n"
    )
    model = tmp_path / "q.safetensors"
    assert run(capsys, "compile", f"{program}:both", "--vocab", "ab", "--max-len", "4",
               "-o", str(model), "-q")[0] == 0  # fmt: skip
    dot_path = tmp_path / "q.dot"
    assert run(capsys, "draw", str(model), "--input", "ab", "-o", str(tmp_path / "q.png"),
               "--dot", str(dot_path))[0] == 0  # fmt: skip
    dot = dot_path.read_text()
    quoted = re.compile(r'"(?:[^"\\]|\\.)*"')
    for line in dot.splitlines():
        assert '"' not in quoted.sub("", line), line  # every quote opens or closes a string
    assert '"p\\"q\\\\" [label="p\\"q\\\\\\n' in dot
    assert '  "p\\"q\\\\" -> "L0:MLP0";' in dot


def test_dollar_signs_in_a_program_are_drawn_as_written_not_as_mathtext(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # matplotlib reads text between two `$` as TeX: this operation's text was an internal error
    # (ParseException), and an input `$x b$` was titled `y(xb)` in italics
    from matplotlib.text import Text

    from tests.cli_helpers import run

    program = tmp_path / "d.rasp"
    select = "select(indices, indices, ==)"
    program.write_text(f'y = aggregate({select}, tokens == "$" or tokens == "$\\\\alpha");\n')
    code, _, err = run(
        capsys, "draw", str(program), "--input", "$a$", "-o", str(tmp_path / "d.png")
    )
    assert code == 0 and not err, err
    program.write_text("y = aggregate(select(tokens, tokens, ==), indices);\n")
    model = tmp_path / "d.safetensors"
    vocab = '["$x", "b$"]'
    run(capsys, "compile", str(program), "--vocab", vocab, "--max-len", "2", "-o", str(model))
    fig = trace_figure(trace_model(transformer.load(model), ["$x", "b$"]))
    texts = [text for text in fig.findobj(Text) if "$" in text.get_text()]
    assert "y($x b$) = [0, 1]" in [text.get_text() for text in texts]
    assert not [text.get_text() for text in texts if text.get_parse_math()]


def _chain_model(tmp_path: Path, heads: int) -> Path:
    """`heads` reversals in a row: a model of `heads` + 1 layers with one head each."""
    compiler = pytest.importorskip("compiler")
    from rasp.interpreter import load_file

    lines = ["flip = select(indices, length - indices - 1, ==);", "x0 = tokens;"]
    lines += [f"x{i + 1} = aggregate(flip, x{i});" for i in range(heads)]
    program = tmp_path / "chain.rasp"
    program.write_text("\n".join(lines) + "\n")
    sop = load_file(program).get(f"x{heads}")
    path = tmp_path / "chain.safetensors"
    compiler.compile_sop(sop, list("ab"), 8).save(path)
    return path


def test_many_heads_wrap_into_rows_with_nothing_cut_or_overlapping(tmp_path: Path) -> None:
    """Issue: 40 heads were drawn in one row (a figure 146 inches wide, over a minute of
    constrained layout). They wrap into rows of a bounded width, and still every text lies inside
    the figure and no two panel titles overlap."""
    pytest.importorskip("matplotlib")
    from rasp.tools.draw_figure import _MAX_WIDTH

    trace = trace_model(transformer.load(_chain_model(tmp_path, 40)), list("abbaab"))
    assert len(trace.heads) == 41 and len(trace.residuals) == 42
    fig = trace_figure(trace)
    width, height = fig.get_size_inches()
    assert width <= _MAX_WIDTH + 1 and height <= 2 * width, (width, height)
    assert fig.get_layout_engine() is None  # laid out once, by us
    boxes = _text_boxes(fig)
    fig_w, fig_h = fig.bbox.width, fig.bbox.height
    for text, box in boxes:
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig_w and box.y1 <= fig_h, text
    titles = [(t, b) for t, b in boxes if t.startswith(("layer ", "after layer ", "x40("))]
    assert len(titles) == 1 + 41 + 41
    for (a, box_a), (b, box_b) in itertools.combinations(titles, 2):
        assert not box_a.overlaps(box_b), (a, b)
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    for ax_a, ax_b in itertools.combinations(axes, 2):  # no panel drawn over another
        a, b = ax_a.get_window_extent(), ax_b.get_window_extent()
        assert not a.overlaps(b), (ax_a.get_title(), ax_b.get_title())


def test_a_long_input_shrinks_the_cells(tmp_path: Path) -> None:
    """64 positions were 0.32 inches each: one residual snapshot was 21 inches wide. Cells shrink
    (tick labels with them) so a snapshot of 65 positions is under 10 inches; labels all inside."""
    pytest.importorskip("matplotlib")
    compiler = pytest.importorskip("compiler")
    from rasp.interpreter import load_file

    root = Path(__file__).resolve().parents[1]
    sop = load_file(root / "programs" / "reverse.rasp").get("reverse")
    tokens = list("abc" * 21 + "a")
    model = compiler.compile_sop(sop, list("abc"), len(tokens), name="reverse")
    fig = trace_figure(trace_model(transformer.from_tensors(model.weights, model.metadata), tokens))
    panels = [ax for ax in fig.axes if ax.get_title() == "embedding"]
    assert len(panels) == 1 and panels[0].get_position().width * fig.get_size_inches()[0] < 10
    boxes = _text_boxes(fig)
    for text, box in boxes:
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.width, text
        assert box.y1 <= fig.bbox.height, text


def test_a_very_long_input_labels_every_kth_position_with_its_index() -> None:
    """257 positions at 0.13 inches were 33-inch patterns, one per row (a picture 356 inches
    tall). Cells shrink to fit 12 inches; 6-point labels go on every third position, each with
    its index, so that two labels never read as neighbouring tokens."""
    pytest.importorskip("matplotlib")
    from rasp.tools.draw import HeadPattern, Trace

    n, d_model = 257, 40
    rng = np.random.default_rng(0)
    tokens = ("BOS", *(str(rng.choice(list("ab"))) for _ in range(n - 1)))
    heads = tuple(
        HeadPattern(layer, 0, f"h{layer}", "select", rng.random((n, n))) for layer in range(4)
    )
    labels = tuple(f"v{d}" for d in range(d_model))
    residuals = tuple((f"after layer {i}", rng.random((n, d_model))) for i in range(5))
    fig = trace_figure(Trace(tokens, labels, residuals, heads, "out", ("a",) * (n - 1)))
    width, height = fig.get_size_inches()
    assert width <= 41 and height <= 60, (width, height)
    pattern = fig.axes[0]
    side = pattern.get_position().width * width
    assert 11 <= side <= 12.5, side
    ticks = [t.get_text() for t in pattern.get_xticklabels()]
    assert ticks[:3] == ["0 BOS", f"3 {tokens[3]}", f"6 {tokens[6]}"] and len(ticks) == 86
    assert all(t.get_fontsize() >= 6 for t in pattern.get_xticklabels())


def test_the_title_writes_the_output_as_rasp_run_model_does() -> None:
    """The title wrote a bool output as JSON (`[true, false]`, where `rasp run --model` prints
    `[T, F]`) and a float by `.3g` (`2.0` as `2`, 1234.5 as `1.23e+03`)."""
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    from rasp.display import atom_text
    from rasp.tools.draw import Trace

    resid = (("embedding", np.zeros((4, 1))),)
    for output, title in [
        ((True, False, True), "y(a b c) = [T, F, T]"),
        ((1, 1.5, 2.0), "y(a b c) = [1, 1.5, 2.0]"),
        ((1234.5, 0.1234567, -3), "y(a b c) = [1234.5, 0.123, -3]"),
        ((("a", 0), "b", None), "y(a b c) = [('a', 0), b, None]"),
    ]:
        fig = trace_figure(Trace(("BOS", "a", "b", "c"), ("one",), resid, (), "y", output))
        assert title in [t.get_text() for t in fig.findobj(Text)]
        assert title.endswith("[" + ", ".join(atom_text(v) for v in output) + "]")


def test_a_huge_drawing_shrinks_its_cells_to_a_bounded_area() -> None:
    """41 heads at 65 positions with 89 residual dimensions were 38 x 268 inches (120 M pixels,
    half the time spent compressing them). Cells shrink until the figure fits `_MAX_AREA`."""
    pytest.importorskip("matplotlib")
    from rasp.tools.draw import HeadPattern, Trace
    from rasp.tools.draw_figure import _MAX_AREA

    n, d_model = 65, 89
    tokens = ("BOS", *("ab" * 32))
    pattern = np.eye(n)
    heads = tuple(HeadPattern(layer, 0, f"x{layer}", "aggregate", pattern) for layer in range(41))
    labels = tuple(f"x{d // 2}:{'ab'[d % 2]}" for d in range(d_model))
    residuals = tuple((f"after layer {i}", np.zeros((n, d_model))) for i in range(42))
    fig = trace_figure(Trace(tokens, labels, residuals, heads, "x40", ("a",) * (n - 1)))
    width, height = fig.get_size_inches()
    assert width * height <= _MAX_AREA * 1.05, (width, height)
    assert all(ax.get_position().width * width > 2 for ax in fig.axes[:41])  # still readable


def test_a_small_drawing_keeps_its_colour_bar_label_inside(tmp_path: Path) -> None:
    """A model of a few dimensions and no heads: the residual block is about an inch tall, and
    the colour bar's label (two inches) must still lie inside the figure."""
    pytest.importorskip("matplotlib")
    from tests.transformer.handmade_models import identity

    path = identity(["a", "b"]).save(tmp_path / "id.safetensors")
    fig = trace_figure(trace_model(transformer.load(path), list("ab")))
    boxes = _text_boxes(fig)
    assert any(text.startswith("value (colour") for text, _ in boxes)
    for text, box in boxes:
        assert box.x0 >= 0 and box.y0 >= 0, text
        assert box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height, text
