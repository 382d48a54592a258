"""The text rendering of verify's report (`rasp verify` and the REPL's `:verify`; the JSON one is
`rasp.tools.verify_json`'s).

Success goes to stdout: what was compared, what the evaluation-order sweep covered, the smallest
decoder margin, then the certificate lines. Failure goes to stderr: what disagreed first (an input
the model gets wrong, or two evaluation orders that decode differently), then the same coverage
lines. Every line is deterministic for a given program, plan and torch build (the sweep's thread
counts and batch sizes are fixed), so golden transcripts can compare them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rasp.residual_labels import text_of
from rasp.seqvalues import value_repr
from rasp.text_width import printable_with
from rasp.tools.residual_types import NoValue
from rasp.tools.residuals import Unclear
from rasp.tracr.boxes import marked

if TYPE_CHECKING:
    from rasp.tools.order_report import OrderReport, RunConfig
    from rasp.tools.residuals import Stray
    from rasp.tools.verify import Divergence, InputPlan, VerifyReport


def show_tokens(tokens: Sequence[Any]) -> str:
    """`"abc"` when every token is one character that reads as itself between double quotes
    (not `"`, which made `""a"` of ["\\"", "a"], nor a line break or other control), else the
    JSON list, its letters as they are (`["日本", "語"]`, not `["\\u65e5\\u672c", ...]`) but
    a control or format character as its escape (`"\\u202e"`: a token cannot reorder the line),
    but for the joiner of an emoji sequence (`"👨‍👩‍👧"`: `printable_with`)."""
    if tokens and all(
        isinstance(t, str) and len(t) == 1 and t != '"' and t.isprintable() for t in tokens
    ):
        return '"' + "".join(tokens) + '"'
    text = json.dumps(list(tokens), ensure_ascii=False)
    if text.isascii():  # (JSON escapes ASCII's controls itself, as before)
        return text
    return printable_with(text, lambda c: c if c.isascii() else json.dumps(c)[1:-1])


def show_values(values: Sequence[Any], tuples: bool = False) -> str:
    return "[" + ", ".join(_value_text(v, tuples) for v in values) + "]"


def format_success(report: VerifyReport, what: str) -> str:
    """What was covered, for a passing report (stdout)."""
    lines = [
        f"verified {what}: model == interpreter on {report.checked:,} inputs",
        *_plan_lines(report),
    ]
    lines.append(f"  skipped:    {_skipped_text(report)}")
    lines += _type_lines(report)
    return "\n".join(lines + _tail_lines(report))


def _type_lines(report: VerifyReport) -> list[str]:
    """Inputs whose values agree where a whole number is the other type (none: no line)."""
    example = report.type_example
    if example is None:
        return []
    at = example.position
    return [
        f"  types:      on {report.type_only:,} inputs a whole number is an int where the "
        "interpreter gives a float, or the reverse (values agree), e.g. "
        f"{show_tokens(example.tokens)} at position {at}: model {example.model[at]!r}, "
        f"interpreter {example.interpreter[at]!r} "
        "(a type the model's per-position flags do not fix; docs/format.md)"
    ]


def format_failure(report: VerifyReport, what: str) -> str:
    """What went wrong first, for a failing report (stderr)."""
    first, orders = report.first_failure, report.orders
    if first is not None:
        lines = [
            (
                f"error: verification failed for {what}: model and interpreter disagree on "
                f"{report.failures:,} of {report.checked:,} inputs"
            ),
            (
                f"  first failing input: {show_tokens(first.tokens)} (length {len(first.tokens)}), "
                f"first wrong position {first.position}"
            ),
            f"    interpreter: {show_values(first.interpreter, report.tuples)}",
            f"    model:       {show_values(first.model, report.tuples)}",
            *_divergence_lines(report),
        ]
    elif report.nothing_compared:
        lines = _nothing_compared_lines(report, what)
    elif orders is not None and not orders.ok:
        lines = [
            (
                f"error: verification failed for {what}: the model decodes differently under other "
                f"evaluation orders ({_disagreement_count(orders)})"
            ),
            *_mismatch_lines(orders, report.tuples),
        ]
    elif report.certificate_ok is False:
        lines = [f"error: verification failed for {what}: the certificate does not hold"]
    else:  # a passing report
        return format_success(report, what)
    if report.nothing_compared:
        lines += _plan_lines(report)
    elif first is None:
        lines += [
            f"  compared:   model == interpreter on {report.checked:,} inputs",
            *_plan_lines(report),
        ]
    if not report.nothing_compared:
        lines.append(f"  skipped:    {_skipped_text(report)}")
    return "\n".join(lines + _tail_lines(report))


def _nothing_compared_lines(report: VerifyReport, what: str) -> list[str]:
    """The interpreter failed on every input: no output to compare the model's with."""
    count = report.skipped
    every = f"every one of the {count:,} inputs" if count != 1 else "the only input"
    lines = [
        f"error: verification failed for {what}: the interpreter fails on {every}, so the "
        "model was compared on none"
    ]
    if report.skipped_example is None:
        return lines
    tokens, message = report.skipped_example
    err = report.skipped_error
    first = f"  first failing input: {show_tokens(tokens)} (length {len(tokens)})"
    if err is None or err.span is None:
        lines.append(f"{first}: {message}")
    else:
        lines.append(first)
        lines += ["    " + line for line in err.render().splitlines()]
    lines.append(
        "  hint:       verify an s-op that gives a value on some input of this vocabulary and "
        "these lengths"
    )
    return lines


def _plan_lines(report: VerifyReport) -> list[str]:
    plan = report.plan
    lines = []
    if plan.exhaustive_len:
        capped = (
            ""
            if plan.asked_len is None
            else f"; 1..{plan.asked_len:,} was asked for, capped at the maximum length {plan.max_len}"
        )
        lines.append(
            f"  exhaustive: every input of length 1..{plan.exhaustive_len} over "
            f"{len(plan.vocab)} {'token' if len(plan.vocab) == 1 else 'tokens'} "
            f"({plan.exhaustive_count:,} {'input' if plan.exhaustive_count == 1 else 'inputs'}"
            f"{capped})"
        )
    if plan.sampled_lengths is not None:
        lo, hi = plan.sampled_lengths
        of_length = f"length {hi}" if lo == hi else f"length {lo}..{hi}"
        drawn = plan.drawn
        count = f"{plan.sample_count:,}"
        if drawn.facts is None:
            lines.append(f"  sampled:    {count} random inputs of {of_length} (seed {plan.seed})")
        else:
            lines.append(
                f"  sampled:    {count} inputs of {of_length} (seed "
                f"{plan.seed}): {drawn.uniform:,} uniformly random, {drawn.guided:,} guided"
            )
            lines.append(
                f"  coverage:   the samples reach {drawn.facts:,} facts about the variables' "
                f"values, the uniform half alone {drawn.facts_uniform:,}"
            )
        lines += _fewer_lines(plan)
    elif plan.exhaustive_len >= plan.max_len:
        up_to = (
            f"up to the maximum length {plan.max_len}"
            if plan.narrowed_from is None
            else f"up to length {plan.max_len}"
        )
        lines.append(f"  complete:   every input {up_to} was checked" + _extended_text(plan))
    else:  # no samples: the longer inputs were never run
        lengths = (
            f"length {plan.max_len}"
            if plan.exhaustive_len + 1 == plan.max_len
            else f"lengths {plan.exhaustive_len + 1}..{plan.max_len}"
        )
        lines.append(f"  unchecked:  no input of {lengths} was checked (no samples)")
    return lines + _narrowed_lines(plan)


def _narrowed_lines(plan: InputPlan) -> list[str]:
    """With --model and a smaller --max-len or fewer --vocab tokens: what the model accepts that
    the plan left out (a "complete" check is complete for the narrowed inputs only)."""
    if plan.narrowed_from is None:
        return []
    max_len, tokens = plan.narrowed_from
    left = []
    if max_len > plan.max_len:
        lo = plan.max_len + 1
        left.append(f"length {lo}" if lo == max_len else f"lengths {lo}..{max_len}")
    if tokens > len(plan.vocab):
        unused = tokens - len(plan.vocab)
        left.append(f"{unused:,} more {'token' if unused == 1 else 'tokens'} (of its {tokens:,})")
    if not left:
        return []
    return [f"  narrowed:   the model also accepts {' and '.join(left)}, not checked here"]


def _fewer_lines(plan: InputPlan) -> list[str]:
    """Where fewer samples were drawn than asked, why (they are distinct inputs, and the lengths
    hold barely more than asked: rasp.tools.guided_samples); else no line."""
    if plan.sample_count == plan.samples:
        return []
    return [
        f"  distinct:   only {plan.sample_count:,} of the {plan.samples:,} samples asked: samples "
        "are distinct inputs, and further draws found only ones already drawn"
    ]


def _extended_text(plan: InputPlan) -> str:
    """Why every input was checked where the samples asked would have covered longer lengths."""
    if plan.extended_from is None:
        return ""
    lo, hi = plan.extended_from + 1, plan.max_len
    lengths = f"length {hi} holds" if lo == hi else f"lengths {lo}..{hi} hold"
    held = plan.extended_count
    return (
        f" ({lengths} {held:,} {'input' if held == 1 else 'inputs'}, no more than the "
        f"{plan.samples:,} samples asked, so each was checked once instead of sampled)"
    )


def _divergence_lines(report: VerifyReport) -> list[str]:
    div = report.divergence
    if div is None:
        return ["  the residual stream could not be decoded to locate the divergence"]
    unread = []
    if div.in_parts:
        names = ", ".join(f"`{name}`" for name in div.in_parts)
        unread = [
            f"    unchecked:   {names}, computed before this point and held only in parts "
            f"(`{div.in_parts[0]}.*`) with no value to compare: the fault may lie there"
        ]
    if div.padded_to is not None:  # (after the lines of the divergence, as `unread` is)
        unread.append(
            f"    padded:      alone the input decodes right; this was found with it padded to "
            f"{div.padded_to} positions, as in a batch beside longer inputs (PAD keys reach it)"
        )
    if div.sublayer == "unembed" and div.verified is not None:
        return [
            (
                f"  every materialised variable agrees; the model's output `{div.variable}` (not "
                f"the `{div.verified}` verified) goes wrong in the unembedding (position "
                f"{div.position}: interpreter {_value_text(div.interpreter, report.tuples)}, "
                f"model {_value_text(div.model, report.tuples)})"
            ),
            *unread,
        ]
    if div.sublayer == "unembed":
        return [
            (
                f"  every materialised variable agrees; the output `{div.variable}` goes wrong in the "
                f"unembedding (position {div.position})"
            ),
            *unread,
        ]
    if div.sublayer == "output":
        return [*_other_output_lines(div), *unread]
    if div.stray is not None:
        return [*_stray_lines(div, div.stray), *unread]
    return [
        f"  first divergence: variable {_variable(div)}"
        + (f" = {div.operation}" if div.operation and div.operation != div.variable else "")
        + f", {div.where}, position {div.position}",
        f"    interpreter: {_value_text(div.interpreter, report.tuples, div.quoted)}",
        "    model:       "
        + (
            _no_value(div)
            if isinstance(div.model, NoValue)
            else _value_text(div.model, report.tuples, div.quoted)
        ),
        *(
            []
            if div.started_at is None
            else [
                f"    begun:       in {div.started_at}, whose output for it (helper dims) is not "
                "decoded: the fault may lie there"
            ]
        ),
        *unread,
    ]


def _variable(div: Divergence) -> str:
    """`name`, and where a `def`'s call named or made it (`y` (in f, called at p.rasp:12:5))."""
    shown = div.shown or div.variable
    return f"`{div.variable}`" + shown.removeprefix(div.variable)


def _stray_lines(div: Divergence, stray: Stray) -> list[str]:
    """A dim written where the model holds a fixed value, with every variable still right."""
    at = "at BOS" if stray.position is None else f"position {stray.position}"
    if stray.written_at is None:
        what = f"the `{stray.label}` dim"
        should = f"{stray.expected:g} " + (
            "at BOS" if stray.position is None else "at every real position"
        )
    else:
        what = (
            f"variable {_variable(div)}"
            + (f" = {div.operation}" if div.operation and div.operation != div.variable else "")
            + " before it is written"
        )
        should = f"0 until {stray.written_at} writes it"
    return [
        f"  first divergence: {what}, {div.where}, {at}",
        f"    expected:    `{stray.label}` = {should}",
        f"    model:       `{stray.label}` = {stray.value:.6g}",
    ]


def _no_value(div: Divergence) -> str:
    """A categorical variable with no column hot, or a vector reading (`NAME.int`, the only
    names with a dot: rasp.tools.residual_parts) whose dimensions hold none of its values."""
    if "." in div.variable:
        return "(no value: its dimensions hold none of its values)"
    return "(no value: every dim is 0)"


def _other_output_lines(div: Divergence) -> list[str]:
    """The model computes another s-op than the one verified (`--name`), and right: no layer is
    at fault, the two s-ops just differ."""
    out, verified = f"`{div.variable}`", f"`{div.verified}`"
    first = (
        f"  no layer is at fault: every materialised variable agrees with the interpreter, and so "
        f"does the model's output {out}; the model computes {out}, not {verified}, and the two "
        f"differ at position {div.position}"
        if div.output_checked
        else f"  no layer is blamed: every materialised variable agrees with the interpreter; the "
        f"model computes {out}, not {verified} ({out} is not an s-op of this program, so the "
        f"output itself was not checked), and the outputs differ at position {div.position}"
    )
    held = (
        f"held in the residual stream {div.held_at}, where it agrees"
        if div.held_at is not None
        else "not held whole in the residual stream, so not checked there"
    )
    return [first, f"    {verified} itself: {held}"]


def _tail_lines(report: VerifyReport) -> list[str]:
    """The sweep's coverage and margin, then the certificate's lines."""
    lines = []
    if (orders := report.orders) is not None:
        runs = len(orders.configs)
        verdict = (
            f"{runs} runs agree with each other and with the interpreter on"
            if orders.ok and not orders.uninterpreted
            else f"{runs} runs agree with each other (the interpreter gives a value for none of "
            "the inputs) on"
            if orders.ok and orders.uninterpreted == orders.inputs
            else f"{runs} runs agree with each other (and with the interpreter on the "
            f"{orders.inputs - orders.uninterpreted:,} it gives a value for) on"
            if orders.ok
            else f"{orders.runs_disagreeing} of {runs} runs disagree (on {orders.inputs_disagreeing:,} "
            f"input{'s' * (orders.inputs_disagreeing != 1)}), sweeping"
        )
        lines.append(f"  orders:     {verdict} {_swept_text(orders)}")
        lines.append(f"              runs: {_configs_text(orders.configs)}")
        lines.append(_margin_line(orders))
    return lines + list(report.certificate_lines)


def _margin_line(orders: OrderReport) -> str:
    """The smallest decoder margin, taken only where the interpreter gives a value (elsewhere the
    model's output is unspecified, and so is its margin)."""
    margin, valued = orders.margin, orders.inputs - orders.uninterpreted
    if margin is None and not valued:
        return (
            "  margin:     none (the interpreter fails on every swept input: no output to measure)"
        )
    if margin is None and orders.one_value:
        return "  margin:     none (the output has one possible value: no decision boundary)"
    if margin is None:
        return "  margin:     none (a float output without listed values has no decision boundary)"
    among = ""
    if orders.uninterpreted:
        among = f" on the {valued:,} inputs the interpreter gives a value for"
    return (
        f"  margin:     {margin.value:.4g} ({margin.kind}), the smallest in any run{among}: input "
        f"{show_tokens(margin.tokens)}, position {margin.position}, {margin.config.describe()}"
    )


def _swept_text(orders: OrderReport) -> str:
    if orders.inputs == orders.of:
        return f"every one of the {orders.of:,} inputs"
    return (
        f"{orders.inputs:,} of the {orders.of:,} inputs (first {orders.first:,}, then "
        f"{orders.sampled:,} sampled with seed {orders.seed})"
    )


def _configs_text(configs: Sequence[RunConfig]) -> str:
    """`cpu x {float32, float64} x {1, 2 threads} x {unbatched, batches of 2, 7 (mixed lengths)}`."""

    def group(values: list[str]) -> str:
        values = list(dict.fromkeys(values))
        return values[0] if len(values) == 1 else "{" + ", ".join(values) + "}"

    threads = [str(c.threads) for c in configs if c.threads is not None]
    sizes = list(dict.fromkeys(c.batch_size for c in configs))
    batched = ", ".join(str(size) for size in sizes if size > 1)
    devices = [c.device for c in configs]
    parts = [group(devices), group([c.dtype for c in configs])]
    if threads:
        word = " CPU thread" if len(set(devices)) > 1 else " thread"
        parts.append(
            group(threads)[:-1] + word + "s}"
            if len(set(threads)) > 1
            else threads[0] + word + "s" * (threads[0] != "1")
        )
    batches = (["unbatched"] if 1 in sizes else []) + (
        [f"batches of {batched} (mixed lengths)"] if batched else []
    )
    parts.append(group(batches))
    return " x ".join(parts)


def _disagreement_count(orders: OrderReport) -> str:
    runs = (
        f"{orders.runs_disagreeing} of {len(orders.configs)} run{'s' * (len(orders.configs) > 1)}"
    )
    return f"{runs}, on {orders.inputs_disagreeing:,} of {orders.inputs:,} inputs"


def _mismatch_lines(orders: OrderReport, tuples: bool) -> list[str]:
    bad = orders.first_mismatch
    if bad is None:
        return []
    reference = orders.configs[0].describe()
    return [
        (
            f"  first disagreement: input {show_tokens(bad.tokens)} (length {len(bad.tokens)}), position "
            f"{bad.position}, in the run {bad.config.describe()}"
        ),
        f"    this run:    {_value_text(bad.got, tuples)}",
        f"    reference:   {_value_text(bad.reference, tuples)} ({reference})",
        "    interpreter: "
        + (
            "(fails on this input)"
            if bad.interpreter is None
            else _value_text(bad.interpreter, tuples)
        ),
    ]


def _skipped_text(report: VerifyReport) -> str:
    if not report.skipped:
        return "none (the interpreter ran on every input)"
    tokens, message = report.skipped_example or ((), "")
    return f"{report.skipped:,} inputs where the interpreter fails, e.g. {show_tokens(tokens)}: {message}"


def _value_text(value: Any, tuples: bool = False, quoted: bool = False) -> str:
    if tuples and marked(value):  # a tracr program's tuple: its repr, as `rasp run` shows it
        return value_repr(value)
    if quoted and isinstance(value, str):  # as the model's label shows it: `"1"` beside `1`
        return text_of(value, quoted)
    if isinstance(value, Unclear):  # a one-hot with a column neither 0 nor 1, or two at 1
        return f"no single value: {value} (a one-hot holds one column at 1, the others at 0)"
    return f"{value:.6g}" if isinstance(value, float) else str(value)
