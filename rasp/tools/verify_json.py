"""The `--json` rendering of verify's report (`rasp verify --json`): one JSON object, the same
facts as the text (`rasp.tools.verify_text`) in fields docs/inspect.md lists."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rasp.errors import RaspError
from rasp.tools.error_json import verify_failure_json
from rasp.tools.residual_types import NoValue
from rasp.tools.residuals import Unclear

if TYPE_CHECKING:
    from rasp.tools.order_report import OrderReport, RunConfig
    from rasp.tools.verify import VerifyReport


def report_json(report: VerifyReport) -> dict[str, Any]:
    """The `--json` report: one JSON object (NaN and infinities become strings)."""
    return _finite(_report_dict(report))


def refusal_json(err: RaspError, vocab: Sequence[Any], max_len: int) -> dict[str, Any]:
    """The `--json` report of a program the compiler refuses: nothing was checked, and why, one
    entry per diagnostic (its `file:line:col` or null, its hint with the CLI's option names); the
    object of any other verify that failed before its report (`verify_failure_json`)."""
    return verify_failure_json(err, vocab, max_len)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _report_dict(report: VerifyReport) -> dict[str, Any]:
    plan, first, div = report.plan, report.first_failure, report.divergence
    return {
        "ok": report.ok,
        "checked": report.checked,
        "failures": report.failures,
        "skipped": report.skipped,
        "type_only": report.type_only,
        "skipped_example": None
        if report.skipped_example is None
        else {
            "input": list(report.skipped_example[0]),
            "error": report.skipped_example[1],
            "location": _location(report),
        },
        "exhaustive": {
            "max_len": plan.exhaustive_len,
            "inputs": plan.exhaustive_count,
            "asked_len": plan.asked_len,
            "extended_from": plan.extended_from,
        },
        "sampled": {
            "inputs": plan.sample_count,
            "asked": plan.samples,
            "lengths": plan.sampled_lengths and list(plan.sampled_lengths),
            "seed": plan.seed,
            "uniform": plan.drawn.uniform,
            "guided": plan.drawn.guided,
            "facts": plan.drawn.facts,
            "facts_uniform": plan.drawn.facts_uniform,
        },
        "lengths": sorted(report.lengths),
        "vocab": list(plan.vocab),
        "max_len": plan.max_len,
        "narrowed_from": None
        if plan.narrowed_from is None
        else {"max_len": plan.narrowed_from[0], "tokens": plan.narrowed_from[1]},
        "first_failure": None
        if first is None
        else {
            "input": list(first.tokens),
            "position": first.position,
            "model": list(first.model),
            "interpreter": list(first.interpreter),
        },
        "divergence": None
        if div is None
        else {
            "variable": div.variable,
            "shown": div.shown or div.variable,
            "operation": div.operation,
            "layer": div.layer,
            "sublayer": div.sublayer,
            "position": div.position,
            "model": _residual_value(div.model),
            "interpreter": div.interpreter,
            "unchecked_in_parts": list(div.in_parts),
            "verified": div.verified,
            "held_at": div.held_at,
            "output_checked": div.output_checked if div.sublayer == "output" else None,
            "started_at": div.started_at,
            "padded_to": div.padded_to,
            "stray": None
            if div.stray is None
            else {
                "dim": div.stray.label,
                "value": div.stray.value,
                "expected": div.stray.expected,
                "written_at": div.stray.written_at,
            },
        },
        "orders": None if report.orders is None else _orders_dict(report.orders),
        "certificate": None
        if report.certificate_ok is None and not report.certificate_lines
        else {
            "ok": report.certificate_ok,
            "lines": list(report.certificate_lines),
            # how the reach was rebuilt from the program (ok null: not rebuilt, trusted); null for
            # a model compiled here
            "reach": None
            if report.rebuild is None
            else {"ok": report.rebuild.ok, "line": report.rebuild.line},
        },
    }


def _orders_dict(orders: OrderReport) -> dict[str, Any]:
    bad, margin = orders.first_mismatch, orders.margin
    return {
        "ok": orders.ok,
        "inputs": orders.inputs,
        "first": orders.first,
        "sampled": orders.sampled,
        "seed": orders.seed,
        "runs": [_config_dict(c) for c in orders.configs],  # runs[0] is the reference
        "mismatches": orders.mismatches,
        "runs_disagreeing": orders.runs_disagreeing,
        "inputs_disagreeing": orders.inputs_disagreeing,
        "uninterpreted": orders.uninterpreted,
        "first_mismatch": None
        if bad is None
        else {
            "run": _config_dict(bad.config),
            "input": list(bad.tokens),
            "position": bad.position,
            "model": bad.got,
            "reference": bad.reference,
            "interpreter": bad.interpreter,
        },
        "margin": None
        if margin is None
        else {
            "value": margin.value,
            "measure": margin.kind,
            "run": _config_dict(margin.config),
            "input": list(margin.tokens),
            "position": margin.position,
        },
    }


def _residual_value(value: Any) -> Any:
    """A decoded residual value; a one-hot holding no single value as its non-zero columns."""
    if isinstance(value, Unclear):
        return {"columns": dict(value.columns)}
    return None if isinstance(value, NoValue) else value


def _config_dict(config: RunConfig) -> dict[str, Any]:
    return {
        "device": config.device,
        "dtype": config.dtype,
        "threads": config.threads,
        "batch_size": config.batch_size,
    }


def _location(report: VerifyReport) -> str | None:
    """Where the first skipped input's error is raised in the program (`file:line:col`)."""
    err = report.skipped_error
    return None if err is None or err.span is None else err.span.location()
