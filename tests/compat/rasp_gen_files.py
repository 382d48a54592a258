"""Loads of the program's own files, which no other generator for rasp_gen writes: the others load
only the original's `paper_examples`.

- A file that loads another (two or three levels): each file binds names of its own, reads the
  names of the file it loaded, and may bind a library name (`count = 3;`, `for max in ...`), which
  the original's file scope binds for itself and passes up to the REPL's top level, where it fails.
- A file's REPL commands (`set example`, `show example`, `full seq display on`, `examples` on
  and off, which last only for its load).
- A file's private `_` names, its failing statements (an undefined name, an s-op that fails on the
  running example, division by zero), its `def`s, loops and `tokens` rebound.
- At the top level: the loads, the names read after them (the files', a private one, the library
  names), a load repeated and a load in a `for`.

The files are written, each once, into a directory of the temporary folder, named by a hash of
their text (which holds the program's prefix), and loaded by absolute path, which both REPLs
accept; each statement is on one line, as the original's `load` reads a file line by line. Each
block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from pathlib import Path

FILES = Path(tempfile.gettempdir()) / f"rasp_gen_files_{os.getuid()}"

_VALUES = ("1", "2.5", '"s"', "[1, 2]", "indices + 1", "tokens", "select(indices, indices, <)")
_INT_VALUES = ("tokens_int * 2", "length - indices")
_STR_VALUES = ('tokens + "x"', 'tokens == "l"')
_LIBRARY = ("count", "max", "min", "shift", "full_s", "average")
# a file's examples switches last only for its load, and show in its listing (as the original's)
_COMMANDS = (
    "full seq display on",
    "set example [1, 2]",
    "show example",
    "examples on",
    "examples off",
    "s-op examples on",
    "selector examples off",
)
_FAILING = ("{p}nosuch + 1", "1 / 0", "tokens_int + 1", "[1][5]", '{p}x0 + "a" * tokens_int')


def write_file(text: str) -> str:
    """The path (without `.rasp`) of a file holding `text`, written if it is not there yet."""
    name = "g" + hashlib.sha256(text.encode()).hexdigest()[:16]
    path = FILES / f"{name}.rasp"
    if not path.exists():
        FILES.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)  # atomic: another process may write the same file
    return str(FILES / name)


def _file_body(p: str, level: int, int_example: bool, rng: random.Random) -> list[str]:
    """A file's own statements: names `{p}x{level}...`, perhaps a library name and failures."""
    values = _VALUES + (_INT_VALUES if int_example else _STR_VALUES)
    own = f"{p}x{level}"
    lines = [f"{own} = {rng.choice(values)};"]
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.2:
            name = rng.choice(_LIBRARY)
            lines += [f"{name} = {rng.choice(values)};", f"{own}l = {name};"]
        elif roll < 0.3:
            name = rng.choice(_LIBRARY + ("i",))
            lines.append(f"for {name} in [1, {rng.choice(values)}] {{ {own}f = {name}; }}")
        elif roll < 0.4:
            lines += [f"_{own}h = {rng.choice(values)};", f"{own}p = _{own}h;"]
        elif roll < 0.55:
            lines.append(f"{own}e = {rng.choice(_FAILING).format(p=p)};")
        elif roll < 0.65:
            lines += [f"def {own}d(a) {{ return a + {own}; }}", f"{own}c = {own}d(1);"]
        elif roll < 0.7:
            lines.append(f"tokens = {rng.choice(('tokens_int', 'tokens_str', 'tokens_asis'))};")
        elif roll < 0.75:
            lines.append(rng.choice(_COMMANDS))
        else:
            lines.append(f"{own}v = {rng.choice(values)};")
    return lines


def _block(p: str, int_example: bool, rng: random.Random) -> list[str]:
    depth = rng.randint(1, 3)
    path = ""
    for level in range(depth, 0, -1):  # the innermost file first: the next one loads it
        lines = _file_body(p, level, int_example, rng)
        if path:
            loads = [f'load "{path}";'] * rng.choice((1, 1, 2))
            inner = f"{p}x{level + 1}"
            reads = [f"{p}x{level}r = {inner};", f"{p}x{level}s = {rng.choice(_LIBRARY)};"]
            at = rng.randint(0, len(lines))
            lines[at:at] = [*loads, *rng.sample(reads, rng.randint(1, 2))]
        path = write_file("\n".join(lines) + "\n")
    names = [f"{p}x{level}" for level in range(1, depth + 1)]
    top = [f'load "{path}";']
    top += [f"{n};" for n in rng.sample(names, min(len(names), 2))]
    top += [f"{rng.choice(_LIBRARY)};", f"_{p}x1h;", f"{p}x1l;", f"{p}x{depth}f;"]
    roll = rng.random()
    if roll < 0.3:
        top.append(f'load "{path}";')
    elif roll < 0.5:
        top.append(f'for {p}k in [1, 2] {{ load "{path}"; }}')
    elif roll < 0.6:
        top.append(f'def {p}ld(a) {{ load "{path}"; return a; }}')
        top.append(f"{p}ld(1);")
    top.append("tokens = tokens_str;")  # (a file may rebind it for the session)
    return top


def loaded_files(
    statements: list[str], prefix: str, int_example: bool, rng: random.Random
) -> list[str]:
    """`statements` with a block of these inserted between them, now and then."""
    out = list(statements)
    for _ in range(rng.choice((0, 0, 1))):
        at = rng.randint(0, len(out))
        out[at:at] = _block(f"{prefix}f{rng.randint(0, 99)}_", int_example, rng)
    return out
