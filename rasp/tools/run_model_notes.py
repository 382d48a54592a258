"""What `rasp run --model` says beside a model's output where that output is not certified.

A model's certificate covers the inputs its program has a value for; on the others (the
interpreter raises: `12 / (indices - 2)` at position 2, two strings averaged) the model accepts the
input and prints whatever its logits give, which reads like a value. Two things tell such an input
apart without the user's source: the runtime finds positions the logits leave undecided (tied top
logits, a numerical logit off every value: transformer/ties.py), and the program the file records
(`rasp compile` stores its text) can be run on the input. Either gives a warning; the printed
output stays as the model gives it, so scripts reading it see no change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rasp.errors import RaspError
from rasp.tools.console import Console

_MARK = object()  # put at undecided positions: no output value is this object


def uncertified_notes(model: Any, model_path: str, tokens: Any) -> list[str]:
    """Warnings for the one input `tokens` (as `model.run` takes it): its undecided positions,
    and where the program the file records fails on it."""
    from transformer.errors import UndecidedOutputError
    from transformer.ties import RAISE

    failure = _recorded_failure(model, model_path, tokens)
    undecided = ""
    try:
        model.run([tokens], undecided=RAISE)
    except UndecidedOutputError as err:
        (marked,) = model.run([tokens], undecided=_MARK)
        positions = [i for i, value in enumerate(marked) if value is _MARK]
        first = f" at position {err.position}" if len(positions) > 1 else ""
        undecided = f"undecided at {_positions(positions)} ({err.detail}{first})"
    if failure is not None:
        also = f"; the model's output is {undecided}" if undecided else ""
        return [
            f"the program {model_path} records fails on this input ({failure}): the model's "
            "certificate covers only the inputs its program has a value for, so the output "
            f"printed is not certified{also}"
        ]
    if undecided:
        return [
            f"the model's output `{model.meta.output.name}` is {undecided}: a compiled model "
            "leaves a position undecided only where its program has no value, or after an "
            "edit, and its certificate does not cover what is printed there"
        ]
    return []


def _recorded_failure(model: Any, model_path: str, tokens: Any) -> str | None:
    """Where the RASP program the file records fails on `tokens`: its location and message;
    None where it gives a value, or where there is no such program to run (none recorded, a
    Python one, one that no longer loads)."""
    from rasp.sops import Evaluator
    from rasp.tools import model_steps as steps

    quiet = Console(quiet=True)
    try:
        source = steps.recorded_program(model_path, model.meta.raw)
        output = (model_path, model.meta.output.name)
        sop, _, _ = steps.program_sop(source, None, quiet, model_output=output)
    except RaspError:
        return None
    try:
        Evaluator(list(tokens)).value(sop)
    except RaspError as err:
        where = err.span
        if where is None:
            return err.message
        # the recorded program's own lines by the file it was compiled from
        recorded = (model.meta.raw.get("program") or {}).get("file") or "the program"
        file = recorded if where.file == source.name else where.file
        return f"{file}:{where.line}:{where.col}: {err.message}"
    return None


def _positions(positions: Sequence[int]) -> str:
    if len(positions) == 1:
        return f"position {positions[0]}"
    shown = ", ".join(str(p) for p in positions[:-1])
    return f"positions {shown} and {positions[-1]}"
