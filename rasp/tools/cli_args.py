"""The `rasp` command line read: argparse (`rasp.tools.cli_parser.build_parser`), with the mistakes
it words poorly named first (an unknown option with its subcommand's usage and a close one, an
input typed without `--input`), and the token arguments (`--input`, `--vocab`) made token lists.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from rasp.tools.arguments import (
    UsageError,
    check_input,
    check_vocab,
    check_vocab_commas,
    check_vocab_spaces,
    parse_tokens,
)
from rasp.tools.cli_parser import arguments, refuse_unknown_command
from rasp.wording import close_name


def parse_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """argparse, except that an unknown option is reported with its subcommand's usage, `rasp`
    alone is `rasp repl`, as the original's launcher (rasp.sh) starts its REPL, and `rasp help
    [COMMAND]` is `rasp [COMMAND] --help`."""
    given = list(sys.argv[1:] if argv is None else argv)
    if not given:
        argv = ["repl"]
    elif given[0] == "help" and len(given) <= 2:  # `rasp help [COMMAND]`, as git and pip read it
        argv = [*given[1:], "--help"]
    refuse_unknown_command(parser, argv if argv is not None else given)
    _refuse_unknown_option(parser, argv if argv is not None else given)
    _refuse_stray_input(parser, argv if argv is not None else given)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        guess = _stray_files(args, unknown)
        subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}{guess}")
    return args


# what each command's one positional file is, as a hint names it
_ONE_FILE = {
    "run": "program",
    "compile": "program",
    "verify": "program",
    "repl": "program",
    "show": "model",
    "export": "model",
    "draw": "program or model",
}


def _stray_files(args: argparse.Namespace, unknown: Sequence[str]) -> str:
    """A second file left over (`rasp verify sort.safetensors p.rasp`, `rasp show a b`: argparse
    said only `unrecognized arguments: p.rasp`): the command line to write, a model after
    --model, or that the command takes one file; "" for other words."""
    files = [w for w in unknown if Path(w.split(":")[0]).suffix in (".rasp", ".safetensors", ".py")]
    one = _ONE_FILE.get(args.command)
    if not files or one is None:
        return ""
    given = getattr(args, "file", None) or getattr(args, "target", None)
    both = [given, *files] if isinstance(given, str) else files
    models = [w for w in both if w.endswith(".safetensors")]
    programs = [w for w in both if not w.endswith(".safetensors")]
    if args.command in ("run", "verify"):
        if getattr(args, "model", None) is None and len(models) == 1 and len(programs) == 1:
            text = getattr(args, "input", None)
            rest = "" if args.command == "verify" else f" --input {shlex.quote(text or 'INPUT')}"
            return (
                f" (a model goes after --model: `rasp {args.command} {shlex.quote(programs[0])} "
                f"--model {shlex.quote(models[0])}{rest}`)"
            )
        if files == models:  # (a second model, beside --model's)
            one = "model, after --model"
    if args.command == "repl":  # (the others: `load "b.rasp";` inside, as the original's)
        rest = " ".join(f'load "{w}";' for w in files)
        return f" (rasp repl takes one program: load the others inside it, {rest})"
    return f" (rasp {args.command} takes one {one}: run it once for each)"


def _refuse_unknown_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A misspelt option (`--maxlen 5`) is named before argparse checks the required ones, which
    said only `the following arguments are required: --max-len`; a close option is suggested."""
    if not argv or argv[0] not in getattr(parser, "subcommand_parsers", {}):
        return
    sub = subparser(parser, argv[0])
    known = [o for a in arguments(sub) for o in a.option_strings if o.startswith("--")]
    for word in argv[1:]:
        if word == "--":  # the rest are positional
            return
        if not word.startswith("--"):
            continue
        option = word.split("=", 1)[0]
        if any(o.startswith(option) for o in known):  # itself, or argparse's abbreviation
            continue
        close = close_name(option.replace("_", "-"), known)
        if option.replace("_", "-") in known:
            close = option.replace("_", "-")
        others = [
            name
            for name, other in parser.subcommand_parsers.items()  # type: ignore[attr-defined]
            if any(option in a.option_strings for a in arguments(other))
        ]
        if close:
            guess = f" (did you mean {close}?)"
        elif others == ["compile"] and argv[0] in ("verify", "draw"):  # `verify --causal`
            model = "--model M.safetensors" if argv[0] == "verify" else "M.safetensors"
            guess = (
                f" ({option} is an option of rasp compile: compile with it, then give the model, "
                f"`rasp {argv[0]} {model}`)"
            )
        elif others:  # `rasp run --vocab`: a model command's option
            guess = f" ({option} is an option of rasp {', '.join(others)}, not of rasp {argv[0]})"
        else:
            guess = ""
        sub.error(f"unrecognized arguments: {option}{guess}")


def _refuse_stray_input(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """An input typed without `--input` (`rasp run p.rasp hello`: argparse said only that
    --input is required), or one with a space typed without quotes (`--input hello world`:
    `unrecognized arguments: world`), is named with the argument to write."""
    if not argv or argv[0] not in ("run", "draw"):
        return
    sub = subparser(parser, argv[0])
    takes_value = {o for a in arguments(sub) if a.nargs != 0 for o in a.option_strings}
    words: list[tuple[int, str]] = []  # the positional words, with where they stand
    skip = False
    for at, word in enumerate(argv[1:], 1):
        if skip:
            skip = False
        elif word == "--":
            break
        elif word.startswith("-") and word != "-":  # (argparse takes `--inp` for --input)
            skip = "=" not in word and any(o.startswith(word) for o in takes_value if len(word) > 2)
            skip = skip or word in takes_value
        else:
            words.append((at, word))
    if argv[0] == "run" and not words and not _given(argv, "--model", "--input", "--help"):
        # `rasp run` alone: argparse named only --input, and the next try was told of the program
        sub.error(
            "the following arguments are required: FILE.rasp (or --model M.safetensors), --input"
        )
    room = sum(1 for a in arguments(sub) if not a.option_strings)
    extra = words[room:]
    if not extra and words and any(w.startswith("--model") for w in argv):
        # `run --model M abc`: a word that names no file is no program to check M against
        extra = [(at, w) for at, w in words if w != "-" and not Path(w.split(":")[0]).exists()]
    if not extra:
        return
    typed = " ".join(w for _, w in extra)
    if not any(len(w) > 3 and "--input".startswith(w.split("=")[0]) for w in argv):
        sub.error(
            f"the following arguments are required: --input (write the input after it: "
            f"--input '{typed}')"
        )
    first = extra[0][0]
    before = argv[first - 2] if first >= 2 else ""
    if len(before) > 3 and "--input".startswith(before):  # the words after the input's first
        given = f"{argv[first - 1]} {typed}"
        sub.error(
            f"unrecognized arguments: {typed} (an input with spaces is one argument, in "
            f"quotes: --input '{given}')"
        )


def _given(argv: Sequence[str], *options: str) -> bool:
    """Whether any of `options` is in `argv`, as itself or as argparse's abbreviation of it
    (`--inp`, `--model=m`), or `-h`."""
    return any(
        word == "-h" or (len(word) > 3 and any(o.startswith(word.split("=")[0]) for o in options))
        for word in argv[1:]
    )


def parse_token_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Turn INPUT and VOCAB text into token lists before any handler sees them; an empty input,
    an empty vocabulary or a repeated vocabulary token is an error of that argument."""
    checks = {"input": check_input, "vocab": check_vocab}
    for option, check in checks.items():
        text = getattr(args, option, None)
        if text is None:
            continue
        try:
            tokens = parse_tokens(text)  # its messages quote the text
        except UsageError as exc:
            subparser(parser, args.command).error(f"argument --{option}: {exc}")
        try:
            if option == "vocab":
                check_vocab_commas(text, tokens)
            check(tokens)
            if option == "vocab":
                check_vocab_spaces(text, tokens)
        except UsageError as exc:
            subparser(parser, args.command).error(f"argument --{option} {text!r}: {exc}")
        setattr(args, option, tokens)


def subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of `command`, so a late usage error reads `rasp COMMAND: error: ...`."""
    found = getattr(parser, "subcommand_parsers", {}).get(command)
    return found if isinstance(found, argparse.ArgumentParser) else parser
