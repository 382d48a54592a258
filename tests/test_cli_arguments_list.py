"""`cli_parser.arguments`: every argument a parser of `build_parser` takes, kept as add_argument
returns them, so that the CLI's own checks (`cli_args`: a misspelt option, an input typed
without `--input`) read no private argparse attribute. The private list is read here only to
hold the public one complete: an option added some other way would be missed silently."""

from __future__ import annotations

import argparse

import pytest

from rasp.tools.cli_parser import _Parser, arguments, build_parser


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return {"rasp": parser, **parser.subcommand_parsers}  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", list(_parsers()))
def test_every_argument_is_listed_in_argparses_order(command: str) -> None:
    parser = _parsers()[command]
    assert arguments(parser) == parser._actions


def test_groups_and_parents_are_listed() -> None:
    common = _Parser(add_help=False)
    talk = common.add_mutually_exclusive_group()
    talk.add_argument("-q", action="store_true")
    named = common.add_argument_group("named")
    named.add_argument("--n")
    child = _Parser(parents=[common])
    child.add_argument("file")
    options = [a.option_strings for a in arguments(child)]
    assert options == [["-h", "--help"], ["-q"], ["--n"], []]
    assert arguments(child) == child._actions


def test_a_parser_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="build_parser"):
        arguments(argparse.ArgumentParser())
