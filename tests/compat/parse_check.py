"""Whether a generated statement parses in our grammar (the generator blocks' tests)."""

from __future__ import annotations

from lark.exceptions import LarkError

from rasp.parser import lark_parser


def parses(text: str) -> bool:
    try:
        lark_parser().parse(text + "\n")
    except LarkError:
        return False
    return True
