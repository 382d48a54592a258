"""The sign of a float zero, which a compiled model does not keep.

0.0 and -0.0 are equal numbers: the compiler's value sets (`compiler.blocks.value_key`) and a
model hold them as one value. A tracr function may still tell them apart (`str(-0.0)` is "-0.0",
`math.copysign(1, x)`), and a model built from one of them then gives the other's result where
tracr's evaluator sees the other zero: `SequenceMap(lambda x, y: -x if y == 0 else x, tokens,
indices)` read by `str` over {0.0, 1.0} compiled, certified, and gave "0.0" where tracr gives
"-0.0". So each lowered function, while the compiler tabulates it, calls itself again with its
float zeros' signs flipped (`ZeroSigns.check`) and notes where the result differs; the compiler
refuses such a function, located (`signed_zero_problems`), wherever the program can hold a -0.0
at all: a vocabulary token, a constant or default written as -0.0, a function that gave one, or
an affine map whose every coefficient is negative or zero (`-x` of 0.0). A program that never
holds -0.0 compiles as before (`str` of the tokens 0.0 and 1.0).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rasp import sops
from rasp.errors import Diagnostic, RaspRuntimeError
from rasp.tracr.boxes import plain


def lowered_fn(node: sops.Node) -> Any:
    """`node`'s function, through a wrapper that names the function it calls (`__wrapped__`: the
    output map of a graph already resolved, `compiler.rounded.Rounded`): the lowered function
    holds the notes of its calls. A resolved graph given to the compiler (`rasp verify`'s) hid
    them, and a map reading a zero's sign was compiled, not refused."""
    fn = getattr(node, "fn", None)
    return getattr(fn, "__wrapped__", fn)


def is_float_zero(value: Any) -> bool:
    return type(value) is float and value == 0.0


def is_negative_zero(value: Any) -> bool:
    return is_float_zero(value) and math.copysign(1.0, value) < 0


@dataclass
class ZeroSigns:
    """What one lowered function showed about float zeros' signs while the compiler called it."""

    gave_negative: bool = False  # it returned -0.0
    # (arguments, result, the arguments with zeros' signs flipped, result): the first it told apart
    told_apart: tuple[tuple[Any, ...], str, tuple[Any, ...], str] | None = None

    def check(self, call: Callable[..., Any], given: Sequence[Any], out: Any) -> None:
        """Note whether `out`, the result of this call of `given`, is -0.0, and whether `call`
        gives another result for `given` with the signs of some of its float zeros flipped."""
        if is_negative_zero(plain(out)):
            self.gave_negative = True
        if self.told_apart is not None:
            return
        zeros = [i for i, a in enumerate(given) if is_float_zero(a)]
        if not zeros:
            return
        # (called again on the Python values: `out` may be from their numpy forms)
        base = _outcome(call, given)
        for flips in itertools.product((False, True), repeat=len(zeros)):
            if not any(flips):
                continue
            other = list(given)
            for i, flip in zip(zeros, flips, strict=True):
                if flip:
                    other[i] = -other[i]  # (-(0.0) is -0.0 and -(-0.0) is 0.0)
            found = _outcome(call, other)
            if found != base:
                self.told_apart = (tuple(given), base, tuple(other), found)
                return


def _outcome(call: Callable[..., Any], args: Sequence[Any]) -> str:
    try:
        return _shown(call(*args))
    except RaspRuntimeError as exc:
        return f"an error ({exc})"


def _shown(out: Any) -> str:
    """`out` as compared: a float zero as 0.0 (a result that is -0.0 for one zero and 0.0 for
    the other is one number, as a model holds it), anything else exactly."""
    if is_float_zero(plain(out)):
        return repr(0.0)
    if isinstance(out, tuple):
        return repr(tuple(plain(v) for v in out))
    return repr(plain(out))


def signed_zero_problems(root: sops.Node, vocab: Sequence[Any] | None) -> list[Diagnostic]:
    """Each lowered function of `root` that gives another result for -0.0 than for 0.0, located,
    where the program can hold a -0.0 (a model holds both zeros as one number)."""
    readers = []
    source = next((f"the token {t!r}" for t in vocab or () if is_negative_zero(plain(t))), None)
    for node in sops.walk(root):
        fn = lowered_fn(node)
        zeros = getattr(fn, "zeros", None)
        if isinstance(zeros, ZeroSigns) and zeros.told_apart is not None:
            readers.append((node, fn, zeros.told_apart))
        if source is None:
            source = _negative_zero_source(node, fn)
    if source is None:
        return []
    problems = []
    for node, fn, (given, base, other, found) in readers:
        problems.append(
            Diagnostic(
                f"'{fn.text}' gives {base} for {_args(given)} and {found} for {_args(other)}: a "
                f"compiled model holds 0.0 and -0.0 as one number, and this program can give "
                f"-0.0 ({source})",
                node.span,
                "compare the value with 0 instead of reading its sign (str, repr, "
                "math.copysign), or make the zero positive where it is made (x + 0.0)",
            )
        )
    return problems


def _args(args: tuple[Any, ...]) -> str:
    return repr(args[0]) if len(args) == 1 else repr(args)


def _negative_zero_source(node: sops.Node, fn: Any) -> str | None:
    """Where `node` can give -0.0, said for a message; None where it cannot."""
    text = getattr(fn, "text", "") or getattr(node, "text", "") or type(node).__name__
    zeros = getattr(fn, "zeros", None)
    if isinstance(zeros, ZeroSigns) and zeros.gave_negative:
        return f"'{text}' gives it"
    affine = getattr(fn, "affine", None)
    if affine is not None and all(a <= 0 for a in affine[:-1]):
        return f"'{text}' may give it (-1 times 0.0)"
    if isinstance(node, sops.AggregateSOp) and is_negative_zero(plain(node.default)):
        return "an Aggregate's default -0.0"
    written = [getattr(node, "value", None), *(getattr(fn, "values", None) or ())]
    if any(is_negative_zero(plain(v)) for v in written):
        return "a constant -0.0"
    return None
