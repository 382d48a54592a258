"""The certificate: every library model is proved, an adversarial-rounding evaluator cannot change a
decoded value, and a deliberately weakened block is refused by the compiler and flagged by verify
with its variable and sublayer."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

compiler = pytest.importorskip("compiler")
transformer = pytest.importorskip("transformer")

from compiler.certify import recheck
from programs import VOCABULARIES
from rasp.errors import CompileError, RaspError, Source
from rasp.interpreter import load_file
from rasp.sops import SOp, evaluate
from rasp.tools.cli import main
from rasp.tools.verify import same_value
from tests.adversarial import adversarial_logits
from tests.runtime_helpers import as_runtime

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = VOCABULARIES  # program -> vocabulary


def _program(name: str) -> tuple[SOp, str, Source]:
    path = ROOT / "programs" / f"{name}.rasp"
    interp = load_file(path)
    out = interp.last_assigned
    assert out is not None
    sop = interp.get(out)
    assert isinstance(sop, SOp)
    return sop, out, Source(str(path), path.read_text())


def _compile(name: str, max_len: int, **kw: object) -> tuple[SOp, object]:
    sop, out, source = _program(name)
    model = compiler.compile_sop(sop, list(LIBRARY[name]), max_len, name=out, source=source, **kw)
    return sop, model


@pytest.mark.exactness
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_every_library_program_certifies_at_n_64(name: str) -> None:
    _, model = _compile(name, 64)
    cert = model.metadata["certificate"]
    assert cert["ok"], [c for c in cert["checks"] if float(c["margin"]) <= float(c["bound"])]
    # the stored certificate is what the weights give when re-checked from scratch
    assert recheck(model.weights, model.metadata).to_json() == cert
    # every sublayer has an entry: each head and MLP part, and the decoder
    blocks = {(c["sublayer"], c["block"]) for c in cert["checks"]}
    assert ("decoder", model.metadata["output"]["name"]) in blocks


def _inputs(vocab: str, max_len: int, count: int, seed: int) -> list[list[str]]:
    short = [list(t) for n in range(1, 3) for t in itertools.product(vocab, repeat=n)]
    rng = random.Random(seed)
    long = [[rng.choice(vocab) for _ in range(rng.randint(4, max_len))] for _ in range(count)]
    return short + long


@pytest.mark.exactness
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_adversarial_rounding_changes_no_decoded_value(name: str) -> None:
    max_len = 8
    sop, model = _compile(name, max_len)
    assert model.metadata["certificate"]["ok"]
    runtime = as_runtime(model)
    inputs = _inputs(LIBRARY[name], max_len, 16, seed=len(name))
    ids, lengths = runtime.encode(inputs)
    for seed in range(2):
        logits = adversarial_logits(
            model.weights, model.metadata["config"], ids.numpy(), np.random.default_rng(seed)
        )
        outputs = runtime.meta.output.decode(logits, lengths)
        for tokens, got in zip(inputs, outputs, strict=True):
            try:
                want = list(evaluate(sop, tokens).values)
            except RaspError:
                continue
            bad = [
                i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not same_value(g, w)
            ]
            assert not bad, (
                f"{''.join(tokens)!r} position {bad[0]}: {got[bad[0]]!r} != {want[bad[0]]!r}"
            )


def test_a_weakened_head_is_refused_by_the_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    # A selected key only a few units above an unselected one: softmax no longer saturates.
    # (reverse's head addresses its key by a number, compiler.addressing; one-hot scores take
    # attention.SCORE_UNIT)
    from compiler import addressing, attention

    monkeypatch.setattr(attention, "SCORE_UNIT", 64.0)
    monkeypatch.setattr(addressing, "NEEDED_GAP", 4.0)
    sop, out, source = _program("reverse")
    with pytest.raises(CompileError) as err:
        compiler.compile_sop(sop, list("abc"), 10, name=out, source=source)
    text = str(err.value)
    assert "layer 1 attn" in text and "reverse" in text and "softmax" in text


def _weaken(path: Path, tensor: str, scale: float) -> None:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    with safe_open(str(path), "np") as f:
        meta = f.metadata()
    tensors = load_file(str(path))
    tensors[tensor] = (tensors[tensor] * scale).astype(np.float32)
    save_file(tensors, str(path), metadata=meta)


def test_verify_flags_a_weakened_block_with_its_variable_and_sublayer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "reverse.safetensors"
    program = str(ROOT / "programs" / "reverse.rasp")
    assert main(["compile", program, "--vocab", "abc", "--max-len", "6", "-o", str(model)]) == 0
    # Layer 1's head addresses `indices` by the number `_map_2` (length - indices - 1): scaling
    # its queries by 1/8 cuts the gap between a selected and an unselected key (512) below what
    # softmax needs to give exactly 0.
    _weaken(model, "blocks.1.attn.W_Q", 0.125)
    capsys.readouterr()
    code = main(["verify", program, "--vocab", "abc", "--max-len", "6", "--model", str(model)])
    out, err = capsys.readouterr()
    assert code == 1
    text = out + err
    assert "NOT proved" in text and "layer 1 attn (reverse)" in text and "softmax" in text
    assert "the file's weights or metadata do not match it" in text  # stored: proved


def test_a_failed_exact_decision_is_the_weakest_shown() -> None:
    # An exact score (error bound 0) below softmax's gap: its margin/bound used to read +inf, so
    # the summary named a proved block as the weakest and the failed one nowhere.
    from compiler.certificate import Certificate, Check
    from rasp.tools.certificate_text import summary_line

    proved = Check("layer 0 mlp", "length", "length", "relu", 3.0, 1.0, "unit 2")
    failed = Check("layer 1 attn", "reverse", "aggregate", "softmax", -94.0, 0.0, "query 0")
    exact_zero = Check("layer 1 mlp", "x", "x", "relu", 0.0, 0.0, "unit 0")  # relu(0) = 0: ok
    certificate = Certificate((proved, failed, exact_zero))
    assert failed.ratio == -float("inf") and exact_zero.ok and not certificate.ok
    assert certificate.weakest() is failed
    line = summary_line(certificate.to_json())
    # it said "1 of 3 blocks have": it counts checks (the table's rows), not blocks
    assert "NOT proved: 1 of 3 checks finds a decision" in line
    assert "weakest: layer 1 attn (reverse)" in line
    two = summary_line(Certificate((proved, failed, failed)).to_json())
    assert "NOT proved: 2 of 3 checks find a decision" in two
    assert Certificate((proved, exact_zero)).weakest() is proved


def test_a_nan_margin_reads_as_not_proved_as_the_certifier_judges_it() -> None:
    # Check.ok: a NaN proves nothing; the text's own test let a ReLU's NaN margin with bound 0
    # through, so the summary said "every decision proved" of a certificate whose ok is false
    from compiler.certificate import Certificate, Check
    from rasp.tools.certificate_text import summary_line, table_lines

    nan = Check("layer 0 mlp", "x", "x", "relu", float("nan"), 0.0, "unit 0")
    certificate = Certificate((nan,))
    assert not certificate.ok
    assert summary_line(certificate.to_json()).startswith("certificate: NOT proved: 1 of 1")
    assert table_lines(certificate.to_json())[-1].endswith("NOT PROVED")


def test_a_certificate_marked_not_proved_is_not_shown_as_proved() -> None:
    # `rasp show` judged the listed checks alone: a file whose certificate says ok: false (an
    # edited one; the certifier derives ok from the checks) read "every decision proved"
    from compiler.certificate import Certificate, Check
    from rasp.tools.certificate_text import summary_line

    proved = Check("layer 0 mlp", "length", "length", "relu", 3.0, 1.0, "unit 2")
    stored = {**Certificate((proved,)).to_json(), "ok": False}
    assert summary_line(stored).startswith("certificate: NOT proved: the file's certificate says")
    assert summary_line({**stored, "ok": True}).startswith("certificate: every decision proved")


def test_the_certificate_travels_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "hist.safetensors"
    program = str(ROOT / "programs" / "hist.rasp")
    assert main(["compile", program, "--vocab", "abc", "--max-len", "8", "-o", str(model)]) == 0
    out = capsys.readouterr().out
    assert "certificate: every decision proved" in out
    meta = transformer.read_metadata(model)["certificate"]
    assert meta["ok"] and {c["sublayer"] for c in meta["checks"]} >= {
        "layer 0 attn",
        "layer 0 mlp",
        "decoder",
    }
    assert main(["show", str(model)]) == 0
    shown = capsys.readouterr().out
    assert "sublayer" in shown and "margin" in shown and "bound" in shown and "ratio" in shown


def test_same_sign_terms_match_the_full_product_without_building_it() -> None:
    # The value check once built every term values[p, c] * W_O[c, o]: 27 GB for an aggregate of
    # a 1,539-valued one-hot (a random program at N = 17). The sign test needs no such tensor.
    from compiler.certify_attention import _same_sign

    rng = np.random.default_rng(0)
    for _ in range(500):
        p, c, o = rng.integers(1, 5, size=3)
        values = rng.choice([-1.0, 0.0, 2.0], size=(p, c))
        w_o = rng.choice([-1.0, 0.0, 3.0], size=(c, o))
        terms = values[:, :, None] * w_o[None]  # [p, c, o]
        want = np.all(terms >= 0, axis=(0, 1)) | np.all(terms <= 0, axis=(0, 1))
        assert np.array_equal(_same_sign(values, w_o), want)
    # a NaN value meeting a non-zero weight is of both signs
    assert not _same_sign(np.array([[np.nan]]), np.array([[2.0]]))[0]


@pytest.mark.parametrize(
    "text",
    [
        "y = aggregate(select(indices, indices - 1, ==), tokens_int + 100000000000000000);",
        'y = selector_width(select(tokens, "1", ==)) + 100000000000000000;',
    ],
)
def test_whole_numbers_float64_does_not_hold_are_never_snapped(text: str) -> None:
    # 10^17 + 1 is 10^17 as a float64: a numerical output snapped it to its neighbour and the
    # certificate said proved. The snap is now unproved, and the one-hot output lists it exactly.
    from rasp.interpreter import Interpreter
    from rasp.parser import parse
    from tests.runtime_helpers import run_compiled

    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    sop = interp.get("y")
    model = compiler.compile_sop(sop, list("01"), 3, name="y")
    inputs = [list(t) for n in (1, 2, 3) for t in itertools.product("01", repeat=n)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(evaluate(sop, tokens).values), tokens
