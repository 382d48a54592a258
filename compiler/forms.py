"""The s-op graph a compile builds from a program: `prepare` and, for one compile, `Forms`.

The rewrites keep every value the program computes on inputs of lengths 1..N over the vocabulary;
each is its own module. The driver compiles the default form and, where they differ, the forms
with sums kept as means and with counts as means (compiler.program_forms), and where none is
proved, with differences of two means read as one mean of votes (compiler.vote_form); `Forms`
runs the rewrites those forms share once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from compiler.blocks import Atom
from compiler.bool_defaults import bool_defaults
from compiler.bos_widths import bos_widths
from compiler.constant_sides import constant_sides
from compiler.counts import count_means
from compiler.dedupe import merge_duplicates
from compiler.fraction_means import fraction_means
from compiler.order_digits import order_digits
from compiler.position_functions import position_functions
from compiler.resolve import resolve
from compiler.select_offsets import select_offsets
from compiler.vote_means import VoteRewrite, confirmed, vote_rewrite
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
        self._resolved: sops.Node | None = None  # before the rewrites after `resolve`
        self._early: sops.Node | None = None  # before the rewrites `votes` changes
        self._votes: VoteRewrite | None = None
        # the vote form from tables read off one (w, a, b) per vote mean, before its check:
        # (the rewrite, its graph after the later rewrites) (`unchecked_votes`)
        self._unchecked: tuple[VoteRewrite, sops.Node | None] | None = None

    def voted(self) -> VoteRewrite:
        """The program, as far as `bos_widths`, with its differences of means read as votes
        (`compiler.vote_means`): its `root` is the earlier program itself where none is."""
        if self._votes is None:
            self._votes = vote_rewrite(self._before_votes(), self.vocab, self.max_len)
        return self._votes

    def votes_differ(self) -> bool:
        """Whether `votes=True` gives another form."""
        return self.voted().root is not self._before_votes()

    def unchecked_votes(self) -> sops.Node | None:
        """The form `votes=True` gives, its tables read off one (w, a, b) per vote mean alone
        (`vote_rewrite(..., checked=False)`), for a sketch of its size: no model of it is built
        before `confirm_votes`. None where the rewrite changes nothing."""
        if self._votes is not None:  # checked already
            return self(votes=True) if self.votes_differ() else None
        if self._unchecked is None:
            early = self._before_votes()
            rewrite = vote_rewrite(early, self.vocab, self.max_len, checked=False)
            later = None if rewrite.root is early else self._after(rewrite.root, True)
            self._unchecked = (rewrite, later)
        later = self._unchecked[1]
        return None if later is None else merge_duplicates(later)

    def confirm_votes(self) -> bool:
        """Whether the graph `unchecked_votes` gave is the vote form (each table holds at every
        (w, a, b), `vote_means.confirmed`): then `votes=True` gives it from here on."""
        if self._votes is not None:
            return True  # `unchecked_votes` gave the checked form
        if self._unchecked is None or not confirmed(self._unchecked[0]):
            return False
        rewrite, later = self._unchecked
        self._votes = replace(rewrite, unchecked=())
        if later is not None:
            self._shared[(True, True)] = later
        return True

    def with_int_defaults(self) -> Forms | None:
        """These forms with each mean's bool default that only maps read, alike as its int,
        written as the int (`compiler.bool_defaults`; the driver's last build,
        compiler.int_defaults); None where there is none."""
        resolved = self._resolved_program()
        ints = bool_defaults(resolved, self.vocab, self.max_len)
        if ints is resolved:
            return None
        other = Forms(self.sop, self.vocab, self.max_len)
        other._resolved = ints
        return other

    def _resolved_program(self) -> sops.Node:
        if self._resolved is None:
            sop = merge_duplicates(self.sop)  # one node per computation written twice
            # tracr's predicates and means, for this vocabulary
            self._resolved = resolve(sop, self.vocab, self.max_len)
        return self._resolved

    def _before_votes(self) -> sops.Node:
        if self._early is None:
            vocab, max_len = self.vocab, self.max_len
            sop = self._resolved_program()
            sop = position_functions(sop, max_len)  # s-ops of the position alone: maps of indices
            sop = select_offsets(sop, vocab, max_len)  # `select(length - y, length - y, <)`: y
            sop = bos_widths(sop, vocab, max_len)  # the BOS trick's mean: a width
            self._early = sop
        return self._early

    def __call__(
        self, *, weighted: bool = True, fractions: bool = False, votes: bool = False
    ) -> sops.Node:
        sop = self._shared.get((weighted, votes))
        if sop is None:
            # `opens - closes` read as one mean of votes, where asked for
            sop = self._after(self.voted().root if votes else self._before_votes(), weighted)
            self._shared[(weighted, votes)] = sop
        if fractions:
            sop = fraction_means(sop, self.vocab, self.max_len)  # `c / length`: a mean per key
        return merge_duplicates(sop)  # the rewrites may write one computation twice

    def _after(self, sop: sops.Node, weighted: bool) -> sops.Node:
        """The rewrites after `vote_means`."""
        vocab, max_len = self.vocab, self.max_len
        sop = count_means(sop, vocab, max_len, weighted=weighted)  # counted prefixes: widths
        sop = order_digits(sop, vocab, max_len)  # widths of `<` over many numbers: digits
        return constant_sides(sop, vocab, max_len)  # `select(0, q, ==)`: through `0 == q`
