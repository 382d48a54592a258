"""`cli_parser.arguments`: every argument a parser of `build_parser` takes, kept as add_argument
returns them, so that the CLI's own checks (`cli_args`: a misspelt option, an input typed
without `--input`) read no private argparse attribute. The list is held complete against the
parser's own help (public `format_help`), which shows every argument argparse knows of: an
option added some other way (a group, a parent parser) would be missed silently."""

from __future__ import annotations

import argparse
import re

import pytest

from rasp.tools.cli_parser import _Parser, arguments, build_parser

# an option string at the start of a help invocation or after its ", " (`-o OUT, --output OUT`)
_OPTION = re.compile(r"(?:^|, )(--?[\w-]+)")


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return {"rasp": parser, **parser.subcommand_parsers}  # type: ignore[attr-defined]


def help_names(parser: argparse.ArgumentParser) -> list[str]:
    """The option strings and positional names the help of `parser` shows, sorted: its argument
    lines are the ones indented two spaces (a subcommand's, a wrapped help's, more)."""
    parser.description = parser.epilog = None  # (their examples are indented too)
    names: list[str] = []
    for line in parser.format_help().split("\n\n", 1)[1].splitlines():
        if re.match(r"  \S", line):
            invocation = re.split(r" {2,}", line.strip())[0]
            found = _OPTION.findall(invocation)
            names += found if invocation.startswith("-") else [invocation.split()[0]]
    return sorted(names)


def listed_names(parser: argparse.ArgumentParser) -> list[str]:
    """The same names, read from `arguments(parser)`."""
    names: list[str] = []
    for action in arguments(parser):
        names += action.option_strings or [str(action.metavar or action.dest)]
    return sorted(names)


@pytest.mark.parametrize("command", list(_parsers()))
def test_every_argument_is_listed_once(command: str) -> None:
    parser = _parsers()[command]
    assert listed_names(parser) == help_names(parser)


def test_groups_and_parents_are_listed() -> None:
    common = _Parser(add_help=False)
    talk = common.add_mutually_exclusive_group()
    talk.add_argument("-q", action="store_true", help="q")
    named = common.add_argument_group("named")
    named.add_argument("--n", help="n")
    child = _Parser(parents=[common])
    child.add_argument("file", help="f")
    options = [a.option_strings for a in arguments(child)]
    assert options == [["-h", "--help"], ["-q"], ["--n"], []]
    assert listed_names(child) == help_names(child) == ["--help", "--n", "-h", "-q", "file"]


def test_an_argument_the_list_misses_is_found() -> None:
    parser = _Parser()
    parser.add_argument("--n", help="n")
    argparse.ArgumentParser.add_argument(parser, "-o", "--output", metavar="OUT", help="o")
    assert help_names(parser) == ["--help", "--n", "--output", "-h", "-o"]
    assert listed_names(parser) == ["--help", "--n", "-h"]


def test_a_parser_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="build_parser"):
        arguments(argparse.ArgumentParser())
