"""The size check before a compile builds anything: a model predicted (compiler.budget) to exceed
the parameter limit, or a max-len whose value analysis would follow too many (position, length)
pairs, is refused with the prediction and the part responsible."""

from __future__ import annotations

import math
from collections.abc import Callable

from compiler.addressing import MATCH_MAX_LEN
from compiler.blocks import Atom
from compiler.budget import (
    DEFAULT_MAX_PARAMS,
    PROBE_LENGTHS,
    Prediction,
    approximate,
    bytes_text,
    predict,
)
from compiler.build_stages import plan_build
from compiler.build_trials import BuildOptions
from compiler.causal import with_causal_problems
from compiler.forms import prepare
from compiler.fraction_means import fraction_means
from compiler.model import Sketch
from compiler.vocab_bound import check_vocab_size, reads_tokens
from rasp import sops
from rasp.errors import CompileError, Diagnostic, option

# (position, length) pairs the analysis may follow: max_params / 100 (2M pairs, max-len 2,000, by
# default; the analysis of 12.5M pairs took 5 minutes here)
PAIRS_PER_PARAM = 100
ANALYSIS_BYTES_PER_PAIR = 200  # per pair and per positional s-op: a tuple key and a value tuple


def check_size(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    causal: bool,
    head_masks: bool,
    max_params: int | None,
) -> Prediction | None:
    """`_check_sizes`; a causal compile it refuses also gets, first, what a causal model could
    not compute (found on short inputs), which no smaller size would fix."""
    try:
        return _check_sizes(sop, vocab, max_len, causal, head_masks, max_params)
    except CompileError as err:
        if not causal:
            raise
        raise with_causal_problems(err, sop, vocab, max_len) from None


def _check_sizes(
    sop: sops.Node,
    vocab: tuple[Atom, ...],
    max_len: int,
    causal: bool,
    head_masks: bool,
    max_params: int | None,
) -> Prediction | None:
    """Refuse, before building it, a model predicted to exceed `max_params` parameters, or a
    max-len whose value analysis would follow too many (position, length) pairs. `sop` is the
    program before `prepare`: each probe prepares it for its own length. Returns the prediction
    for the default form (None: none was made)."""
    if max_params is None:
        return None
    # what the vocabulary alone forces on every build, before the probes analyse any value: a
    # large vocabulary is refused in milliseconds, not after its tables are planned
    check_vocab_size(sop, vocab, max_len, max_params)
    tokens_read = reads_tokens(sop)  # as the build lays it out (compiler.driver)
    pairs = max_len * (max_len + 1) // 2
    pair_limit = (
        max(max_params, DEFAULT_MAX_PARAMS) // PAIRS_PER_PARAM
    )  # raised with it, never lowered

    def probe(n: int, fractions: bool = False, numeric_copies: bool = False) -> Sketch:
        return plan_build(
            prepare(sop, vocab, n, fractions=fractions),
            vocab,
            n,
            causal=causal,
            head_masks=head_masks,
            note=lambda s: None,
            options=BuildOptions(matching=matching, numeric_copies=numeric_copies),
            keep_tokens=tokens_read,
        ).sketch

    # the probes are built as the target will be: matching's exact scores end at MATCH_MAX_LEN
    matching = max_len <= MATCH_MAX_LEN
    try:
        prediction = predict(probe, max_len)
    except CompileError:
        prediction = None  # no compile at the probe lengths: the real compile says why
    default = prediction

    def or_smaller(form: Callable[[int], Sketch]) -> Prediction | None:
        """The smaller of the prediction so far and `form`'s (where its probes compile)."""
        try:
            found = predict(form, max_len)
        except CompileError:
            return prediction
        if found is None or prediction is None:
            return prediction
        return min(prediction, found, key=lambda p: p.params)

    if _too_large(prediction, max_params) and _has_fraction_form(sop, vocab):
        # the compile also builds counts over the length as means (compiler.program_forms),
        # which may be far smaller: the smaller prediction decides
        prediction = or_smaller(lambda n: probe(n, fractions=True))
    if _too_large(prediction, max_params):
        # the compile also copies many numbers of one key as one number (compiler.alternatives),
        # which may be far smaller: the reverse of a prefix mean at max-len 256, 12.1G parameters
        # predicted with the numbers' one-hot
        prediction = or_smaller(lambda n: probe(n, numeric_copies=True))
    if pairs > pair_limit:
        # The value analysis keeps a value set per (position, length) pair: quadratic in N even
        # where the model is linear (numerical addressing), so it is bounded on its own.
        raise CompileError(
            [
                Diagnostic(
                    f"at max-len {max_len:,} compiling would take too long and too much memory: "
                    f"the value analysis follows every s-op at {approximate(pairs)} (position, "
                    f"length) pairs (about {bytes_text(pairs * ANALYSIS_BYTES_PER_PAIR)})"
                    + ("" if prediction is None else f"; the model: {prediction.describe()}"),
                    getattr(sop, "span", None),
                    f"the limit is {pair_limit:,} pairs (max-len {math.isqrt(2 * pair_limit):,}), "
                    f"set with the parameter limit ({max(max_params, DEFAULT_MAX_PARAMS):,} / "
                    f"{PAIRS_PER_PARAM}): use a smaller maximum length, or "
                    f"raise the limit ({option('max_params')}) if the machine can hold it",
                )
            ]
        )
    if _too_large(prediction, max_params):
        assert prediction is not None
        raise CompileError(
            [
                Diagnostic(
                    f"at max-len {max_len:,} the model would be too large: {prediction.describe()}",
                    getattr(sop, "span", None),
                    f"the limit is {max_params:,} parameters: use a smaller maximum length, or "
                    f"raise the limit ({option('max_params')}) if the machine can hold it",
                )
            ]
        )
    return default


def _too_large(prediction: Prediction | None, max_params: int) -> bool:
    return prediction is not None and prediction.params > max_params


def _has_fraction_form(sop: sops.Node, vocab: tuple[Atom, ...]) -> bool:
    """Whether `prepare` writes a different form with `fractions=True` at the first probe length
    (the form the size prediction would probe)."""
    prepared = prepare(sop, vocab, PROBE_LENGTHS[0])
    return fraction_means(prepared, vocab, PROBE_LENGTHS[0]) is not prepared
