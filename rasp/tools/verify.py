"""`rasp verify`: does a compiled model compute what the interpreter computes?

`plan_inputs` lists the inputs to check: every input up to length K (exhaustive), then S distinct
seeded inputs of lengths K+1..N: uniformly random, or (given the program) half so and half guided to
values of the program's variables that the random ones miss (`rasp.tools.guided_samples`). Where
lengths K+1..N hold no more than S inputs, every one of them is checked instead. `verify` runs
the model and the interpreter on them in batches and compares the outputs position by position. On
the first failing input `diagnose` (`rasp.tools.diagnosis`) reads the residual stream after the embedding and after every
attention and MLP sublayer (`run_with_cache`), decodes every program variable the model materialises
there (residual labels `name:value` / `name`), and reports the FIRST variable, layer and position
where the model disagrees with the interpreter; `decode_checkpoints` is that decoding for every
checkpoint at once (the REPL's `:residual` prints it; it lives in `rasp.tools.residuals`).

The model is anything with the runtime's interface (`transformer.CompiledTransformer`): `.meta`,
`.run(inputs)`, `.encode(inputs) -> (ids, lengths)` and `.run_with_cache(ids) -> (logits, cache)` with
TransformerLens hook names. This module imports neither torch nor the compiler; the report's text and
JSON renderings are `rasp.tools.verify_text` and `rasp.tools.verify_json`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rasp.atoms import same_value as same_value  # (re-exported: the tools compare so)
from rasp.errors import ErrorKind, RaspError
from rasp.sops import Evaluator, Node, SOp
from rasp.tools.diagnosis import NON_FINITE as NON_FINITE
from rasp.tools.diagnosis import Divergence as Divergence
from rasp.tools.diagnosis import diagnose, nodes_by_name, run_batch
from rasp.tools.guided_samples import Samples, draw_samples, input_key
from rasp.tools.residuals import RuntimeModel as RuntimeModel
from rasp.tools.residuals import as_seq
from rasp.tools.residuals import decode_checkpoints as decode_checkpoints
from rasp.tools.residuals import meta_dict as meta_dict
from rasp.tools.residuals import operation_of as operation_of
from rasp.tracr.lower import is_lowered

if TYPE_CHECKING:
    from rasp.tools.order_report import OrderReport

DEFAULT_BUDGET = 20_000  # exhaustive inputs checked when --exhaustive-len is not given
# The most inputs a plan may hold (refused before anything runs). The example programs ran at
# 1,900 (dyck2) to 24,000 (hist) inputs a second on a busy 2-core machine: at most about 9 minutes.
MAX_INPUTS = 1_000_000

Progress = Callable[[int, int], None]


# ------------------------------------------------------------------------------------------------
# Which inputs


@dataclass(frozen=True)
class InputPlan:
    vocab: tuple[Any, ...]
    max_len: int
    exhaustive_len: int
    samples: int
    seed: int
    # the program whose variables guide half the samples (None: all uniformly random)
    program: SOp | None = field(default=None, compare=False)
    # the K asked for where it was more than max_len and so cut to it (reports say so: the echo
    # of the cut K alone read as if K had been that)
    asked_len: int | None = None
    # the K asked, where lengths K+1..max_len held no more inputs than the samples asked, so the
    # plan checks every one of them instead (exhaustive_len is then max_len); None otherwise
    extended_from: int | None = None
    # with --model: what the model accepts, where the plan is narrower (a smaller --max-len or
    # fewer --vocab tokens): (its maximum length, its token count); the report says what was left
    narrowed_from: tuple[int, int] | None = field(default=None, compare=False)
    # the samples, once drawn (guiding them runs the interpreter on each)
    _drawn: list[Samples] = field(default_factory=list, init=False, compare=False, repr=False)

    @property
    def exhaustive_count(self) -> int:
        return count_up_to(len(self.vocab), self.exhaustive_len)

    @property
    def extended_count(self) -> int:
        """The inputs checked beyond the K asked, instead of sampled (`extended_from`)."""
        if self.extended_from is None:
            return 0
        return self.exhaustive_count - count_up_to(len(self.vocab), self.extended_from)

    @property
    def sampled_lengths(self) -> tuple[int, int] | None:
        """The range random lengths are drawn from (None when exhaustion already covers every length)."""
        covered = self.samples == 0 or self.exhaustive_len >= self.max_len
        return None if covered else (self.exhaustive_len + 1, self.max_len)

    @property
    def planned_samples(self) -> int:
        """The samples to draw (known before drawing them; the most `sample_count` can be)."""
        return self.samples if self.sampled_lengths is not None else 0

    @property
    def planned_total(self) -> int:
        """The most inputs the plan holds, known before the samples are drawn."""
        return self.exhaustive_count + self.planned_samples

    @property
    def sample_count(self) -> int:
        """The distinct samples drawn (drawing them on first use): fewer than asked only where
        the lengths hold barely more inputs than that (`rasp.tools.guided_samples`)."""
        return len(self.drawn.inputs) if self.sampled_lengths is not None else 0

    @property
    def total(self) -> int:
        return self.exhaustive_count + self.sample_count

    @property
    def drawn(self) -> Samples:
        return self.draw()

    def draw(self, progress: Progress | None = None) -> Samples:
        """The seeded samples, drawn on first use, with `progress(done, total)` told of each
        then (for a progress bar: at N = 256 guiding takes seconds)."""
        if not self._drawn:
            lengths = self.sampled_lengths
            self._drawn.append(
                Samples((), 0)
                if lengths is None
                else draw_samples(
                    self.vocab, lengths, self.samples, self.seed, self.program, progress
                )
            )
        return self._drawn[0]

    def inputs(self) -> Iterator[list[Any]]:
        """The exhaustive inputs by length, then the samples."""
        for length in range(1, self.exhaustive_len + 1):
            for combo in itertools.product(self.vocab, repeat=length):
                yield list(combo)
        for tokens in self.drawn.inputs:
            yield list(tokens)


def count_up_to(vocab_size: int, length: int) -> int:
    """How many inputs have 1..length tokens: |V| + |V|^2 + ... + |V|^length."""
    return sum(vocab_size**k for k in range(1, length + 1))


def default_exhaustive_len(vocab_size: int, max_len: int, budget: int = DEFAULT_BUDGET) -> int:
    """The largest K <= max_len with |V|^1 + ... + |V|^K <= budget."""
    total, k = 0, 0
    while k < max_len:
        total += vocab_size ** (k + 1)
        if total > budget:
            break
        k += 1
    return k


def plan_inputs(
    vocab: Sequence[Any],
    max_len: int,
    exhaustive_len: int | None = None,
    samples: int = 1000,
    seed: int = 0,
    program: SOp | None = None,
) -> InputPlan:
    """Every input up to length `exhaustive_len` (default: as many lengths as DEFAULT_BUDGET
    inputs allow), then `samples` distinct seeded ones, half guided by `program`'s variables where
    given; every input up to `max_len` where the longer lengths hold no more than `samples`."""
    unique = tuple({(type(t), t): t for t in vocab}.values())  # user's order, no repeats; 1 != True
    k = (
        default_exhaustive_len(len(unique), max_len)
        if exhaustive_len is None
        else min(exhaustive_len, max_len)
    )
    asked = exhaustive_len if exhaustive_len is not None and exhaustive_len > max_len else None
    if 0 < samples and k < max_len and _holds_at_most(len(unique), k, max_len, samples):
        # drawing S of them would repeat inputs (or, distinct, hunt for the last unseen ones)
        return InputPlan(unique, max_len, max_len, samples, seed, program, extended_from=k)
    return InputPlan(unique, max_len, k, samples, seed, program, asked_len=asked)


def _holds_at_most(vocab_size: int, shortest: int, longest: int, most: int) -> bool:
    """Whether lengths shortest+1..longest hold at most `most` inputs (summed only until they
    exceed it: |V|^N of a long N is a number of thousands of digits)."""
    total = 0
    for length in range(shortest + 1, longest + 1):
        total += vocab_size**length
        if total > most:
            return False
    return True


def check_plan_size(
    plan: InputPlan, exhaustive: str = "--exhaustive-len", samples: str | None = "--samples"
) -> None:
    """Refuse a plan of more than MAX_INPUTS inputs before any of them runs: |V|^K grows so fast
    that a K a little too large means years. `exhaustive` and `samples` name the options that set
    K and S where the plan came from (`samples` None: S is fixed). A plan extended to check
    every input (`extended_from`) is judged by the K and S asked, and by the inputs it holds."""
    asked = plan.exhaustive_len if plan.extended_from is None else plan.extended_from
    count = count_up_to(len(plan.vocab), asked)
    if count > MAX_INPUTS:
        fits = default_exhaustive_len(len(plan.vocab), plan.max_len, MAX_INPUTS)
        sampled = f" ({samples} S)" if samples else ""
        # a K past max_len is echoed as given, with what it was cut to (`:verify 30` for a
        # `:verify 10**24` read as if 30 had been asked for)
        shown = (
            f"{asked}"
            if plan.asked_len is None
            else f"{plan.asked_len} (capped at the maximum length {plan.max_len})"
        )
        raise RaspError(
            f"{exhaustive} {shown}: every input of length 1..{asked} "
            f"over {len(plan.vocab)} tokens is {count:,} inputs, more than verify checks "
            f"({MAX_INPUTS:,})",
            hint=f"use {exhaustive} {fits} or less "
            f"({count_up_to(len(plan.vocab), fits):,} inputs); longer inputs are "
            f"sampled{sampled}",
            kind=ErrorKind.VERIFY,
        )
    if samples is not None and plan.planned_total > MAX_INPUTS:
        raise RaspError(
            f"{samples} {plan.samples:,}: with the {count:,} exhaustive inputs, "
            f"{count + plan.samples:,} inputs, more than verify checks ({MAX_INPUTS:,})",
            hint=f"use {samples} {MAX_INPUTS - count:,} or less",
            kind=ErrorKind.VERIFY,
        )


# ------------------------------------------------------------------------------------------------
# Comparing outputs


@dataclass(frozen=True)
class Mismatch:
    tokens: tuple[Any, ...]
    position: int  # the first program position where the outputs differ
    model: tuple[Any, ...]
    interpreter: tuple[Any, ...]


@dataclass
class VerifyReport:
    plan: InputPlan
    checked: int = 0  # inputs compared (not skipped)
    failures: int = 0
    skipped: int = 0
    skipped_example: tuple[tuple[Any, ...], str] | None = None
    skipped_error: RaspError | None = None  # the first skipped input's error (with its location)
    first_failure: Mismatch | None = None
    divergence: Divergence | None = None
    lengths: set[int] = field(default_factory=set)
    # the evaluation-order sweep (rasp.tools.verify_orders), if run
    orders: OrderReport | None = None
    # The certificate re-check: lines printed after the others when non-empty; None: not checked.
    certificate_lines: tuple[str, ...] = ()
    certificate_ok: bool | None = None
    # what rebuilding a model file's reach found (`rasp.tools.certificate_text.Rebuild`); None:
    # a model compiled here, checked against its own compile's reach
    rebuild: Any = None
    # inputs whose values agree but where a whole number is the other type (0 for 0.0): a type
    # a token decides, which the decoder cannot tell (docs/format.md); the first of them
    type_only: int = 0
    type_example: Mismatch | None = None
    # a tracr program's: its strings that start with the tuple mark are its tuples, which the
    # messages name by their repr (`rasp.tracr.boxes`; a RASP program's such string is a string)
    tuples: bool = False

    @property
    def nothing_compared(self) -> bool:
        """The interpreter failed on every input: the model was compared on none, so nothing is
        verified (not a pass)."""
        return self.checked == 0

    @property
    def ok(self) -> bool:
        orders_ok = self.orders is None or self.orders.ok
        return (
            self.failures == 0
            and not self.nothing_compared
            and orders_ok
            and self.certificate_ok is not False
        )


def verify(
    sop: SOp,
    model: RuntimeModel,
    plan: InputPlan,
    *,
    batch_size: int = 256,
    progress: Progress | None = None,
    nodes: Mapping[str, Node] | None = None,
    guard: SOp | None = None,
    name: str | None = None,
) -> VerifyReport:
    """Compare `model` with the interpreter on every input of `plan`; diagnose the first failure.
    `guard`: the program as written, where `sop` is a rewrite of it (a tracr program's, resolved
    for the vocabulary): an input the program fails on is skipped, even where `sop` has a value.
    `name`: `sop`'s name, where it may be another s-op than the model's output (`--name`)."""
    report = VerifyReport(plan, tuples=is_lowered(guard if guard is not None else sop))
    done = 0
    inputs = plan.inputs()
    # the samples' values, where the plan's guide computed them for this very program
    known = plan.drawn.outcomes if plan.program is sop else {}
    while batch := list(itertools.islice(inputs, batch_size)):
        for tokens, got in zip(batch, run_batch(model, batch), strict=True):
            _compare_one(sop, tokens, got, report, guard, known.get(input_key(tokens)))
        done += len(batch)
        if progress is not None:
            progress(done, plan.total)
    if report.first_failure is not None:
        tokens = list(report.first_failure.tokens)
        report.divergence = diagnose(sop, model, tokens, nodes or nodes_by_name(sop), name)
    return report


def _compare_one(
    sop: SOp,
    tokens: list[Any],
    got: list[Any] | None,
    report: VerifyReport,
    guard: SOp | None,
    known: Any = None,
) -> None:
    """`known`: `sop`'s value on `tokens` or the error it raised, where already computed."""
    written: tuple[Any, ...] | None = None
    try:
        if guard is not None:
            written = as_seq(Evaluator(tokens).value(guard)).values
        if isinstance(known, RaspError):
            raise known
        want = as_seq(known if known is not None else Evaluator(tokens).value(sop)).values
    except RaspError as err:
        report.skipped += 1
        if report.skipped_example is None:
            report.skipped_example = (tuple(tokens), err.message)
            report.skipped_error = err
        return
    report.checked += 1
    report.lengths.add(len(tokens))
    if got is None:
        got = [NON_FINITE] * len(want)
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if not same_value(g, w)]
    if len(got) != len(want) and not bad:
        bad = [min(len(got), len(want))]
    if not bad and written is not None:
        # the program as written too: its rewrite (a tracr program's, resolved) is trusted only
        # as far as the model also gives the written program's values (a bool as 0 or 1 aside)
        bad = [i for i, (g, w) in enumerate(zip(got, written)) if not _as_written(g, w)]
        want = written if bad else want
    if bad:
        report.failures += 1
        if report.first_failure is None:
            report.first_failure = Mismatch(tuple(tokens), bad[0], tuple(got), tuple(want))
        return
    retyped = [i for i, (g, w) in enumerate(zip(got, want)) if _other_number_type(g, w)]
    if retyped:
        report.type_only += 1
        if report.type_example is None:
            report.type_example = Mismatch(tuple(tokens), retyped[0], tuple(got), tuple(want))


def _as_written(got: Any, want: Any) -> bool:
    """`got` is the written program's `want` as a model gives it: `same_value`, or the int 1 or 0
    where the program gives True or False (a tracr mean of one selected True, docs/language.md
    section 9). Only that form: a float 1.0 for True, or True for an int 1, prints differently
    in tracr (a model gives a mean of several Trues as 1.0, of one as 1)."""
    if type(got) is int and isinstance(want, bool):
        return got == int(want)
    return same_value(got, want)


def _other_number_type(got: Any, want: Any) -> bool:
    """An int where the interpreter gives a float, or the reverse (bools are not numbers here)."""
    return {type(got), type(want)} == {int, float}
