"""Every library program survives the TransformerLens export: the same logits and, through the
export's guide, the same decoded outputs as the runtime on every short input."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.tools.export import export_transformer_lens
from tests.export_helpers import load_export

# Kept apart from bench_scale's VOCABS: tests import nothing from bench/ (scripts, not a package),
# and bench gives frac_prevs a third token ("xab") for sizes comparable with the 3-token rest.
LIBRARY_VOCABS = {
    "reverse": "abc",
    "hist": "abc",
    "sort": "abc",
    "most_freq": "abc",
    "double_hist": "abc",
    "length": "abc",
    "frac_prevs": "xa",  # its header's vocabulary: the program counts "x"
    "hist_bos": "abc",
    "induction": "abc",
    "dyck1": "()",
    "dyck2": "(){}",
}


def test_every_library_program_is_in_the_export_sweep() -> None:
    programs = Path(__file__).resolve().parents[1] / "programs"
    found = {p.stem for p in programs.glob("*.rasp")} - {"paper_examples"}  # many outputs
    assert found == set(LIBRARY_VOCABS)


@pytest.mark.parametrize("program", sorted(LIBRARY_VOCABS))
def test_every_library_program_decodes_the_same_after_export(program: str, tmp_path: Path) -> None:
    """Each program in programs/ at N = 4, exported and loaded into TransformerLens: on every
    input of 1 to 4 tokens, the decoded logits (through the export's guide) equal the runtime's
    outputs, and the logits agree."""
    torch = pytest.importorskip("torch")
    import itertools

    import transformer
    from compiler import compile_sop
    from rasp.interpreter import load_file
    from transformer.interop import decode_logits

    interp = load_file(Path(__file__).resolve().parents[1] / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    vocab = list(LIBRARY_VOCABS[program])
    path = tmp_path / "m.safetensors"
    compile_sop(interp.get(name), vocab, 4, name=name, head_masks=False).save(path)
    export_transformer_lens(path, tmp_path / "tl")
    tl_model = load_export(tmp_path / "tl")
    ours = transformer.load(path)
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    ids, lengths = ours.encode(inputs)
    with torch.no_grad():
        theirs = tl_model(ids)  # type: ignore[operator]
        mine = ours.forward(ids)
    assert torch.allclose(theirs, mine, atol=1e-4)
    assert decode_logits(tmp_path / "tl" / "rasp_forge.json", theirs, lengths) == ours.run(inputs)
