"""What the CLI and the REPL read from their arguments: token lists, and the s-op a program names.

Shared by `cli` (which parses the command line), `model_commands` and `repl_arguments`; it imports
none of them, so the tools import each other in one direction only.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rasp.atoms import atom_key
from rasp.errors import ErrorKind, RaspError, Source
from rasp.sources import is_safetensors_file
from rasp.tools.console import Console
from rasp.wording import close_name, with_article

if TYPE_CHECKING:
    from rasp.interpreter import Interpreter


# How INPUT and VOCAB text becomes tokens, and what a program sees: said once, in every --help.
TOKENS_HELP = """\
Tokens (--input, --vocab): a JSON list gives its elements as tokens, keeping their JSON types
('["the","cat"]', '[3,1,2]', '[1,"1",true,1.0]' is four different tokens); any other text is
split into characters ('hello', '(())'), and so is text of brackets and punctuation alone ('[]',
'[()]': Dyck inputs, never an empty list). A --vocab text with a comma beside a letter or digit
('ab,c') is refused, as a comma separates no tokens: write '["ab","c"]' (or '["a","b",",","c"]');
so is one with a space between characters ('a b': '["a","b"]', or '["a"," ","b"]').
The same rule reads --input, --vocab and a model's vocabulary: a model accepts exactly the tokens
of its vocabulary, type included. A program sees each token through its input s-op:
`tokens` is `tokens_str` (str() of the token: 1 -> "1", true -> "True", 2.5 -> "2.5"),
`tokens_int` int(), `tokens_float` float(), `tokens_bool` bool(), `tokens_asis` the token as
given. So `rasp run` of a program that outputs `tokens` prints strings even for a JSON list of
numbers."""


class UsageError(Exception):
    """A bad argument value found after argparse (reported like argparse, exit 2)."""


def grouped_count(text: str) -> int | None:
    """A whole number >= 1 that may group its digits as the tools print them (`300,000,000`) or as
    Python writes them (`300_000_000`); None for any other text."""
    if not re.fullmatch(r"\d{1,3}(?:,\d{3})+|\d+(?:_\d+)*", text):
        return None
    value = int(text.replace(",", ""))
    return value if value >= 1 else None


def token_key(token: Any) -> tuple[str, Any]:
    """Equal only for tokens of the same JSON type and value: 1, 1.0, true and "1" differ (the
    core's one rule, `rasp.atoms.atom_key`; the runtime matches a model's vocabulary the same way)."""
    return atom_key(token)


def distinct_tokens(tokens: Sequence[Any]) -> list[Any]:
    """`tokens` without repeats (by `token_key`), first occurrence first."""
    seen: dict[tuple[str, Any], Any] = {}
    for token in tokens:
        seen.setdefault(token_key(token), token)
    return list(seen.values())


def token_text(token: Any) -> str:
    """A token shown so that it cannot be mistaken for another: a string bare when it reads as
    nothing else (`a`, `§`), else JSON (`"1"`, `"true"`, `" "`, `1`, `1.0`, `true`)."""
    if isinstance(token, str) and _bare(token):
        return token
    return json.dumps(token, ensure_ascii=False)


def _bare(text: str) -> bool:
    if not text or any(c.isspace() or c in '"\\' for c in text):
        return False
    try:
        json.loads(text)
    except ValueError:
        return True  # not a JSON number, true/false/null: only a string looks like this
    return False


def check_vocab(tokens: Sequence[Any]) -> None:
    """--vocab: at least one token, each once (`UsageError` naming the repeated token)."""
    if not tokens:
        raise UsageError("is empty; give the tokens the model must accept, e.g. abc")
    seen: set[tuple[str, Any]] = set()
    for token in tokens:
        key = token_key(token)
        if key in seen:
            if token in (",", " ", ";"):  # `{1,2,3}`, `a,b,c`, `1 2 3`: separators read as tokens
                raise UsageError(
                    f"lists the token {token_text(token)} twice: text that is not a JSON list "
                    "is split into characters; each character is a token, separators too: "
                    """write abc, or a JSON list such as '[1, 2, 3]' or '["a", "b"]'"""
                )
            raise UsageError(f"lists the token {token_text(token)} twice; list each token once")
        seen.add(key)


def check_vocab_commas(text: str, tokens: Sequence[Any], option: str = "--vocab") -> None:
    """VOCAB text split into characters where a comma stands between words or numbers (`ab,c`,
    `1, 2`): taken as characters it was the tokens a, b, ",", c, a vocabulary that silently lacks
    the `ab` meant (and `a,b,c` was refused for its repeated comma). Refused, with the JSON lists
    that say either meaning; text of punctuation alone (`(,)`) stays characters, as for Dyck
    inputs, and a JSON list may hold "," as a token."""
    if text.strip().startswith("[") or "," not in tokens:
        return  # a JSON list says what it means (text of brackets and punctuation has no word)
    if not any(isinstance(t, str) and t.isalnum() for t in tokens):
        return
    text = "".join(tokens)
    words = [w.strip() for w in text.split(",") if w.strip()]
    raise _split_by(text, "comma", words, tokens, option)


def check_vocab_spaces(text: str, tokens: Sequence[Any], option: str = "--vocab") -> None:
    """VOCAB text split into characters where a space stands between two other characters (`a b`,
    `ab cd`): it was silently the tokens a, " ", b, a model that accepts a space no input meant
    (`a b c`, a space twice, is refused by `check_vocab`). Refused with the JSON lists that say
    either meaning, as commas are; a space at either end (`abc `) is kept as a token."""
    if text.strip().startswith("[") or not re.search(r"\S\s+\S", "".join(map(str, tokens))):
        return  # a JSON list says what it means
    text = "".join(tokens)  # (the REPL's `"a b"` without its quotes)
    raise _split_by(text, "space", text.split(), tokens, option)


def _split_by(
    text: str, separator: str, words: Sequence[Any], tokens: Sequence[Any], option: str
) -> UsageError:
    """The refusal of VOCAB text that a comma or space seemed to separate into `words`: the JSON
    lists that say either meaning."""
    as_words = json.dumps(distinct_tokens(words), ensure_ascii=False, separators=(",", ":"))
    as_chars = json.dumps(distinct_tokens(tokens), ensure_ascii=False, separators=(",", ":"))
    quote = "'" if option.startswith("--") else ""  # (the shell's quotes, not the REPL's)
    return UsageError(
        f"{text!r} is text, split into characters, the {separator} too: a {separator} separates "
        f"no tokens; write the tokens as a JSON list, {option} {quote}{as_words}{quote} (or, to "
        f"keep the {separator} as a token, {option} {quote}{as_chars}{quote})"
    )


def check_input(tokens: Sequence[Any]) -> None:
    """--input: at least one token (RASP programs and models run on inputs of length >= 1)."""
    if not tokens:
        raise UsageError("is empty; programs and models run on inputs of 1 token or more")


def parse_tokens(text: str) -> list[Any]:
    """INPUT or VOCAB: a JSON list gives its elements; any other text is split into characters.

    Text that starts with `[` and has a letter, a digit, a quote or a comma is taken as meant to
    be JSON, so a typo in it is an error rather than a silent character split; so is a Python
    set or tuple (`{1, 2}`, `("a", "b")`: a comma and a letter, digit or quote in braces). Other
    text (only brackets and punctuation) is split into characters, so Dyck inputs such as `[()]`,
    `[]` and `[[]]` are their characters.
    """
    undecodable = re.search("[\udc80-\udcff]", text)
    if undecodable is not None:
        # a byte the shell's argument was not UTF-8 in, as Python's surrogateescape gives it: as
        # a token it would print back as the raw byte (invalid UTF-8 in --json) or not at all
        byte = ord(undecodable.group()) - 0xDC00
        raise UsageError(
            f"byte 0x{byte:02x} (character {undecodable.start() + 1}) is not UTF-8 text; "
            "give the tokens in UTF-8"
        )
    stripped = text.strip()
    if (
        stripped[:1] + stripped[-1:] in ("{}", "()")
        and "," in stripped
        and any(char.isalnum() or char in "\"'" for char in stripped)
    ):
        # tracr's `vocab={1, 2, 3}`: split into characters, `{1,2}` would be five tokens
        shape = "set" if stripped[0] == "{" else "tuple"
        raise UsageError(
            f"{text!r} looks like a Python {shape}; write the tokens as a JSON list, e.g. "
            """'[1, 2, 3]' or '["a", "b"]' (text that is not a JSON list is split into characters)"""
        )
    if not stripped.startswith("["):
        return list(text)
    if not any(char.isalnum() or char in "\"'," for char in stripped):
        return list(text)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        curly = " straight" if re.search("[\u201c\u201d\u2018\u2019]", stripped) else ""
        raise UsageError(
            f"{text!r} looks like a JSON list but is not valid JSON "
            f"({exc.msg} at column {exc.colno}); "
            f'write strings in{curly} double quotes, e.g. \'["a","b"]\''
        ) from None
    except ValueError:  # a number past Python's limit on text-to-int conversion
        raise UsageError(
            f"a number in this JSON list has more than {sys.get_int_max_str_digits():,} digits, "
            "more than Python reads"
        ) from None
    if not isinstance(value, list):
        raise UsageError(f"{text!r} is not a JSON list")
    for item in value:
        if item is None or not isinstance(item, (str, int, float, bool)):
            raise UsageError(
                f"tokens must be strings, numbers or booleans, got {json.dumps(item)} in {text!r}"
            )
        if isinstance(item, str) and re.search("[\ud800-\udfff]", item):
            # JSON's "\udcff" alone: no character, so no text can print or save it
            raise UsageError(
                f"the token {json.dumps(item)} in {text!r} holds a lone surrogate, which is no "
                "character; tokens are text (or numbers or booleans)"
            )
        if isinstance(item, float) and not math.isfinite(item):
            # Python's JSON reads NaN and Infinity (and 1e999 as Infinity): NaN equals no token,
            # not even itself, and no model encodes a number that is not finite.
            raise UsageError(
                f"the token {json.dumps(item)} in {text!r} is not a finite number; tokens must "
                "be strings, finite numbers or booleans"
            )
    return value


def load_program(file: str, console: Console | None = None) -> tuple[Interpreter, Source]:
    """Read and run the program FILE (`-`: standard input, reported as `<stdin>`), with progress
    bars for a large one; returns the interpreter and the program's source."""
    from rasp.sources import decode_source, read_source

    console = console or Console()
    if file == "-":
        if not console.quiet and sys.stdin.isatty():
            # typed, not piped: without a word the command would seem to hang
            end = "Ctrl-Z, Enter" if sys.platform == "win32" else "Ctrl-D"
            print(f"reading the program from standard input ({end} ends it)", file=sys.stderr)
        source = decode_source(sys.stdin.buffer.read(), "<stdin>")
    else:
        refuse_model_file(file)
        source = read_source(file)
    console.step(f"read {source.name}: {len(source.text):,} characters")
    return run_source(source, console), source


def run_source(source: Source, console: Console) -> Interpreter:
    """Run a program's text (a file's, or the one a model records), with progress bars for a
    large one; its precedence warnings (`rasp.lint`) and its loaded files' are shown first."""
    from rasp.interpreter import Interpreter
    from rasp.lint import lint
    from rasp.parser import parse
    from rasp.results import ResultKind

    interp = Interpreter()
    with console.progress() as progress:
        program = parse(source, progress=progress)
    for warning in lint(program.statements):  # (before it runs: it may explain a failure)
        console.warn_at(warning)
    try:
        with console.progress() as progress:
            results = interp.exec_program(program, progress)
    finally:
        for warning in interp.take_warnings():  # the files it loaded (after their bar is gone)
            console.warn_at(warning)
    console.step(f"ran {source.name}")
    draws = [r.span for r in results if r.kind is ResultKind.DRAW]
    if draws:  # the original's REPL draws there; a command drew nothing without a word
        console.warn(
            f"draw(...) at {draws[0].location()} draws only in the REPL (`rasp repl "
            f"{source.name}`); this command ignores "
            + ("it" if len(draws) == 1 else f"all {len(draws)}")
            + ". `rasp draw` pictures a compiled model"
        )
    return interp


def refuse_model_file(file: str) -> None:
    """A compiled model given where a program goes (`rasp run reverse.safetensors`): say so, rather
    than report its binary tensors as text that is not UTF-8."""
    if is_safetensors_file(file):  # (unreadable: read_source says why)
        raise RaspError(
            f"{file} is a compiled model (a safetensors file), not a RASP program",
            hint=f"a model goes after --model: `rasp run --model {file} --input INPUT`, `rasp "
            f"verify --model {file}` (against the program it records; or `rasp verify "
            f"PROGRAM.rasp --model {file}`); `rasp show {file}` summarises it",
            kind=ErrorKind.IO,
        )


def _blank(text: str) -> bool:
    """Whether a program is only blank lines and `#` comments (a `#` outside a string)."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _no_name_hint(interp: Any) -> str:
    """A program of defs alone (a student's `def rev(x) { ... }`) is applied to nothing yet."""
    from rasp.values import RaspFunction

    defs = [interp.get(n) for n in interp.user_names()]
    defs = [f for f in defs if isinstance(f, RaspFunction)]
    if not defs:
        return "assign the result to a name (result = ...;) or pass --name"
    first = defs[-1]
    call = f"{first.name}({', '.join(['tokens'] * len(first.params))})"
    return f"it defines {first.signature()}: apply it and name the result, result = {call};"


def select_output(interp: Any, name: str | None, filename: str, text: str | None = None) -> Any:
    """The s-op a command works on: `name` (from --name), or the last name the program assigns
    (`text`: the program's, to say so where it holds nothing but blanks and comments)."""
    from rasp.sops import Selector, SOp

    given = name is not None
    if name is None:
        name = interp.last_assigned
        if name is None and text is not None and _blank(text):
            raise RaspError(
                f"{filename} is empty{' but for comments' if text.strip() else ''}, "
                "so there is nothing to run",
                hint="write the program in it, e.g. "
                "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);",
                kind=ErrorKind.NAME,
            )
        if name is None:
            raise RaspError(
                f"{filename} assigns no name, so there is nothing to run",
                hint=_no_name_hint(interp),
                kind=ErrorKind.NAME,
            )
    if name not in set(interp.names()):
        sop_names = [n for n in interp.user_names() if isinstance(interp.get(n), SOp)]
        # the program's own s-ops first: `srt` in sort.rasp meant `sorted`, not the prelude's sort
        close = close_name(name, sop_names) or close_name(name, interp.names())
        listed = f" (its s-ops: {', '.join(sop_names[:8])}{', ...' if len(sop_names) > 8 else ''})"
        hint = (
            f"did you mean '{close}'?"
            if close
            else f"pass --name with a name the program assigns{listed if sop_names else ''}"
        )
        where = f"argument --name {name!r}: " if given else ""
        raise RaspError(
            f"{where}{filename} defines no name '{name}'", hint=hint, kind=ErrorKind.NAME
        )
    value = interp.get(name)
    where = f"argument --name {name!r}: " if given else ""
    if isinstance(value, SOp):
        return value
    if isinstance(value, Selector):
        # (a class runs a selector to see which keys it picks: the REPL draws its grid)
        grid = (
            f"; to see which keys it selects, rasp repl {shlex.quote(filename)} shows its grid: "
            f'{name}("abc");'
            if filename.endswith(".rasp") and name.isidentifier()
            else ""
        )
        raise RaspError(
            f"{where}'{name}' is a selector, not an s-op",
            getattr(value, "span", None),
            hint="a program's output is an s-op: aggregate the selector, or count it "
            f"with selector_width(...){grid}",
            kind=ErrorKind.TYPE,
        )
    raise RaspError(
        f"{where}'{name}' is {_kind_text(value)}, not an s-op",
        interp.assigned_at(name),
        hint="pass --name with an s-op (a value computed from tokens or indices)",
        kind=ErrorKind.TYPE,
    )


def _kind_text(value: Any) -> str:
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    if callable(value) or hasattr(value, "params"):
        return "a function"
    from rasp.sops import SeqValue

    if isinstance(value, SeqValue):  # `f("abc")`: an s-op applied to an input
        return "an s-op's value on one input (a list)"
    if hasattr(value, "shape") and len(getattr(value, "shape", ())) == 2:
        return "a selector's value on one input (a matrix)"
    return with_article(type(value).__name__)
