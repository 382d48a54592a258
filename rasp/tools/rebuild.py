"""The reach a model file's certificate is re-checked against, rebuilt from its program.

`compiler.certify.recheck` proves the weights against the file's reach, and the reach says what
the program means; a reach edited with the weights would prove another program. So `rasp verify
--model` compiles the program again, with the file's options (the vocabulary, max_len, output
name, and `program.options`: causal, head masks, parameter limit), and requires the rebuilt reach
to equal the file's: the program verify was given (FILE, which the user claims the model
computes), else the RASP source the file records. The rebuilt weights need not equal the file's:
the re-check proves the file's own weights against the (now trusted) reach, so weights that
differ but still compute the program are not refused for that."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rasp.errors import RaspError, Source
from rasp.seqvalues import BOX_MARK
from rasp.text_width import clip
from rasp.tools.certificate_text import Rebuild
from rasp.tools.reach_labels import by_label, unread

Progress = Callable[[str, int, int], None]
CLIP = 60  # terminal columns of a differing value shown
# A head's or MLP's `op`: the words show, draw and the certificate's lines print for what it
# computes. No check reads them, so a file whose reach differs only there (worded by an earlier
# compiler) is proved, and the certificate line says where the words differ. Only there: an `op`
# key anywhere else in a reach is no field of it, and differs as any other key does.
TEXTS = frozenset({("heads", "op"), ("mlps", "op")})  # (group, key) of an entry `group[i]`
# Why a reach differs where no one edited it: a file compiled before the compiler changed how it
# builds the program, which recompiling fixes. (A residual laid out otherwise alone, as length's
# token one-hot left out since 2026-12-05, is compared by label: `reach_labels`.)
AGAIN = "edited after compiling, or written by an earlier compiler: compile the program again"


def not_rebuilt(why: str) -> Rebuild:
    return Rebuild(None, f"not rebuilt: {why}; the proof trusts the file's reach")


@dataclass(frozen=True)
class Given:
    """The program verify was given (FILE): the s-op the model's output names in it, and its
    source. The user's claim is that the model computes it, so the reach is rebuilt from it."""

    sop: Any
    source: Source


def rebuild_reach(
    meta: dict[str, Any],
    path: str,
    given: Given | None = None,
    progress: Progress | None = None,
    fallback: Given | None = None,
) -> Rebuild:
    """Compile the program verify was given (`given`), else the one `meta` records, with the
    file's options, and compare the reaches. `progress`: the compile's (`compile_sop`'s).
    `fallback`: the s-op verified, compiled under the model's output name where there is no
    `given` and the file records no RASP program (else the reach would go unchecked)."""
    if given is None:
        program = meta.get("program")
        why = None
        if not isinstance(program, dict) or not isinstance(program.get("source"), str):
            why = "the file records no program source"
        elif (
            isinstance(file := program.get("file"), str)
            and Path(file.split(":")[0]).suffix == ".py"
        ):
            why = (
                f"the file records the Python program {file}, which rasp-forge does not run "
                "from a model file"
            )
        if why is not None and fallback is None:
            return not_rebuilt(why)
        if why is not None:
            # as the model computing it was compiled: its output reading named as in the file
            # (a RASP s-op is named by the assignment verified; a name changes no value)
            given = Given(_renamed(fallback.sop, _output_reading(meta)), fallback.source)
    what = "the recorded program" if given is None else given.source.name
    try:
        rebuilt, output, residual, by_defs = _compiled_reach(meta, path, given, progress)
    except RaspError as err:  # CompileError too: the program, refused now
        # its first line, located in the program (`FILE (recorded in M):3:7: error: ...`)
        first = next(iter(err.render().strip().splitlines()), "") or type(err).__name__
        return Rebuild(False, f"NOT proved: {what} does not rebuild: {first}")
    except Exception as err:  # noqa: BLE001 - an old or edited file must not crash verify
        return Rebuild(False, f"NOT proved: {what} does not rebuild ({type(err).__name__}: {err})")
    held = meta.get("reach")
    difference = first_difference(held, rebuilt, ignore=TEXTS)
    if difference is not None and by_defs:
        # compiled before a def's unnamed s-ops were named after it: rebuilt with the old names
        try:
            again = _compiled_reach(meta, path, given, progress, earlier_names=True)
        except Exception:  # noqa: BLE001 - refused or failed as above: the first try's words
            again = None
        if again is not None and first_difference(held, again[0], ignore=TEXTS) is None:
            rebuilt, output, residual, _ = again
            difference = None
    laid_out = ""  # where the residual dimensions are compared by label: what the line adds
    if difference is not None and meta.get("residual") != residual:
        # laid out otherwise (an earlier compiler's residual): the same reach by label?
        labelled = by_label(held, meta.get("residual")), by_label(rebuilt, residual)
        if labelled[0] is not None and labelled[1] is not None:
            held, rebuilt = labelled
            difference = first_difference(held, rebuilt, ignore=TEXTS)
            laid_out = _laid_out(meta["residual"], residual)
    if difference is None:
        text = _first_text_difference(held, rebuilt)
        if text is None:
            return Rebuild(True, f"rebuilt from {what}: equal to the file's{laid_out}")
        # the words show and draw print for an operation: this compiler words it otherwise
        return Rebuild(
            True,
            f"rebuilt from {what}: equal to the file's{laid_out} but for the words that "
            f"describe an operation, which the proof does not read ({describe(text, rebuilt)})",
        )
    ours = meta.get("output")
    if (
        difference[0] == ("decoding",)
        and isinstance(ours, dict)
        and "tuples" not in ours
        and output.get("tuples") is True
        and {**ours, "tuples": True} == output
    ):
        # a tracr program's file compiled before `output.tuples`: its tuples decode as strings
        return Rebuild(
            False,
            f"NOT proved: {path}: its output entry does not say that its strings starting with "
            f"{BOX_MARK!r} are tracr's tuples (`output.tuples`, which {what} compiles to; the file "
            "was compiled before it): compile the program again",
        )
    return Rebuild(
        False,
        f"NOT proved: {path}: the file's reach differs from the one {what} compiles to"
        f"{', its residual dimensions matched by label' if laid_out else ''}: "
        f"{describe(difference, rebuilt)} ({AGAIN})",
    )


def _laid_out(residual: list[str], rebuilt: list[str]) -> str:
    """What a reach equal by label adds to the line: its dimensions were matched by label, and
    the file's dimensions the rebuilt model has not (the one-hot an earlier compiler laid out)."""
    extra = unread(residual, rebuilt)
    shown = ", ".join(extra[:4]) + (f" and {len(extra) - 4} more" if len(extra) > 4 else "")
    also = f"; the file also lays out {shown}, which its reach does not read" if extra else ""
    return f" with its residual dimensions matched by label (laid out otherwise{also})"


def _output_reading(meta: dict[str, Any]) -> str | None:
    """The name of the file's output reading (its reach's), where it has one."""
    reach = meta.get("reach")
    readings = reach.get("readings") if isinstance(reach, dict) else None
    index = reach.get("output") if isinstance(reach, dict) else None
    if isinstance(readings, list) and isinstance(index, int) and 0 <= index < len(readings):
        reading = readings[index]
        name = reading.get("name") if isinstance(reading, dict) else None
        return name if isinstance(name, str) else None
    return None


def _renamed(sop: Any, name: str | None) -> Any:
    """`sop` named `name` (a copy, its inputs shared): the same values under another name."""
    from rasp.sops import SOp

    if name is None or not isinstance(sop, SOp) or sop.name == name:
        return sop
    renamed = copy.copy(sop)
    renamed.name = name
    renamed.named_in = None  # (the file's name for it, not a def's local)
    return renamed


def compile_options(meta: dict[str, Any]) -> dict[str, Any]:
    """The options `compiler.compile_sop` is called with: recorded (`program.options`), or, in a
    file written before they were, read from the file (causal attention, masked heads) and the
    defaults."""
    from compiler.budget import DEFAULT_MAX_PARAMS

    config = meta.get("config") or {}
    recorded = (meta.get("program") or {}).get("options")
    if recorded is not None and not isinstance(recorded, dict):
        # (read as absent, options [1] rebuilt with options inferred from the config)
        raise RaspError(f"the file's program.options is {json.dumps(recorded)}")
    if isinstance(recorded, dict):
        options = {
            "causal": recorded.get("causal"),
            "head_masks": recorded.get("head_masks"),
            "max_params": recorded.get("max_params"),
        }
        kinds = {"causal": bool, "head_masks": bool, "max_params": (int, type(None))}
        for key, kind in kinds.items():
            value = options[key]
            if not isinstance(value, kind) or (key == "max_params" and isinstance(value, bool)):
                raise RaspError(f"the file's program.options.{key} is {json.dumps(value)}")
        return options
    layers = config.get("layers") or []
    return {
        "causal": config.get("attention_dir") == "causal",
        "head_masks": any(isinstance(x, dict) and x.get("masks") for x in layers),
        "max_params": DEFAULT_MAX_PARAMS,
    }


def _compiled_reach(
    meta: dict[str, Any],
    path: str,
    given: Given | None,
    progress: Progress | None,
    earlier_names: bool = False,
) -> tuple[Any, dict[str, Any], list[str], bool]:
    """The reach, the output entry and the residual labels of the program compiled now, as the
    file would hold them (JSON), and whether a def made an unnamed s-op of it (whose generated
    name a compiler before 2026-12-06 gave otherwise: `_aggregate_1`, now `_f_aggregate_1`);
    `earlier_names`: with that compiler's names (`compiler.graph.names_before_def_stems`)."""
    if earlier_names:
        from compiler.graph import names_before_def_stems

        with names_before_def_stems():
            return _compiled_reach(meta, path, given, progress)
    import compiler
    from rasp.nodes import Node, walk
    from rasp.tools.console import Console
    from rasp.tools.model_steps import program_sops, recorded_program

    output = (meta.get("output") or {}).get("name")
    tokens = (meta.get("vocab") or {}).get("tokens")
    max_len = meta.get("max_len")
    if not isinstance(output, str) or not isinstance(tokens, list) or not isinstance(max_len, int):
        raise RaspError("the file does not say which output, vocabulary and max_len it is for")
    options = compile_options(meta)
    if given is None:
        recorded = recorded_program(path, meta)
        sop, name, source, _ = program_sops(recorded, None, Console(quiet=True), (path, output))
    else:
        sop, name, source = given.sop, output, given.source
    model = compiler.compile_sop(
        sop,
        tokens,
        max_len,
        name=name,
        source=source,
        require_certificate=False,  # the re-check of the file's weights decides that
        progress=progress,
        **options,
    )
    # as the file holds it: through JSON (tuples as lists, keys as strings)
    held = json.loads(json.dumps([model.metadata["reach"], model.metadata["output"]]))
    by_defs = any(n.calls and not n.name for n in walk(sop)) if isinstance(sop, Node) else False
    return held[0], held[1], list(model.metadata["residual"]), by_defs


Path_ = tuple[Any, ...]  # keys (str) and indices (int), or COUNT last
COUNT = object()  # a path's last element where two lists differ in length


def first_difference(
    ours: Any, rebuilt: Any, at: Path_ = (), ignore: frozenset[tuple[str, str]] = frozenset()
) -> tuple[Path_, Any, Any] | None:
    """The first place (keys and indices, in the rebuilt reach's order) where two JSON values
    differ, with both values there; None where they are equal. 1 and 1.0 differ (and True and 1):
    the reach labels values by their type. A `(group, key)` in `ignore` skips `key` in the
    top-level list `group`'s entries (`reach[group][i][key]`), nowhere else."""
    if isinstance(ours, dict) and isinstance(rebuilt, dict):
        for key in [*rebuilt, *(k for k in ours if k not in rebuilt)]:
            if len(at) == 2 and isinstance(at[1], int) and (at[0], key) in ignore:
                continue
            if key not in ours or key not in rebuilt:
                return (*at, key), ours.get(key, _MISSING), rebuilt.get(key, _MISSING)
            found = first_difference(ours[key], rebuilt[key], (*at, key), ignore)
            if found is not None:
                return found
        return None
    if isinstance(ours, list) and isinstance(rebuilt, list):
        for i, (a, b) in enumerate(zip(ours, rebuilt)):
            found = first_difference(a, b, (*at, i), ignore)
            if found is not None:
                return found
        if len(ours) != len(rebuilt):
            return (*at, COUNT), len(ours), len(rebuilt)
        return None
    if type(ours) is not type(rebuilt) or ours != rebuilt:
        return at, ours, rebuilt
    return None


def _first_text_difference(
    ours: dict[str, Any], rebuilt: dict[str, Any]
) -> tuple[Path_, Any, Any] | None:
    """The first `TEXTS` field where two reaches differ that are equal everywhere else (so their
    groups are lists of dicts of the same lengths): only those fields are read, not the reach
    again."""
    for group, key in sorted(TEXTS):
        for i, (a, b) in enumerate(zip(ours.get(group, []), rebuilt.get(group, []), strict=True)):
            if type(a.get(key)) is not type(b.get(key)) or a.get(key) != b.get(key):
                return (group, i, key), a.get(key, _MISSING), b.get(key, _MISSING)
    return None


class _Missing:
    def __repr__(self) -> str:
        return "absent"


_MISSING = _Missing()


def describe(difference: tuple[Path_, Any, Any], reach: Any) -> str:
    """A difference in words: the entry (reading, head, MLP part, embedded input; named as in
    `reach`, the rebuilt one) by its layer and variable, the field within it, and both values."""
    at, ours, rebuilt = difference
    counted = bool(at) and at[-1] is COUNT
    entry, rest = _entry(at[:-1] if counted else at, reach)
    field = ".".join(str(k) if isinstance(k, str) else f"[{k}]" for k in rest).replace(".[", "[")
    where = entry if not field else f"{entry}, {field}"
    if counted:
        return f"{where} has {ours} entries in the file, {rebuilt} rebuilt"
    return f"{where} is {_short(ours)} in the file, {_short(rebuilt)} rebuilt"


def _entry(at: Path_, reach: Any) -> tuple[str, Path_]:
    """The reach entry `at` starts in, named for people, and the path within it."""
    if len(at) < 2 or not isinstance(at[1], int) or not isinstance(reach, dict):
        return "the reach's " + (str(at[0]) if at else "whole record"), at[1:]
    group, index, rest = str(at[0]), at[1], at[2:]
    items = reach.get(group)
    item = items[index] if isinstance(items, list) and index < len(items) else None
    item = item if isinstance(item, dict) else {}
    name = item.get("name")
    if group == "readings":
        return f"reading `{name}`", rest
    if group == "heads":
        return f"layer {item.get('layer')} head {item.get('head')} (`{name}`)", rest
    if group == "mlps":
        return f"layer {item.get('layer')} mlp (`{name}`)", rest
    if group == "inputs":
        readings = reach.get("readings")
        r = item.get("reading")
        label = (
            readings[r].get("name")
            if isinstance(readings, list)
            and isinstance(r, int)
            and 0 <= r < len(readings)
            and isinstance(readings[r], dict)
            else r
        )
        return f"the embedding's values of reading `{label}`", rest
    return f"the reach's {group}[{index}]", rest


def _short(value: Any) -> str:
    text = repr(value) if value is _MISSING else json.dumps(value, ensure_ascii=False)
    # (by columns, between graphemes: a token may be `日` or `👨‍👩‍👧`)
    return clip(text, CLIP, "...")


__all__ = [
    "Given",
    "Rebuild",
    "compile_options",
    "first_difference",
    "not_rebuilt",
    "rebuild_reach",
]
