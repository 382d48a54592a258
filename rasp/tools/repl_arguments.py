"""What the REPL's compiled view reads from a command's argument text: `:compile`'s NAME,
VOCAB, MAX_LEN and MAX_PARAMS, an INPUT, `:verify`'s K; and `Refusal`, the one-line error a
wrong argument gets. Tokens are read as the CLI reads them (`rasp.tools.arguments`), plus a RASP
string in double quotes.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rasp.builtins import programs_dir
from rasp.errors import Diagnostic, ErrorKind, OptionSpelling, RaspError
from rasp.tools.arguments import grouped_count

COMPILE_USAGE = "usage: :compile NAME [VOCAB] [MAX_LEN] [MAX_PARAMS]"


class Refusal(RaspError):
    """A command's argument or state is wrong: one `error: ...` message, never a location or
    hint."""

    kind = ErrorKind.IO

    def render(self, *, options: OptionSpelling | None = None, width: int | None = None) -> str:
        return Diagnostic(self.message).render(width=width)  # (wrapped as every message is)


def compile_arguments(rest: str) -> tuple[str, str, str, str]:
    """`NAME [VOCAB] [MAX_LEN] [MAX_PARAMS]`; a VOCAB that starts with `[` is JSON and one in
    double quotes a RASP string: either may contain spaces."""
    name, _, args = rest.strip().partition(" ")
    if not name:
        raise Refusal(COMPILE_USAGE)
    args = args.strip()
    # (a quoted or JSON VOCAB may hold " --" itself)
    if args.startswith("--") or (not args.startswith(("[", '"')) and " --" in args):
        return (name, *_option_arguments(args))
    if args.startswith("[") and (end := args.rfind("]")) >= 0:
        vocab, numbers = args[: end + 1], args[end + 1 :]
    elif args.startswith('"') and (end := args.find('"', 1)) >= 0:
        vocab, numbers = args[: end + 1], args[end + 1 :]
    elif args.startswith('"'):  # all the rest is the string: its spaces do not split it
        raise _unterminated(args, "VOCAB")
    else:
        vocab, _, numbers = args.partition(" ")
    words = numbers.split()
    if len(words) > 2:
        raise Refusal(f"{COMPILE_USAGE} (got {len(words) - 2} more: {' '.join(words[2:])!r})")
    max_len, max_params = (*words, "", "")[:2]
    return name, vocab, max_len, max_params


# `rasp compile`'s spelling of the settings, which a user coming from the CLI types here too
_OPTIONS = {"--vocab": 0, "--max-len": 1, "--max-params": 2}


def _option_arguments(args: str) -> tuple[str, str, str]:
    """VOCAB, MAX_LEN and MAX_PARAMS given as `--vocab abc --max-len 5 --max-params N` (or
    `--vocab=abc`), quoted as in a shell: `--vocab '["a", 1]'`."""
    try:
        words = shlex.split(args)
    except ValueError as error:  # (an unbalanced quote)
        raise Refusal(f"{COMPILE_USAGE}: cannot read {args!r} ({error})") from None
    settings = ["", "", ""]
    while words:
        option, eq, value = words.pop(0).partition("=")
        if option not in _OPTIONS:
            given = f"{option!r}" if option.startswith("--") else f"{option!r} among options"
            raise Refusal(
                f"{COMPILE_USAGE}, or NAME --vocab VOCAB --max-len N --max-params N (got {given})"
            )
        if not eq:
            if not words:
                raise Refusal(f"{option} needs a value ({COMPILE_USAGE})")
            value = words.pop(0)
        settings[_OPTIONS[option]] = value
    vocab, max_len, max_params = settings
    return vocab, max_len, max_params


def compile_options(name: str, vocab: str, max_len: int) -> OptionSpelling:
    """How a compile refusal's hint names a setting in the REPL: the `:compile` command that
    changes it, with this compile's other arguments (`:compile r "abc" 3000 MAX_PARAMS`)."""

    def spell(option: str, value: str | None) -> str:
        if option == "vocab":
            return f"`:compile {name} {value or 'VOCAB'}`"
        if option == "max_len":
            return f"`:compile {name} {vocab} {value or 'MAX_LEN'}`"
        if option == "max_params":
            return f"`:compile {name} {vocab} {max_len} {value or 'MAX_PARAMS'}`"
        return option

    return spell


def parse_tokens_text(text: str, what: str) -> list[Any]:
    """VOCAB or INPUT: a JSON list, characters (as the CLI reads them), or a RASP string in double
    quotes, its characters (`"abc"`, as `reverse("abc");` and `set example "abc"` write it; the CLI
    gets the same from the shell's quotes)."""
    from rasp.tools.arguments import UsageError, parse_tokens

    quoted = re.fullmatch(r'"([^"]*)"', text.strip())
    if quoted is not None:
        return list(quoted.group(1))
    if '"' in text and not text.strip().startswith("["):
        # `"abc` or `abc"`: a quote is a RASP string's, never a token of characters (the
        # quote and the letters were taken as tokens)
        raise _unterminated(text.strip(), what)
    try:
        return parse_tokens(_json_booleans(text.strip()))
    except UsageError as exc:
        raise Refusal(f"{what}: {exc}") from None


# A JSON string, or RASP's spelling of a boolean outside one.
_STRING_OR_BOOLEAN = re.compile(r'"(?:[^"\\]|\\.)*"|\b(True|False)\b')


def _json_booleans(text: str) -> str:
    """`[1, True]` as RASP writes it (`set example [1, True]`) read as the JSON `[1, true]`: the
    list was refused as invalid JSON, with a hint about quoting strings."""
    if not text.startswith("["):
        return text
    return _STRING_OR_BOOLEAN.sub(
        lambda m: m.group(0) if m.group(1) is None else m.group(1).lower(), text
    )


def _unterminated(text: str, what: str) -> Refusal:
    """A double quote outside a whole RASP string, in the language's words for it."""
    return Refusal(
        f'{what}: unterminated string in {text!r}; a string ends with " and cannot contain " '
        '(a double-quote token goes in a JSON list: ["\\"", "a"])'
    )


def vocab_tokens(text: str) -> list[Any]:
    """VOCAB's tokens: at least one, each once. A repeat is refused as `rasp compile --vocab`
    refuses it (it was dropped, so `aab` compiled the vocab `ab` without a word)."""
    from rasp.tools.arguments import (
        UsageError,
        check_vocab,
        check_vocab_commas,
        check_vocab_spaces,
    )

    tokens = parse_tokens_text(text, "VOCAB")
    if not tokens:
        raise Refusal("VOCAB is empty; give at least one token")
    try:
        check_vocab_commas(text, tokens, "VOCAB")
        check_vocab(tokens)
        check_vocab_spaces(text, tokens, "VOCAB")
    except UsageError as exc:
        raise Refusal(f"VOCAB: {exc}") from None
    return tokens


def example_vocab(tokens: list[Any], name: str) -> list[Any]:
    """The default VOCAB: the running example's tokens, each once. A list or dict token (`set
    example [[1], [2]]`, which RASP takes) is no model's token: refused in words, as a VOCAB
    holding one is (it was an internal error, unhashable type: 'list', that ended the session)."""
    from rasp.display import example_text
    from rasp.values import kind_name

    for token in tokens:
        if not isinstance(token, str | int | float):  # (a bool is an int)
            raise Refusal(
                f"the running example's token {example_text(token)} is a {kind_name(token)}, "
                f"which no model takes (tokens are strings, numbers or booleans); give VOCAB: "
                f":compile {name} VOCAB"
            )
    return distinct(tokens)


def distinct(tokens: list[Any]) -> list[Any]:
    """Tokens in order without repeats (1, 1.0 and True kept apart, as everywhere else): the
    default VOCAB, from the running example (`hello` has two l's)."""
    from rasp.tools.arguments import distinct_tokens

    return distinct_tokens(tokens)


def positive(text: str, what: str) -> int:
    value = _whole(text, what)
    if value is None or value < 1:
        raise Refusal(f"{what} must be a whole number >= 1, got {text.strip()!r}")
    return value


def parameter_count(text: str, what: str) -> int:
    """A whole number >= 1 that may group its digits as the REPL prints them (`300,000,000`) or
    as Python writes them (`300_000_000`)."""
    _whole(re.sub(r"[,_]", "", text), what)  # refuses more digits than Python reads
    value = grouped_count(text)
    if value is None:
        raise Refusal(f"{what} must be a whole number >= 1, got {text!r}")
    return value


def non_negative(text: str, what: str) -> int:
    value = _whole(text, what)
    if value is None:
        raise Refusal(f"{what} must be a whole number >= 0, got {text.strip()!r}")
    return value


def _whole(text: str, what: str) -> int | None:
    """The number that `text`'s digits write (None for other text). Python reads at most
    `sys.get_int_max_str_digits()` digits: a longer number (`:verify 99...9`, 5,000 nines) is
    refused in words, as a JSON list's is; int() raised ValueError, an internal error that ended
    the session."""
    digits = text.strip()
    if not re.fullmatch(r"\d+", digits):
        return None
    try:
        return int(digits)
    except ValueError:
        raise Refusal(
            f"{what} has {len(digits):,} digits, more than Python reads "
            f"({sys.get_int_max_str_digits():,})"
        ) from None


def no_arguments(word: str, rest: str) -> None:
    if rest:
        raise Refusal(f"{word} takes no arguments, got {rest!r}")


def name_hint(err: RaspError, name: str, search_dirs: Sequence[Path]) -> RaspError:
    """`err`, a command's `Undefined variable: NAME`, with a hint where it has none: `load
    "NAME";` where a file NAME.rasp is there to load (`:compile reverse` before loading the
    library's reverse), else where `:names` lists the names there are."""
    if err.hint is None:
        dirs = [Path.cwd(), *search_dirs, *filter(None, [programs_dir()])]
        if name.isidentifier() and any((d / f"{name}.rasp").is_file() for d in dirs):
            err.hint = f'load "{name}"; first: it reads {name}.rasp, which may define it'
        else:
            err.hint = ":names lists the names defined"
    return err
