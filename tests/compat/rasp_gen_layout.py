"""Layout and extra statements for rasp_gen: what one-line statements of expressions miss.

- `spread`: a `def` or `for` typed over several lines (a line per body statement, `}` on a line
  of its own, now and then a comment line or a blank line in the body, a break after a `,`).
- `trailing_comment`: a `# ...` comment after a one-line statement or REPL command.
- `extras`: bounded recursion (of atoms, of s-ops, two functions calling each other), closures
  (a function returning a nested function that reads its parameter, called later), and a body
  reading a global that changed after the `def`.

They draw from their own random stream, so that the statements rasp_gen draws for a seed stay
the same. A line never ends with `+` or `-`, nor inside nested brackets, a `return` or a
`for`'s head, and a comment never ends a line of a statement that goes on (docs/language.md, section 7:
the original reads them differently).
"""

from __future__ import annotations

import random

_COMMENTS = ("# note", "# a; b", '# "quoted" {', "#", "# select(indices, indices, ==);")
_COMMANDS = ("set ", "examples ", "s-op examples ", "selector examples ", "full seq display ")
_WORDS_BEFORE_DICT = ("in", "return", "else", "if", "and", "or", "not")


def _block_braces(text: str) -> set[int]:
    """Positions of the `{` and `}` that open and close a def's or for's body (not a dict's)."""
    blocks: set[int] = set()
    stack: list[tuple[int, bool]] = []
    in_string = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif ch == "{":
            before = text[:i].rstrip()
            word = before.split()[-1] if before.split() else ""
            block = bool(before) and (
                before[-1] in ")]}" or (before[-1].isalnum() and word not in _WORDS_BEFORE_DICT)
            )
            stack.append((i, block))
            if block:
                blocks.add(i)
        elif ch == "}" and stack:
            _, block = stack.pop()
            if block:
                blocks.add(i)
    return blocks


def spread(statement: str, rng: random.Random) -> str:
    """`statement` (a one-line def or for) typed over several lines."""
    blocks = _block_braces(statement)
    lines: list[str] = []
    line = ""
    depth = 0  # open bodies
    brackets = 0  # open ( and [ (and dict braces) inside the current line's statement
    in_string = False

    def end_line() -> None:
        nonlocal line
        if line.strip():
            lines.append(line.rstrip())
        line = "  " * depth

    for i, ch in enumerate(statement):
        if ch == '"':
            in_string = not in_string
        if in_string or ch == '"':
            line += ch
            continue
        if i in blocks and ch == "{":
            line += ch
            depth += 1
            end_line()
            if rng.random() < 0.2:
                lines.append("  " * depth + rng.choice(_COMMENTS))
        elif i in blocks and ch == "}":
            depth -= 1
            end_line()
            line += ch
            end_line()
        elif ch == ";" and brackets == 0 and depth > 0:
            line += ch
            end_line()
            if rng.random() < 0.1:
                lines.append(rng.choice(("", "  " * depth + rng.choice(_COMMENTS))))
        elif ch == " " and not line.strip():
            continue  # the indent is written by end_line
        else:
            if ch in "([{":
                brackets += 1
            elif ch in ")]}":
                brackets -= 1
            line += ch
            # a break after a `,` only in a body's assignment, in its outer brackets (section 7:
            # the original's parser may fail on one in nested calls, a `return` or a `for`'s
            # iterable before it sees the line end)
            statement_line = line.strip()
            if (
                ch == ","
                and brackets == 1
                and depth > 0
                and not statement_line.startswith(("return", "for ", "def "))
                and rng.random() < 0.15
            ):
                end_line()
                line += "    "
    end_line()
    return "\n".join(lines)


def code(statement: str) -> str:
    """`statement` without its comments, on one line (for gen_diff, which reads its parts)."""
    lines = []
    for line in statement.split("\n"):
        in_string = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_string = not in_string
            elif ch == "#" and not in_string:
                line = line[:i]
                break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)


def trailing_comment(statement: str, rng: random.Random) -> str:
    return f"{statement} {rng.choice(_COMMENTS)}"


def extras(prefix: str, rng: random.Random) -> list[str]:
    """A few statements of recursion or closures, their names starting with `prefix`."""
    p = prefix
    k, n = rng.randint(0, 9), rng.randint(-2, 5)
    choices = [
        [
            f"def {p}rec(n) {{ return 0 if n <= 0 else n * {k} + {p}rec(n - 1); }}",
            f"{p}rec({rng.randint(-1, 12)});",
        ],
        [
            f"def {p}srec(s, n) {{ return s if n <= 0 else {p}srec(s + indices * {k}, n - 1); }}",
            f"{p}sr = {p}srec({rng.choice(('indices', 'length', 'tokens_int'))}, {n});",
            f"{p}sr;",
        ],
        [
            f"def {p}ev(n) {{ return True if n == 0 else {p}od(n - 1); }}",
            f"def {p}od(n) {{ return False if n == 0 else {p}ev(n - 1); }}",
            f"{p}ev({rng.randint(0, 11)});",
        ],
        [
            f"def {p}mk(a) {{ def {p}in(b) {{ return a * b + {k}; }} return {p}in; }}",
            f"{p}h = {p}mk({n});",
            f"{p}h({rng.choice(('3', '0.5', 'indices', 'length'))});",
            f"{p}mk({k})({n});",
        ],
        [
            f"{p}g = {n};",
            f"def {p}get(x) {{ return x + {p}g; }}",
            f"{p}g = {k};",
            f"{p}get({rng.choice(('1', 'indices'))});",
        ],
    ]
    return rng.choice(choices)


def laid_out(statements: list[str], prefix: str, rng: random.Random) -> list[str]:
    """Some defs and fors over several lines, some trailing comments, perhaps recursion or a
    closure."""
    out = []
    for text in statements:
        roll = rng.random()
        if text.startswith(("def ", "for ")) and roll < 0.3:
            text = spread(text, rng)
        elif (text.endswith((";", "}")) or text.startswith(_COMMANDS)) and roll < 0.08:
            text = trailing_comment(text, rng)
        out.append(text)
    if rng.random() < 0.3:
        at = rng.randint(0, len(out))
        added = extras(prefix, rng)
        out[at:at] = [
            spread(t, rng) if t.startswith("def ") and rng.random() < 0.3 else t for t in added
        ]
    return out
