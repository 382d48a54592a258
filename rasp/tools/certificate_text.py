"""How a model's certificate (compiler.certify, stored in the file's metadata) reads to a person."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rasp.named_text import MessageNames, generated_texts, is_generated
from rasp.text_width import clip, ljust


@dataclass(frozen=True)
class Rebuild:
    """What rebuilding a file's reach from its program found (`rasp.tools.rebuild`): `ok` True
    (equal to the file's), False (it differs, or the program does not compile to a model any
    more: not proved), None (not rebuilt: the proof trusts the file's reach); `line` says which,
    for people."""

    ok: bool | None
    line: str


def _ok(check: dict[str, Any]) -> bool:
    """As `compiler.certificate.Check.ok` judges it: a NaN proves nothing."""
    margin, bound = float(check["margin"]), float(check["bound"])
    if math.isnan(margin) or math.isnan(bound):
        return False
    return margin > bound or (check["kind"] == "relu" and bound == 0)


def _ratio(check: dict[str, Any]) -> float:
    return float(check["ratio"])


def _fmt(x: Any) -> str:
    value = float(x)
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}"


def summary_line(
    certificate: dict[str, Any] | None, about: Callable[[str], str | None] | None = None
) -> str:
    """One line: proved or not, and the weakest decision. `about`: what to say of a residual
    name a `def`'s call named or made (rasp.named_text), where the program is known: its block
    and state's labels are then explained as a refusal's are."""
    if not certificate:
        return "certificate: none (compiled before certificates existed)"
    if certificate.get("errors"):
        return f"certificate: NOT proved: {certificate['errors'][0]}"
    checks = certificate.get("checks", [])
    if not checks:
        return "certificate: no decision to check"
    failed = [c for c in checks if not _ok(c)]
    # a failed decision is the one to show, whatever its ratio (stored ratios of exact decisions,
    # bound 0, read inf even where the margin is negative)
    weakest = min(failed or checks, key=_ratio)
    # a generated label (`_map_1`) by its block's operation, which the certificate records
    names = MessageNames(about or (lambda name: None), generated_texts(_operations(checks)))
    block = names.block(str(weakest["block"]))
    at = str(weakest["where"])
    where = (
        f"{weakest['sublayer']} ({block}), {weakest['kind']} at {names.inline(at)}: "
        f"margin {_fmt(weakest['margin'])} vs float32 error bound {_fmt(weakest['bound'])}"
        + names.told_in(at)
    )
    if failed:
        return (
            # a check is one row of `rasp show`'s table (a block's decisions of one kind)
            f"certificate: NOT proved: {len(failed)} of {len(checks)} checks "
            f"{'finds' if len(failed) == 1 else 'find'} a decision whose margin is not above its "
            f"worst-case float32 error; weakest: {where}"
        )
    if certificate.get("ok") is False:  # the certifier writes ok from the checks: an edited file
        return (
            "certificate: NOT proved: the file's certificate says ok: false, though each decision "
            f"it lists holds (weakest: {where})"
        )
    return (
        f"certificate: every decision proved for any float32 evaluation order "
        f"(weakest margin/bound {_fmt(weakest['ratio'])}: {where})"
    )


def _operations(checks: list[dict[str, Any]]) -> dict[str, str]:
    """Each block's operation by its label, as the checks record them (the decoder's `unembed`
    left out: the block is the output, whose own sublayer's check says what it computes)."""
    return {
        str(c["block"]): str(c["op"])
        for c in checks
        if c.get("sublayer") != "decoder" and c.get("op") and ", " not in str(c["block"])
    }


def unnamed_lines(checks: list[dict[str, Any]]) -> list[str]:
    """A line for each generated label (`_map_1`) a table of `checks` names: what it computes."""
    operations = _operations(checks)
    named = [b for b in dict.fromkeys(str(c["block"]) for c in checks) if is_generated(b)]
    told = [f"{b} = {operations[b]}" for b in named if b in operations]
    if not told:
        return []
    return ["unnamed s-ops (the compiler's labels): " + "; ".join(told)]


def table_lines(certificate: dict[str, Any] | None) -> list[str]:
    """Per block: the sublayer, the variable, the decision kind, smallest margin, its bound, ratio;
    then what each generated label among the blocks computes."""
    if not certificate or not certificate.get("checks"):
        return [summary_line(certificate)]
    lines = [summary_line(certificate), ""]
    lines.append(
        f"{'sublayer':<16}{'block':<24}{'decision':<9}{'margin':>10}{'bound':>11}{'ratio':>10}"
    )
    for c in certificate["checks"]:
        ok = _ok(c)
        block = clip(c["block"], 22)  # by terminal columns: a Python program's names may be CJK
        lines.append(
            f"{c['sublayer']:<16}{ljust(block, 24)}{c['kind']:<9}{_fmt(c['margin']):>10}"
            f"{_fmt(c['bound']):>11}{_fmt(c['ratio']):>10}{'' if ok else '  NOT PROVED'}"
        )
    return lines + unnamed_lines(certificate["checks"])


def recheck_model(
    model: Any,
    observed_margin: float | None = None,
    rebuild: Rebuild | None = None,
    about: Callable[[str], str | None] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Re-certify a loaded model (`transformer.CompiledTransformer`) from its weights and the reach
    its file stores, trusting none of the stored numbers: the report lines and whether it holds.
    `rebuild`: what rebuilding that reach from the file's program found (`rasp.tools.rebuild`;
    None for a model compiled here): a reach that differs is not proved, whatever the weights.
    `about`: as `summary_line`'s."""
    from compiler.certify import recheck  # lazy: the compiler is only needed here

    tensors = {
        name: value.detach().float().cpu().numpy()
        for name, value in model.model.state_dict().items()
    }
    raw = model.meta.raw
    fresh = recheck(tensors, raw).to_json()
    rechecked = summary_line(fresh, about).removeprefix("certificate: ")
    if rebuild is not None and rebuild.ok is False:
        # the weights may well prove the file's reach: it is not the program's
        lines = [
            f"  certificate: {rebuild.line}",
            f"  weights:     against the file's own reach: {rechecked}",
        ]
    else:
        lines = [f"  certificate: {rechecked} (re-checked from the weights)"]
        if rebuild is not None:
            lines.append(f"  reach:       {rebuild.line}")
    stored = raw.get("certificate")
    if stored is not None and bool(stored.get("ok")) != bool(fresh.get("ok")):
        lines.append(
            f"  the file's own certificate says {'proved' if stored.get('ok') else 'not proved'}: "
            "the file's weights or metadata do not match it"  # an edited mask or output too
        )
    decoder = [c for c in fresh.get("checks", []) if c["sublayer"] == "decoder"]
    if decoder:
        d = decoder[0]
        certified = float(d["margin"]) - float(d["bound"])
        seen = "" if observed_margin is None else f"; smallest observed {observed_margin:.4g}"
        lines.append(
            f"  decoder:     certified margin >= {certified:.4g} (exact {_fmt(d['margin'])} "
            f"- float32 error {_fmt(d['bound'])}){seen}"
        )
    return tuple(lines), bool(fresh.get("ok")) and (rebuild is None or rebuild.ok is not False)
