"""Top-level statements typed over several lines, and lines the original's parser rejects, which
the other generators for rasp_gen never type (rasp_gen_layout spreads only defs and fors).

- `broken`: a one-line assignment or expression statement broken at some of its spaces, as a
  user types a long one (`x = select(indices,` then `indices, ==);`, `y = 1 if` then `c else 2;`).
  Only where docs/language.md (section 7) says the original reads on as here: outside brackets,
  or in the outer brackets after anything but `+` or `-`, and not inside an `if`'s condition
  (inside nested brackets, or in a condition after a `+`, the original's parser may fail at an
  earlier token, and the next line is read as a statement of its own: seed 3's `"b" if "" +
  ["a",` then `"a"][3] else 5;`).
- `bad_lines`: a syntax error alone on a line (a missing operand, a stray bracket, a character
  no token starts with, a misspelt command, a `def` without a name), after which both REPLs say
  so and go on. Only lines where the original's parser fails before the line's end: where it
  fails at the end, it reads on for the rest, swallowing the next lines (section 7).
- `_TYPED`: expressions the other generators draw rarely or never: a comprehension whose iterable
  is an `if`/`else` (the original's grammar has no comprehension condition, so `[x for x in l if
  c else m]` reads `l if c else m`), chains of unary operators and of mixed precedence, literals
  with leading and trailing zeros, `%` and `/` of negatives, and a bound name in parentheses
  (`(x);`, shown by its name there).

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same.
"""

from __future__ import annotations

import random
import re

_COMMANDS = ("set ", "show ", "examples ", "s-op ", "selector ", "full seq", "load ")
_EXIT = re.compile(r"^\s*(exit|quit)\s*(\(\s*\))?\s*;?\s*$")
# each checked alone against the original: it reports the error and reads the next line afresh
_BAD = (
    "{p}b = = 1;",
    ");",
    "]",
    "}}",
    "{p}b = 'a';",
    "{p}b = 1 $ 2;",
    "def ({p}x) {{ return 1; }}",
    "for in [1] {{ {p}b = 1; }}",
    "{p}b = [1, 2;",
    "{p}b = {{1: }};",
    "{p}b = 1 2;",
    "set example hello",
    "show examples",
    "full seq display maybe",
    "examples",
    "1.;",
    ".5;",
    '"abc',
    '{p}b = "a"b";',
    "{p}b = aggregate(select(indices, indices, ==));",
    "{p}b = select(indices, indices);",
    "{p}b = range();",
    "{p}b = len();",
    "{p}b = zip();",
    "{p}b = 1 +;",
    "{p}b = (1;",
    "{p}b = 1);",
    ";",
    "= 1;",
    "{p}b == 1;",
    "1 = {p}b;",
    "def {p}f() {{ }}",
    "def {p}f() {{ {p}q = 1; }}",
    "def {p}f(a b) {{ return a; }}",
    "for {p}x in [1] {p}q = 1;",
    "if 1 {{ {p}q = 1; }}",
    "return 1;",
    "{p}b = 1 if 2;",
    "{p}b = not;",
    "{p}b = select(indices, indices, =);",
    "{p}b = 1 ! 2;",
    "{p}b = [1 for];",
    "{p}b = {{1 2}};",
    "{p}b = [1, ];",
    "load {p}file;",
    "draw();",
    "s-op examples maybe",
    "{p}b = 1..2;",
    "{p}b = 0x10;",
    "{p}b = tokens.x;",
    "{p}b = 1 & 2;",
    '{p}b = "a" "b";',
    "{p}b = indices indices;",
    "{p}b = round 1;",
    "def 1f() {{ return 1; }}",
    "{p}b = 1 ** 2;",
    "{p}b = 1 < = 2;",
    "{p}b = [for {p}x in [1]];",
    "def {p}f(x) {{ return; }}",
    "def {p}f(x) {{ return x; {p}q = 1; }}",
    "for {p}x in [1] {{ return {p}x; }}",
    "{p}b = 1;;",
)

_TYPED = (
    "[x for x in [1, 2] if True else [3]];",
    "[x * 2 for x in range(3) if 1 > 2 else range(2)];",
    '{x: 0 for x in "ab" if False else ["c"]};',
    "[x for x in [] if [] else [[]]];",
    '[x for x in [1] if "" else {"k": 1}];',
    "[x for x in indices if True else [1]];",
    "[x + y for x, y in [[1, 2]] if True else []];",
    "[[y for y in x] for x in [[1, 2], [3]]];",
    "- - 1;",
    "not not 1;",
    "not - 1;",
    "- not 1;",
    "+ + 2;",
    "1 - - - 1;",
    "2 * - 3;",
    "2 ^ - 1;",
    "- 2 ^ 2;",
    "not 0 == 1;",
    "not 1 and 0;",
    "0 or 2 and 3;",
    "1 == 1 and 2;",
    "3 % 2 * 2;",
    "2 * 3 % 4;",
    "7 % 3 % 2;",
    "2 ^ 3 * 2;",
    "1 in [1] == True;",
    "zip([1], [2])[0][1];",
    "[[1, 2], [3, 4]][1][0];",
    "round(2.5000001);",
    "round(True);",
    "-10 % 3;",
    "10 % -3;",
    "-10 % -3;",
    "-7.5 % 2;",
    "-0.0 % 5;",
    "1 / -0.0;",
    "-10 / 4;",
    "0.0000001;",
    "123456789012345678.0;",
    "1.0 * 10 ^ 15;",
    "3.10;",
    "007.50;",
    "0 * -1.0;",
)


def _breaks(text: str) -> list[int]:
    """The spaces of a one-line statement where a line may end (module docstring)."""
    points: list[int] = []
    depth = 0
    in_string = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == " " and (depth == 0 or (depth == 1 and text[:i].rstrip()[-1:] not in "+-")):
            # (not inside an `if`'s condition: after a `+` there, the original fails at the `+`)
            if text[:i].count(" if ") <= text[:i].count(" else "):
                points.append(i)
    return points


def broken(text: str, rng: random.Random) -> str:
    """`text` over two or three lines, broken at spaces `_breaks` allows (itself if none)."""
    points = _breaks(text)
    if not points:
        return text
    cuts = sorted(rng.sample(points, min(len(points), rng.randint(1, 2))))
    lines = [text[a + (a > 0) : b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)]
    if any(_EXIT.match(line) for line in lines):
        # `quit = 1;` (rasp_gen_extra) broken after `quit` ends both sessions, and every later
        # program of the batch with them, unseen (seeds 951467 and 2001038 lost over 1,300
        # statements each)
        return text
    return "\n".join(lines)


def _breakable(text: str) -> bool:
    return (
        text.endswith(";")
        and "\n" not in text
        and "#" not in text  # (a comment mark, or a string holding one: read by `_breaks`)
        and not text.startswith(("def ", "for ", *_COMMANDS))
    )


def lines(statements: list[str], prefix: str, rng: random.Random) -> list[str]:
    """Some of `statements` broken over lines, perhaps a bad line or two among them, an odd
    expression or two, a bound name in parentheses."""
    out = [broken(t, rng) if _breakable(t) and rng.random() < 0.15 else t for t in statements]
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 2)):
            out.insert(rng.randint(0, len(out)), rng.choice(_BAD).format(p=prefix))
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 2)):
            out.insert(rng.randint(0, len(out)), rng.choice(_TYPED))
    bound = [k for k, t in enumerate(out) if re.match(rf"{prefix}\w+ = ", t)]
    if bound and rng.random() < 0.3:
        k = rng.choice(bound)
        out.insert(k + 1, f"({out[k].split(' = ', 1)[0]});")
    return out
