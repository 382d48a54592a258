"""The s-op graph a compile builds from a program: `prepare` and, for one compile, `Forms`.

The rewrites keep every value the program computes on inputs of lengths 1..N over the vocabulary;
each is its own module. The driver compiles the default form and, where they differ, the forms
with sums kept as means and with counts as means (compiler.program_forms), and where none is
proved, with differences of two means read as one mean of votes (compiler.vote_form); `Forms`
runs the rewrites those forms share once.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom
from compiler.bos_widths import bos_widths
from compiler.constant_sides import constant_sides
from compiler.counts import count_means
from compiler.dedupe import merge_duplicates
from compiler.fraction_means import fraction_means
from compiler.order_digits import order_digits
from compiler.position_functions import position_functions
from compiler.resolve import resolve
from compiler.select_offsets import select_offsets
from compiler.vote_means import VoteRewrite, vote_rewrite
from rasp import sops


def prepare(
    sop: sops.Node,
    vocab: Sequence[Atom],
    max_len: int,
    *,
    weighted: bool = True,
    fractions: bool = False,
    votes: bool = False,
) -> sops.Node:
    """The s-op graph the stages compile, equal to `sop` on every input over `vocab` of length
    1..max_len: each computation written twice read through one node (`compiler.dedupe`, before
    and after the rewrites), tracr's predicates and means resolved for this vocabulary
    (`compiler.resolve`), then
    s-ops of the position alone written through `length`, widths or means as maps of `indices`
    (`compiler.position_functions`), then
    selects of one s-op against itself through a term of the length as selects of the s-op under
    it (`compiler.select_offsets`), then
    the BOS trick's means as widths (`compiler.bos_widths`), then
    means of 0/1 values that a map only counts rewritten as counts (`compiler.counts`), then widths
    of orders over many numbers as widths over digits (`compiler.order_digits`), then selects one
    side of which is the same at every position compared through a bool of the other side
    (`compiler.constant_sides`). A RASP program
    with none of them is `sop` itself. Tools that pair the model's generated residual names
    (`_map_3`) with s-op nodes pair them with this graph's. `weighted=False`: means of whole
    numbers other than 0 and 1 stay means (the compile's fallback where their sums' model is not
    proved; a model built so carries `"sums_as_means": true` in its metadata). `fractions=True`:
    key-only counts over the length (or over a positional scope's width) become means over every
    key (over the scope), and maps of two such counts that depend on which is larger tables over
    the sign of one mean of votes (`compiler.fraction_means`, `compiler.count_signs`; the
    compile's alternative, `"fractions_as_means": true`). `votes=True`: the readers of a
    difference of two 0/1 means over one selector as tables over one mean of votes, after
    `bos_widths` (`compiler.vote_means`; the compile's alternative where no other form is proved,
    `"votes_as_means": true`)."""
    return Forms(sop, vocab, max_len)(weighted=weighted, fractions=fractions, votes=votes)


class Forms:
    """`prepare` for one program, vocabulary and N, as each form is asked for: the rewrites that
    every form shares run once, and those after `vote_means` once per `weighted` and `votes` (a
    compile asks for the default form and then for
    the one with fractions as means; counting dyck1's prefix means takes seconds at N = 512)."""

    def __init__(self, sop: sops.Node, vocab: Sequence[Atom], max_len: int) -> None:
        self.sop, self.vocab, self.max_len = sop, vocab, max_len
        self._shared: dict[tuple[bool, bool], sops.Node] = {}
        self._early: sops.Node | None = None  # before the rewrites `votes` changes
        self._votes: VoteRewrite | None = None

    def voted(self) -> VoteRewrite:
        """The program, as far as `bos_widths`, with its differences of means read as votes
        (`compiler.vote_means`): its `root` is the earlier program itself where none is."""
        if self._votes is None:
            self._votes = vote_rewrite(self._before_votes(), self.vocab, self.max_len)
        return self._votes

    def votes_differ(self) -> bool:
        """Whether `votes=True` gives another form."""
        return self.voted().root is not self._before_votes()

    def _before_votes(self) -> sops.Node:
        if self._early is None:
            vocab, max_len = self.vocab, self.max_len
            sop = merge_duplicates(self.sop)  # one node per computation written twice
            sop = resolve(sop, vocab, max_len)  # tracr's predicates and means, for this vocabulary
            sop = position_functions(sop, max_len)  # s-ops of the position alone: maps of indices
            sop = select_offsets(sop, vocab, max_len)  # `select(length - y, length - y, <)`: y
            sop = bos_widths(sop, vocab, max_len)  # the BOS trick's mean: a width
            self._early = sop
        return self._early

    def __call__(
        self, *, weighted: bool = True, fractions: bool = False, votes: bool = False
    ) -> sops.Node:
        vocab, max_len = self.vocab, self.max_len
        sop = self._shared.get((weighted, votes))
        if sop is None:
            # `opens - closes` read as one mean of votes, where asked for
            sop = self.voted().root if votes else self._before_votes()
            sop = count_means(sop, vocab, max_len, weighted=weighted)  # counted prefixes: widths
            sop = order_digits(sop, vocab, max_len)  # widths of `<` over many numbers: digits
            sop = constant_sides(sop, vocab, max_len)  # `select(0, q, ==)`: through `0 == q`
            self._shared[(weighted, votes)] = sop
        if fractions:
            sop = fraction_means(sop, vocab, max_len)  # `c / length`: a mean over every key
        return merge_duplicates(sop)  # the rewrites may write one computation twice
