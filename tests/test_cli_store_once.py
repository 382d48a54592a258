"""The `rasp` command line's options that take a value are stored once (`cli_parser._StoreOnce`,
built on argparse's public `Action`, not its private store class): a value given twice is a usage
error, one given once or not at all is argparse's, and a store option that stores nothing is
refused as argparse refuses it. Needs only the rasp core (run on Python 3.11, 3.12 and 3.13)."""

from __future__ import annotations

import pytest

from rasp.tools.cli_parser import _Parser, _StoreOnce, arguments, build_parser


def test_an_option_once_and_a_positional_are_stored() -> None:
    args = build_parser().parse_args(["run", "p.rasp", "--input", "abc"])
    assert (args.file, args.input) == ("p.rasp", "abc")
    args = build_parser().parse_args(["run", "p.rasp", "--input", "ab"])
    assert args.name is None  # (not given: its default)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "p.rasp", "--input", "abc", "--input", "ab"],
        ["compile", "p.rasp", "--vocab", "abc", "--max-len", "4", "-o", "a", "--output", "b"],
    ],
)
def test_an_option_given_twice_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(argv)
    assert caught.value.code == 2
    assert capsys.readouterr().err.rstrip().endswith("given twice; give it once")


def test_a_store_option_is_checked_as_argparse_checks_it() -> None:
    parser = _Parser()
    n = parser.add_argument("--n", type=int, choices=[1, 2], default=1, metavar="N", help="n")
    parser.add_argument("--m", nargs="?", const="c")
    assert vars(parser.parse_args(["--n", "2", "--m"])) == {"n": 2, "m": "c"}
    with pytest.raises(ValueError, match="nargs"):
        parser.add_argument("--none", nargs=0)
    with pytest.raises(ValueError, match="to supply const"):
        parser.add_argument("--k", const=1)
    assert isinstance(n, _StoreOnce) and n in arguments(parser)
