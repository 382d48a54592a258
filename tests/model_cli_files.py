"""Model files for the command-line tests: a program to compile and broken copies of a file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.transformer.handmade_models import FORMAT_NAME

REVERSE = """\
opp = length - indices - 1;
flip = select(indices, opp, ==);
reverse = aggregate(flip, tokens);
"""


def bad_model_files(tmp_path: Path, good: Path) -> dict[str, Path]:
    """Broken copies of the model file `good` by case: truncated, not safetensors, a newer format,
    a misshaped tensor and a missing one."""
    data = good.read_bytes()
    files = {"truncated": data[:-50], "not safetensors": b"hello, I am text\n" * 4}
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + header_len])
    for case, change in (
        ("newer format", lambda m: m.update(format_version=99)),
        ("misshaped tensor", None),
        ("missing tensor", None),
    ):
        meta = json.loads(header["__metadata__"]["rasp_forge"])
        if change is not None:
            change(meta)
        h = dict(header, __metadata__={"rasp_forge": json.dumps(meta)})
        if case == "misshaped tensor":
            h["unembed.b_U"] = dict(h["unembed.b_U"], shape=[2, 2])
        if case == "missing tensor":
            h.pop("unembed.b_U")
        raw = json.dumps(h).encode()
        files[case] = len(raw).to_bytes(8, "little") + raw + data[8 + header_len :]
    out = {}
    for case, content in files.items():
        path = tmp_path / f"{case.replace(' ', '_')}.safetensors"
        path.write_bytes(content)
        out[case] = path
    assert FORMAT_NAME in data.decode("latin-1")
    return out
