"""A certificate that failed, as located diagnostics: what `compile_sop` raises for a model it
cannot prove (each failed decision at the s-op that made it, with its margin and bound), or for a
proved model whose file could not hold the certificate's record (`header_refusal`); and the notes
on the other builds tried (`also_tried`, `why_not_proved`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from compiler.certificate import Check
from compiler.certify import Certificate
from compiler.graph import Graph
from compiler.grid import MAX_OUTPUT_VALUES
from compiler.mean_sums import mean_sum_hint
from compiler.model import MAX_HEADER_BYTES, CompiledModel
from compiler.noisy_sides import noisy_sides
from compiler.refusal_causes import (
    CLOSE_FRACTION,
    CLOSE_VALUES_HINT,
    close_values,
    graph_texts,
    through_select,
)
from compiler.rounded_zeros import rounded_zero
from rasp.errors import CompileError, Diagnostic, Span
from rasp.named_text import MessageNames, stem
from rasp.wording import with_article

# failed decisions a refusal lists one by one (those of the first sublayer that fails)
MAX_REFUSALS = 6


def refusals(
    certificate: Certificate,
    graph: Graph,
    *,
    one_hot: str | None = None,
    unlisted: bool = False,
    reach: Mapping[str, Any] | None = None,
    largest: float | None = None,
) -> list[Diagnostic]:
    """One located diagnostic per failed block of the first sublayer that fails (at most
    MAX_REFUSALS): the s-op's span, the sublayer, margin and bound; later failures, which the first
    ones' errors may cause, are counted in one closing line. `one_hot`: why a one-hot output, tried
    for a failed snap, did not do either; `unlisted`: the output is a float with too many values
    to list, so its snap is the promise of 1e-6 (`certify`), not a gap between listed values.
    `reach`: the model's (its metadata's), where an MLP's reachable points say which two values a
    failed step had to tell apart (compiler.refusal_causes). `largest`: the largest magnitude among
    the output's listed values, where it lists numbers: a failed snap between values float32 tells
    apart (CLOSE_FRACTION) is hinted as piled-up error, not as values too close."""
    spans = _spans(graph)
    nodes = {node.name: node for node in graph.nodes}
    problems = [
        Diagnostic(f"the certifier could not check the model: {reason}", graph.output.span)
        for reason in certificate.errors
    ]
    failures = certificate.failures()
    # a denominator 0 up to float64 rounding makes the failures: said first, at the division
    zero = rounded_zero(graph, reach) if failures else None
    if zero is not None:
        problems.append(zero)
    # the walk's order: a decision's error bound includes every error of the sublayers before it
    shown = (
        [c for c in failures if c.sublayer == failures[0].sublayer][:MAX_REFUSALS]
        if failures
        else []
    )
    later = failures[len(shown) :]
    for check in shown:
        first = stem(check.block.split(", ")[0])
        span = spans.get(first, graph.output.span)
        # each label a def's call made explained where the message first names it: the block's,
        # then its state's (`(at query (_f_map_2=1.5); _f_map_2: in f, called at ...)`)
        names = message_names(graph)
        node = nodes.get(first)
        # the program's own words: a select compiled through a bool (compiler.constant_sides) is
        # quoted as written; a generated label beside its own text needs no more
        op = check.op
        select = None if node is None else through_select(node)
        if node is not None and (select is not None or (not node.named and node.text == op)):
            names.said(first)
        block = names.block(check.block)
        if select is not None and node is not None:
            op, block = (
                select,
                (
                    f"{block}: the bool '{node.text}' it is computed through, as one of its sides "
                    "holds one value at every position"
                ),
            )
        # (a generated label of its state as program text where short: `query (round(v2)=0)`)
        at = names.inline(check.where) + names.told_in(check.where)
        close = close_values(check, reach)
        if check.margin == -math.inf:  # not checked at all (too many states)
            what = f"cannot be certified: {at}"
        elif check.kind == "snap" and unlisted:
            what = (
                f"the float it gives may be off by up to {check.bound:.3g}, more than the "
                f"{check.margin:.3g} promised where its values are too many to list "
                f"(at {at})"
            )
        elif check.kind == "range":  # no decision: a value past float32's range (certify_walk)
            what = (
                f"its float32 error bound reaches {check.bound:.3g}, past float32's range "
                f"({check.margin:.3g} allowed, at {check.where})"
            )
        else:
            article = "an" if check.kind[0] in "aeiou" else "a"
            what = ("" if close is None else f"{close}: ") + (
                f"{article} {check.kind} decision has margin {check.margin:.3g} but float32 error "
                f"up to {check.bound:.3g} (at {at})"
            )
        if check.kind == "snap" and unlisted:
            hint = (
                f"a model snaps its output to a list of at most {MAX_OUTPUT_VALUES:,} values; "
                "beyond that it gives the float itself"
                + (f" ({one_hot})" if one_hot else "")
                + ": use a smaller maximum length, or round the values it gives "
                "(docs/compiler.md, 'The certificate')"
            )
        elif check.kind == "snap" and (noise := _noisy_output(certificate, check, graph)):
            # an output mean whose head reads keys an MLP computed from means: the scores' error
            # spreads its weights (not values too close: `aggregate(select(length, v, >), 0, 1)`)
            hint = _noisy_count_hint(graph, check.block, noise, names)
        elif (
            check.kind == "snap" and largest is not None and check.margin > CLOSE_FRACTION * largest
        ):
            # values float32 tells apart (1 apart, below 100): the error piled up before the
            # output, through the steps and means that compute it (defs fuzz seed 2156627)
            hint = (
                "its values are far enough apart for float32; the error is what the blocks that "
                "compute it pile up (each step's and mean's error, times the weights that read "
                "it"
                # (why the one-hot output tried for it did not do, as the other snaps say it)
                + (f"; {one_hot}" if one_hot else "")
                + "): use a smaller maximum length, or compute it from s-ops with fewer values "
                "(docs/compiler.md, 'The certificate')"
            )
        elif check.kind == "snap":
            # the output's values are closer together than its float32 error (why, where it
            # adds two means: compiler.mean_sums)
            why = mean_sum_hint(graph)
            hint = (
                "its values lie closer together than float32 resolves"
                + (f" ({one_hot})" if one_hot else "")
                + (f"; {why}" if why else "")
                + ": use a smaller maximum length, or round the values it gives "
                "(docs/compiler.md, 'The certificate')"
            )
        elif (noisy := _noisy_count(certificate, check, graph)) is not None:
            # the count's head reads keys an MLP computed: their error moves the scores, which
            # spreads the weights that 1/(w+1) is made of (docs/compiler.md, selector_width)
            hint = _noisy_count_hint(graph, noisy[1], noisy[0], names)
        elif close is not None:
            hint = CLOSE_VALUES_HINT
        elif check.sublayer == "decoder":
            # an argmax over the output's one-hot: the error is what the blocks before left there
            hint = (
                "the error is what the blocks that compute it leave in its dimensions: use a "
                "smaller maximum length, or compute it from s-ops with fewer values "
                "(docs/compiler.md, 'The certificate')"
            )
        else:
            # (RASP has no annotations: "make it categorical" only spoke to tracr programs)
            hint = (
                "use a smaller maximum length, or compute it from s-ops with fewer values (round "
                "them, or count instead of averaging; in a tracr program, rasp.categorical ones) "
                "(docs/compiler.md, 'The certificate')"
            )
        # the decoder is the unembedding of the output, whatever the output computes
        where = (
            f"the output '{block}' (decoder)"
            if check.sublayer == "decoder"
            else f"'{op}' ({check.sublayer}, {block})"
        )
        problems.append(Diagnostic(f"{where}: {what}", span, hint))
    if later:
        sublayers = list(dict.fromkeys(c.sublayer for c in later))
        problems.append(
            Diagnostic(
                f"{len(later):,} more decision{'s' if len(later) > 1 else ''} "
                f"fail{'' if len(later) > 1 else 's'} after these, in {len(sublayers)} "
                f"sublayer{'s' if len(sublayers) > 1 else ''} from {sublayers[0]} on; the errors "
                "above reach them, so the first ones are the ones to fix",
                None,
                "compile_sop(..., require_certificate=False) returns the model with its whole "
                "certificate, every failed decision listed",
            )
        )
    return problems


def message_names(graph: Graph) -> MessageNames:
    """The labels of one message about `graph`'s model, each a `def`'s call made or named
    explained where the message first names it (`IRNode.about`, rasp.named_text), and each
    generated one by what it computes (compiler.refusal_causes.graph_texts)."""
    by_name = {node.name: node for node in graph.nodes}
    return MessageNames(
        lambda name: by_name[name].about if name in by_name else None, graph_texts(graph)
    )


def _noisy_count(certificate: Certificate, check: Check, graph: Graph) -> tuple[float, str] | None:
    """The score error of the width head whose 1/(w+1) the failed relu `check` decodes (a step
    MLP over `<name>.frac`), or whose 1/(w+1) passed float32's range (a range `check`), where that
    head's scores carry error; else None. A term of a disjunction's width (`<name>.part<k>`,
    by inclusion-exclusion) decodes `<name>.frac<k>`, its own head's. Also a relu that reads a
    mean whose select reads means (noisy_sides), its head's scores in error. With the block
    whose head it is."""
    width, term = _width_term(check.block)
    frac = f"{width}.frac{term}" if term else f"{check.block}.frac"
    decodes = check.kind == "relu" and f"{frac}=" in check.where
    if decodes or check.kind == "range" and f"'{frac}'" in check.where:
        noise = _head_noise(certificate, check.block)
        return None if noise is None else (noise, check.block)
    if check.kind != "relu":
        return None
    # a mean read at this point (`at (m=1)`, or its own decoding `at (_aggregate_2=1)`)
    for name in re.findall(r"[(,] ?([^\s=(),]+)=", check.where):
        sides = noisy_sides(graph, name)
        if sides is not None and sides.mean and (noise := _head_noise(certificate, name)):
            return noise, name
    return None


def _head_noise(certificate: Certificate, block: str) -> float | None:
    """The largest score error of the head `block` (None where its scores carry none)."""
    noise = max(
        (
            c.max_bound
            for c in certificate.checks
            if c.kind == "softmax" and c.block == block and c.sublayer.endswith("attn")
        ),
        default=0.0,
    )
    return noise if noise > 0 else None


def _noisy_output(certificate: Certificate, check: Check, graph: Graph) -> float | None:
    """The score error of the output's head, where the output is a mean whose select reads means
    (noisy_sides) and the failed `check` is its snap; else None."""
    sides = noisy_sides(graph, check.block)
    if sides is None or not sides.mean:
        return None
    return _head_noise(certificate, check.block)


def _width_term(block: str) -> tuple[str, str]:
    """A width's block name split into the width's name and its term's number ("" for none): a
    disjunction's width is one head and step MLP per term (`res.part1`)."""
    width, sep, term = block.rpartition(".part")
    return (width, term) if sep and term.isdigit() else (block, "")


def _noisy_count_hint(graph: Graph, block: str, noise: float, names: MessageNames) -> str:
    """Why the count's 1/(w+1) errs, naming the s-ops its select reads from means where the graph
    shows them, and the one mean of votes where a side is a difference of two (noisy_sides). A
    term of a disjunction's width (fuzz63: mixed 2041068) is named as such."""
    count, term = _width_term(block)
    sides = noisy_sides(graph, count)
    if sides is None:
        reads = (
            "its select compares s-ops that blocks compute with error, such as a comparison of "
            "a mean"
        )
    else:
        reads = (
            f"its select reads {_quoted(sides.read, names)}, computed from the "
            f"mean{'s' if len(sides.means) > 1 else ''} {_quoted(sides.means, names)}"
        )
    what = f"term {term} of the count {names.quoted(count)}" if term else names.quoted(count)
    written, moved = (
        "a count decoded from the 1/(w+1)",
        "1/(w+1) by more than the steps between widths",
    )
    if sides is not None and sides.mean:  # its keys' weights spread as a count's do
        written, moved = (
            "a mean decoded from what",
            "the mean by more than the gaps between its values",
        )
    hint = (
        f"{what} is {written} its head writes, and that head's scores carry float32 error up to "
        f"{noise:.3g} ({reads}), which moves {moved} at this length allow: use a smaller maximum "
        "length, or select on s-ops read exactly (tokens, indices, or maps of them)"
    )
    if sides is not None and sides.vote is not None:
        name, vote = sides.vote
        # one mean is one dimension, which a step compares exactly (the integer band)
        hint += (
            f"; {names.quoted(name)}, a difference of two means over one selector, is read "
            f"exactly when written as one mean over that selector (of {vote} per key)"
        )
    return hint + " (docs/compiler.md, 'The certificate')"


def _quoted(labels: Sequence[str], names: MessageNames) -> str:
    quoted = [names.quoted(label) for label in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _spans(graph: Graph) -> dict[str, Span | None]:
    """Where each node is in the source, by name: its own span, or for a node a rewrite made (the
    digits of an order) the span of the first node reading it that has one, else the output's."""
    users = graph.consumers()
    found: dict[int, Span | None] = {}
    for node in reversed(graph.nodes):  # a node's users come after it: already located
        span = node.span or next((found[u] for u in users.get(node.index, ()) if u in found), None)
        found[node.index] = span or graph.output.span
    return {graph[i].name: span for i, span in found.items()}


def header_refusal(model: CompiledModel, graph: Graph, max_len: int) -> Diagnostic | None:
    """Why the model cannot be written, where its safetensors header would be over the 100 MB
    safetensors reads and writes: the certifier's record of what it can see (`reach`) lists every
    value of its numerical readings and every reachable point of its MLPs, which grow with N^2."""
    size = model.header_bytes()
    if size <= MAX_HEADER_BYTES:
        return None
    reach = model.metadata.get("reach", {})
    parts = [
        (len(json.dumps(entry)), kind, str(entry.get("name", "?")))
        for kind, key in (("reading", "readings"), ("MLP", "mlps"))
        for entry in reach.get(key, [])
    ]
    largest = max(parts, default=None)
    where = (
        ""
        if largest is None
        else (
            f"; the largest part is the {largest[1]} "
            f"{message_names(graph).quoted(largest[2])} ({_mb(largest[0])})"
        )
    )
    return Diagnostic(
        f"at max-len {max_len:,} the model's file would need {with_article(_mb(size))} header, "
        "over "
        f"the {_mb(MAX_HEADER_BYTES)} safetensors writes: the certificate's record of "
        f"every value the model reads and every point its MLPs meet{where}",
        graph.output.span,
        "use a smaller maximum length",
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 10_000_000 else f"{size / 1e6:.2g} MB"


def also_tried(tried: Sequence[tuple[str, str]], refused: str | None = None) -> list[Diagnostic]:
    """One note per other build tried for a refused program, and why it was not kept; the builds
    refused for the refusal's own reason (`refused`, its message, at whichever place) are named
    together in one last note where another build is noted (a refusal every build repeats, a
    causal check's, a value analysis', stands alone), and two builds tried alike and failed alike
    give one note."""
    notes, same = [], []
    for how, why in dict.fromkeys(tried):
        if refused is not None and (why == refused or why.startswith(f"{refused} (at ")):
            same.append(how)
        else:
            notes.append(Diagnostic(f"also tried {how}: {why}", severity="note"))
    if same and notes:  # (where every build repeats the refusal, it stands alone, as it is)
        builds = ", ".join(dict.fromkeys(same))
        notes.append(
            Diagnostic(f"also tried {builds}: refused for the same reason", severity="note")
        )
    return notes


def refused_why(err: CompileError) -> str:
    """Why a build was refused while planning, for its note: its first message, with the line and
    column it is located at where it has a place (`(at 3:7)`)."""
    first = err.diagnostics[0]
    if first.span is None:
        return first.message
    return f"{first.message} (at {first.span.line}:{first.span.col})"


def why_not_proved(certificate: Certificate, graph: Graph | None = None) -> str:
    """Why a certificate does not prove its model: its first failed decision, or (where the
    certifier could not read the model, and so has none) its first error. `graph`: the model's,
    whose labels a `def`'s call made are explained as the refusal's own are (`message_names`)."""
    failures = certificate.failures()
    if not failures:
        return f"the certifier could not check it ({certificate.errors[0]})"
    first = failures[0]
    block = first.block if graph is None else message_names(graph).block(first.block)
    where = "the output" if first.sublayer == "decoder" else f"{first.sublayer} ({block})"
    if first.margin == -math.inf:
        return f"{where} could not be certified ({first.where})"
    return (
        f"{where} has {with_article(first.kind)} margin of {first.margin:.3g} against a float32 "
        f"error of {first.bound:.3g}"
    )
