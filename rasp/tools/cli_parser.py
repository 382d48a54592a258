"""The `rasp` command line's arguments: `build_parser`, every subcommand's options, and the
converters that check a number or a path as argparse reads it (a usage error, exit 2).
`rasp.tools.cli` parses with it, then turns INPUT and VOCAB text into token lists.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import IO, Any, NoReturn

from rasp import __version__
from rasp.tools.arguments import grouped_count
from rasp.tools.console import write_stdout
from rasp.tools.help_text import DESCRIPTIONS, FILE_HELP, INPUT_HELP, epilog
from rasp.tools.pyprogram import add_python_options


class _Parser(argparse.ArgumentParser):
    """argparse, except that help or the version which stdout cannot take is the command's error
    (argparse drops it: `rasp --help > /dev/full` and `rasp --help | head -1` exited 0); the
    subcommands' parsers are of this class too (argparse makes them of their parent's). Its
    `arguments` lists every argument it takes (`arguments(parser)`), on argparse's public API."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # every argument this parser takes, as add_argument returned it: argparse lists them only
        # in private attributes (`_actions`), which the CLI's own checks (cli_args) and `error`
        # read here instead
        self.arguments: list[argparse.Action] = []
        super().__init__(*args, **kwargs)  # (add_help's -h/--help comes through add_argument)
        for parent in kwargs.get("parents", ()):  # (argparse copies them without add_argument)
            self.arguments.extend(arguments(parent))
        self.register("action", None, _StoreOnce)  # every plain option of every subcommand
        self.register("action", "store", _StoreOnce)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        self.arguments.append(action)
        return action

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        return self._recorded(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs: Any) -> Any:
        return self._recorded(super().add_mutually_exclusive_group(**kwargs))

    def _recorded(self, group: Any) -> Any:
        """`group`, whose add_argument also lists the argument in `arguments`."""
        add = group.add_argument

        def add_argument(*args: Any, **kwargs: Any) -> argparse.Action:
            action: argparse.Action = add(*args, **kwargs)
            self.arguments.append(action)
            return action

        group.add_argument = add_argument
        return group

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        if message and file is not None and file is sys.stdout:
            write_stdout(message, end="")  # (BrokenPipeError, or a StdoutError: the CLI's exit)
        else:
            super()._print_message(message, file)

    def error(self, message: str) -> NoReturn:
        # `rasp export M -o DIR` said only `required: --to`; an option of fixed choices names them
        if message.startswith("the following arguments are required:"):
            missing = message.split(":", 1)[1].replace(" ", "").split(",")
            named = [
                f"{action.option_strings[-1]} {' or '.join(map(str, action.choices))}"
                for action in self.arguments
                if action.required and action.choices and action.option_strings
                if "/".join(action.option_strings) in missing
            ]
            if named:
                message += f" (write {', '.join(named)})"
        super().error(message)


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every argument of `parser` (one `build_parser` made), options and positionals, with -h."""
    if not isinstance(parser, _Parser):
        raise TypeError(f"not a parser of build_parser's: {parser!r}")
    return parser.arguments


class _StoreOnce(argparse.Action):
    """An option that takes a value, refused when given twice: argparse keeps the last one, so
    `rasp compile p.rasp -o a.safetensors ... -o b.safetensors` wrote b alone, without a word.
    (argparse's plain "store" action, on the public `Action`: its own class is private.)"""

    def __init__(
        self, option_strings: Sequence[str], dest: str, nargs: int | str | None = None, **kw: Any
    ) -> None:
        # (the checks argparse's store action makes of its arguments)
        if nargs == 0:
            raise ValueError("nargs for store actions must be != 0")
        if kw.get("const") is not None and nargs != argparse.OPTIONAL:
            raise ValueError(f"nargs must be {argparse.OPTIONAL!r} to supply const")
        super().__init__(option_strings, dest, nargs=nargs, **kw)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if option_string is not None and getattr(namespace, self.dest, None) is not self.default:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice; give it once")
        setattr(namespace, self.dest, values)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rasp",
        usage="%(prog)s [-h] [--version] [COMMAND ...]",  # `rasp` alone starts the REPL
        description=DESCRIPTIONS["rasp"],
        epilog=epilog("rasp"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rasp-forge {__version__}")
    # prog: the subcommands' usage starts `rasp run`, not with the custom usage line above
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, prog="rasp")
    common = _Parser(add_help=False)
    talk = common.add_mutually_exclusive_group()
    talk.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only results and errors: no notes, warnings or progress bars",
    )
    talk.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print each step with its time on stderr (and a traceback on an internal error)",
    )

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=DESCRIPTIONS[name],
            epilog=epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[common],
        )

    run = command("run", "run a program (interpreter) or a compiled model")
    run.add_argument("file", nargs="?", metavar="FILE.rasp", help=FILE_HELP)
    add_python_options(run)
    run.add_argument(
        "--model", metavar="M.safetensors", help="compiled model to run instead of FILE"
    )
    run.add_argument("--input", required=True, metavar="INPUT", help=INPUT_HELP)
    run.add_argument(
        "--name", help="the s-op to print (default: the last name the program assigns)"
    )
    run.add_argument("--json", action="store_true", help="print one JSON list of the outputs")
    _add_device(run)

    comp = command("compile", "compile a program into a .safetensors model")
    comp.add_argument("file", metavar="FILE.rasp", help=FILE_HELP)
    add_python_options(comp)
    _add_vocab_and_len(comp, required=True)
    comp.add_argument("--name", help="the s-op to compile (default: the last name assigned)")
    comp.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.safetensors",
        type=_path,
        help="the model file to write (nothing is written if the compile is refused)",
    )
    comp.add_argument("--causal", action="store_true", help="compile with causal attention")
    comp.add_argument(
        "--no-head-masks",
        action="store_false",
        dest="head_masks",
        help="give no head a per-head mask (select(indices, indices, op) is then scored from "
        "N-wide index readings): a larger model that TransformerLens's HookedTransformer runs as is",
    )
    _add_max_params(comp)
    comp.add_argument("--json", action="store_true", help="print what was written as JSON")

    ver = command("verify", "compare a compiled model with the interpreter")
    ver.add_argument(
        "file",
        metavar="FILE.rasp",
        nargs="?",
        help=FILE_HELP + " (default with --model: the .rasp program the model records)",
    )
    add_python_options(ver)
    _add_vocab_and_len(
        ver, required=False, default_note="required, except with --model: the model's"
    )
    ver.add_argument(
        "--name",
        help="the s-op to verify (default: the model's output with --model, else the last name "
        "assigned)",
    )
    ver.add_argument(
        "--model", metavar="M.safetensors", help="verify this file (default: compile now)"
    )
    ver.add_argument(
        "--exhaustive-len",
        type=_non_negative,
        metavar="K",
        dest="exhaustive_len",
        help="check every input up to length K (default: the largest K with at most 20,000 "
        "such inputs); verify refuses more than 1,000,000 inputs in all (up to about 9 "
        "minutes on 2 busy cores)",
    )
    ver.add_argument(
        "--samples",
        type=_non_negative,
        default=1000,
        metavar="S",
        help="distinct random inputs to check past length K (default 1000; where the longer "
        "lengths hold no more inputs than S, every one is checked instead)",
    )
    ver.add_argument(
        "--sampling",
        choices=("guided", "uniform"),
        default="guided",
        help="guided (default): half the samples uniformly random, half mutants of them kept "
        "where they reach values of the program's variables that no input before reached; "
        "uniform: all uniformly random",
    )
    ver.add_argument("--seed", type=int, default=0, metavar="X", help="random seed (default 0)")
    ver.add_argument(
        "--no-rebuild",
        action="store_false",
        dest="rebuild",
        help="with --model, re-check the certificate against the file's reach without first "
        "rebuilding it from the program (FILE, else the one the file records): saves a compile, "
        "but the proof then trusts the file's reach",
    )
    _add_max_params(ver, " (without --model)")
    _add_device(ver)
    ver.add_argument("--json", action="store_true", help="print the report as JSON")

    show = command("show", "summarise a compiled model (layers, heads, widths, labels)")
    show.add_argument("model", metavar="M.safetensors", help="a model written by rasp compile")
    shown = show.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the summary as JSON")
    shown.add_argument(
        "--source",
        action="store_true",
        help="print the program the model was compiled from (its text as compiled), nothing else",
    )

    draw = command("draw", "draw a program's or model's computation on an input")
    draw.add_argument(
        "target",
        metavar="TARGET",
        help="a .rasp program (- reads one from standard input), PROG.py:NAME or a "
        ".safetensors model",
    )
    add_python_options(draw)
    draw.add_argument("--input", required=True, metavar="INPUT", help=INPUT_HELP)
    draw.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.png",
        type=_path,
        help="the picture to write (its suffix names the format: .png, .svg, .pdf, ...)",
    )
    _add_vocab_and_len(draw, required=False)
    draw.add_argument("--name", help="the s-op to draw (default: the last name assigned)")
    draw.add_argument(
        "--dot", metavar="OUT.dot", type=_path, help="also write the graph as DOT text"
    )
    _add_max_params(draw, " (a .rasp TARGET only)")
    draw.add_argument("--json", action="store_true", help="print what was written as JSON")

    export = command("export", "export a compiled model for another library")
    export.add_argument("model", metavar="M.safetensors", help="a model written by rasp compile")
    export.add_argument(
        "--to", required=True, choices=["transformer-lens"], help="the library to export for"
    )
    export.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        type=_path,
        help="the directory to write (made if missing; files of the same names are replaced)",
    )
    _add_max_params(export, " once padded to TransformerLens's uniform layer shape")
    export.add_argument("--json", action="store_true", help="print what was written as JSON")

    repl = command("repl", "interactive RASP (like the original's REPL)")
    repl.add_argument("file", nargs="?", metavar="FILE.rasp", help="load this program first")
    parser.subcommand_parsers = dict(sub.choices)  # type: ignore[attr-defined]
    return parser


def _add_vocab_and_len(
    parser: argparse.ArgumentParser, *, required: bool, default_note: str | None = None
) -> None:
    note = f" ({default_note})" if default_note else ""
    parser.add_argument(
        "--vocab",
        required=required,
        metavar="VOCAB",
        help="the tokens the model must accept, each once: a JSON list or characters ('abc'); "
        f"see 'Tokens' below{note}",
    )
    parser.add_argument(
        "--max-len",
        required=required,
        type=_positive,
        metavar="N",
        dest="max_len",
        help=f"the longest input the model must accept{note}",
    )


def _add_max_params(parser: argparse.ArgumentParser, when: str = "") -> None:
    parser.add_argument(
        "--max-params",
        type=_parameter_count,
        metavar="P",
        dest="max_params",
        help=f"refuse, before building it, a model predicted to have more than P parameters{when} "
        "(default 200,000,000: 800 MB of weights)",
    )


def _add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where a compiled model runs (default cpu)",
    )


def _positive(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parameter_count(text: str) -> int:
    """A count written plainly, as the help writes the default (`200,000,000`) or as Python does
    (`200_000_000`)."""
    value = grouped_count(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"not a whole number >= 1: {text!r} (e.g. 300000000, 300,000,000 or 300_000_000)"
        )
    return value


def _path(text: str) -> str:
    """An output path; an empty one (`-o ''`, an unset shell variable) would be the current
    directory."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file")
    return text


def _non_negative(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def refuse_unknown_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A misspelt command (`rasp complie`) is named with the close one, and a program given
    without one (`rasp sort.rasp --input abc`) with `rasp run`: argparse listed the choices."""
    if not argv or argv[0].startswith("-"):
        return
    commands = list(getattr(parser, "subcommand_parsers", {}))
    word = argv[0]
    if word in commands or word == "help":
        return
    from rasp.tools.pyprogram import is_python_target
    from rasp.wording import close_name

    if word.endswith((".rasp", ".safetensors")) or is_python_target(word):
        shown = shlex.join(argv)
        guess = f"to run a program, name the command first: rasp run {shown}"
        if word.endswith(".safetensors"):
            guess = f"to run a model: rasp run --model {shown}; to see inside it: rasp show {word}"
    else:
        close = close_name(word, [*commands, "help"])
        guess = f"did you mean '{close}'?" if close else ""
    if guess:
        parser.error(f"argument COMMAND: invalid choice: {word!r} ({guess})")
