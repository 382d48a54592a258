"""Write tracr_values.json: DeepMind tracr's own values for every program of corpus.CASES.

Run with a Python where tracr is installed (not this project's):

    python tests/from_tracr/record_tracr_values.py

The programs import `from rasp import tracr as rasp` and `from rasp.tracr import lib`; here those
names are tracr's own modules, so tracr builds and evaluates each program. Each case records its
inputs and, per input, tracr's output list or the exception tracr raised.
"""

from __future__ import annotations

import json
import runpy
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from campaign_start import Usage, exit_unless_startable  # noqa: E402

USAGE = Usage(
    "python tests/from_tracr/record_tracr_values.py",
    0,
    0,
    frozenset(),
    tracr_src=False,
)
if __name__ == "__main__":  # (before tracr's imports: without it, one line, not a traceback)
    exit_unless_startable(USAGE)

import corpus  # noqa: E402
from tracr.compiler import lib as tracr_lib  # noqa: E402
from tracr.rasp import rasp as tracr_rasp  # noqa: E402


def _as_tracr() -> None:
    stand_in = types.ModuleType("rasp")
    stand_in.__path__ = []  # type: ignore[attr-defined]
    stand_in.tracr = tracr_rasp  # type: ignore[attr-defined]
    tracr_rasp.lib = tracr_lib  # type: ignore[attr-defined]
    sys.modules.update({"rasp": stand_in, "rasp.tracr": tracr_rasp, "rasp.tracr.lib": tracr_lib})


def main() -> None:
    _as_tracr()
    namespaces: dict[str, dict] = {}
    out = {}
    for case in corpus.CASES:
        if case.file not in namespaces:
            namespaces[case.file] = runpy.run_path(str(corpus.PROGRAM_DIR / case.file))
        program = namespaces[case.file][case.name]
        rows = []
        for xs in corpus.inputs(case):
            try:
                rows.append([xs, [corpus.encode(v) for v in program(xs)]])
            except Exception as exc:  # noqa: BLE001 (tracr raises what it raises)
                rows.append([xs, {"error": type(exc).__name__}])
        out[case.key] = {"vocab": list(case.vocab), "rows": rows}
    corpus.VALUES_FILE.write_text(json.dumps(out, indent=None) + "\n", encoding="utf-8")
    print(f"wrote {corpus.VALUES_FILE}: {len(out)} cases")


if __name__ == "__main__":
    main()
