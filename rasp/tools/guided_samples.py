"""The sampled inputs of `rasp verify`: half uniformly random, half guided to values the random half
misses.

Uniformly random inputs rarely reach a program's deep states. Of 1,000 random bracket strings of
length 7..64, not one keeps `dyck2` at "P" (still completable) past position 15, so sampling alone
would never test a model's behaviour there. The guided half is made of mutants of the inputs kept so
far: a token changed, inserted or deleted, a segment repeated, a random tail appended, two inputs
spliced. An input (random or mutant) is kept when it reaches a *fact* about the program's variables
that no input before it reached:

- a string's or bool's value at a position;
- a number's sign at a position, and its size (sign, power of two, whole or not) anywhere.

Exact numbers would make nearly every input new (a mean takes new values at every position) and
lead the search to extremes (a balance of -40, then -41) instead of depth. Mutants of recently kept
inputs are preferred, and three edits in four change, insert or delete the token just past the last
position where the parent reached a new fact, so that a run of gains (a longer balanced prefix) is
followed.

The inputs are distinct: a draw that repeats an input already drawn is dropped and another drawn
(a repeating mutant is replaced by a random input), so a report's count is of different inputs.
Where the lengths hold barely more inputs than asked, finding the last unseen ones by chance can
take very many draws: after MAX_TRIES draws per input asked the search stops, and fewer inputs are
returned (the report says so). A plan whose lengths hold no more inputs than asked checks them all
instead (`rasp.tools.verify.plan_inputs`).

The draw is seeded: one seed gives the same inputs. The uniform half is drawn exactly as an
all-uniform plan draws its first half. Only the interpreter is needed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rasp.atoms import atom_key
from rasp.errors import RaspError
from rasp.sops import Evaluator, SeqValue, SOp, walk

# a kept input's mutants are drawn from the ~RECENT last kept ones (exponentially weighted)
RECENT = 10.0
AT_FRONTIER = 0.75  # the share of mutants edited just past their parent's frontier
# draws per input asked before the search for unseen inputs gives up (module doc): ample unless
# the lengths hold barely more inputs than asked (with twice as many, at least one uniform draw in
# 2 x the number of lengths is new)
MAX_TRIES = 20

InputKey = tuple[tuple[type, Any], ...]


def input_key(tokens: Sequence[Any]) -> InputKey:
    """A key equal only for the same tokens of the same types: (1,) == (True,) in Python, but
    a vocabulary may hold both (`rasp.tools.verify.plan_inputs` keeps them apart)."""
    return tuple((type(t), t) for t in tokens)


@dataclass(frozen=True)
class Samples:
    """The sampled inputs: the first `uniform` uniformly random, the rest guided."""

    inputs: tuple[tuple[Any, ...], ...]
    uniform: int
    facts: int | None = None  # distinct facts all of them reach (None: not guided)
    facts_uniform: int | None = None  # ... that the uniform ones reach
    # the guiding program's value on each input (by `input_key`), or its error (computed while
    # guiding: a comparison with the model need not run the interpreter again)
    outcomes: Mapping[InputKey, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def guided(self) -> int:
        return len(self.inputs) - self.uniform


def draw_samples(
    vocab: Sequence[Any],
    lengths: tuple[int, int],
    count: int,
    seed: int,
    program: SOp | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Samples:
    """`count` distinct inputs of lengths `lengths` (inclusive) over `vocab`: all uniformly random
    where `program` is None, else the first half so and the rest guided by `program`'s facts.
    Fewer where MAX_TRIES draws per input found no more unseen ones (module doc).
    `progress(done, count)` is told of each input the interpreter ran on."""
    rng = random.Random(seed)
    tries = MAX_TRIES * count
    half = count if program is None else count - count // 2
    inputs: list[list[Any]] = []
    drawn: set[InputKey] = set()

    def unseen(tokens: list[Any]) -> bool:
        """Whether `tokens` is new (then it is added to the inputs)."""
        key = input_key(tokens)
        if key in drawn:
            return False
        drawn.add(key)
        inputs.append(tokens)
        return True

    while len(inputs) < half and tries > 0:
        tries -= 1
        unseen(_random_input(rng, vocab, lengths))
    uniform = len(inputs)
    if program is None:
        return Samples(tuple(map(tuple, inputs)), uniform)
    nodes = [node for node in walk(program) if isinstance(node, SOp)]
    seen: set[tuple[int, int, Hashable]] = set()
    kept: list[_Kept] = []
    outcomes: dict[InputKey, Any] = {}
    for done, tokens in enumerate(inputs, start=1):
        _keep_if_new(program, nodes, tokens, seen, kept, outcomes)
        if progress is not None:
            progress(done, count)
    facts_uniform = len(seen)
    while len(inputs) < count and tries > 0:
        tries -= 1
        if kept:
            back = min(int(rng.expovariate(1 / RECENT)), len(kept) - 1)
            tokens = _mutant(rng, kept[-1 - back], kept, vocab, lengths)
        else:  # every input so far failed in the interpreter: keep drawing at random
            tokens = _random_input(rng, vocab, lengths)
        if not unseen(tokens):
            # a random input instead: where the facts stop growing, the few kept inputs' mutants
            # repeat each other long before the random ones run out
            tries -= 1
            if tries < 0 or not unseen(tokens := _random_input(rng, vocab, lengths)):
                continue
        _keep_if_new(program, nodes, tokens, seen, kept, outcomes)
        if progress is not None:
            progress(len(inputs), count)
    return Samples(tuple(map(tuple, inputs)), uniform, len(seen), facts_uniform, outcomes)


def _random_input(rng: random.Random, vocab: Sequence[Any], lengths: tuple[int, int]) -> list[Any]:
    length = rng.randint(*lengths)
    return [rng.choice(vocab) for _ in range(length)]


@dataclass(frozen=True)
class _Kept:
    """A kept input, and the last position where it reached a new fact (-1: only facts of no
    position): the edge of what it explored, where most of its mutants are edited."""

    tokens: list[Any]
    frontier: int


def _keep_if_new(
    program: SOp,
    nodes: list[SOp],
    tokens: list[Any],
    seen: set[tuple[int, int, Hashable]],
    kept: list[_Kept],
    outcomes: dict[InputKey, Any],
) -> None:
    evaluator = Evaluator(tokens)
    try:
        outcomes[input_key(tokens)] = evaluator.value(program)
    except RaspError as err:
        outcomes[input_key(tokens)] = err
        return
    facts = _facts(nodes, evaluator)
    new = facts - seen
    if new:
        seen |= new
        kept.append(_Kept(tokens, max(fact[1] for fact in new)))


def _facts(nodes: list[SOp], evaluator: Evaluator) -> set[tuple[int, int, Hashable]]:
    """The facts of the values `evaluator` computed for `nodes` (module doc)."""
    facts: set[tuple[int, int, Hashable]] = set()
    for k, node in enumerate(nodes):
        seq = evaluator.memo.get(node.id)
        if isinstance(seq, SeqValue):
            facts.update(_node_facts(k, seq.values))
    return facts


def _node_facts(k: int, values: Sequence[Any]) -> list[tuple[int, int, Hashable]]:
    """(node, position or -1 for any, value key) per fact of one node's values."""
    out: list[tuple[int, int, Hashable]] = []
    for i, value in enumerate(values):
        if type(value) is int or type(value) is float:  # numbers: not bools
            if value != value:  # NaN: one fact, not one per NaN object
                out.append((k, -1, "nan"))
                continue
            out.append((k, -1, _magnitude(value)))
            out.append((k, i, (value > 0) - (value < 0)))
        else:
            out.append((k, i, _hashable(value)))
    return out


def _magnitude(value: float) -> tuple[int, int, bool]:
    """A number's sign, power of two and wholeness: 40 and 41 alike, 0.5 and 1 not."""
    if value == 0 or math.isinf(value):
        return (int(value > 0) - int(value < 0), 0, True)
    return (int(value > 0) - int(value < 0), math.frexp(value)[1], float(value).is_integer())


def _hashable(value: Any) -> Hashable:
    key = atom_key(value)
    try:
        hash(key)
    except TypeError:  # a tracr map's unhashable value (a list, a dict)
        return ("repr", repr(value))
    return key


def _mutant(
    rng: random.Random,
    parent: _Kept,
    kept: list[_Kept],
    vocab: Sequence[Any],
    lengths: tuple[int, int],
) -> list[Any]:
    """One random edit of `parent`, cut or padded (with random tokens) to `lengths`: three times
    in four (where it has a frontier) a token changed, inserted or deleted just past it, else any
    edit anywhere."""
    lo, hi = lengths
    tokens = list(parent.tokens)
    edit = rng.randrange(6)
    at = rng.randrange(len(tokens))
    if parent.frontier >= 0 and rng.random() < AT_FRONTIER:
        edit = rng.randrange(3)
        at = min(parent.frontier + 1, len(tokens) - 1)
    if edit == 0:  # change a token
        tokens[at] = rng.choice(vocab)
    elif edit == 1:  # insert one
        tokens.insert(at, rng.choice(vocab))
    elif edit == 2:  # delete one
        del tokens[at]
    elif edit == 3:  # append a random tail
        tokens += [rng.choice(vocab) for _ in range(rng.randint(1, max(1, hi - len(tokens))))]
    elif edit == 4:  # this one's head, another kept input's tail
        other = kept[rng.randrange(len(kept))].tokens
        tokens = tokens[: rng.randint(0, len(tokens))] + other[rng.randint(0, len(other)) :]
    else:  # repeat a segment
        end = rng.randint(at + 1, min(len(tokens), at + math.ceil(hi / 2)))
        tokens = tokens[:end] + tokens[at:end] + tokens[end:]
    del tokens[hi:]
    while len(tokens) < lo:
        tokens.append(rng.choice(vocab))
    return tokens
